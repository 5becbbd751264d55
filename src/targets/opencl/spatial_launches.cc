#include "targets/opencl/spatial_launches.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "ops/nn_internal.h"
#include "targets/opencl/launch_util.h"

namespace tessel::opencl::spatial_ops {

namespace {

using Ints8 = std::array<int64_t, 8>;
using Ints16 = std::array<int64_t, 16>;

// Grouped ConvTransposes with fewer output channels per group than this
// run one output per item: a GEMM tile's 32 rows would be mostly empty.
constexpr int64_t kMinGemmRows = 16;

// The kernels index with 32-bit ints.
bool FitsInt32(const ir::Value* v) {
  return !v || NumElements(v->shape) <= std::numeric_limits<int32_t>::max();
}

LaunchGeometry Grid3(int64_t x, int64_t y, int64_t z) {
  LaunchGeometry g;
  g.dims = 3;
  g.global = {static_cast<size_t>(std::max<int64_t>(x, 1)),
              static_cast<size_t>(std::max<int64_t>(y, 1)),
              static_cast<size_t>(std::max<int64_t>(z, 1))};
  return g;
}

template <typename T>
std::vector<unsigned char> AsBytes(const std::vector<T>& v) {
  std::vector<unsigned char> bytes(v.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

// A sliding window's spatial axes right-aligned into three (D, H, W), the
// leading ones of length 1, one tap, no padding.
struct Window3 {
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1}, strides{1, 1, 1},
      dilations{1, 1, 1}, pad_begin{0, 0, 0}, pad_end{0, 0, 0};
};

Window3 ToWindow3(const Shape& in, const Shape& out, const std::vector<int64_t>& kernel,
                  const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations,
                  const std::vector<int64_t>& pads) {
  Window3 w;
  const size_t n = in.size(), skip = 3 - n;
  for (size_t i = 0; i < n; ++i) {
    w.in[skip + i] = in[i];
    w.out[skip + i] = out[i];
    w.kernel[skip + i] = kernel[i];
    w.strides[skip + i] = strides[i];
    w.dilations[skip + i] = dilations[i];
    w.pad_begin[skip + i] = pads[i];
    w.pad_end[skip + i] = pads[n + i];
  }
  return w;
}

// One phase of a ConvTranspose along one axis: the outputs r, r + s, ...
// (`extent` of them) and the taps that reach them, tap k reading input
// j + delta[k] for output r + s * j.
struct AxisPhase {
  int64_t extent = 0;
  std::vector<int64_t> tap, delta;
};

AxisPhase MakeAxisPhase(int64_t r, int64_t in, int64_t out, int64_t kernel, int64_t stride,
                        int64_t dilation, int64_t pad_begin) {
  AxisPhase p;
  p.extent = out > r ? (out - r + stride - 1) / stride : 0;
  for (int64_t k = 0; k < kernel; ++k) {
    const int64_t t = r + pad_begin - k * dilation;
    if (t % stride != 0) continue;
    const int64_t delta = t / stride;  // exact
    // Taps that never land inside the input add nothing.
    if (delta >= in || delta + p.extent <= 0) continue;
    p.tap.push_back(k);
    p.delta.push_back(delta);
  }
  return p;
}

}  // namespace

std::vector<unsigned char> VolumeConvTaps(int64_t cpg, const std::array<int64_t, 3>& in,
                                          const std::array<int64_t, 3>& kernel,
                                          const std::array<int64_t, 3>& dilations) {
  std::vector<int32_t> taps;
  taps.reserve(static_cast<size_t>(cpg * kernel[0] * kernel[1] * kernel[2] * 4));
  const int64_t H = in[1], W = in[2];
  for (int64_t ch = 0; ch < cpg; ++ch) {
    for (int64_t kd = 0; kd < kernel[0]; ++kd) {
      for (int64_t kh = 0; kh < kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < kernel[2]; ++kw) {
          const int64_t dd = kd * dilations[0], dh = kh * dilations[1], dw = kw * dilations[2];
          for (int64_t v : {ch * in[0] * H * W + (dd * H + dh) * W + dw, dd, dh, dw}) {
            taps.push_back(static_cast<int32_t>(v));
          }
        }
      }
    }
  }
  return AsBytes(taps);
}

Status PoolVolume(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  const ir::Value* x = c.node.input(0);
  const ir::Value* y = c.node.output(0);
  const ir::Value* indices = c.node.output(1);
  const size_t rank = x->shape.size();
  if (rank < 3 || rank > 5) {
    return Unsupported(c.node, "pools signals, images and volumes (rank 3 to 5) only");
  }
  if (x->dtype != DType::kFloat32) return Unsupported(c.node, "pools float32 only");
  if (!FitsInt32(x) || !FitsInt32(y)) {
    return Unsupported(c.node, "pools tensors of fewer than 2^31 elements only");
  }
  const std::string& op = c.node.op_type;
  const Shape in_spatial(x->shape.begin() + 2, x->shape.end());
  const std::vector<int64_t> kernel = c.node.attrs.Ints("kernel_shape");
  std::vector<int64_t> strides, dilations, pads;
  Shape out_spatial;
  TESSEL_RETURN_IF_ERROR(ops::ResolveWindow(c.node, in_spatial, kernel,
                                            c.node.attrs.Int("ceil_mode", 0) != 0, &strides,
                                            &dilations, &pads, &out_spatial));
  const Window3 w = ToWindow3(in_spatial, out_spatial, kernel, strides, dilations, pads);
  const int64_t planes = x->shape[0] * x->shape[1];
  if (NumElements(y->shape) == 0) return Status::Ok();
  const int64_t kind = op == "MaxPool" ? 0 : op == "AveragePool" ? 1 : 2;
  const Ints16 geo = {w.in[0],        w.in[1],        w.in[2],        w.out[0],
                      w.out[1],       w.out[2],       w.kernel[0],    w.kernel[1],
                      w.kernel[2],    w.strides[0],   w.strides[1],   w.strides[2],
                      w.pad_begin[0], w.pad_begin[1], w.pad_begin[2], kind};
  const Ints8 extra = {w.dilations[0],
                       w.dilations[1],
                       w.dilations[2],
                       w.in[0] + w.pad_end[0],
                       w.in[1] + w.pad_end[1],
                       w.in[2] + w.pad_end[2],
                       c.node.attrs.Int("count_include_pad", 0),
                       c.node.attrs.Int("storage_order", 0)};
  PendingLaunch l;
  l.kernel_name = "f32_pool3d";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(y)).Tensor(c.ref(indices ? indices : y));
  l.args.Int(indices ? 1 : 0).Int(planes).Ints(geo).Ints(extra);
  l.args.Float(c.node.attrs.Float("p", 2.0f));
  l.geometry = Grid3(w.out[2], w.out[1], planes * w.out[0]);
  l.bytes = Bytes(x) + Bytes(y) + Bytes(indices);
  l.flops = NumElements(y->shape) * w.kernel[0] * w.kernel[1] * w.kernel[2];
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status MaxUnpool(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  const ir::Value* x = c.node.input(0);
  const ir::Value* ind = c.node.input(1);
  const ir::Value* y = c.node.output(0);
  if (DTypeSize(x->dtype) != 4) {
    return Unsupported(c.node,
                       std::string("unpools 4-byte elements only, not ") + DTypeName(x->dtype));
  }
  if (ind->dtype != DType::kInt64) return Unsupported(c.node, "takes int64 indices only");
  const size_t rank = x->shape.size();
  if (rank < 3 || rank > 6) return Unsupported(c.node, "unpools tensors of rank 3 to 6 only");
  if (!FitsInt32(x) || !FitsInt32(y)) {
    return Unsupported(c.node, "unpools tensors of fewer than 2^31 elements only");
  }
  // The shape the indices address (ops/reorder.cc's UnpooledShape); a
  // larger output_shape pads it at the end of each axis.
  const size_t n = rank - 2;
  const std::vector<int64_t> kernel = c.node.attrs.Ints("kernel_shape");
  std::vector<int64_t> strides = c.node.attrs.Ints("strides");
  std::vector<int64_t> pads = c.node.attrs.Ints("pads");
  if (strides.empty()) strides.assign(n, 1);
  if (pads.empty()) pads.assign(2 * n, 0);
  if (kernel.size() != n || strides.size() != n || pads.size() != 2 * n) {
    return Unsupported(c.node, "needs kernel_shape, strides and pads of one value per axis");
  }
  Shape unpooled = {x->shape[0], x->shape[1]};
  for (size_t i = 0; i < n; ++i) {
    unpooled.push_back((x->shape[i + 2] - 1) * strides[i] + kernel[i] - pads[i] - pads[i + n]);
  }
  const int64_t out = NumElements(y->shape), in = NumElements(x->shape);
  if (out == 0) return Status::Ok();
  PendingLaunch zero;
  zero.kernel_name = "b32_zero";
  zero.args.Tensor(c.ref(y)).Int(out);
  zero.geometry = Linear(out);
  zero.bytes = Bytes(y);
  launches->push_back(std::move(zero));
  if (in == 0) return Status::Ok();
  Ints8 ys = Strides6(y->shape);
  PendingLaunch l;
  l.kernel_name = "b32_max_unpool";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(ind)).Tensor(c.ref(y)).Int(in);
  l.args.Ints(Pad6(unpooled)).Ints(ys);
  l.geometry = Linear(in);
  l.bytes = 2 * Bytes(x) + Bytes(ind);
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status ConvTranspose(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  const ir::Value* x = c.node.input(0);
  const ir::Value* wt = c.node.input(1);
  const ir::Value* b = c.node.input(2);
  const ir::Value* y = c.node.output(0);
  const size_t rank = x->shape.size();
  if (rank < 3 || rank > 5) {
    return Unsupported(c.node, "transposes convolutions of signals, images and volumes only");
  }
  if (x->dtype != DType::kFloat32) return Unsupported(c.node, "convolves float32 only");
  if (!FitsInt32(x) || !FitsInt32(wt) || !FitsInt32(y)) {
    return Unsupported(c.node, "convolves tensors of fewer than 2^31 elements only");
  }
  const size_t n = rank - 2;
  const Shape in_spatial(x->shape.begin() + 2, x->shape.end());
  const Shape out_spatial(y->shape.begin() + 2, y->shape.end());
  const std::vector<int64_t> kernel(wt->shape.begin() + 2, wt->shape.end());
  // Strides, dilations and the begin pads as the reference resolves them
  // (auto_pad, output_shape and output_padding); the end pads follow from
  // the output's shape.
  ops::ConvGeometry g;
  TESSEL_RETURN_IF_ERROR(
      ops::ResolveConvTranspose(c.node, x->shape, wt->shape, b ? &b->shape : nullptr, &g));
  std::vector<int64_t> pads(g.pads.begin(), g.pads.begin() + static_cast<ptrdiff_t>(n));
  pads.insert(pads.end(), n, 0);
  const Window3 w = ToWindow3(in_spatial, out_spatial, kernel, g.strides, g.dilations, pads);
  const int64_t group = c.node.attrs.Int("group", 1);
  const int64_t N = x->shape[0], C = x->shape[1], OC = y->shape[1];
  const int64_t cpg = C / group, opg = OC / group;
  const int64_t taps = w.kernel[0] * w.kernel[1] * w.kernel[2];
  const int64_t outputs = NumElements(y->shape);
  if (outputs == 0) return Status::Ok();
  const int64_t bytes = Bytes(x) + Bytes(wt) + Bytes(b) + Bytes(y);
  if (opg < kMinGemmRows || NumElements(x->shape) == 0) {
    const Ints16 geo = {C,
                        w.in[0],
                        w.in[1],
                        w.in[2],
                        OC,
                        w.out[0],
                        w.out[1],
                        w.out[2],
                        w.strides[0],
                        w.strides[1],
                        w.strides[2],
                        w.pad_begin[0],
                        w.pad_begin[1],
                        w.pad_begin[2],
                        group,
                        N};
    const Ints8 k = {w.kernel[0],    w.kernel[1],    w.kernel[2], w.dilations[0],
                     w.dilations[1], w.dilations[2], 0,           0};
    PendingLaunch l;
    l.kernel_name = "f32_conv_transpose_direct";
    l.args.Tensor(c.ref(x)).Tensor(c.ref(wt)).Tensor(c.ref(y)).Ints(geo).Ints(k);
    l.args.Tensor(c.ref(b ? b : y)).Int(b ? 1 : 0);
    l.geometry = Grid3(w.out[2], w.out[1], N * OC * w.out[0]);
    l.bytes = bytes;
    l.flops = 2 * NumElements(x->shape) * opg * taps;
    launches->push_back(std::move(l));
    return Status::Ok();
  }
  const Ints16 geo = {C,
                      w.in[0],
                      w.in[1],
                      w.in[2],
                      OC,
                      w.out[0],
                      w.out[1],
                      w.out[2],
                      w.strides[0],
                      w.strides[1],
                      w.strides[2],
                      group,
                      N,
                      taps,
                      0,
                      0};
  const int64_t in_volume = w.in[0] * w.in[1] * w.in[2];
  for (int64_t rd = 0; rd < w.strides[0]; ++rd) {
    for (int64_t rh = 0; rh < w.strides[1]; ++rh) {
      for (int64_t rw = 0; rw < w.strides[2]; ++rw) {
        const std::array<int64_t, 3> r{rd, rh, rw};
        std::array<AxisPhase, 3> p;
        for (size_t a = 0; a < 3; ++a) {
          p[a] = MakeAxisPhase(r[a], w.in[a], w.out[a], w.kernel[a], w.strides[a], w.dilations[a],
                               w.pad_begin[a]);
        }
        const int64_t columns = p[0].extent * p[1].extent * p[2].extent;
        if (columns == 0) continue;
        // k = (c, tap of the phase): int8 {input offset, deltas, W offset}.
        std::vector<int32_t> table;
        for (int64_t ch = 0; ch < cpg; ++ch) {
          for (size_t i = 0; i < p[0].tap.size(); ++i) {
            for (size_t j = 0; j < p[1].tap.size(); ++j) {
              for (size_t k = 0; k < p[2].tap.size(); ++k) {
                const int64_t dd = p[0].delta[i], dh = p[1].delta[j], dw = p[2].delta[k];
                const int64_t tap =
                    (p[0].tap[i] * w.kernel[1] + p[1].tap[j]) * w.kernel[2] + p[2].tap[k];
                for (int64_t v : {ch * in_volume + (dd * w.in[1] + dh) * w.in[2] + dw, dd, dh, dw,
                                  ch * opg * taps + tap, int64_t{0}, int64_t{0}, int64_t{0}}) {
                  table.push_back(static_cast<int32_t>(v));
                }
              }
            }
          }
        }
        const int64_t K = static_cast<int64_t>(table.size() / 8);
        if (table.empty()) table.assign(8, 0);  // a phase no tap reaches: the bias alone
        const int64_t tile =
            2 * ((opg + 63) / 64) * ((columns + 63) / 64) * N * group >= c.compute_units ? 64 : 32;
        const int64_t per_item = tile == 64 ? 4 : 2;
        const Ints8 phase = {rd, rh, rw, p[0].extent, p[1].extent, p[2].extent, 0, 0};
        PendingLaunch l;
        l.kernel_name = std::string("f32_conv_transpose_gemm_") + (tile == 64 ? "64x64" : "32x32");
        l.args.Tensor(c.ref(x)).Tensor(c.ref(wt)).Table(AsBytes(table)).Tensor(c.ref(y));
        l.args.Ints(std::array<int64_t, 4>{opg, columns, K, 1}).Ints(geo).Ints(phase);
        l.args.Tensor(c.ref(b ? b : y)).Int(b ? 1 : 0);
        l.geometry.dims = 3;
        l.geometry.global = {static_cast<size_t>((columns + tile - 1) / tile * (tile / per_item)),
                             static_cast<size_t>((opg + tile - 1) / tile * (tile / per_item)),
                             static_cast<size_t>(N * group)};
        l.geometry.local = {static_cast<size_t>(tile / per_item),
                            static_cast<size_t>(tile / per_item), 1};
        l.bytes = bytes;
        l.flops = 2 * opg * columns * K * N * group;
        launches->push_back(std::move(l));
      }
    }
  }
  return Status::Ok();
}

Status Loss(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  const ir::Value* x = c.node.input(0);
  const ir::Value* target = c.node.input(1);
  const ir::Value* weight = c.node.input(2);
  const ir::Value* y = c.node.output(0);
  const ir::Value* log_prob = c.node.output(1);
  const bool sce = c.node.op_type == "SoftmaxCrossEntropyLoss";
  if (x->dtype != DType::kFloat32) return Unsupported(c.node, "computes losses of float32 only");
  if (target->dtype != DType::kInt64 && target->dtype != DType::kInt32) {
    return Unsupported(c.node, "takes int32 or int64 targets only");
  }
  if (!FitsInt32(x)) {
    return Unsupported(c.node, "computes losses of fewer than 2^31 elements only");
  }
  const std::string reduction = c.node.attrs.String("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    return Unsupported(c.node, "reduces by none, sum or mean only, not '" + reduction + "'");
  }
  const int64_t ignore_index = c.node.attrs.Int("ignore_index", 0);
  if (ignore_index < std::numeric_limits<int32_t>::min() ||
      ignore_index > std::numeric_limits<int32_t>::max()) {
    return Unsupported(c.node, "takes an ignore_index of 32 bits only");
  }
  const int64_t batch = x->shape[0], classes = x->shape[1];
  const int64_t inner = batch * classes == 0 ? 0 : NumElements(x->shape) / (batch * classes);
  const int64_t positions = batch * inner;
  const bool none = reduction == "none";
  if (positions == 0 && none && !log_prob) return Status::Ok();
  const int64_t groups = std::max<int64_t>((positions + kRowGroup - 1) / kRowGroup, 1);
  if (!none && !c.scratch) return Unsupported(c.node, "needs a scratch buffer to reduce a loss");
  const TensorRef partials = none ? c.ref(y) : c.scratch(2 * groups * 4);
  PendingLaunch l;
  l.kernel_name = target->dtype == DType::kInt64 ? "f32_loss_i64" : "f32_loss_i32";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(target)).Tensor(c.ref(weight ? weight : x));
  l.args.Int(weight ? 1 : 0).Tensor(partials).Tensor(c.ref(log_prob ? log_prob : x));
  l.args.Int(sce && log_prob ? 1 : 0);
  l.args.Ints(std::array<int64_t, 4>{classes, inner, positions, sce ? 1 : 0});
  l.args.Int(c.node.attrs.Has("ignore_index") ? 1 : 0).Int(ignore_index).Int(none ? 0 : 1);
  l.geometry = Linear(groups * kRowGroup);
  l.geometry.local = {static_cast<size_t>(kRowGroup), 1, 1};
  l.bytes = Bytes(x) + Bytes(target) + Bytes(weight) + Bytes(log_prob) + (none ? Bytes(y) : 0);
  l.flops = (sce ? 4 : 1) * NumElements(x->shape);
  launches->push_back(std::move(l));
  if (none) return Status::Ok();
  PendingLaunch total;
  total.kernel_name = "f32_loss_total";
  total.args.Tensor(partials).Int(groups).Tensor(c.ref(y)).Int(reduction == "mean" ? 1 : 0);
  total.geometry = Linear(kRowGroup);
  total.geometry.local = {static_cast<size_t>(kRowGroup), 1, 1};
  total.bytes = 2 * groups * 4 + 4;
  launches->push_back(std::move(total));
  return Status::Ok();
}

