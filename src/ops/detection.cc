// Object-detection ops: NonMaxSuppression and RoiAlign.
//
// NonMaxSuppression's output length depends on the data, so tessel needs all
// of its inputs at compile time (static shapes) and shape inference runs the
// selection itself. Box arithmetic is float32, as in onnxruntime, so IoU
// comparisons against the threshold agree with it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/op_registry.h"
#include "ops/op_util.h"

namespace tessel::ops {
namespace {

// ---- NonMaxSuppression ------------------------------------------------------

// Inputs: 0 boxes (batches x boxes x 4), 1 scores (batches x classes x boxes),
// 2 max_output_boxes_per_class, 3 iou_threshold, 4 score_threshold; the last
// three optional scalars.
struct Box {
  float y_min, x_min, y_max, x_max;
  float area() const { return (y_max - y_min) * (x_max - x_min); }
};

// Corners come in either diagonal order; center_point_box=1 gives
// [x_center, y_center, width, height].
Box ReadBox(const Tensor& boxes, int64_t at, bool center) {
  const float a = static_cast<float>(boxes.GetAsDouble(at));
  const float b = static_cast<float>(boxes.GetAsDouble(at + 1));
  const float c = static_cast<float>(boxes.GetAsDouble(at + 2));
  const float d = static_cast<float>(boxes.GetAsDouble(at + 3));
  if (center) return {b - d / 2, a - c / 2, b + d / 2, a + c / 2};
  return {std::min(a, c), std::min(b, d), std::max(a, c), std::max(b, d)};
}

bool Overlaps(const Box& p, const Box& q, float iou_threshold) {
  const float h = std::min(p.y_max, q.y_max) - std::max(p.y_min, q.y_min);
  const float w = std::min(p.x_max, q.x_max) - std::max(p.x_min, q.x_min);
  if (h <= 0 || w <= 0) return false;
  const float inter = h * w;
  const float uni = p.area() + q.area() - inter;
  if (p.area() <= 0 || q.area() <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

Status CheckScalarInput(const ir::Node& node, size_t i, const char* what) {
  const ir::Value* v = node.input(i);
  if (!v || (v->shape.size() <= 1 && NumElements(v->shape) == 1)) return Status::Ok();
  return InvalidArgument(node.Describe() + ": " + what + " '" + v->name + "' has shape " +
                         ShapeToString(v->shape) + "; expected one value");
}

// Selected (batch, class, box) triples: per batch and class, boxes by
// decreasing score (ties: lower index first) that pass score_threshold and
// overlap no box already selected by more than iou_threshold.
std::vector<int64_t> SelectBoxes(const ir::Node& node, const Tensor& boxes, const Tensor& scores,
                                 const Tensor* max_out, const Tensor* iou,
                                 const Tensor* score_min) {
  const bool center = node.attrs.Int("center_point_box", 0) != 0;
  const int64_t limit = max_out ? max_out->GetAsInt64(0) : 0;
  const float iou_threshold = iou ? static_cast<float>(iou->GetAsDouble(0)) : 0.0f;
  const int64_t batches = scores.dim(0), classes = scores.dim(1), n = scores.dim(2);
  std::vector<int64_t> selected;
  if (limit <= 0) return selected;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t c = 0; c < classes; ++c) {
      const int64_t base = (b * classes + c) * n;
      std::vector<int64_t> order;
      for (int64_t i = 0; i < n; ++i) {
        const float s = static_cast<float>(scores.GetAsDouble(base + i));
        if (!score_min || s > static_cast<float>(score_min->GetAsDouble(0))) order.push_back(i);
      }
      // NaN scores order last, keeping the comparison a strict weak order.
      auto key = [&](int64_t i) {
        const double s = scores.GetAsDouble(base + i);
        return std::isnan(s) ? -std::numeric_limits<double>::infinity() : s;
      };
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t i, int64_t j) { return key(i) > key(j); });
      std::vector<Box> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) == limit) break;
        const Box box = ReadBox(boxes, (b * n + i) * 4, center);
        bool suppressed = false;
        for (const Box& k : kept) suppressed = suppressed || Overlaps(k, box, iou_threshold);
        if (suppressed) continue;
        kept.push_back(box);
        selected.insert(selected.end(), {b, c, i});
      }
    }
  }
  return selected;
}

