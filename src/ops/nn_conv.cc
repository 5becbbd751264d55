// Conv and ConvTranspose: N-d direct convolution.
//
// Both kernels walk one (input plane, output plane, kernel tap) triple at a
// time and accumulate whole rows along the last spatial axis, so the innermost
// loop is a bounds-check-free axpy over contiguous memory (strided on one side
// when stride > 1). Conv gathers (out[x] += w * in[x * s + off]); ConvTranspose
// scatters (out[x * s + off] += w * in[x]). The row pairing and the valid x
// range of each tap are computed once per op call.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "ops/fused_activation.h"
#include "ops/nn_internal.h"
#include "ops/op_registry.h"
#include "ops/op_util.h"

namespace tessel::ops {

namespace {

const std::string& InputName(const ir::Node& node, size_t i) { return node.input(i)->name; }

// Checks what Conv and ConvTranspose share: dtypes, ranks, group and the
// kernel_shape attribute.
Status CheckConvInputs(const ir::Node& node, const Shape& x, const Shape& w, int64_t group) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, kFloatTypes));
  TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, 1, 2}));
  if (x.size() < 3) {
    return InvalidArgument(node.Describe() + ": input '" + InputName(node, 0) + "' has shape " +
                           ShapeToString(x) + "; expected rank >= 3 (N x C x D1 ...)");
  }
  if (w.size() != x.size()) {
    return InvalidArgument(node.Describe() + ": W '" + InputName(node, 1) + "' has shape " +
                           ShapeToString(w) + "; expected rank " + std::to_string(x.size()) +
                           " like input '" + InputName(node, 0) + "' (" + ShapeToString(x) + ")");
  }
  if (group < 1) {
    return InvalidArgument(node.Describe() + ": group " + std::to_string(group) + " must be >= 1");
  }
  for (size_t i = 2; i < w.size(); ++i) {
    if (w[i] < 1) {
      return InvalidArgument(node.Describe() + ": W '" + InputName(node, 1) + "' has shape " +
                             ShapeToString(w) + "; kernel dims must be >= 1");
    }
  }
  if (node.attrs.Has("kernel_shape")) {
    const std::vector<int64_t> ks = node.attrs.Ints("kernel_shape");
    const std::vector<int64_t> from_w(w.begin() + 2, w.end());
    if (ks != from_w) {
      return InvalidArgument(node.Describe() + ": kernel_shape " + IntsToString(ks) +
                             " does not match W '" + InputName(node, 1) + "' of shape " +
                             ShapeToString(w));
    }
  }
  return Status::Ok();
}

Status CheckBias(const ir::Node& node, const Shape* b, int64_t out_channels) {
  if (b != nullptr && (b->size() != 1 || (*b)[0] != out_channels)) {
    return InvalidArgument(node.Describe() + ": bias '" + InputName(node, 2) + "' has shape " +
                           ShapeToString(*b) + "; expected " + std::to_string(out_channels) +
                           " (one per output channel)");
  }
  return Status::Ok();
}

Status ResolveConv(const ir::Node& node, const Shape& x, const Shape& w, const Shape* b,
                   ConvGeometry* g) {
  g->group = node.attrs.Int("group", 1);
  TESSEL_RETURN_IF_ERROR(CheckConvInputs(node, x, w, g->group));
  if (x[1] % g->group != 0 || x[1] / g->group != w[1]) {
    return InvalidArgument(node.Describe() + ": input '" + InputName(node, 0) + "' has " +
                           std::to_string(x[1]) + " channels but W '" + InputName(node, 1) + "' (" +
                           ShapeToString(w) + ") expects " + std::to_string(w[1]) + " x group " +
                           std::to_string(g->group));
  }
  if (w[0] % g->group != 0) {
    return InvalidArgument(node.Describe() + ": W '" + InputName(node, 1) + "' has " +
                           std::to_string(w[0]) + " output channels, not divisible by group " +
                           std::to_string(g->group));
  }
  TESSEL_RETURN_IF_ERROR(CheckBias(node, b, w[0]));
  g->batch = x[0];
  g->in_channels = x[1];
  g->out_channels = w[0];
  g->in_spatial.assign(x.begin() + 2, x.end());
  g->kernel.assign(w.begin() + 2, w.end());
  return ResolveWindow(node, g->in_spatial, g->kernel, /*ceil_mode=*/false, &g->strides,
                       &g->dilations, &g->pads, &g->out_spatial);
}

}  // namespace

