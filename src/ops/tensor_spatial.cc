// Spatial movement ops: Pad, DepthToSpace, SpaceToDepth, Resize, Upsample.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

#include "ops/spatial_plan.h"
#include "ops/tensor_internal.h"

namespace tessel::ops::tensor_internal {
namespace {

const ir::Value& In(const ir::Node& node, size_t i) { return *node.input(i); }

// ---------------------------------------------------------------------------
// Pad

// pads (2 * n values: all begins, then all ends) and the optional axes they
// apply to (opset 18; default every dim). Opset < 11 takes pads from the
// attribute; from 11 on `pads` is input 1 and `axes` input 3.
StatusOr<PadPlan> PlanPad(const ir::Node& node, const Shape& in, const std::vector<int64_t>& pads,
                          const std::optional<std::vector<int64_t>>& axes_given) {
  const std::string mode = node.attrs.String("mode", "constant");
  PadPlan plan;
  if (mode == "constant") {
    plan.mode = PadMode::kConstant;
  } else if (mode == "reflect") {
    plan.mode = PadMode::kReflect;
  } else if (mode == "edge") {
    plan.mode = PadMode::kEdge;
  } else if (mode == "wrap") {
    plan.mode = PadMode::kWrap;
  } else {
    return NodeUnsupported(node,
                           "mode '" + mode + "' is not supported (constant, reflect, edge, wrap)");
  }
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes;
  if (axes_given) {
    for (int64_t a : *axes_given) {
      TESSEL_ASSIGN_OR_RETURN(int64_t n, NormalizeAxis(node, a, rank));
      axes.push_back(n);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  const size_t n = axes.size();
  if (pads.size() != 2 * n) {
    return NodeError(node, "pads " + ListToString(pads) + " must have " + std::to_string(2 * n) +
                               " values for input shape " + ShapeToString(in));
  }
  plan.begin.assign(in.size(), 0);
  std::vector<int64_t> end(in.size(), 0);
  for (size_t i = 0; i < n; ++i) {
    plan.begin[axes[i]] = pads[i];
    end[axes[i]] = pads[n + i];
  }
  plan.out = in;
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t limit = std::numeric_limits<int32_t>::max();
    if (plan.begin[d] < -limit || plan.begin[d] > limit || end[d] < -limit || end[d] > limit) {
      return NodeError(node, "pads " + ListToString(pads) + " are too large");
    }
    plan.out[d] = in[d] + plan.begin[d] + end[d];
    if (plan.out[d] < 0) {
      return NodeError(node, "pads " + ListToString(pads) + " crop axis " + std::to_string(d) +
                                 " of input shape " + ShapeToString(in) + " below size 0");
    }
    if (plan.mode != PadMode::kConstant && in[d] == 0 && plan.out[d] > 0) {
      return NodeError(node,
                       "mode '" + mode + "' cannot pad axis " + std::to_string(d) + " of size 0");
    }
  }
  TESSEL_RETURN_IF_ERROR(CheckShape(node, plan.out, "output shape"));
  return plan;
}

Status InferPad(ir::Node& node, int opset) {
  std::vector<int64_t> pads;
  std::optional<std::vector<int64_t>> axes;
  if (opset >= 11) {
    if (!node.input(1)) return NodeError(node, "input pads is required since opset 11");
    TESSEL_ASSIGN_OR_RETURN(pads, ConstantInts(node, 1, "pads"));
    if (node.input(2)) {
      TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, 2}));
      if (NumElements(In(node, 2).shape) > 1) {
        return NodeError(
            node, "constant_value must be a scalar; got shape " + ShapeToString(In(node, 2).shape));
      }
    }
    if (node.input(3)) {
      TESSEL_ASSIGN_OR_RETURN(std::vector<int64_t> a, ConstantInts(node, 3, "axes"));
      axes = std::move(a);
    }
  } else {
    if (node.input(1)) return NodeError(node, "pads is an attribute before opset 11");
    if (!node.attrs.Has("pads")) return NodeError(node, "attribute pads is required");
    pads = node.attrs.Ints("pads");
  }
  TESSEL_ASSIGN_OR_RETURN(PadPlan plan, PlanPad(node, In(node, 0).shape, pads, axes));
  SetOutput(node, 0, In(node, 0).dtype, plan.out);
  return Status::Ok();
}

// Maps an index outside [0, n) back inside it, per mode (n > 0).
int64_t FoldIndex(int64_t s, int64_t n, PadMode mode) {
  switch (mode) {
    case PadMode::kEdge:
      return s < 0 ? 0 : n - 1;
    case PadMode::kWrap:
      return ((s % n) + n) % n;
    case PadMode::kReflect: {
      // Mirror without repeating the edge: period 2(n - 1), like numpy.
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      const int64_t m = ((s % period) + period) % period;
      return m < n ? m : period - m;
    }
    case PadMode::kConstant:
      break;
  }
  return s;
}