Status InferNonMaxSuppression(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, {DType::kFloat32, DType::kFloat16}));
  TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, 1}));
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 2, {DType::kInt64}));
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 3, {DType::kFloat32}));
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 4, {DType::kFloat32}));
  const Shape& boxes = node.input(0)->shape;
  const Shape& scores = node.input(1)->shape;
  if (boxes.size() != 3 || boxes[2] != 4 || scores.size() != 3 || scores[0] != boxes[0] ||
      scores[2] != boxes[1]) {
    return InvalidArgument(node.Describe() + ": boxes shape " + ShapeToString(boxes) +
                           " and scores shape " + ShapeToString(scores) +
                           " must be batches x boxes x 4 and batches x classes x boxes");
  }
  TESSEL_RETURN_IF_ERROR(CheckScalarInput(node, 2, "max_output_boxes_per_class"));
  TESSEL_RETURN_IF_ERROR(CheckScalarInput(node, 3, "iou_threshold"));
  TESSEL_RETURN_IF_ERROR(CheckScalarInput(node, 4, "score_threshold"));
  const int64_t center = node.attrs.Int("center_point_box", 0);
  if (center != 0 && center != 1) {
    return InvalidArgument(node.Describe() + ": center_point_box " + std::to_string(center) +
                           " must be 0 or 1");
  }
  // The number of selected boxes decides the output shape.
  const char* names[] = {"boxes", "scores", "max_output_boxes_per_class", "iou_threshold",
                         "score_threshold"};
  const Tensor* in[5] = {};
  for (size_t i = 0; i < 5; ++i) {
    if (!node.input(i)) continue;
    TESSEL_ASSIGN_OR_RETURN(in[i], RequireConstantInput(node, i, names[i]));
  }
  const std::vector<int64_t> selected = SelectBoxes(node, *in[0], *in[1], in[2], in[3], in[4]);
  SetOutput(node, 0, DType::kInt64, {static_cast<int64_t>(selected.size() / 3), 3});
  return Status::Ok();
}

Status RunNonMaxSuppression(KernelContext& ctx) {
  auto opt = [&](size_t i) { return ctx.has_in(i) ? &ctx.in(i) : nullptr; };
  const std::vector<int64_t> selected =
      SelectBoxes(ctx.node, ctx.in(0), ctx.in(1), opt(2), opt(3), opt(4));
  Tensor& out = ctx.out(0);
  if (static_cast<int64_t>(selected.size()) != out.num_elements()) {
    return InvalidArgument(ctx.node.Describe() + ": selected " +
                           std::to_string(selected.size() / 3) + " boxes; compiled for " +
                           std::to_string(out.dim(0)));
  }
  std::copy(selected.begin(), selected.end(), out.data<int64_t>());
  return Status::Ok();
}

// ---- RoiAlign ---------------------------------------------------------------

// Inputs: 0 X (N x C x H x W), 1 rois (R x 4: x1, y1, x2, y2 in input
// coordinates before spatial_scale), 2 batch_indices (R). Output R x C x
// output_height x output_width.
struct RoiAlignAttrs {
  bool max = false;
  bool half_pixel = false;
  int64_t out_h = 1, out_w = 1, sampling_ratio = 0;
  double spatial_scale = 1;
};

