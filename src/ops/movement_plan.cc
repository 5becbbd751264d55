#include "ops/movement_plan.h"

#include <algorithm>

namespace tessel::ops {

namespace {

Status TooManyDims(const ir::Node& node) {
  return Unsupported(node.Describe() + ": moves tensors of at most 6 dims");
}

StatusOr<std::vector<int64_t>> ConstantInts(const ir::Node& node, size_t input, const char* what) {
  const ir::Value* v = node.input(input);
  if (!v) return std::vector<int64_t>{};
  if (!v->is_constant()) {
    return Unsupported(node.Describe() + ": needs " + what + " known at compile time");
  }
  return v->constant.ToInt64Vector();
}

int64_t Axis(const ir::Node& node, int64_t rank) {
  const int64_t axis = node.attrs.Int("axis", 0);
  return axis < 0 ? axis + rank : axis;
}

// Shapes of all the node's tensors fit in six dims.
bool FitsSixDims(const ir::Node& node) {
  for (const ir::Value* v : node.inputs) {
    if (v && v->shape.size() > 6) return false;
  }
  for (const ir::Value* v : node.outputs) {
    if (v && v->shape.size() > 6) return false;
  }
  return true;
}

std::vector<StridedCopy> Transpose(const ir::Node& node) {
  const ir::Value* in = node.input(0);
  const ir::Value* out = node.output(0);
  const size_t r = in->shape.size();
  std::vector<int64_t> perm = node.attrs.Ints("perm");
  if (perm.empty()) {
    for (size_t k = r; k-- > 0;) perm.push_back(static_cast<int64_t>(k));
  }
  const Dims6 in_strides = Strides6(in->shape);
  StridedCopy c{.dims = PadDims6(out->shape), .y_strides = Strides6(out->shape)};
  for (size_t k = 0; k < r; ++k) {
    c.x_strides[6 - r + k] = in_strides[6 - r + static_cast<size_t>(perm[k])];
  }
  return {c};
}

std::vector<StridedCopy> Concat(const ir::Node& node) {
  const ir::Value* out = node.output(0);
  const auto r = static_cast<int64_t>(out->shape.size());
  const int64_t axis = Axis(node, r);
  const Dims6 ys = Strides6(out->shape);
  const auto a6 = static_cast<size_t>(6 - r + axis);
  std::vector<StridedCopy> copies;
  int64_t at = 0;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ir::Value* in = node.inputs[i];
    if (!in) continue;
    copies.push_back({.input = i,
                      .dims = PadDims6(in->shape),
                      .x_strides = Strides6(in->shape),
                      .y_strides = ys,
                      .y_offset = at * ys[a6]});
    at += in->shape[static_cast<size_t>(axis)];
  }
  return copies;
}

std::vector<StridedCopy> Split(const ir::Node& node) {
  const ir::Value* in = node.input(0);
  const auto r = static_cast<int64_t>(in->shape.size());
  const int64_t axis = Axis(node, r);
  const Dims6 xs = Strides6(in->shape);
  const auto a6 = static_cast<size_t>(6 - r + axis);
  std::vector<StridedCopy> copies;
  int64_t at = 0;
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    const ir::Value* out = node.outputs[k];
    if (!out) continue;
    copies.push_back({.output = k,
                      .dims = PadDims6(out->shape),
                      .x_strides = xs,
                      .y_strides = Strides6(out->shape),
                      .x_offset = at * xs[a6]});
    at += out->shape[static_cast<size_t>(axis)];
  }
  return copies;
}

// ChannelShuffle (ops/tensor.cc): one copy per input g and output k. With G
// inputs of C channels and outputs of OC channels, when G divides OC, output
// k's channels g + G*t (t < OC/G) are input g's channels k*OC/G + t.
StatusOr<std::vector<StridedCopy>> ChannelShuffle(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  const auto groups = static_cast<int64_t>(node.inputs.size());
  const int64_t channels = x->shape[1], out_channels = node.output(0)->shape[1];
  if (out_channels % groups != 0) {
    return Unsupported(node.Describe() +
                       ": needs output channels that are a multiple of the input count");
  }
  int64_t plane = 1;
  for (size_t d = 2; d < x->shape.size(); ++d) plane *= x->shape[d];
  std::vector<StridedCopy> copies;
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    for (size_t g = 0; g < node.inputs.size(); ++g) {
      const int64_t first = static_cast<int64_t>(k) * out_channels / groups;
      copies.push_back({.input = g,
                        .output = k,
                        .dims = {1, 1, 1, x->shape[0], out_channels / groups, plane},
                        .x_strides = {0, 0, 0, channels * plane, plane, 1},
                        .y_strides = {0, 0, 0, out_channels * plane, groups * plane, 1},
                        .x_offset = first * plane,
                        .y_offset = static_cast<int64_t>(g) * plane});
    }
  }
  return copies;
}