Status RunPad(KernelContext& ctx) {
  const Tensor& in = ctx.in(0);
  Tensor& out = ctx.out(0);
  std::vector<int64_t> pads;
  std::optional<std::vector<int64_t>> axes;
  if (ctx.opset >= 11) {
    pads = ctx.in(1).ToInt64Vector();
    if (ctx.has_in(3)) axes = ctx.in(3).ToInt64Vector();
  } else {
    pads = ctx.node.attrs.Ints("pads");
  }
  TESSEL_ASSIGN_OR_RETURN(PadPlan plan, PlanPad(ctx.node, in.shape(), pads, axes));

  const size_t es = ElemSize(in);
  // The padding value as one element of the output's dtype.
  Tensor fill(in.dtype(), {});
  if (ctx.opset >= 11) {
    if (ctx.has_in(2) && ctx.in(2).num_elements() == 1) {
      std::memcpy(fill.raw_data(), ctx.in(2).raw_data(), es);
    }
  } else {
    StoreDouble(fill, 0, ctx.node.attrs.Float("value", 0.0f));
  }

  const Shape& shape = in.shape();
  const std::vector<int64_t> strides = StridesOf(shape);
  std::vector<int64_t> pos(shape.size(), 0);
  for (int64_t j = 0; j < out.num_elements(); ++j, NextIndex(pos, out.shape())) {
    int64_t offset = 0;
    bool inside = true;
    for (size_t d = 0; d < shape.size() && inside; ++d) {
      int64_t s = pos[d] - plan.begin[d];
      if (s < 0 || s >= shape[d]) {
        if (plan.mode == PadMode::kConstant) {
          inside = false;
          break;
        }
        s = FoldIndex(s, shape[d], plan.mode);
      }
      offset += s * strides[d];
    }
    const uint8_t* src = inside ? Bytes(in) + offset * es : Bytes(fill);
    std::memcpy(Bytes(out) + j * es, src, es);
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// DepthToSpace, SpaceToDepth

StatusOr<int64_t> BlockSize(const ir::Node& node) {
  if (!node.attrs.Has("blocksize")) return NodeError(node, "attribute blocksize is required");
  const int64_t b = node.attrs.Int("blocksize", 0);
  if (b < 1 || b > std::numeric_limits<int32_t>::max()) {
    return NodeError(node, "blocksize " + std::to_string(b) + " must be positive");
  }
  return b;
}

Status InferDepthToSpace(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireRank(node, 0, 4));
  TESSEL_ASSIGN_OR_RETURN(int64_t b, BlockSize(node));
  const std::string mode = node.attrs.String("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") {
    return NodeError(node, "mode '" + mode + "' must be DCR or CRD");
  }
  const Shape& s = In(node, 0).shape;
  if (s[1] % (b * b) != 0) {
    return NodeError(node, "channels " + std::to_string(s[1]) + " of input shape " +
                               ShapeToString(s) +
                               " are not a multiple of blocksize^2 = " + std::to_string(b * b));
  }
  const WideInt h = WideInt{s[2]} * b, w = WideInt{s[3]} * b;
  if (!FitsInt64(h) || !FitsInt64(w)) {
    return NodeError(node, "blocksize " + std::to_string(b) + " times input shape " +
                               ShapeToString(s) + " does not fit in 64 bits");
  }
  SetOutput(node, 0, In(node, 0).dtype,
            {s[0], s[1] / (b * b), static_cast<int64_t>(h), static_cast<int64_t>(w)});
  return Status::Ok();
}

Status RunDepthToSpace(KernelContext& ctx) {
  // Viewing the output as N x C' x H x b x W x b, each dim reads one dim of
  // the input viewed as N x b x b x C' x H x W (DCR) or N x C' x b x b x H x W
  // (CRD).
  const Tensor& in = ctx.in(0);
  const int64_t b = ctx.node.attrs.Int("blocksize", 1);
  const int64_t n = in.dim(0), c = in.dim(1) / (b * b), h = in.dim(2), w = in.dim(3);
  const bool crd = ctx.node.attrs.String("mode", "DCR") == "CRD";
  const Shape view = crd ? Shape{n, c, b, b, h, w} : Shape{n, b, b, c, h, w};
  const std::vector<int64_t> s = StridesOf(view);
  const std::vector<int64_t> strides =
      crd ? std::vector<int64_t>{s[0], s[1], s[4], s[2], s[5], s[3]}
          : std::vector<int64_t>{s[0], s[3], s[4], s[1], s[5], s[2]};
  CopyStrided(in, 0, {n, c, h, b, w, b}, strides, ctx.out(0));
  return Status::Ok();
}

Status InferSpaceToDepth(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireRank(node, 0, 4));
  TESSEL_ASSIGN_OR_RETURN(int64_t b, BlockSize(node));
  const Shape& s = In(node, 0).shape;
  if (s[2] % b != 0 || s[3] % b != 0) {
    return NodeError(node, "height and width of input shape " + ShapeToString(s) +
                               " are not multiples of blocksize " + std::to_string(b));
  }
  // Mode (opset 28): DCR puts the block offset before the channel, CRD after.
  const std::string mode = node.attrs.String("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") {
    return NodeError(node, "mode '" + mode + "' must be DCR or CRD");
  }
  const WideInt c = WideInt{s[1]} * b * b;
  if (!FitsInt64(c)) {
    return NodeError(node, "blocksize " + std::to_string(b) + " squared times channels of " +
                               ShapeToString(s) + " does not fit in 64 bits");
  }
  SetOutput(node, 0, In(node, 0).dtype, {s[0], static_cast<int64_t>(c), s[2] / b, s[3] / b});
  return Status::Ok();
}

