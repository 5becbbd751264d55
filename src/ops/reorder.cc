// Ops that move each element to a position the data gives: ReverseSequence
// (per-batch sequence lengths) and MaxUnpool (MaxPool's indices).
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ops/op_registry.h"
#include "ops/op_util.h"

namespace tessel::ops {
namespace {

// ---- ReverseSequence --------------------------------------------------------

// Input 0: at least 2-D, time along time_axis and batch along batch_axis (0
// and 1, either way round); input 1 sequence_lens, one per batch entry. The
// first sequence_lens[b] time steps of entry b are reversed, the rest copied.
Status InferReverseSequence(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 1, {DType::kInt64}));
  const Shape& x = node.input(0)->shape;
  const int64_t batch_axis = node.attrs.Int("batch_axis", 1);
  const int64_t time_axis = node.attrs.Int("time_axis", 0);
  const bool axes_ok = (batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0);
  if (x.size() < 2 || !axes_ok) {
    return InvalidArgument(node.Describe() + ": batch_axis " + std::to_string(batch_axis) +
                           " and time_axis " + std::to_string(time_axis) +
                           " must be 0 and 1 in some order, for input shape " + ShapeToString(x) +
                           " of rank >= 2");
  }
  const ir::Value* lens = node.input(1);
  if (lens->shape != Shape{x[batch_axis]}) {
    return InvalidArgument(node.Describe() + ": sequence_lens '" + lens->name + "' has shape " +
                           ShapeToString(lens->shape) + "; expected " +
                           std::to_string(x[batch_axis]) + " (one per batch entry)");
  }
  SetOutput(node, 0, node.input(0)->dtype, x);
  return Status::Ok();
}

Status RunReverseSequence(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  const int64_t batch_axis = ctx.node.attrs.Int("batch_axis", 1);
  const int64_t steps = x.dim(1 - batch_axis), batches = x.dim(batch_axis);
  const size_t run =
      static_cast<size_t>(x.num_elements() / (steps * batches > 0 ? steps * batches : 1)) *
      DTypeSize(x.dtype());
  // Offset of (time t, batch b) in units of `run`.
  auto at = [&](int64_t t, int64_t b) { return batch_axis == 1 ? t * batches + b : b * steps + t; };
  const auto* src = static_cast<const uint8_t*>(x.raw_data());
  auto* dst = static_cast<uint8_t*>(y.raw_data());
  for (int64_t b = 0; b < batches; ++b) {
    const int64_t len = ctx.in(1).GetAsInt64(b);
    if (len < 0 || len > steps) {
      return InvalidArgument(ctx.node.Describe() + ": sequence length " + std::to_string(len) +
                             " of batch entry " + std::to_string(b) + " is out of range [0, " +
                             std::to_string(steps) + "]");
    }
    for (int64_t t = 0; t < steps; ++t) {
      const int64_t from = t < len ? len - 1 - t : t;
      std::memcpy(dst + at(t, b) * run, src + at(from, b) * run, run);
    }
  }
  return Status::Ok();
}

// ---- MaxUnpool --------------------------------------------------------------

// Inputs: 0 X (N x C x D1 ...), 1 I (MaxPool's indices, X's shape), 2 the
// optional output_shape. The indices address the unpooled shape the
// kernel, strides and pads give, (D - 1) * stride + kernel - pads; a larger
// output_shape pads that shape at the end of each axis.
StatusOr<Shape> UnpooledShape(const ir::Node& node, const Shape& x) {
  const size_t n = x.size() - 2;
  const std::vector<int64_t> kernel = node.attrs.Ints("kernel_shape");
  std::vector<int64_t> strides = node.attrs.Ints("strides");
  std::vector<int64_t> pads = node.attrs.Ints("pads");
  if (strides.empty()) strides.assign(n, 1);
  if (pads.empty()) pads.assign(2 * n, 0);
  if (kernel.size() != n || strides.size() != n || pads.size() != 2 * n) {
    return InvalidArgument(node.Describe() + ": kernel_shape, strides and pads need " +
                           std::to_string(n) + ", " + std::to_string(n) + " and " +
                           std::to_string(2 * n) + " values for input shape " + ShapeToString(x));
  }
  Shape out = {x[0], x[1]};
  for (size_t i = 0; i < n; ++i) {
    const WideInt d =
        WideInt{x[i + 2] - 1} * strides[i] + kernel[i] - WideInt{pads[i]} - pads[i + n];
    if (kernel[i] < 1 || strides[i] < 1 || d < 0 || !FitsInt64(d)) {
      return InvalidArgument(node.Describe() + ": kernel_shape, strides and pads give no valid " +
                             "size for axis " + std::to_string(i + 2) + " of input shape " +
                             ShapeToString(x));
    }
    out.push_back(static_cast<int64_t>(d));
  }
  return out;
}