Status GridSample(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  const ir::Value* x = c.node.input(0);
  const ir::Value* grid = c.node.input(1);
  const ir::Value* y = c.node.output(0);
  if (x->dtype != DType::kFloat32 || grid->dtype != DType::kFloat32) {
    return Unsupported(c.node, "samples float32 images at float32 grids only");
  }
  if (x->shape.size() != 4) return Unsupported(c.node, "samples 2D images (NCHW) only");
  if (!FitsInt32(x) || !FitsInt32(y)) {
    return Unsupported(c.node, "samples tensors of fewer than 2^31 elements only");
  }
  const std::string mode = c.node.attrs.String("mode", "bilinear");
  const std::string padding = c.node.attrs.String("padding_mode", "zeros");
  const int64_t m = mode == "nearest" ? 0 : mode == "bilinear" ? 1 : mode == "bicubic" ? 2 : -1;
  const int64_t p = padding == "zeros"        ? 0
                    : padding == "border"     ? 1
                    : padding == "reflection" ? 2
                                              : -1;
  if (m < 0 || p < 0) {
    return Unsupported(c.node,
                       "samples by nearest, bilinear or bicubic with zeros, border or "
                       "reflection padding only");
  }
  const int64_t out_h = y->shape[2], out_w = y->shape[3];
  if (NumElements(y->shape) == 0) return Status::Ok();
  PendingLaunch l;
  l.kernel_name = "f32_grid_sample";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(grid)).Tensor(c.ref(y));
  l.args.Ints(std::array<int64_t, 4>{x->shape[0], x->shape[1], x->shape[2], x->shape[3]});
  l.args.Ints(std::array<int64_t, 4>{out_h, out_w, m, p});
  l.args.Int(c.node.attrs.Int("align_corners", 0) != 0 ? 1 : 0);
  l.geometry = Grid3(out_w, out_h, x->shape[0]);
  l.bytes = Bytes(x) + Bytes(grid) + Bytes(y);
  l.flops = NumElements(y->shape) * (m == 0 ? 1 : m == 1 ? 8 : 40);
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status Col2Im(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  const ir::Value* x = c.node.input(0);
  const ir::Value* y = c.node.output(0);
  if (x->dtype != DType::kFloat32) return Unsupported(c.node, "folds float32 columns only");
  if (!FitsInt32(x) || !FitsInt32(y)) {
    return Unsupported(c.node, "folds tensors of fewer than 2^31 elements only");
  }
  const size_t n = y->shape.size() - 2;
  if (n < 1 || n > 3) return Unsupported(c.node, "folds images of 1 to 3 spatial axes only");
  const ir::Value* block_value = c.node.input(2);
  if (!block_value->is_constant()) {
    return Unsupported(c.node, "needs block_shape known at compile time");
  }
  const std::vector<int64_t> block = block_value->constant.ToInt64Vector();
  const Shape image(y->shape.begin() + 2, y->shape.end());
  const auto ints = [&](const char* name, int64_t fill, size_t count) {
    std::vector<int64_t> v = c.node.attrs.Ints(name);
    if (v.empty()) v.assign(count, fill);
    return v;
  };
  const std::vector<int64_t> strides = ints("strides", 1, n), dilations = ints("dilations", 1, n),
                             pads = ints("pads", 0, 2 * n);
  if (block.size() != n || strides.size() != n || dilations.size() != n || pads.size() != 2 * n) {
    return Unsupported(c.node, "needs block_shape, strides, dilations and pads per axis");
  }
  Shape blocks;
  for (size_t d = 0; d < n; ++d) {
    blocks.push_back(
        (image[d] + pads[d] + pads[d + n] - dilations[d] * (block[d] - 1) - 1) / strides[d] + 1);
  }
  const Window3 w = ToWindow3(image, blocks, block, strides, dilations, pads);
  const int64_t batch = y->shape[0], channels = y->shape[1];
  if (NumElements(y->shape) == 0) return Status::Ok();
  const Ints16 geo = {channels,     w.in[0],        w.in[1],        w.in[2],
                      w.kernel[0],  w.kernel[1],    w.kernel[2],    w.out[0],
                      w.out[1],     w.out[2],       w.strides[0],   w.strides[1],
                      w.strides[2], w.pad_begin[0], w.pad_begin[1], w.pad_begin[2]};
  PendingLaunch l;
  l.kernel_name = "f32_col2im";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(y)).Ints(geo);
  l.args.Ints(std::array<int64_t, 4>{w.dilations[0], w.dilations[1], w.dilations[2], batch});
  l.geometry = Grid3(w.in[2], w.in[1], batch * channels * w.in[0]);
  l.bytes = Bytes(x) + Bytes(y);
  l.flops = NumElements(x->shape);
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status RoiAlign(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  const ir::Value* x = c.node.input(0);
  const ir::Value* rois = c.node.input(1);
  const ir::Value* batch_indices = c.node.input(2);
  const ir::Value* y = c.node.output(0);
  if (x->dtype != DType::kFloat32 || rois->dtype != DType::kFloat32) {
    return Unsupported(c.node, "pools float32 images and rois only");
  }
  if (batch_indices->dtype != DType::kInt64) {
    return Unsupported(c.node, "takes int64 batch indices only");
  }
  if (!FitsInt32(x) || !FitsInt32(y)) {
    return Unsupported(c.node, "pools tensors of fewer than 2^31 elements only");
  }
  const std::string mode = c.node.attrs.String("mode", "avg");
  const std::string coord = c.node.attrs.String("coordinate_transformation_mode",
                                                c.opset >= 16 ? "half_pixel" : "output_half_pixel");
  if ((mode != "avg" && mode != "max") || (coord != "half_pixel" && coord != "output_half_pixel")) {
    return Unsupported(c.node, "pools by avg or max with half_pixel or output_half_pixel only");
  }
  const int64_t num_rois = y->shape[0], channels = x->shape[1];
  const int64_t out_h = y->shape[2], out_w = y->shape[3];
  // The reference rejects sampling ratios past 65536 when it infers the
  // shape; the kernel takes an int, so refuse past it whatever the caller.
  const int64_t sampling_ratio = c.node.attrs.Int("sampling_ratio", 0);
  if (sampling_ratio > std::numeric_limits<int32_t>::max()) {
    return Unsupported(
        c.node, "takes a sampling_ratio below 2^31 only, not " + std::to_string(sampling_ratio));
  }
  if (NumElements(y->shape) == 0) return Status::Ok();
  PendingLaunch l;
  l.kernel_name = "f32_roi_align";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(rois)).Tensor(c.ref(batch_indices)).Tensor(c.ref(y));
  l.args.Ints(std::array<int64_t, 4>{x->shape[0], channels, x->shape[2], x->shape[3]});
  l.args.Ints(std::array<int64_t, 4>{out_h, out_w, sampling_ratio, mode == "max" ? 1 : 0});
  l.args.Float(c.node.attrs.Float("spatial_scale", 1.0f)).Int(coord == "half_pixel" ? 1 : 0);
  l.args.Int(num_rois);
  l.geometry = Grid3(out_w, out_h, num_rois * channels);
  l.bytes = Bytes(x) + Bytes(rois) + Bytes(batch_indices) + Bytes(y);
  launches->push_back(std::move(l));
  return Status::Ok();
}

}  // namespace tessel::opencl::spatial_ops