Status RunSpaceToDepth(KernelContext& ctx) {
  // DCR: output N x b x b x C x H' x W' reads input N x C x H' x b x W' x b;
  // CRD: output N x C x b x b x H' x W' reads the same.
  const Tensor& in = ctx.in(0);
  const int64_t b = ctx.node.attrs.Int("blocksize", 1);
  const int64_t n = in.dim(0), c = in.dim(1), h = in.dim(2) / b, w = in.dim(3) / b;
  const std::vector<int64_t> s = StridesOf({n, c, h, b, w, b});
  if (ctx.node.attrs.String("mode", "DCR") == "CRD") {
    CopyStrided(in, 0, {n, c, b, b, h, w}, {s[0], s[1], s[3], s[5], s[2], s[4]}, ctx.out(0));
  } else {
    CopyStrided(in, 0, {n, b, b, c, h, w}, {s[0], s[3], s[5], s[1], s[2], s[4]}, ctx.out(0));
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Resize, Upsample

enum class ResizeMode { kNearest, kLinear, kCubic };
enum class CoordMode {
  kHalfPixel,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixel,
  kHalfPixelSymmetric,
  kTfCropAndResize,
};
// kSimple: Upsample and Resize-10 (truncate when enlarging, ceil when
// shrinking, as onnxruntime does for those opsets).
enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

struct ResizePlan {
  ResizeMode mode = ResizeMode::kNearest;
  CoordMode coord = CoordMode::kHalfPixel;
  NearestMode nearest = NearestMode::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0;  // tf_crop_and_resize, outside the roi
  std::vector<double> scales;      // output / input, per dim
  // The resized length the coordinate transform divides by. The ONNX spec
  // defines it as input length * scale when scales are given, before the
  // output size is floored, so it need not be an integer.
  std::vector<double> lengths;
  Shape out;
  // Resize-18's `axes`: the axes scales, sizes and roi list (all when empty).
  std::vector<int64_t> axes;
  bool antialias = false;  // Resize-18: stretch linear and cubic filters when shrinking
};

// The interpolation attributes of Resize (opset >= 11) or, for Upsample
// and Resize-10, their fixed asymmetric/simple behaviour.
Status ReadResizeModes(const ir::Node& node, bool legacy, ResizePlan& plan) {
  const std::string mode = node.attrs.String("mode", "nearest");
  if (mode == "linear" || (legacy && mode == "bilinear")) {
    plan.mode = ResizeMode::kLinear;
  } else if (mode == "cubic" && !legacy) {
    plan.mode = ResizeMode::kCubic;
  } else if (mode != "nearest") {
    return NodeError(node, "mode '" + mode + "' must be " +
                               (legacy ? "nearest or linear" : "nearest, linear or cubic"));
  }
  if (legacy) {
    plan.coord = CoordMode::kAsymmetric;
    plan.nearest = NearestMode::kSimple;
    return Status::Ok();
  }
  // Opset 18's antialias (no effect on nearest); axes and
  // keep_aspect_ratio_policy are read in PlanResize.
  plan.antialias = node.attrs.Int("antialias", 0) != 0;
  plan.cubic_a = node.attrs.Float("cubic_coeff_a", -0.75f);
  plan.exclude_outside = node.attrs.Int("exclude_outside", 0) != 0;
  plan.extrapolation_value = node.attrs.Float("extrapolation_value", 0.0f);
  const std::string coord = node.attrs.String("coordinate_transformation_mode", "half_pixel");
  if (coord == "half_pixel") {
    plan.coord = CoordMode::kHalfPixel;
  } else if (coord == "pytorch_half_pixel") {
    plan.coord = CoordMode::kPytorchHalfPixel;
  } else if (coord == "align_corners") {
    plan.coord = CoordMode::kAlignCorners;
  } else if (coord == "asymmetric") {
    plan.coord = CoordMode::kAsymmetric;
  } else if (coord == "tf_half_pixel_for_nn") {
    plan.coord = CoordMode::kTfHalfPixel;
  } else if (coord == "tf_crop_and_resize") {
    plan.coord = CoordMode::kTfCropAndResize;
  } else if (coord == "half_pixel_symmetric") {
    plan.coord = CoordMode::kHalfPixelSymmetric;
  } else {
    return NodeUnsupported(node, "coordinate_transformation_mode '" + coord +
                                     "' is not supported (half_pixel, pytorch_half_pixel, "
                                     "align_corners, asymmetric, tf_half_pixel_for_nn, "
                                     "tf_crop_and_resize, half_pixel_symmetric)");
  }
  const std::string nearest = node.attrs.String("nearest_mode", "round_prefer_floor");
  if (nearest == "round_prefer_floor") {
    plan.nearest = NearestMode::kRoundPreferFloor;
  } else if (nearest == "round_prefer_ceil") {
    plan.nearest = NearestMode::kRoundPreferCeil;
  } else if (nearest == "floor") {
    plan.nearest = NearestMode::kFloor;
  } else if (nearest == "ceil") {
    plan.nearest = NearestMode::kCeil;
  } else {
    return NodeError(node, "nearest_mode '" + nearest +
                               "' is not one of round_prefer_floor, "
                               "round_prefer_ceil, floor, ceil");
  }
  return Status::Ok();
}

// Output shape and per-dim scales from `scales` (floor(in * scale)) or
// `sizes` (scale = size / in); exactly one is given.
Status ResizeShape(const ir::Node& node, const Shape& in, const std::vector<float>* scales,
                   const std::vector<int64_t>* sizes, ResizePlan& plan) {
  const size_t rank = in.size();
  if ((scales == nullptr) == (sizes == nullptr)) {
    return NodeError(node, "exactly one of scales and sizes must be given");
  }
  const size_t given = scales ? scales->size() : sizes->size();
  if (given != rank) {
    return NodeError(node, std::string(scales ? "scales" : "sizes") + " have " +
                               std::to_string(given) + " values; input shape " + ShapeToString(in) +
                               " has rank " + std::to_string(rank));
  }
  plan.out.resize(rank);
  plan.scales.resize(rank);
  plan.lengths.resize(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (scales) {
      const double s = (*scales)[d];
      if (!(s > 0) || !std::isfinite(s)) {
        return NodeError(node, "scale " + std::to_string(s) + " of axis " + std::to_string(d) +
                                   " must be positive");
      }
      const double length = static_cast<double>(in[d]) * s;
      if (length > static_cast<double>(std::numeric_limits<int32_t>::max())) {
        return NodeError(
            node, "scale " + std::to_string(s) + " makes axis " + std::to_string(d) + " too large");
      }
      plan.scales[d] = s;
      plan.lengths[d] = length;
      plan.out[d] = static_cast<int64_t>(std::floor(length));
    } else {
      const int64_t size = (*sizes)[d];
      if (size < 0 || size > std::numeric_limits<int32_t>::max()) {
        return NodeError(node, "sizes " + ListToString(*sizes) + " are out of range");
      }
      if (in[d] == 0) {
        return NodeError(node, "cannot resize axis " + std::to_string(d) + " of size 0");
      }
      plan.scales[d] = static_cast<double>(size) / static_cast<double>(in[d]);
      plan.lengths[d] = static_cast<double>(size);
      plan.out[d] = size;
    }
  }
  return CheckShape(node, plan.out, "output shape");
}

// Resize's inputs: (X, scales) at opset 10, (X, roi, scales, sizes) from 11.
// An input with no elements counts as absent (opset 11-12 require scales to
// be present, and models pass an empty one alongside sizes).
StatusOr<ResizePlan> PlanResize(const ir::Node& node, int opset, const Shape& in,
                                const Tensor* scales_t, const Tensor* sizes_t) {
  ResizePlan plan;
  TESSEL_RETURN_IF_ERROR(ReadResizeModes(node, opset < 11, plan));
  std::vector<float> scales;
  std::vector<int64_t> sizes;
  const bool has_scales = scales_t && scales_t->num_elements() > 0;
  const bool has_sizes = sizes_t && sizes_t->num_elements() > 0;
  if (has_scales) scales = scales_t->ToFloatVector();
  if (has_sizes) sizes = sizes_t->ToInt64Vector();
  // Resize-18: scales and sizes list only `axes`; the others keep theirs.
  const int64_t rank = static_cast<int64_t>(in.size());
  if (node.attrs.Has("axes")) {
    for (int64_t a : node.attrs.Ints("axes")) {
      TESSEL_ASSIGN_OR_RETURN(int64_t n, NormalizeAxis(node, a, rank));
      plan.axes.push_back(n);
    }
    const size_t given = has_scales ? scales.size() : sizes.size();
    if ((has_scales || has_sizes) && given != plan.axes.size()) {
      return NodeError(node, std::string(has_scales ? "scales" : "sizes") + " have " +
                                 std::to_string(given) + " values for " +
                                 std::to_string(plan.axes.size()) + " axes");
    }
    std::vector<float> all_scales(in.size(), 1.0f);
    std::vector<int64_t> all_sizes(in.begin(), in.end());
    for (size_t i = 0; i < plan.axes.size(); ++i) {
      if (has_scales) all_scales[plan.axes[i]] = scales[i];
      if (has_sizes) all_sizes[plan.axes[i]] = sizes[i];
    }
    scales = std::move(all_scales);
    sizes = std::move(all_sizes);
  }
  TESSEL_RETURN_IF_ERROR(
      ResizeShape(node, in, has_scales ? &scales : nullptr, has_sizes ? &sizes : nullptr, plan));
  // keep_aspect_ratio_policy (sizes only): one scale for every listed axis,
  // the largest that fits (not_larger) or the smallest that covers
  // (not_smaller); lengths round half up.
  const std::string policy = node.attrs.String("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && has_sizes) {
    if (policy != "not_larger" && policy != "not_smaller") {
      return NodeError(node, "keep_aspect_ratio_policy '" + policy +
                                 "' must be stretch, not_larger or not_smaller");
    }
    std::vector<int64_t> axes = plan.axes;
    if (axes.empty()) {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    double scale = policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
    for (int64_t a : axes) {
      scale = policy == "not_larger" ? std::min(scale, plan.scales[a])
                                     : std::max(scale, plan.scales[a]);
    }
    for (int64_t a : axes) {
      plan.scales[a] = scale;
      plan.lengths[a] = scale * static_cast<double>(in[a]);
      plan.out[a] = static_cast<int64_t>(plan.lengths[a] + 0.5);
    }
    TESSEL_RETURN_IF_ERROR(CheckShape(node, plan.out, "output shape"));
  }
  return plan;
}

// Upsample: scales from the attribute (opset 7) or input 1 (opset 9).
StatusOr<ResizePlan> PlanUpsample(const ir::Node& node, int opset, const Shape& in,
                                  const Tensor* scales_t) {
  ResizePlan plan;
  TESSEL_RETURN_IF_ERROR(ReadResizeModes(node, true, plan));
  std::vector<float> scales = scales_t ? scales_t->ToFloatVector() : node.attrs.Floats("scales");
  TESSEL_RETURN_IF_ERROR(ResizeShape(node, in, &scales, nullptr, plan));
  return plan;
}

// Input coordinate of output coordinate x along axis d; roi_start/roi_end
// are the axis' crop window (tf_crop_and_resize only).
double SourceCoord(const ResizePlan& plan, size_t d, double x, int64_t in_len, double roi_start,
                   double roi_end) {
  const double scale = plan.scales[d];
  const double length = plan.lengths[d];
  const double in_last = static_cast<double>(in_len - 1);
  switch (plan.coord) {
    case CoordMode::kHalfPixel:
      return (x + 0.5) / scale - 0.5;
    case CoordMode::kPytorchHalfPixel:
      return length > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case CoordMode::kAlignCorners:
      return length == 1 ? 0.0 : x * in_last / (length - 1);
    case CoordMode::kAsymmetric:
      return x / scale;
    case CoordMode::kTfHalfPixel:
      return (x + 0.5) / scale;
    case CoordMode::kHalfPixelSymmetric: {
      // Centres the sampled window when the output length was rounded.
      const double adjustment = static_cast<double>(plan.out[d]) / length;
      const double offset = static_cast<double>(in_len) / 2 * (1 - adjustment);
      return offset + (x + 0.5) / scale - 0.5;
    }
    case CoordMode::kTfCropAndResize: {
      // The crop window is in normalized coordinates; the output samples it
      // with corners aligned, on the integer output length.
      const int64_t out_len = plan.out[d];
      const double span = (roi_end - roi_start) * in_last;
      const double offset = out_len == 1 ? span / 2 : x * span / static_cast<double>(out_len - 1);
      return roi_start * in_last + offset;
    }
  }
  return x;
}

int64_t NearestIndex(NearestMode mode, double x, double scale, int64_t in_len) {
  double r = x;
  switch (mode) {
    case NearestMode::kRoundPreferFloor:
      r = x == std::floor(x) + 0.5 ? std::floor(x) : std::round(x);
      break;
    case NearestMode::kRoundPreferCeil:
      r = x == std::floor(x) + 0.5 ? std::ceil(x) : std::round(x);
      break;
    case NearestMode::kFloor:
      r = std::floor(x);
      break;
    case NearestMode::kCeil:
      r = std::ceil(x);
      break;
    case NearestMode::kSimple:
      r = scale < 1 ? std::ceil(x) : std::trunc(x);
      break;
  }
  return static_cast<int64_t>(std::clamp(r, 0.0, static_cast<double>(in_len - 1)));
}

// Keys' cubic convolution kernel with parameter a, at distance t >= 0.
double CubicWeight(double t, double a) {
  if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return 0;
}

AxisSampling SampleAxis(const ResizePlan& plan, size_t d, int64_t in_len, double roi_start,
                        double roi_end) {
  AxisSampling s;
  // Antialias (Resize-18) stretches the linear or cubic filter by 1 / scale
  // when the axis shrinks: more taps, each weight taken at distance * scale,
  // normalized to sum to 1.
  const bool stretch = plan.antialias && plan.mode != ResizeMode::kNearest && plan.scales[d] < 1;
  const double squeeze = stretch ? plan.scales[d] : 1.0;
  const double reach = plan.mode == ResizeMode::kCubic ? 2.0 : 1.0;  // the filter's support
  s.taps = plan.mode == ResizeMode::kNearest ? 1
           : stretch ? static_cast<int>(2 - 2 * (std::floor(-reach / squeeze) + 1))
                     : static_cast<int>(2 * reach);
  const int64_t out_len = plan.out[d];
  const double in_last = static_cast<double>(in_len - 1);
  for (int64_t x = 0; x < out_len; ++x) {
    const double c = SourceCoord(plan, d, static_cast<double>(x), in_len, roi_start, roi_end);
    // A roi of NaN or infinity samples nothing: extrapolate.
    s.outside.push_back(plan.coord == CoordMode::kTfCropAndResize && !(c >= 0 && c <= in_last));
    if (s.outside.back()) {
      s.index.insert(s.index.end(), s.taps, 0);
      s.weight.insert(s.weight.end(), s.taps, 0.0);
      continue;
    }
    if (plan.mode == ResizeMode::kNearest) {
      s.index.push_back(NearestIndex(plan.nearest, c, plan.scales[d], in_len));
      s.weight.push_back(1);
      continue;
    }
    // Taps floor(c) - taps/2 + 1 ... floor(c) + taps/2 at distances |c - i|.
    const double base = std::floor(c);
    double sum = 0;
    std::vector<double> w(s.taps);
    std::vector<int64_t> idx(s.taps);
    for (int k = 0; k < s.taps; ++k) {
      const double i = base - s.taps / 2 + 1 + k;
      const double t = std::fabs(c - i) * squeeze;
      w[k] = plan.mode == ResizeMode::kCubic ? CubicWeight(t, plan.cubic_a) : std::max(0.0, 1 - t);
      if (plan.exclude_outside && (i < 0 || i > in_last)) w[k] = 0;
      sum += w[k];
      idx[k] = static_cast<int64_t>(std::clamp(i, 0.0, in_last));
    }
    for (int k = 0; k < s.taps; ++k) {
      s.index.push_back(idx[k]);
      s.weight.push_back((plan.exclude_outside || stretch) && sum != 0 ? w[k] / sum : w[k]);
    }
  }
  return s;
}

// roi of axis d as (start, end), normalized; (0, 1) when there is none.
// With Resize-18's axes, roi lists those axes only.
std::pair<double, double> AxisRoi(const ResizePlan& plan, const Tensor* roi, size_t d,
                                  size_t rank) {
  if (!plan.axes.empty()) {
    const size_t n = plan.axes.size();
    for (size_t i = 0; i < n; ++i) {
      if (plan.axes[i] != static_cast<int64_t>(d)) continue;
      if (!roi || roi->num_elements() != static_cast<int64_t>(2 * n)) return {0.0, 1.0};
      return {roi->GetAsDouble(static_cast<int64_t>(i)),
              roi->GetAsDouble(static_cast<int64_t>(i + n))};
    }
    return {0.0, 1.0};
  }
  if (!roi || roi->num_elements() != static_cast<int64_t>(2 * rank)) return {0.0, 1.0};
  return {roi->GetAsDouble(static_cast<int64_t>(d)),
          roi->GetAsDouble(static_cast<int64_t>(d + rank))};
}

Status RunResizeNearest(const ResizePlan& plan, const Tensor& in, const Tensor* roi, Tensor& out) {
  const Shape& shape = in.shape();
  const size_t rank = shape.size();
  const std::vector<int64_t> strides = StridesOf(shape);
  std::vector<AxisSampling> axes;
  for (size_t d = 0; d < rank; ++d) {
    const auto [start, end] = AxisRoi(plan, roi, d, rank);
    axes.push_back(SampleAxis(plan, d, shape[d], start, end));
  }
  // Nearest copies elements as bytes, so every dtype is exact.
  const size_t es = ElemSize(in);
  std::vector<int64_t> pos(rank, 0);
  for (int64_t j = 0; j < out.num_elements(); ++j, NextIndex(pos, out.shape())) {
    int64_t offset = 0;
    bool outside = false;
    for (size_t d = 0; d < rank; ++d) {
      offset += axes[d].index[pos[d]] * strides[d];
      outside = outside || axes[d].outside[pos[d]];
    }
    if (outside) {
      StoreDouble(out, j, plan.extrapolation_value);
    } else {
      std::memcpy(Bytes(out) + j * es, Bytes(in) + offset * es, es);
    }
  }
  return Status::Ok();
}

Status RunResizeInterpolated(const ResizePlan& plan, const Tensor& in, const Tensor* roi,
                             Tensor& out) {
  // Linear and cubic interpolation are separable: interpolate one axis at a
  // time, in double so the order of axes does not change the result.
  Shape shape = in.shape();
  std::vector<double> cur(static_cast<size_t>(in.num_elements()));
  for (int64_t i = 0; i < in.num_elements(); ++i) cur[i] = in.GetAsDouble(i);
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t in_len = shape[d], out_len = plan.out[d];
    const auto [start, end] = AxisRoi(plan, roi, d, shape.size());
    const bool identity =
        plan.coord != CoordMode::kTfCropAndResize && in_len == out_len && plan.scales[d] == 1.0;
    if (identity) continue;
    const AxisSampling s = SampleAxis(plan, d, in_len, start, end);
    const int64_t outer = DimProduct(shape, 0, d), inner = DimProduct(shape, d + 1, shape.size());
    std::vector<double> next(static_cast<size_t>(outer * out_len * inner));
    for (int64_t x = 0; x < out_len; ++x) {
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          double v = plan.extrapolation_value;
          if (!s.outside[x]) {
            v = 0;
            for (int k = 0; k < s.taps; ++k) {
              v += s.weight[x * s.taps + k] *
                   cur[(o * in_len + s.index[x * s.taps + k]) * inner + i];
            }
          }
          next[(o * out_len + x) * inner + i] = v;
        }
      }
    }
    cur = std::move(next);
    shape[d] = out_len;
  }
  const bool integral = !IsFloat(out.dtype());
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    StoreDouble(out, i, integral ? std::nearbyint(cur[i]) : cur[i]);
  }
  return Status::Ok();
}