StatusOr<RoiAlignAttrs> ReadRoiAlign(const ir::Node& node, int opset) {
  RoiAlignAttrs a;
  const std::string mode = node.attrs.String("mode", "avg");
  if (mode != "avg" && mode != "max") {
    return InvalidArgument(node.Describe() + ": mode '" + mode + "' is not one of avg, max");
  }
  a.max = mode == "max";
  // Opset 16 added half_pixel (and made it the default); opset 10 behaves
  // as output_half_pixel.
  const std::string coord = node.attrs.String("coordinate_transformation_mode",
                                              opset >= 16 ? "half_pixel" : "output_half_pixel");
  if (coord != "half_pixel" && coord != "output_half_pixel") {
    return InvalidArgument(node.Describe() + ": coordinate_transformation_mode '" + coord +
                           "' is not one of half_pixel, output_half_pixel");
  }
  a.half_pixel = coord == "half_pixel";
  a.out_h = node.attrs.Int("output_height", 1);
  a.out_w = node.attrs.Int("output_width", 1);
  a.sampling_ratio = node.attrs.Int("sampling_ratio", 0);
  a.spatial_scale = node.attrs.Float("spatial_scale", 1.0f);
  // As many samples per bin side as adaptive sampling takes at most.
  if (a.out_h < 1 || a.out_w < 1 || a.sampling_ratio < 0 || a.sampling_ratio > (1 << 16)) {
    return InvalidArgument(node.Describe() + ": output_height " + std::to_string(a.out_h) +
                           ", output_width " + std::to_string(a.out_w) + " must be >= 1 and " +
                           "sampling_ratio " + std::to_string(a.sampling_ratio) + " in [0, 65536]");
  }
  return a;
}

Status InferRoiAlign(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, kFloatTypes));
  TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, 1}));
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 2, {DType::kInt64}));
  TESSEL_ASSIGN_OR_RETURN(RoiAlignAttrs a, ReadRoiAlign(node, opset));
  const Shape& x = node.input(0)->shape;
  const Shape& rois = node.input(1)->shape;
  const Shape& idx = node.input(2)->shape;
  if (x.size() != 4 || rois.size() != 2 || rois[1] != 4 || idx != Shape{rois[0]}) {
    return InvalidArgument(node.Describe() + ": X shape " + ShapeToString(x) + ", rois shape " +
                           ShapeToString(rois) + " and batch_indices shape " + ShapeToString(idx) +
                           " must be N x C x H x W, R x 4 and R");
  }
  SetOutput(node, 0, node.input(0)->dtype, {rois[0], x[1], a.out_h, a.out_w});
  return Status::Ok();
}

// One bilinear sample: four input offsets in a channel plane and weights.
struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

// onnxruntime's sampling: a point more than one pixel outside the plane
// contributes nothing; one nearer is clamped onto the edge.
Sample BilinearSample(double y, double x, int64_t height, int64_t width) {
  Sample s;
  if (!(y >= -1.0 && y <= static_cast<double>(height) && x >= -1.0 &&
        x <= static_cast<double>(width))) {
    return s;
  }
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x), y_high, x_high;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = static_cast<double>(y_low);
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = static_cast<double>(x_low);
  } else {
    x_high = x_low + 1;
  }
  const double ly = y - static_cast<double>(y_low), lx = x - static_cast<double>(x_low);
  const double hy = 1 - ly, hx = 1 - lx;
  s.pos[0] = y_low * width + x_low;
  s.pos[1] = y_low * width + x_high;
  s.pos[2] = y_high * width + x_low;
  s.pos[3] = y_high * width + x_high;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