Status ResolveConvTranspose(const ir::Node& node, const Shape& x, const Shape& w, const Shape* b,
                            ConvGeometry* g) {
  g->group = node.attrs.Int("group", 1);
  TESSEL_RETURN_IF_ERROR(CheckConvInputs(node, x, w, g->group));
  if (x[1] != w[0]) {
    return InvalidArgument(node.Describe() + ": input '" + InputName(node, 0) + "' has " +
                           std::to_string(x[1]) + " channels but W '" + InputName(node, 1) + "' (" +
                           ShapeToString(w) + ") expects " + std::to_string(w[0]));
  }
  if (x[1] % g->group != 0) {
    return InvalidArgument(node.Describe() + ": input '" + InputName(node, 0) + "' has " +
                           std::to_string(x[1]) + " channels, not divisible by group " +
                           std::to_string(g->group));
  }
  int64_t out_channels = 0;
  if (__builtin_mul_overflow(w[1], g->group, &out_channels)) {
    return InvalidArgument(node.Describe() + ": W '" + InputName(node, 1) + "' (" +
                           ShapeToString(w) + ") times group " + std::to_string(g->group) +
                           " output channels do not fit in 64 bits");
  }
  TESSEL_RETURN_IF_ERROR(CheckBias(node, b, out_channels));
  const size_t n = x.size() - 2;
  g->batch = x[0];
  g->in_channels = x[1];
  g->out_channels = out_channels;
  g->in_spatial.assign(x.begin() + 2, x.end());
  g->kernel.assign(w.begin() + 2, w.end());

  std::string auto_pad;
  std::vector<int64_t> output_padding;
  TESSEL_RETURN_IF_ERROR(ReadAutoPad(node, &auto_pad));
  TESSEL_RETURN_IF_ERROR(ReadSpatialInts(node, "strides", n, 1, 1, &g->strides));
  TESSEL_RETURN_IF_ERROR(ReadSpatialInts(node, "dilations", n, 1, 1, &g->dilations));
  TESSEL_RETURN_IF_ERROR(ReadPads(node, n, auto_pad, &g->pads));
  TESSEL_RETURN_IF_ERROR(ReadSpatialInts(node, "output_padding", n, 0, 0, &output_padding));
  for (size_t i = 0; i < n; ++i) {
    if (output_padding[i] >= std::max(g->strides[i], g->dilations[i])) {
      return InvalidArgument(node.Describe() + ": output_padding " + IntsToString(output_padding) +
                             " must be smaller than the stride or the dilation along each axis");
    }
  }
  std::vector<int64_t> output_shape = node.attrs.Ints("output_shape");
  // Some exporters spell output_shape with the batch and channel dims.
  if (output_shape.size() == n + 2) {
    output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  }
  if (node.attrs.Has("output_shape") && output_shape.size() != n) {
    return InvalidArgument(
        node.Describe() + ": output_shape " + IntsToString(node.attrs.Ints("output_shape")) +
        " has " + std::to_string(node.attrs.Ints("output_shape").size()) + " values; expected " +
        std::to_string(n) + ", one per spatial dimension");
  }
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  g->out_spatial.assign(n, 0);
  // In 128 bits, as in ResolveWindow: any attribute values, no overflow.
  using Wide = __int128;
  constexpr Wide kMax = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = g->in_spatial[i], s = g->strides[i];
    const Wide k_eff = Wide{g->dilations[i]} * (g->kernel[i] - 1) + 1;
    const Wide full = Wide{s} * (in - 1) + output_padding[i] + k_eff;
    int64_t& pb = g->pads[i];
    int64_t& pe = g->pads[i + n];
    Wide out = 0;
    if (full > kMax || k_eff > kMax) {
      return InvalidArgument(node.Describe() + ": its full output along axis " +
                             std::to_string(i + 2) + " (input " + std::to_string(in) + ", stride " +
                             std::to_string(s) + ", kernel " + std::to_string(g->kernel[i]) +
                             ", dilation " + std::to_string(g->dilations[i]) +
                             ") spans past 64 bits");
    }
    if (!output_shape.empty() || same) {
      out = !output_shape.empty() ? Wide{output_shape[i]} : Wide{in} * s;
      // A requested size beyond the full output leaves the extra trailing
      // elements at the bias; only a smaller one crops.
      const Wide total = std::max<Wide>(0, full - out);
      pb = static_cast<int64_t>(auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2);
      pe = static_cast<int64_t>(total - pb);
    } else {
      if (auto_pad == "VALID") pb = pe = 0;
      out = full - pb - pe;
    }
    if (out > kMax) {
      return InvalidArgument(node.Describe() + ": output size along axis " + std::to_string(i + 2) +
                             " does not fit in 64 bits");
    }
    if (out < 1) {
      return InvalidArgument(node.Describe() + ": output size along axis " + std::to_string(i + 2) +
                             " would be " + std::to_string(static_cast<int64_t>(out)) + " (input " +
                             std::to_string(in) + ", stride " + std::to_string(s) + ", kernel " +
                             std::to_string(g->kernel[i]) + ", pads " + std::to_string(pb) + "+" +
                             std::to_string(pe) + ")");
    }
    g->out_spatial[i] = static_cast<int64_t>(out);
  }
  return Status::Ok();
}