Status RunResizePlan(const ResizePlan& plan, const Tensor& in, const Tensor* roi, Tensor& out) {
  if (plan.mode == ResizeMode::kNearest) return RunResizeNearest(plan, in, roi, out);
  return RunResizeInterpolated(plan, in, roi, out);
}

// tf_crop_and_resize reads the crop window from input roi: starts then ends,
// one pair per input dimension.
Status CheckRoi(const ir::Node& node, const ResizePlan& plan) {
  if (plan.coord != CoordMode::kTfCropAndResize) return Status::Ok();
  const size_t rank = plan.axes.empty() ? In(node, 0).shape.size() : plan.axes.size();
  const ir::Value* roi = node.input(1);
  if (!roi || NumElements(roi->shape) != static_cast<int64_t>(2 * rank)) {
    return NodeError(node, "tf_crop_and_resize needs input roi with " + std::to_string(2 * rank) +
                               " values for input shape " + ShapeToString(In(node, 0).shape) +
                               (roi ? "; got shape " + ShapeToString(roi->shape) : ""));
  }
  return RequireDType(node, 1, kFloatTypes);
}

Status InferResize(ir::Node& node, int opset) {
  const size_t scales_at = opset >= 11 ? 2 : 1;
  const Tensor* scales = nullptr;
  const Tensor* sizes = nullptr;
  if (node.input(scales_at)) {
    TESSEL_RETURN_IF_ERROR(RequireDType(node, scales_at, {DType::kFloat32}));
    TESSEL_ASSIGN_OR_RETURN(scales, RequireConstantInput(node, scales_at, "scales"));
  }
  if (opset >= 11 && node.input(3)) {
    TESSEL_RETURN_IF_ERROR(RequireDType(node, 3, {DType::kInt64}));
    TESSEL_ASSIGN_OR_RETURN(sizes, RequireConstantInput(node, 3, "sizes"));
  } else if (opset < 11 && node.inputs.size() > 2) {
    return NodeError(node, "takes inputs X and scales before opset 11");
  }
  TESSEL_ASSIGN_OR_RETURN(ResizePlan plan,
                          PlanResize(node, opset, In(node, 0).shape, scales, sizes));
  TESSEL_RETURN_IF_ERROR(CheckRoi(node, plan));
  SetOutput(node, 0, In(node, 0).dtype, plan.out);
  return Status::Ok();
}