Status InferMaxUnpool(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, kFloatTypes));
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 1, {DType::kInt64}));
  const Shape& x = node.input(0)->shape;
  if (x.size() < 3 || node.input(1)->shape != x) {
    return InvalidArgument(node.Describe() + ": X shape " + ShapeToString(x) +
                           " and indices shape " + ShapeToString(node.input(1)->shape) +
                           " must be equal and of rank >= 3");
  }
  TESSEL_ASSIGN_OR_RETURN(Shape unpooled, UnpooledShape(node, x));
  Shape out = unpooled;
  if (node.input(2)) {
    TESSEL_RETURN_IF_ERROR(RequireDType(node, 2, {DType::kInt64}));
    TESSEL_ASSIGN_OR_RETURN(const Tensor* given, RequireConstantInput(node, 2, "output_shape"));
    out = given->ToInt64Vector();
    // A huge output_shape must fail here, not when the output is allocated:
    // every dimension within int32 and the element count within int64.
    bool fits = out.size() == unpooled.size();
    int64_t count = 1;
    for (size_t i = 0; fits && i < out.size(); ++i) {
      fits = (i < 2 ? out[i] == unpooled[i] : out[i] >= unpooled[i]) &&
             out[i] <= std::numeric_limits<int32_t>::max() &&
             !__builtin_mul_overflow(count, out[i], &count);
    }
    if (!fits) {
      return InvalidArgument(node.Describe() + ": output_shape " + ShapeToString(out) +
                             " cannot hold the unpooled shape " + ShapeToString(unpooled));
    }
  }
  SetOutput(node, 0, node.input(0)->dtype, out);
  return Status::Ok();
}

Status RunMaxUnpool(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& indices = ctx.in(1);
  Tensor& y = ctx.out(0);
  TESSEL_ASSIGN_OR_RETURN(Shape unpooled, UnpooledShape(ctx.node, x.shape()));
  const int64_t limit = NumElements(unpooled);
  const std::vector<int64_t> from = StridesOf(unpooled), to = StridesOf(y.shape());
  const size_t es = DTypeSize(x.dtype());
  const auto* src = static_cast<const uint8_t*>(x.raw_data());
  auto* dst = static_cast<uint8_t*>(y.raw_data());
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    int64_t index = indices.GetAsInt64(i);
    if (index < 0 || index >= limit) {
      return InvalidArgument(ctx.node.Describe() + ": index " + std::to_string(index) +
                             " at element " + std::to_string(i) + " is out of range [0, " +
                             std::to_string(limit) + ") for the unpooled shape " +
                             ShapeToString(unpooled));
    }
    // Coordinates in the unpooled shape, placed at the same coordinates of
    // the output.
    int64_t offset = 0;
    for (size_t d = 0; d < from.size(); ++d) {
      offset += index / from[d] * to[d];
      index %= from[d];
    }
    std::memcpy(dst + offset * es, src + i * es, es);
  }
  return Status::Ok();
}

}  // namespace

void RegisterReorderOps(OpRegistry& r) {
  r.Register({.op_type = "ReverseSequence",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 2,
              .max_inputs = 2,
              .infer = InferReverseSequence,
              .run = RunReverseSequence});
  r.Register({.op_type = "MaxUnpool",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 2,
              .max_inputs = 3,
              .infer = InferMaxUnpool,
              .run = RunMaxUnpool});
}

}  // namespace tessel::ops