namespace {

Shape OutputShape(const ConvGeometry& g) {
  Shape out = {g.batch, g.out_channels};
  out.insert(out.end(), g.out_spatial.begin(), g.out_spatial.end());
  return out;
}

const Shape* OptionalShape(const ir::Node& node, size_t i) {
  return node.input(i) ? &node.input(i)->shape : nullptr;
}

Status InferConv(ir::Node& node, int opset) {
  ConvGeometry g;
  TESSEL_RETURN_IF_ERROR(
      ResolveConv(node, node.input(0)->shape, node.input(1)->shape, OptionalShape(node, 2), &g));
  SetOutput(node, 0, node.input(0)->dtype, OutputShape(g));
  return Status::Ok();
}

Status InferConvTranspose(ir::Node& node, int opset) {
  ConvGeometry g;
  TESSEL_RETURN_IF_ERROR(ResolveConvTranspose(node, node.input(0)->shape, node.input(1)->shape,
                                              OptionalShape(node, 2), &g));
  SetOutput(node, 0, node.input(0)->dtype, OutputShape(g));
  return Status::Ok();
}

// How the rows (all spatial axes but the last) of a "source" plane pair with
// those of a "destination" plane for every kernel tap, and which x range of a
// row each tap along the last axis touches. Index a on the source side meets
// index a * stride + k * dilation - pad_begin on the destination side. For
// Conv the source is the output (a gather); for ConvTranspose it is the
// input (a scatter).
struct RowPlan {
  int64_t src_rows = 1;
  int64_t kernel_rows = 1;  // taps over all axes but the last
  int64_t src_x = 0, dst_x = 0, kernel_x = 0, stride_x = 1;
  // row_map[kr * src_rows + sr] = destination row, or -1 when out of range.
  std::vector<int64_t> row_map;
  // For tap kx along x: source x in [x_begin, x_end) meets destination
  // x * stride_x + x_offset.
  std::vector<int64_t> x_begin, x_end, x_offset;
};

RowPlan MakeRowPlan(const Shape& src, const Shape& dst, const ConvGeometry& g) {
  const size_t n = src.size();
  Shape kernel = g.kernel;
  std::vector<int64_t> strides = g.strides, dilations = g.dilations;
  std::vector<int64_t> pad_begin(g.pads.begin(), g.pads.begin() + n);
  Shape src_s = src, dst_s = dst;
  // A 1x1 window with unit strides and no padding maps planes elementwise:
  // treat them as one long row.
  const bool pointwise =
      src == dst && std::all_of(kernel.begin(), kernel.end(), [](int64_t k) { return k == 1; }) &&
      std::all_of(strides.begin(), strides.end(), [](int64_t s) { return s == 1; }) &&
      std::all_of(pad_begin.begin(), pad_begin.end(), [](int64_t p) { return p == 0; });
  if (pointwise && n > 1) {
    src_s = dst_s = {NumElements(src)};
    kernel = {1};
    strides = dilations = {1};
    pad_begin = {0};
  }
  const size_t m = src_s.size();
  RowPlan p;
  for (size_t d = 0; d + 1 < m; ++d) {
    p.src_rows *= src_s[d];
    p.kernel_rows *= kernel[d];
  }
  p.src_x = src_s[m - 1];
  p.dst_x = dst_s[m - 1];
  p.kernel_x = kernel[m - 1];
  p.stride_x = strides[m - 1];

  p.row_map.assign(static_cast<size_t>(p.kernel_rows * p.src_rows), -1);
  std::vector<int64_t> k(m, 0), a(m, 0);
  for (int64_t kr = 0; kr < p.kernel_rows; ++kr) {
    std::fill(a.begin(), a.end(), 0);
    for (int64_t sr = 0; sr < p.src_rows; ++sr) {
      int64_t row = 0;
      bool valid = true;
      for (size_t d = 0; d + 1 < m; ++d) {
        const int64_t i = a[d] * strides[d] + k[d] * dilations[d] - pad_begin[d];
        if (i < 0 || i >= dst_s[d]) {
          valid = false;
          break;
        }
        row = row * dst_s[d] + i;
      }
      if (valid) p.row_map[kr * p.src_rows + sr] = row;
      for (int64_t d = static_cast<int64_t>(m) - 2; d >= 0 && ++a[d] == src_s[d]; --d) a[d] = 0;
    }
    for (int64_t d = static_cast<int64_t>(m) - 2; d >= 0 && ++k[d] == kernel[d]; --d) k[d] = 0;
  }
  for (int64_t kx = 0; kx < p.kernel_x; ++kx) {
    const int64_t off = kx * dilations[m - 1] - pad_begin[m - 1];
    // In 128 bits (a pad near 2^63 plus a stride must not wrap); the results
    // fit in 64 again, as |off| does.
    const auto begin =
        static_cast<int64_t>(std::max<WideInt>(0, CeilDiv(-WideInt{off}, p.stride_x)));
    const auto end = static_cast<int64_t>(
        std::min<WideInt>(p.src_x, CeilDiv(WideInt{p.dst_x} - off, p.stride_x)));
    p.x_begin.push_back(begin);
    p.x_end.push_back(std::max(begin, end));
    p.x_offset.push_back(off);
  }
  return p;
}

// Adds the contribution of one input plane to one output plane through the
// kernel `w` (kernel_rows x kernel_x taps). kGather is the Conv direction
// (the plan's source is the output), otherwise the ConvTranspose one.
template <typename T, bool kGather>
void AccumulatePlane(const RowPlan& p, const T* w, const T* in, T* out) {
  const int64_t s = p.stride_x;
  for (int64_t kr = 0; kr < p.kernel_rows; ++kr) {
    const int64_t* rows = p.row_map.data() + kr * p.src_rows;
    const T* wk = w + kr * p.kernel_x;
    for (int64_t sr = 0; sr < p.src_rows; ++sr) {
      const int64_t dr = rows[sr];
      if (dr < 0) continue;
      T* out_row = kGather ? out + sr * p.src_x : out + dr * p.dst_x;
      const T* in_row = kGather ? in + dr * p.dst_x : in + sr * p.src_x;
      for (int64_t kx = 0; kx < p.kernel_x; ++kx) {
        const int64_t begin = p.x_begin[kx], len = p.x_end[kx] - begin;
        if (len <= 0) continue;
        const T wv = wk[kx];
        const int64_t first = begin * s + p.x_offset[kx];
        if constexpr (kGather) {
          T* o = out_row + begin;
          const T* src = in_row + first;
          if (s == 1) {
            for (int64_t x = 0; x < len; ++x) o[x] += wv * src[x];
          } else {
            for (int64_t x = 0; x < len; ++x) o[x] += wv * src[x * s];
          }
        } else {
          T* o = out_row + first;
          const T* src = in_row + begin;
          if (s == 1) {
            for (int64_t x = 0; x < len; ++x) o[x] += wv * src[x];
          } else {
            for (int64_t x = 0; x < len; ++x) o[x * s] += wv * src[x];
          }
        }
      }
    }
  }
}

template <typename T>
void FillBias(KernelContext& ctx, const ConvGeometry& g, T* y, int64_t out_plane) {
  if (!ctx.has_in(2)) return;
  const T* b = ctx.in(2).data<T>();
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t m = 0; m < g.out_channels; ++m) {
      T* plane = y + (n * g.out_channels + m) * out_plane;
      std::fill(plane, plane + out_plane, b[m]);
    }
  }
}