Status RunRoiAlign(KernelContext& ctx) {
  TESSEL_ASSIGN_OR_RETURN(RoiAlignAttrs a, ReadRoiAlign(ctx.node, ctx.opset));
  const Tensor& x = ctx.in(0);
  const Tensor& rois = ctx.in(1);
  const Tensor& batch_indices = ctx.in(2);
  Tensor& y = ctx.out(0);
  const int64_t channels = x.dim(1), height = x.dim(2), width = x.dim(3);
  const double offset = a.half_pixel ? 0.5 : 0.0;
  for (int64_t r = 0; r < rois.dim(0); ++r) {
    const int64_t batch = batch_indices.GetAsInt64(r);
    if (batch < 0 || batch >= x.dim(0)) {
      return InvalidArgument(ctx.node.Describe() + ": batch index " + std::to_string(batch) +
                             " of roi " + std::to_string(r) + " is out of range [0, " +
                             std::to_string(x.dim(0)) + ")");
    }
    const double x0 = rois.GetAsDouble(r * 4) * a.spatial_scale - offset;
    const double y0 = rois.GetAsDouble(r * 4 + 1) * a.spatial_scale - offset;
    double roi_w = rois.GetAsDouble(r * 4 + 2) * a.spatial_scale - offset - x0;
    double roi_h = rois.GetAsDouble(r * 4 + 3) * a.spatial_scale - offset - y0;
    if (!a.half_pixel) {
      // output_half_pixel keeps rois at least one pixel wide (the legacy
      // behaviour).
      roi_w = std::max(roi_w, 1.0);
      roi_h = std::max(roi_h, 1.0);
    }
    if (!std::isfinite(x0 + y0 + roi_w + roi_h)) {
      return InvalidArgument(ctx.node.Describe() + ": roi " + std::to_string(r) +
                             " has a coordinate that is not finite");
    }
    const double bin_h = roi_h / static_cast<double>(a.out_h);
    const double bin_w = roi_w / static_cast<double>(a.out_w);
    // Adaptive sampling takes about one sample per input pixel of a bin; a
    // bin of millions of pixels is a malformed roi, not a workload.
    constexpr double kMaxGrid = 1 << 16;
    if (a.sampling_ratio == 0 && (std::ceil(bin_h) > kMaxGrid || std::ceil(bin_w) > kMaxGrid)) {
      return InvalidArgument(ctx.node.Describe() + ": roi " + std::to_string(r) + " bins span " +
                             std::to_string(bin_h) + " x " + std::to_string(bin_w) +
                             " pixels; at most 65536 per side are sampled adaptively");
    }
    const int64_t grid_h =
        a.sampling_ratio > 0 ? a.sampling_ratio : static_cast<int64_t>(std::ceil(bin_h));
    const int64_t grid_w =
        a.sampling_ratio > 0 ? a.sampling_ratio : static_cast<int64_t>(std::ceil(bin_w));
    const double count = static_cast<double>(std::max<int64_t>(grid_h * grid_w, 1));
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t plane = (batch * channels + c) * height * width;
      for (int64_t ph = 0; ph < a.out_h; ++ph) {
        for (int64_t pw = 0; pw < a.out_w; ++pw) {
          double acc = 0;
          bool first = true;
          for (int64_t iy = 0; iy < grid_h; ++iy) {
            const double sy = y0 + static_cast<double>(ph) * bin_h +
                              (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
            for (int64_t ix = 0; ix < grid_w; ++ix) {
              const double sx =
                  x0 + static_cast<double>(pw) * bin_w +
                  (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w);
              const Sample s = BilinearSample(sy, sx, height, width);
              double v[4];
              for (int k = 0; k < 4; ++k) v[k] = s.w[k] * x.GetAsDouble(plane + s.pos[k]);
              if (!a.max) {
                acc += v[0] + v[1] + v[2] + v[3];
              } else {
                // The max of the weighted corners, as the ONNX reference and
                // onnxruntime define max pooling here.
                const double m = std::max({v[0], v[1], v[2], v[3]});
                acc = first ? m : std::max(acc, m);
                first = false;
              }
            }
          }
          const int64_t at = ((r * channels + c) * a.out_h + ph) * a.out_w + pw;
          const double out = a.max ? acc : acc / count;
          DispatchDType(y.dtype(), [&](auto tag) {
            using T = decltype(tag);
            y.data<T>()[at] = FromDouble<T>(out);
          });
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace

void RegisterDetectionOps(OpRegistry& r) {
  r.Register({.op_type = "NonMaxSuppression",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 2,
              .max_inputs = 5,
              .infer = InferNonMaxSuppression,
              .run = RunNonMaxSuppression});
  r.Register({.op_type = "RoiAlign",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 3,
              .max_inputs = 3,
              .infer = InferRoiAlign,
              .run = RunRoiAlign});
}

}  // namespace tessel::ops