Status RunResize(KernelContext& ctx) {
  const size_t scales_at = ctx.opset >= 11 ? 2 : 1;
  const Tensor* scales = ctx.has_in(scales_at) ? &ctx.in(scales_at) : nullptr;
  const Tensor* sizes = ctx.opset >= 11 && ctx.has_in(3) ? &ctx.in(3) : nullptr;
  const Tensor* roi = ctx.opset >= 11 && ctx.has_in(1) ? &ctx.in(1) : nullptr;
  TESSEL_ASSIGN_OR_RETURN(ResizePlan plan,
                          PlanResize(ctx.node, ctx.opset, ctx.in(0).shape(), scales, sizes));
  return RunResizePlan(plan, ctx.in(0), roi, ctx.out(0));
}

Status InferUpsample(ir::Node& node, int opset) {
  const Tensor* scales = nullptr;
  if (opset >= 9) {
    if (!node.input(1)) return NodeError(node, "input scales is required since opset 9");
    TESSEL_RETURN_IF_ERROR(RequireDType(node, 1, {DType::kFloat32}));
    TESSEL_ASSIGN_OR_RETURN(scales, RequireConstantInput(node, 1, "scales"));
  } else {
    if (node.input(1)) return NodeError(node, "scales is an attribute before opset 9");
    if (!node.attrs.Has("scales")) return NodeError(node, "attribute scales is required");
  }
  TESSEL_ASSIGN_OR_RETURN(ResizePlan plan, PlanUpsample(node, opset, In(node, 0).shape, scales));
  SetOutput(node, 0, In(node, 0).dtype, plan.out);
  return Status::Ok();
}