StatusOr<std::vector<StridedCopy>> Slice(const ir::Node& node, int opset) {
  const ir::Value* in = node.input(0);
  const ir::Value* out = node.output(0);
  const auto r = static_cast<int64_t>(in->shape.size());
  std::vector<int64_t> starts, axes, steps;
  if (opset < 10) {
    starts = node.attrs.Ints("starts");
    axes = node.attrs.Ints("axes");
  } else {
    TESSEL_ASSIGN_OR_RETURN(starts, ConstantInts(node, 1, "starts"));
    TESSEL_ASSIGN_OR_RETURN(axes, ConstantInts(node, 3, "axes"));
    TESSEL_ASSIGN_OR_RETURN(steps, ConstantInts(node, 4, "steps"));
  }
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  const Dims6 in_strides = Strides6(in->shape);
  StridedCopy c{
      .dims = PadDims6(out->shape), .x_strides = in_strides, .y_strides = Strides6(out->shape)};
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t a = axes[k] < 0 ? axes[k] + r : axes[k];
    const int64_t dim = in->shape[static_cast<size_t>(a)];
    const int64_t step = k < steps.size() ? steps[k] : 1;
    int64_t s = starts[k] < 0 ? starts[k] + dim : starts[k];
    s = step > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
    const auto a6 = static_cast<size_t>(6 - r + a);
    const int64_t extent = out->shape[static_cast<size_t>(a)];
    if (extent > 0) c.x_offset += s * in_strides[a6];
    // An axis of one element never steps (a huge step would overflow).
    c.x_strides[a6] = extent > 1 ? in_strides[a6] * step : 0;
  }
  return std::vector<StridedCopy>{c};
}

// Expand: a broadcast axis is read with stride 0.
std::vector<StridedCopy> Expand(const ir::Node& node) {
  const ir::Value* in = node.input(0);
  const ir::Value* out = node.output(0);
  const Dims6 in_strides = Strides6(in->shape);
  StridedCopy c{.dims = PadDims6(out->shape), .y_strides = Strides6(out->shape)};
  for (size_t k = 0; k < in->shape.size(); ++k) {
    const size_t d = 6 - in->shape.size() + k;
    c.x_strides[d] = in->shape[k] == 1 ? 0 : in_strides[d];
  }
  return {c};
}

}  // namespace

int64_t StridedCopy::elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

Dims6 PadDims6(const Shape& s) {
  Dims6 d{1, 1, 1, 1, 1, 1};
  const size_t r = s.size();
  for (size_t i = 0; i < r; ++i) d[6 - r + i] = s[i];
  return d;
}

Dims6 Strides6(const Shape& s) {
  Dims6 st{};
  int64_t stride = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[6 - s.size() + i] = stride;
    stride *= s[i];
  }
  return st;
}

bool IsMovement(const ir::Node& node) {
  const std::string& op = node.op_type;
  if (node.domain == "tessel") return op == "ChannelShuffle";
  return op == "Transpose" || op == "Concat" || op == "Split" || op == "Slice" || op == "Expand";
}

StatusOr<std::vector<StridedCopy>> PlanMovement(const ir::Node& node, int opset) {
  // ChannelShuffle flattens every axis past the channels: any rank.
  const bool shuffle = node.domain == "tessel" && node.op_type == "ChannelShuffle";
  if (!shuffle && !FitsSixDims(node)) return TooManyDims(node);
  std::vector<StridedCopy> copies;
  const std::string& op = node.op_type;
  if (op == "Transpose") {
    copies = Transpose(node);
  } else if (op == "Concat") {
    copies = Concat(node);
  } else if (op == "Split") {
    copies = Split(node);
  } else if (op == "Slice") {
    TESSEL_ASSIGN_OR_RETURN(copies, Slice(node, opset));
  } else if (op == "Expand") {
    copies = Expand(node);
  } else if (op == "ChannelShuffle" && node.domain == "tessel") {
    TESSEL_ASSIGN_OR_RETURN(copies, ChannelShuffle(node));
  } else {
    return Internal(node.Describe() + ": not an op that only moves elements");
  }
  std::erase_if(copies, [](const StridedCopy& c) { return c.elements() == 0; });
  return copies;
}

}  // namespace tessel::ops