template <typename T>
Status RunConvT(KernelContext& ctx) {
  ConvGeometry g;
  const Shape* b_shape = ctx.has_in(2) ? &ctx.in(2).shape() : nullptr;
  TESSEL_RETURN_IF_ERROR(ResolveConv(ctx.node, ctx.in(0).shape(), ctx.in(1).shape(), b_shape, &g));
  const T* x = ctx.in(0).data<T>();
  const T* w = ctx.in(1).data<T>();
  T* y = ctx.out(0).data<T>();
  const int64_t in_plane = NumElements(g.in_spatial), out_plane = NumElements(g.out_spatial);
  const int64_t taps = NumElements(g.kernel);
  const int64_t cg = g.in_channels / g.group, mg = g.out_channels / g.group;
  const RowPlan plan = MakeRowPlan(g.out_spatial, g.in_spatial, g);
  FillBias(ctx, g, y, out_plane);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t m = 0; m < g.out_channels; ++m) {
      const int64_t group = m / mg;
      T* out = y + (n * g.out_channels + m) * out_plane;
      for (int64_t c = 0; c < cg; ++c) {
        const T* in = x + (n * g.in_channels + group * cg + c) * in_plane;
        AccumulatePlane<T, true>(plan, w + (m * cg + c) * taps, in, out);
      }
    }
  }
  return Status::Ok();
}

