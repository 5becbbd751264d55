#include "targets/opencl/texture_launches.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <string>

#include "core/check.h"
#include "ir/texture.h"
#include "ops/fused_activation.h"
#include "ops/nn_internal.h"
#include "ops/spatial_plan.h"
#include "targets/opencl/launch_util.h"

namespace tessel::opencl {

namespace {

// A work item of the 8-channel convolution tile reads each input texel once
// for twice the outputs of the 4-channel one, but there are half as many
// items: it is taken while the launch still gives every compute unit this
// many items (a few warps or wavefronts each).
constexpr int64_t kItemsPerComputeUnit = 256;

// The work-group of the split-K convolutions (TESSEL_SPLIT_WG): the
// largest split, and what a few slices of several tiles make up.
constexpr int64_t kSplitGroup = 64;

// A convolution whose 4-pixel by 4-channel tiles give fewer items than this
// per compute unit splits its input channels over several items per tile,
// until it does: too few items leave the texture latency of each one's
// serial reduction exposed. On an H200 (132 units) 256 to 4,096 measured
// alike, and every 1x1 convolution of MobileNetV2 splits.
constexpr int64_t kSplitItemsPerComputeUnit = 1024;

Status NoImageKernel(const ir::Node& node, const std::string& why) {
  return tessel::Unsupported(node.Describe() + ": no OpenCL image kernel: " + why);
}

std::string Extent(const ir::TextureExtent& e) {
  return std::to_string(e.width) + "x" + std::to_string(e.height);
}

// A float32 rank-4 value, as the image kernels take every operand.
Status CheckFloat4d(const ir::Node& node, const ir::Value* v, const char* what) {
  if (!v) return NoImageKernel(node, std::string(what) + " is missing");
  if (v->dtype != DType::kFloat32) {
    return NoImageKernel(node, std::string(what) + " '" + v->name + "' has dtype " +
                                   DTypeName(v->dtype) + "; supported: float32");
  }
  if (v->shape.size() != 4) {
    return NoImageKernel(node, std::string(what) + " '" + v->name + "' has shape " +
                                   ShapeToString(v->shape) + "; supported: rank 4");
  }
  return Status::Ok();
}

// `v` in texel layout `layout` fits the extents every device with images
// offers (the storage decision needs no device).
Status CheckFitsImage(const ir::Node& node, const ir::Value* v, ir::Layout layout) {
  const std::optional<ir::TextureExtent> e = ir::TextureExtentOf(v->shape, layout);
  if (!e) {
    return NoImageKernel(node, "'" + v->name + "' of shape " + ShapeToString(v->shape) +
                                   " has no " + ir::LayoutName(layout) + " texels");
  }
  if (e->width > ir::kMinImage2dExtent || e->height > ir::kMinImage2dExtent) {
    return NoImageKernel(node, "'" + v->name + "' needs a " + Extent(*e) + " " +
                                   ir::LayoutName(layout) + " image; images are at most " +
                                   std::to_string(ir::kMinImage2dExtent) + " texels a side");
  }
  return Status::Ok();
}

// The kernels index in 32 bits: window attributes this small keep every
// product of a coordinate and one of them far inside.
Status CheckWindowInts(const ir::Node& node, const char* what, const std::vector<int64_t>& v) {
  for (int64_t x : v) {
    if (x < 0 || x > ir::kMinImage2dExtent) {
      return NoImageKernel(node, std::string(what) + " " + ops::IntsToString(v) +
                                     "; supported: 0 to " + std::to_string(ir::kMinImage2dExtent));
    }
  }
  return Status::Ok();
}

int64_t ImageBytes(const ir::Value* v, ir::Layout layout) {
  if (!v) return 0;
  const std::optional<ir::TextureExtent> e = ir::TextureExtentOf(v->shape, layout);
  return e ? e->area() * 16 : 0;
}

LaunchGeometry Grid3(int64_t x, int64_t y, int64_t z) {
  LaunchGeometry g;
  g.dims = 3;
  g.global = {static_cast<size_t>(std::max<int64_t>(x, 1)),
              static_cast<size_t>(std::max<int64_t>(y, 1)),
              static_cast<size_t>(std::max<int64_t>(z, 1))};
  return g;
}

// Slices of a split-K convolution of `tiles` output tiles over `c4`
// input-channel texels on `compute_units`: 1 (no split) when the tiles fill
// them, else the fewest (a power of two up to kSplitGroup, at most c4) that
// do.
int64_t SplitSlices(int64_t tiles, int64_t c4, int64_t compute_units) {
  const int64_t target = kSplitItemsPerComputeUnit * std::max<int64_t>(compute_units, 1);
  int64_t slices = 1;
  while (tiles * slices < target && slices < kSplitGroup && slices * 2 <= c4) slices *= 2;
  return slices;
}

bool IsFusedConv(const ir::Node& node) {
  return node.domain == "tessel" && node.op_type == "FusedConv";
}
bool IsOnnx(const ir::Node& node, const char* op) {
  return (node.domain.empty() || node.domain == "ai.onnx") && node.op_type == op;
}

// A convolution's geometry, resolved once for the check and the launch.
struct ConvGeometry {
  int64_t N, C, H, W, OC, OH, OW, KH, KW;
  std::vector<int64_t> strides, dilations, pads;
  bool depthwise = false;
};

StatusOr<ConvGeometry> ResolveConv(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  const ir::Value* w = node.input(1);
  const ir::Value* b = node.input(2);
  const ir::Value* y = node.output(0);
  TESSEL_RETURN_IF_ERROR(CheckFloat4d(node, x, "input X"));
  TESSEL_RETURN_IF_ERROR(CheckFloat4d(node, w, "weights W"));
  TESSEL_RETURN_IF_ERROR(CheckFloat4d(node, y, "output Y"));
  if (!w->is_constant()) return NoImageKernel(node, "weights '" + w->name + "' are not constant");
  if (b && (!b->is_constant() || b->dtype != DType::kFloat32)) {
    return NoImageKernel(node, "bias '" + b->name + "' is not a float32 constant");
  }
  ConvGeometry g{.N = x->shape[0],
                 .C = x->shape[1],
                 .H = x->shape[2],
                 .W = x->shape[3],
                 .OC = w->shape[0],
                 .OH = y->shape[2],
                 .OW = y->shape[3],
                 .KH = w->shape[2],
                 .KW = w->shape[3]};
  const int64_t group = node.attrs.Int("group", 1);
  g.depthwise = group == g.C && group == g.OC && w->shape[1] == 1;
  if (!g.depthwise && (group != 1 || w->shape[1] != g.C)) {
    return NoImageKernel(node, "group " + std::to_string(group) + " of " + std::to_string(g.C) +
                                   " channels; supported: 1, or depthwise (C == OC == group)");
  }
  Shape out_spatial;
  TESSEL_RETURN_IF_ERROR(ops::ResolveWindow(node, {g.H, g.W}, {g.KH, g.KW}, false, &g.strides,
                                            &g.dilations, &g.pads, &out_spatial));
  if (out_spatial != Shape{g.OH, g.OW} || y->shape[0] != g.N || y->shape[1] != g.OC) {
    return NoImageKernel(node, "output '" + y->name + "' has shape " + ShapeToString(y->shape) +
                                   ", not the window's");
  }
  TESSEL_RETURN_IF_ERROR(CheckWindowInts(node, "kernel", {g.KH, g.KW}));
  TESSEL_RETURN_IF_ERROR(CheckWindowInts(node, "strides", g.strides));
  TESSEL_RETURN_IF_ERROR(CheckWindowInts(node, "dilations", g.dilations));
  TESSEL_RETURN_IF_ERROR(CheckWindowInts(node, "pads", g.pads));
  return g;
}

StatusOr<TextureOperands> CheckConv(const ir::Node& node) {
  TESSEL_ASSIGN_OR_RETURN(const ConvGeometry g, ResolveConv(node));
  TextureOperands ops{.image_inputs = {0},
                      .weight_input = 1,
                      .weight_layout = g.depthwise ? ir::Layout::kOHW4o : ir::Layout::kOIHW4o};
  TESSEL_RETURN_IF_ERROR(CheckFitsImage(node, node.input(0), ir::Layout::kNCHW4c));
  TESSEL_RETURN_IF_ERROR(CheckFitsImage(node, node.input(1), ops.weight_layout));
  TESSEL_RETURN_IF_ERROR(CheckFitsImage(node, node.output(0), ir::Layout::kNCHW4c));
  if (IsFusedConv(node)) {
    TESSEL_RETURN_IF_ERROR(ops::ParseFusedActivation(node).status());
    if (const ir::Value* z = node.input(3)) {
      TESSEL_RETURN_IF_ERROR(CheckFloat4d(node, z, "residual Z"));
      if (z->shape != node.output(0)->shape) {
        return NoImageKernel(node, "residual '" + z->name + "' has shape " +
                                       ShapeToString(z->shape) + ", not the output's");
      }
      ops.image_inputs.push_back(3);
    }
  }
  return ops;
}

// A pool's window, resolved once for the check and the launch.
struct PoolGeometry {
  std::vector<int64_t> kernel, strides, dilations, pads;
};

StatusOr<PoolGeometry> ResolvePool(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  const ir::Value* y = node.output(0);
  TESSEL_RETURN_IF_ERROR(CheckFloat4d(node, x, "input X"));
  TESSEL_RETURN_IF_ERROR(CheckFloat4d(node, y, "output Y"));
  if (node.output(1)) return NoImageKernel(node, "it produces MaxPool's Indices");
  PoolGeometry g;
  g.kernel = node.attrs.Ints("kernel_shape");
  if (g.kernel.size() != 2) {
    return NoImageKernel(node, "kernel_shape " + ops::IntsToString(g.kernel) + "; supported: 2D");
  }
  Shape out_spatial;
  TESSEL_RETURN_IF_ERROR(ops::ResolveWindow(node, {x->shape[2], x->shape[3]}, g.kernel,
                                            node.attrs.Int("ceil_mode", 0) != 0, &g.strides,
                                            &g.dilations, &g.pads, &out_spatial));
  if (out_spatial != Shape{y->shape[2], y->shape[3]} || y->shape[0] != x->shape[0] ||
      y->shape[1] != x->shape[1]) {
    return NoImageKernel(node, "output '" + y->name + "' has shape " + ShapeToString(y->shape) +
                                   ", not the window's");
  }
  TESSEL_RETURN_IF_ERROR(CheckWindowInts(node, "kernel_shape", g.kernel));
  TESSEL_RETURN_IF_ERROR(CheckWindowInts(node, "strides", g.strides));
  TESSEL_RETURN_IF_ERROR(CheckWindowInts(node, "dilations", g.dilations));
  TESSEL_RETURN_IF_ERROR(CheckWindowInts(node, "pads", g.pads));
  return g;
}

StatusOr<TextureOperands> CheckPool(const ir::Node& node) {
  TESSEL_RETURN_IF_ERROR(ResolvePool(node).status());
  TESSEL_RETURN_IF_ERROR(CheckFitsImage(node, node.input(0), ir::Layout::kNCHW4c));
  TESSEL_RETURN_IF_ERROR(CheckFitsImage(node, node.output(0), ir::Layout::kNCHW4c));
  return TextureOperands{.image_inputs = {0}};
}

StatusOr<TextureOperands> CheckGlobalPool(const ir::Node& node) {
  TESSEL_RETURN_IF_ERROR(CheckFloat4d(node, node.input(0), "input X"));
  TESSEL_RETURN_IF_ERROR(CheckFloat4d(node, node.output(0), "output Y"));
  TESSEL_RETURN_IF_ERROR(CheckFitsImage(node, node.input(0), ir::Layout::kNCHW4c));
  TESSEL_RETURN_IF_ERROR(CheckFitsImage(node, node.output(0), ir::Layout::kNCHW4c));
  return TextureOperands{.image_inputs = {0}};
}

// Whether every output coordinate of `a` reads its own input coordinate
// alone (an identity, or tf_crop_and_resize's full-range roi at scale 1).
bool KeepsAxis(const ops::AxisSampling& a) {
  if (a.identity) return true;
  for (size_t x = 0; x < a.outside.size(); ++x) {
    if (a.outside[x]) return false;
    double own = 0;
    for (int k = 0; k < a.taps; ++k) {
      const size_t t = x * static_cast<size_t>(a.taps) + static_cast<size_t>(k);
      if (a.index[t] == static_cast<int64_t>(x)) {
        own += a.weight[t];
      } else if (a.weight[t] != 0.0) {
        return false;
      }
    }
    if (own != 1.0) return false;
  }
  return true;
}

// Resize and Upsample over height and width only, with scales or sizes
// known at compile time (the taps the reference plans).
StatusOr<ops::ResizeSampling> ResolveResize(const ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(CheckFloat4d(node, node.input(0), "input X"));
  TESSEL_RETURN_IF_ERROR(CheckFloat4d(node, node.output(0), "output Y"));
  StatusOr<ops::ResizeSampling> s = ops::PlanResizeNode(node, opset);
  if (!s.ok()) return NoImageKernel(node, s.status().message());
  if (!KeepsAxis(s->axes[0]) || !KeepsAxis(s->axes[1])) {
    return NoImageKernel(node, "it resizes batch or channels; supported: height and width");
  }
  return s;
}

StatusOr<TextureOperands> CheckResize(const ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(ResolveResize(node, opset).status());
  TESSEL_RETURN_IF_ERROR(CheckFitsImage(node, node.input(0), ir::Layout::kNCHW4c));
  TESSEL_RETURN_IF_ERROR(CheckFitsImage(node, node.output(0), ir::Layout::kNCHW4c));
  return TextureOperands{.image_inputs = {0}};
}

StatusOr<TextureOperands> CheckConcat(const ir::Node& node) {
  const ir::Value* y = node.output(0);
  TESSEL_RETURN_IF_ERROR(CheckFloat4d(node, y, "output"));
  int64_t axis = node.attrs.Int("axis", 0);
  if (axis < 0) axis += 4;
  if (axis != 1) {
    return NoImageKernel(
        node, "axis " + std::to_string(node.attrs.Int("axis", 0)) + "; supported: channels (1)");
  }
  TextureOperands ops;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ir::Value* x = node.input(i);
    TESSEL_RETURN_IF_ERROR(CheckFloat4d(node, x, "input"));
    if (x->shape[0] != y->shape[0] || x->shape[2] != y->shape[2] || x->shape[3] != y->shape[3]) {
      return NoImageKernel(node, "input '" + x->name + "' has shape " + ShapeToString(x->shape) +
                                     ", not the output's but for channels");
    }
    if (i + 1 < node.inputs.size() && x->shape[1] % 4 != 0) {
      return NoImageKernel(node, "input '" + x->name + "' has " + std::to_string(x->shape[1]) +
                                     " channels; supported: a multiple of 4 but for the last");
    }
    TESSEL_RETURN_IF_ERROR(CheckFitsImage(node, x, ir::Layout::kNCHW4c));
    ops.image_inputs.push_back(static_cast<int>(i));
  }
  if (ops.image_inputs.empty()) return NoImageKernel(node, "it has no input");
  TESSEL_RETURN_IF_ERROR(CheckFitsImage(node, y, ir::Layout::kNCHW4c));
  return ops;
}

Status ConvLaunch(const NodeContext& c, std::vector<PendingLaunch>* out) {
  const ir::Node& node = c.node;
  TESSEL_ASSIGN_OR_RETURN(const ConvGeometry g, ResolveConv(node));
  const ir::Value* x = node.input(0);
  const ir::Value* w = node.input(1);
  const ir::Value* b = node.input(2);
  const ir::Value* z = IsFusedConv(node) ? node.input(3) : nullptr;
  const ir::Value* y = node.output(0);
  ops::FusedActivation act;
  if (IsFusedConv(node)) {
    TESSEL_ASSIGN_OR_RETURN(act, ops::ParseFusedActivation(node));
  }
  const std::array<int64_t, 16> geo = {g.C,
                                       g.H,
                                       g.W,
                                       g.OC,
                                       g.OH,
                                       g.OW,
                                       g.KH,
                                       g.KW,
                                       g.strides[0],
                                       g.strides[1],
                                       g.pads[0],
                                       g.pads[1],
                                       g.dilations[0],
                                       g.dilations[1],
                                       g.depthwise ? g.C : 1,
                                       g.N};
  const int64_t O4 = ir::Texels(g.OC), tiles_w = (g.OW + 3) / 4;
  PendingLaunch l;
  if (g.depthwise) {
    l.kernel_name = "f32_conv2d_depthwise_nchw4c_4w";
    l.geometry = Grid3(tiles_w, g.OH, g.N * O4);
  } else {
    const bool pointwise =
        g.KH == 1 && g.KW == 1 &&
        std::all_of(g.pads.begin(), g.pads.end(), [](int64_t p) { return p == 0; });
    const std::string prefix = pointwise ? "f32_conv2d_1x1_nchw4c" : "f32_conv2d_nchw4c";
    const int64_t compute_units = std::max<int64_t>(c.compute_units, 1);
    const int64_t tiles4 = tiles_w * g.OH * g.N * O4;  // items of the 4-pixel, 4-channel tile
    const int64_t items8 = tiles_w * g.OH * g.N * ((O4 + 1) / 2);
    // Outputs too small to fill the device split their input channels.
    const int64_t slices = SplitSlices(tiles4, ir::Texels(g.C), compute_units);
    if (slices > 1) {
      l.kernel_name = prefix + "_4w4o_splitk";
      l.geometry.dims = 2;
      l.geometry.global = {static_cast<size_t>(slices), static_cast<size_t>(tiles4), 1};
      l.geometry.local = {static_cast<size_t>(slices), static_cast<size_t>(kSplitGroup / slices),
                          1};
    } else {
      const bool wide = O4 >= 2 && items8 >= kItemsPerComputeUnit * compute_units;
      l.kernel_name = prefix + (wide ? "_4w8o" : "_4w4o");
      l.geometry = Grid3(tiles_w, g.OH, g.N * (wide ? (O4 + 1) / 2 : O4));
    }
  }
  // A kernel may not read the image it writes: without a residual, the
  // residual argument repeats the input (read-only both times).
  l.args.Image(c.ref(x))
      .Image(c.ref(w))
      .Tensor(b ? c.ref(b) : TensorRef{})
      .Int(b ? 1 : 0)
      .Image(z ? c.ref(z) : c.ref(x))
      .Int(z ? 1 : 0)
      .Image(c.ref(y))
      .Ints(geo)
      .Int(static_cast<int>(act.kind))  // a TESSEL_ACT_* code (ops::ActivationCDefines)
      .Float(act.alpha)
      .Float(act.beta);
  const int64_t outputs = g.N * g.OC * g.OH * g.OW;
  l.bytes = ImageBytes(x, ir::Layout::kNCHW4c) +
            ImageBytes(w, g.depthwise ? ir::Layout::kOHW4o : ir::Layout::kOIHW4o) +
            (b ? static_cast<int64_t>(b->size_bytes()) : 0) + ImageBytes(z, ir::Layout::kNCHW4c) +
            ImageBytes(y, ir::Layout::kNCHW4c);
  l.flops = 2 * outputs * (g.depthwise ? 1 : g.C) * g.KH * g.KW +
            (z || act.kind != ops::ActivationKind::kNone ? 2 * outputs : 0);
  out->push_back(std::move(l));
  return Status::Ok();
}

Status PoolLaunch(const NodeContext& c, std::vector<PendingLaunch>* out) {
  TESSEL_ASSIGN_OR_RETURN(const PoolGeometry g, ResolvePool(c.node));
  const ir::Value* x = c.node.input(0);
  const ir::Value* y = c.node.output(0);
  const int64_t H = x->shape[2], W = x->shape[3], OH = y->shape[2], OW = y->shape[3];
  const int64_t planes = x->shape[0] * ir::Texels(x->shape[1]);
  const std::array<int64_t, 16> geo = {x->shape[1],
                                       H,
                                       W,
                                       OH,
                                       OW,
                                       g.kernel[0],
                                       g.kernel[1],
                                       g.strides[0],
                                       g.strides[1],
                                       g.pads[0],
                                       g.pads[1],
                                       g.dilations[0],
                                       g.dilations[1],
                                       c.node.op_type == "MaxPool" ? 1 : 0,
                                       c.node.attrs.Int("count_include_pad", 0),
                                       H + g.pads[2]};
  PendingLaunch l;
  l.kernel_name = "f32_pool2d_nchw4c";
  l.args.Image(c.ref(x)).Image(c.ref(y)).Int(planes).Ints(geo).Int(W + g.pads[3]);
  l.geometry = Grid3(OW, OH, planes);
  l.bytes = ImageBytes(x, ir::Layout::kNCHW4c) + ImageBytes(y, ir::Layout::kNCHW4c);
  l.flops = NumElements(y->shape) * g.kernel[0] * g.kernel[1];
  out->push_back(std::move(l));
  return Status::Ok();
}

Status ResizeLaunch(const NodeContext& c, std::vector<PendingLaunch>* out) {
  TESSEL_ASSIGN_OR_RETURN(const ops::ResizeSampling s, ResolveResize(c.node, c.opset));
  const ir::Value* x = c.node.input(0);
  const ir::Value* y = c.node.output(0);
  const ops::AxisSampling& rows = s.axes[2];
  const ops::AxisSampling& cols = s.axes[3];
  const int64_t planes = x->shape[0] * ir::Texels(x->shape[1]);
  const int64_t OH = y->shape[2], OW = y->shape[3];
  ResizeTables tables = MakeResizeTables(rows, cols);
  PendingLaunch l;
  l.kernel_name = "f32_resize2d_nchw4c";
  l.args.Image(c.ref(x))
      .Image(c.ref(y))
      .Table(std::move(tables.index))
      .Table(std::move(tables.weight))
      .Int(planes)
      .Int(x->shape[1])
      .Int(x->shape[2])
      .Int(OH)
      .Int(OW)
      .Int(rows.taps)
      .Int(cols.taps)
      .Float(static_cast<float>(s.extrapolation_value));
  l.geometry = Grid3(OW, OH, planes);
  l.bytes = ImageBytes(x, ir::Layout::kNCHW4c) + ImageBytes(y, ir::Layout::kNCHW4c);
  l.flops = 2 * NumElements(y->shape) * rows.taps * cols.taps;
  out->push_back(std::move(l));
  return Status::Ok();
}

Status GlobalPoolLaunch(const NodeContext& c, std::vector<PendingLaunch>* out) {
  const ir::Value* x = c.node.input(0);
  const ir::Value* y = c.node.output(0);
  const int64_t planes = x->shape[0] * ir::Texels(x->shape[1]);
  PendingLaunch l;
  l.kernel_name = "f32_global_pool_nchw4c";
  l.args.Image(c.ref(x))
      .Image(c.ref(y))
      .Int(x->shape[1])
      .Int(x->shape[2])
      .Int(x->shape[3])
      .Int(c.node.op_type == "GlobalMaxPool" ? 1 : 0);
  l.geometry.dims = 2;
  l.geometry.global = {static_cast<size_t>(kRowGroup), static_cast<size_t>(planes), 1};
  l.geometry.local = {static_cast<size_t>(kRowGroup), 1, 1};
  l.bytes = ImageBytes(x, ir::Layout::kNCHW4c) + ImageBytes(y, ir::Layout::kNCHW4c);
  l.flops = NumElements(x->shape);
  out->push_back(std::move(l));
  return Status::Ok();
}

Status ConcatLaunches(const NodeContext& c, std::vector<PendingLaunch>* out) {
  const ir::Value* y = c.node.output(0);
  const int64_t N = y->shape[0], H = y->shape[2], W = y->shape[3];
  const int64_t C4_out = ir::Texels(y->shape[1]);
  int64_t c4_offset = 0;
  for (const ir::Value* x : c.node.inputs) {
    const int64_t C4_in = ir::Texels(x->shape[1]);
    PendingLaunch l;
    l.kernel_name = "f32_concat_nchw4c";
    l.args.Image(c.ref(x)).Image(c.ref(y)).Int(H).Int(W).Int(C4_in).Int(C4_out).Int(c4_offset).Int(
        N * C4_in);
    l.geometry = Grid3(W, H, N * C4_in);
    l.bytes = 2 * ImageBytes(x, ir::Layout::kNCHW4c);
    out->push_back(std::move(l));
    c4_offset += C4_in;
  }
  return Status::Ok();
}

void AppendConversion(const char* kernel, const TensorRef& src, const Shape& shape,
                      const TensorRef& dst, bool to_texture, int node,
                      std::vector<PendingLaunch>* out) {
  TESSEL_CHECK(shape.size() == 4);
  const int64_t N = shape[0], C = shape[1], H = shape[2], W = shape[3];
  const int64_t planes = N * ir::Texels(C);
  PendingLaunch l;
  l.kernel_name = kernel;
  l.node = node;
  if (to_texture) {
    l.args.Tensor(src).Image(dst);
  } else {
    l.args.Image(src).Tensor(dst);
  }
  l.args.Int(C).Int(H).Int(W).Int(planes);
  l.geometry = Grid3(W, H, planes);
  l.bytes = NumElements(shape) * 4 + planes * H * W * 16;
  out->push_back(std::move(l));
}

}  // namespace