Status RunUpsample(KernelContext& ctx) {
  const Tensor* scales = ctx.opset >= 9 ? &ctx.in(1) : nullptr;
  TESSEL_ASSIGN_OR_RETURN(ResizePlan plan,
                          PlanUpsample(ctx.node, ctx.opset, ctx.in(0).shape(), scales));
  return RunResizePlan(plan, ctx.in(0), nullptr, ctx.out(0));
}

// ---------------------------------------------------------------------------
// CenterCropPad, Col2Im

// CenterCropPad: each listed axis cropped or zero-padded to its new length,
// centred (an odd difference puts the extra element at the end).
struct CropPadPlan {
  Shape out;
  std::vector<int64_t> shift;  // input index = output index + shift (per dim)
};

StatusOr<CropPadPlan> PlanCenterCropPad(const ir::Node& node, const Shape& in) {
  TESSEL_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ConstantInts(node, 1, "shape"));
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes;
  if (node.attrs.Has("axes")) {
    for (int64_t a : node.attrs.Ints("axes")) {
      TESSEL_ASSIGN_OR_RETURN(int64_t n, NormalizeAxis(node, a, rank));
      axes.push_back(n);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  if (shape.size() != axes.size()) {
    return NodeError(node, "shape " + ListToString(shape) + " has " + std::to_string(shape.size()) +
                               " values for " + std::to_string(axes.size()) + " axes");
  }
  CropPadPlan p{in, std::vector<int64_t>(in.size(), 0)};
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t dim = in[axes[i]], want = shape[i];
    if (want < 0) return NodeError(node, "shape " + ListToString(shape) + " has a negative size");
    p.out[axes[i]] = want;
    p.shift[axes[i]] = want < dim ? (dim - want) / 2 : -((want - dim) / 2);
  }
  TESSEL_RETURN_IF_ERROR(CheckShape(node, p.out, "output shape"));
  return p;
}

Status InferCenterCropPad(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 1, {DType::kInt32, DType::kInt64}));
  TESSEL_ASSIGN_OR_RETURN(CropPadPlan p, PlanCenterCropPad(node, In(node, 0).shape));
  SetOutput(node, 0, In(node, 0).dtype, p.out);
  return Status::Ok();
}