template <typename T>
Status RunConvTransposeT(KernelContext& ctx) {
  ConvGeometry g;
  const Shape* b_shape = ctx.has_in(2) ? &ctx.in(2).shape() : nullptr;
  TESSEL_RETURN_IF_ERROR(
      ResolveConvTranspose(ctx.node, ctx.in(0).shape(), ctx.in(1).shape(), b_shape, &g));
  const T* x = ctx.in(0).data<T>();
  const T* w = ctx.in(1).data<T>();
  T* y = ctx.out(0).data<T>();
  const int64_t in_plane = NumElements(g.in_spatial), out_plane = NumElements(g.out_spatial);
  const int64_t taps = NumElements(g.kernel);
  const int64_t cg = g.in_channels / g.group, mg = g.out_channels / g.group;
  const RowPlan plan = MakeRowPlan(g.in_spatial, g.out_spatial, g);
  FillBias(ctx, g, y, out_plane);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t m = 0; m < g.out_channels; ++m) {
      const int64_t group = m / mg;
      T* out = y + (n * g.out_channels + m) * out_plane;
      for (int64_t c = 0; c < cg; ++c) {
        const int64_t ci = group * cg + c;
        const T* in = x + (n * g.in_channels + ci) * in_plane;
        // W is C x M/group x k...: input channel major.
        AccumulatePlane<T, false>(plan, w + (ci * mg + m % mg) * taps, in, out);
      }
    }
  }
  return Status::Ok();
}

Status RunConv(KernelContext& ctx) {
  return RunFloatKernel(ctx, RunConvT<float>, RunConvT<double>);
}

Status RunConvTranspose(KernelContext& ctx) {
  return RunFloatKernel(ctx, RunConvTransposeT<float>, RunConvTransposeT<double>);
}

// FusedConv (domain "tessel", made by passes/fuse_conv_activation):
// Y = activation(Conv(X, W, B) + Z), Z optional and of Y's shape; the
// activation and its attributes as ops/fused_activation.h defines them.
Status InferFusedConv(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(InferConv(node, opset));
  const ir::Value* y = node.output(0);
  if (const ir::Value* z = node.input(3); z && (z->dtype != y->dtype || z->shape != y->shape)) {
    return InvalidArgument(node.Describe() + ": residual '" + z->name + "' has shape " +
                           ShapeToString(z->shape) + "; expected the output's " +
                           ShapeToString(y->shape));
  }
  return ParseFusedActivation(node).status();
}

template <typename T>
Status RunFusedConvT(KernelContext& ctx) {
  TESSEL_RETURN_IF_ERROR(RunConvT<T>(ctx));
  T* y = ctx.out(0).data<T>();
  const int64_t n = ctx.out(0).num_elements();
  if (ctx.has_in(3)) {
    const T* z = ctx.in(3).data<T>();
    for (int64_t i = 0; i < n; ++i) y[i] += z[i];
  }
  TESSEL_ASSIGN_OR_RETURN(const FusedActivation activation, ParseFusedActivation(ctx.node));
  ApplyActivation(activation, std::span<T>(y, static_cast<size_t>(n)));
  return Status::Ok();
}

Status RunFusedConv(KernelContext& ctx) {
  return RunFloatKernel(ctx, RunFusedConvT<float>, RunFusedConvT<double>);
}

}  // namespace

void RegisterConvOps(OpRegistry& r) {
  r.Register({.op_type = "FusedConv",
              .domain = "tessel",
              .op_class = OpClass::kOpaque,
              .min_inputs = 2,
              .max_inputs = 4,
              .min_outputs = 1,
              .max_outputs = 1,
              .infer = InferFusedConv,
              .run = RunFusedConv,
              .foldable = false});
  r.Register({.op_type = "Conv",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 2,
              .max_inputs = 3,
              .min_outputs = 1,
              .max_outputs = 1,
              .infer = InferConv,
              .run = RunConv});
  r.Register({.op_type = "ConvTranspose",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 2,
              .max_inputs = 3,
              .min_outputs = 1,
              .max_outputs = 1,
              .infer = InferConvTranspose,
              .run = RunConvTranspose});
}

}  // namespace tessel::ops