StatusOr<TextureOperands> CheckTextureKernel(const ir::Node& node, int opset) {
  if (IsFusedConv(node) || IsOnnx(node, "Conv")) return CheckConv(node);
  if (IsOnnx(node, "MaxPool") || IsOnnx(node, "AveragePool")) return CheckPool(node);
  if (IsOnnx(node, "GlobalAveragePool") || IsOnnx(node, "GlobalMaxPool")) {
    return CheckGlobalPool(node);
  }
  if (IsOnnx(node, "Concat")) return CheckConcat(node);
  if (IsOnnx(node, "Resize") || IsOnnx(node, "Upsample")) return CheckResize(node, opset);
  // Elementwise ops run as snippets, which have image kernels of their own
  // (snippets::EmitOpenClImageKernel).
  return NoImageKernel(node, "not an op the image kernels run");
}

Status BuildTextureNodeLaunches(const NodeContext& c, std::vector<PendingLaunch>* out) {
  TESSEL_RETURN_IF_ERROR(CheckTextureKernel(c.node, c.opset).status());
  const ir::Node& node = c.node;
  if (IsFusedConv(node) || IsOnnx(node, "Conv")) return ConvLaunch(c, out);
  if (IsOnnx(node, "MaxPool") || IsOnnx(node, "AveragePool")) return PoolLaunch(c, out);
  if (IsOnnx(node, "GlobalAveragePool") || IsOnnx(node, "GlobalMaxPool")) {
    return GlobalPoolLaunch(c, out);
  }
  if (IsOnnx(node, "Resize") || IsOnnx(node, "Upsample")) return ResizeLaunch(c, out);
  return ConcatLaunches(c, out);
}

void AppendBufferToTexture(const TensorRef& src, const Shape& shape, const TensorRef& dst,
                           std::vector<PendingLaunch>* out, int node) {
  AppendConversion("f32_nchw_to_nchw4c", src, shape, dst, /*to_texture=*/true, node, out);
}

void AppendTextureToBuffer(const TensorRef& src, const Shape& shape, const TensorRef& dst,
                           std::vector<PendingLaunch>* out, int node) {
  AppendConversion("f32_nchw4c_to_nchw", src, shape, dst, /*to_texture=*/false, node, out);
}

}  // namespace tessel::opencl