Status RunCenterCropPad(KernelContext& ctx) {
  const Tensor& in = ctx.in(0);
  TESSEL_ASSIGN_OR_RETURN(CropPadPlan p, PlanCenterCropPad(ctx.node, in.shape()));
  const size_t es = ElemSize(in);
  const std::vector<int64_t> strides = StridesOf(in.shape());
  Tensor& out = ctx.out(0);
  std::vector<int64_t> pos(p.out.size(), 0);
  for (int64_t j = 0; j < out.num_elements(); ++j, NextIndex(pos, p.out)) {
    int64_t offset = 0;
    bool inside = true;
    for (size_t d = 0; d < pos.size() && inside; ++d) {
      const int64_t s = pos[d] + p.shift[d];
      inside = s >= 0 && s < in.dim(static_cast<int64_t>(d));
      offset += s * strides[d];
    }
    if (inside) std::memcpy(Bytes(out) + j * es, Bytes(in) + offset * es, es);
  }
  return Status::Ok();
}

// Col2Im: input N x (C * prod(block)) x L, the columns im2col made of an
// image of image_shape; output N x C x image_shape, every column element
// added back where it came from.
struct Col2ImPlan {
  Shape image, block, blocks;
  std::vector<int64_t> strides, dilations, pads;  // pads: begins, then ends
  int64_t channels = 0;
};

StatusOr<Col2ImPlan> PlanCol2Im(const ir::Node& node, const Shape& x) {
  Col2ImPlan p;
  TESSEL_ASSIGN_OR_RETURN(p.image, ConstantInts(node, 1, "image_shape"));
  TESSEL_ASSIGN_OR_RETURN(p.block, ConstantInts(node, 2, "block_shape"));
  const size_t n = p.image.size();
  if (x.size() != 3 || n == 0 || p.block.size() != n) {
    return NodeError(node, "input " + ShapeToString(x) + ", image_shape " + ListToString(p.image) +
                               " and block_shape " + ListToString(p.block) +
                               " must be N x (C * prod(block)) x L and two lists of one length");
  }
  const auto ints = [&](const char* name, int64_t fill, size_t count) {
    std::vector<int64_t> v = node.attrs.Ints(name);
    if (v.empty()) v.assign(count, fill);
    return v;
  };
  p.strides = ints("strides", 1, n);
  p.dilations = ints("dilations", 1, n);
  p.pads = ints("pads", 0, 2 * n);
  if (p.strides.size() != n || p.dilations.size() != n || p.pads.size() != 2 * n) {
    return NodeError(node,
                     "strides, dilations and pads must have one (pads: two) value per "
                     "spatial axis");
  }
  // In 128 bits: attributes and constants may hold any int64.
  WideInt kernel = 1, count = 1;
  for (size_t d = 0; d < n; ++d) {
    if (p.block[d] < 1 || p.strides[d] < 1 || p.dilations[d] < 1 || p.image[d] < 0 ||
        p.pads[d] < 0 || p.pads[d + n] < 0) {
      return NodeError(node, "block_shape, strides and dilations must be positive, pads >= 0");
    }
    kernel *= p.block[d];
    const WideInt span = WideInt{p.dilations[d]} * (p.block[d] - 1) + 1;
    const WideInt b = (WideInt{p.image[d]} + p.pads[d] + p.pads[d + n] - span) / p.strides[d] + 1;
    if (b < 1) return NodeError(node, "the blocks do not fit image_shape " + ListToString(p.image));
    count *= b;
    if (!FitsInt64(kernel) || !FitsInt64(count)) {
      return NodeError(node, "block_shape " + ListToString(p.block) + " and image_shape " +
                                 ListToString(p.image) + " make more blocks than 64 bits count");
    }
    p.blocks.push_back(static_cast<int64_t>(b));
  }
  const auto kernel64 = static_cast<int64_t>(kernel), count64 = static_cast<int64_t>(count);
  if (x[1] % kernel64 != 0 || x[2] != count64) {
    return NodeError(node, "input " + ShapeToString(x) + " must be N x (C * " +
                               std::to_string(kernel64) + ") x " + std::to_string(count64) +
                               " for these blocks");
  }
  p.channels = x[1] / kernel64;
  return p;
}

Status InferCol2Im(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 1, {DType::kInt64}));
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 2, {DType::kInt64}));
  TESSEL_ASSIGN_OR_RETURN(Col2ImPlan p, PlanCol2Im(node, In(node, 0).shape));
  Shape out = {In(node, 0).shape[0], p.channels};
  out.insert(out.end(), p.image.begin(), p.image.end());
  TESSEL_RETURN_IF_ERROR(CheckShape(node, out, "output shape"));
  SetOutput(node, 0, In(node, 0).dtype, out);
  return Status::Ok();
}

Status RunCol2Im(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  TESSEL_ASSIGN_OR_RETURN(Col2ImPlan p, PlanCol2Im(ctx.node, x.shape()));
  Tensor& y = ctx.out(0);
  const size_t n = p.image.size();
  const int64_t kernel = NumElements(p.block), count = NumElements(p.blocks);
  const int64_t plane = NumElements(p.image);
  std::vector<double> acc(static_cast<size_t>(y.num_elements()), 0.0);
  std::vector<int64_t> k(n), b(n);
  for (int64_t batch = 0; batch < x.dim(0); ++batch) {
    for (int64_t c = 0; c < p.channels; ++c) {
      for (int64_t kk = 0; kk < kernel; ++kk) {
        for (int64_t r = kk, d = static_cast<int64_t>(n) - 1; d >= 0; --d) {
          k[d] = r % p.block[d];
          r /= p.block[d];
        }
        const int64_t row = (batch * p.channels + c) * kernel + kk;
        for (int64_t col = 0; col < count; ++col) {
          int64_t at = 0;
          bool inside = true;
          for (int64_t r = col, d = static_cast<int64_t>(n) - 1; d >= 0; --d) {
            b[d] = r % p.blocks[d];
            r /= p.blocks[d];
          }
          for (size_t d = 0; d < n && inside; ++d) {
            const int64_t i = b[d] * p.strides[d] - p.pads[d] + k[d] * p.dilations[d];
            inside = i >= 0 && i < p.image[d];
            at = at * p.image[d] + i;
          }
          if (inside)
            acc[(batch * p.channels + c) * plane + at] += x.GetAsDouble(row * count + col);
        }
      }
    }
  }
  for (int64_t i = 0; i < y.num_elements(); ++i) StoreDouble(y, i, acc[i]);
  return Status::Ok();
}

}  // namespace

void RegisterTensorSpatialOps(OpRegistry& r) {
  const OpClass kInj = OpClass::kInjective;
  const OpClass kOpq = OpClass::kOpaque;
  r.Register({.op_type = "Pad",
              .domain = "",
              .op_class = kInj,
              .max_inputs = 4,
              .infer = InferPad,
              .run = RunPad});
  r.Register({.op_type = "DepthToSpace",
              .domain = "",
              .op_class = kInj,
              .infer = InferDepthToSpace,
              .run = RunDepthToSpace});
  r.Register({.op_type = "SpaceToDepth",
              .domain = "",
              .op_class = kInj,
              .infer = InferSpaceToDepth,
              .run = RunSpaceToDepth});
  r.Register({.op_type = "CenterCropPad",
              .domain = "",
              .op_class = kInj,
              .min_inputs = 2,
              .max_inputs = 2,
              .infer = InferCenterCropPad,
              .run = RunCenterCropPad});
  r.Register({.op_type = "Col2Im",
              .domain = "",
              .op_class = kOpq,
              .min_inputs = 3,
              .max_inputs = 3,
              .infer = InferCol2Im,
              .run = RunCol2Im});
  r.Register({.op_type = "Resize",
              .domain = "",
              .op_class = kOpq,
              .max_inputs = 4,
              .infer = InferResize,
              .run = RunResize});
  r.Register({.op_type = "Upsample",
              .domain = "",
              .op_class = kOpq,
              .max_inputs = 2,
              .infer = InferUpsample,
              .run = RunUpsample});
}

}  // namespace tessel::ops::tensor_internal

namespace tessel::ops {

using tensor_internal::ConstantInts;

StatusOr<PadPlan> PlanPadNode(const ir::Node& node, int opset) {
  std::vector<int64_t> pads;
  std::optional<std::vector<int64_t>> axes;
  if (opset >= 11) {
    TESSEL_ASSIGN_OR_RETURN(pads, ConstantInts(node, 1, "pads"));
    if (node.input(3)) {
      TESSEL_ASSIGN_OR_RETURN(std::vector<int64_t> a, ConstantInts(node, 3, "axes"));
      axes = std::move(a);
    }
  } else {
    pads = node.attrs.Ints("pads");
  }
  const ir::Value& x = *node.input(0);
  TESSEL_ASSIGN_OR_RETURN(PadPlan plan, tensor_internal::PlanPad(node, x.shape, pads, axes));
  Tensor fill(x.dtype, {});
  if (opset >= 11) {
    const ir::Value* value = node.input(2);
    if (value && NumElements(value->shape) == 1) {
      if (!value->is_constant()) {
        return tensor_internal::NodeUnsupported(node,
                                                "constant_value must be known at compile time");
      }
      std::memcpy(fill.raw_data(), value->constant.raw_data(), DTypeSize(x.dtype));
    }
  } else {
    tensor_internal::StoreDouble(fill, 0, node.attrs.Float("value", 0.0f));
  }
  const auto* bytes = static_cast<const uint8_t*>(fill.raw_data());
  plan.fill.assign(bytes, bytes + DTypeSize(x.dtype));
  return plan;
}

StatusOr<ResizeSampling> PlanResizeNode(const ir::Node& node, int opset) {
  using namespace tensor_internal;  // NOLINT: the planning helpers above
  const Shape& in = node.input(0)->shape;
  ResizePlan plan;
  const Tensor* roi = nullptr;
  if (node.op_type == "Upsample") {
    const Tensor* scales = nullptr;
    if (opset >= 9) {
      TESSEL_ASSIGN_OR_RETURN(scales, RequireConstantInput(node, 1, "scales"));
    }
    TESSEL_ASSIGN_OR_RETURN(plan, PlanUpsample(node, opset, in, scales));
  } else {
    const size_t scales_at = opset >= 11 ? 2 : 1;
    const Tensor* scales = nullptr;
    const Tensor* sizes = nullptr;
    if (node.input(scales_at)) {
      TESSEL_ASSIGN_OR_RETURN(scales, RequireConstantInput(node, scales_at, "scales"));
    }
    if (opset >= 11 && node.input(3)) {
      TESSEL_ASSIGN_OR_RETURN(sizes, RequireConstantInput(node, 3, "sizes"));
    }
    if (opset >= 11 && node.input(1)) {
      TESSEL_ASSIGN_OR_RETURN(roi, RequireConstantInput(node, 1, "roi"));
    }
    TESSEL_ASSIGN_OR_RETURN(plan, PlanResize(node, opset, in, scales, sizes));
  }
  ResizeSampling sampling;
  sampling.nearest = plan.mode == ResizeMode::kNearest;
  sampling.extrapolation_value = plan.extrapolation_value;
  sampling.out = plan.out;
  for (size_t d = 0; d < in.size(); ++d) {
    const auto [start, end] = AxisRoi(plan, roi, d, in.size());
    sampling.axes.push_back(SampleAxis(plan, d, in[d], start, end));
    AxisSampling& axis = sampling.axes.back();
    if (sampling.nearest) {
      // Nearest reads each coordinate's index, which a coordinate mode may
      // shift (tf_half_pixel_for_nn) even where the length stays.
      axis.identity = in[d] == plan.out[d];
      for (int64_t x = 0; x < plan.out[d] && axis.identity; ++x) {
        axis.identity = !axis.outside[x] && axis.index[x] == x;
      }
    } else {
      // Interpolation skips an axis that keeps its length and scale
      // (RunResizeInterpolated).
      axis.identity = plan.coord != CoordMode::kTfCropAndResize && in[d] == plan.out[d] &&
                      plan.scales[d] == 1.0;
    }
  }
  return sampling;
}

}  // namespace tessel::ops
