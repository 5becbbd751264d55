// GridSample: reads a 4-D image at the positions a grid gives, with nearest,
// bilinear or bicubic interpolation and zeros, border or reflection padding
// (opset 16; the N-D form of opset 20 is beyond the opsets tessel targets).
//
// Follows onnxruntime's kernel, which the ONNX reference mirrors: padding
// modes first move out-of-range positions, then each interpolation tap reads
// a pixel through the padding mode again.
#include <algorithm>
#include <cmath>
#include <string>

#include "ops/op_registry.h"
#include "ops/op_util.h"

namespace tessel::ops {
namespace {

enum class SampleMode { kNearest, kBilinear, kBicubic };
enum class PaddingMode { kZeros, kBorder, kReflection };

struct GridSampleAttrs {
  SampleMode mode = SampleMode::kBilinear;
  PaddingMode padding = PaddingMode::kZeros;
  bool align_corners = false;
};

StatusOr<GridSampleAttrs> ReadGridSample(const ir::Node& node) {
  GridSampleAttrs a;
  const std::string mode = node.attrs.String("mode", "bilinear");
  if (mode == "nearest") {
    a.mode = SampleMode::kNearest;
  } else if (mode == "bilinear") {
    a.mode = SampleMode::kBilinear;
  } else if (mode == "bicubic") {
    a.mode = SampleMode::kBicubic;
  } else {
    return InvalidArgument(node.Describe() + ": mode '" + mode +
                           "' is not one of nearest, bilinear, bicubic");
  }
  const std::string padding = node.attrs.String("padding_mode", "zeros");
  if (padding == "zeros") {
    a.padding = PaddingMode::kZeros;
  } else if (padding == "border") {
    a.padding = PaddingMode::kBorder;
  } else if (padding == "reflection") {
    a.padding = PaddingMode::kReflection;
  } else {
    return InvalidArgument(node.Describe() + ": padding_mode '" + padding +
                           "' is not one of zeros, border, reflection");
  }
  a.align_corners = node.attrs.Int("align_corners", 0) != 0;
  return a;
}

// Inputs: 0 X (N x C x H x W), 1 grid (N x H_out x W_out x 2, (x, y) in
// [-1, 1]). Output N x C x H_out x W_out.
Status InferGridSample(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, kFloatTypes));
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 1, kFloatTypes));
  TESSEL_RETURN_IF_ERROR(ReadGridSample(node).status());
  const Shape& x = node.input(0)->shape;
  const Shape& grid = node.input(1)->shape;
  if (x.size() != 4 || grid.size() != 4 || grid[0] != x[0] || grid[3] != 2) {
    return InvalidArgument(node.Describe() + ": X shape " + ShapeToString(x) + " and grid shape " +
                           ShapeToString(grid) +
                           " must be N x C x H x W and N x H_out x W_out x 2");
  }
  SetOutput(node, 0, node.input(0)->dtype, {x[0], x[1], grid[1], grid[2]});
  return Status::Ok();
}

// Mirrors x at the borders until it lies in [lo, hi].
double Reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const double n = std::floor(dx / range), r = dx - n * range;
    return std::fmod(n, 2) == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const double n = std::floor(dx / range), r = dx - n * range;
    return std::fmod(n, 2) == 0 ? hi - r : lo + r;
  }
  return x;
}

// Keys' cubic convolution weights (a = -0.75) of the four taps around a
// position t in [0, 1) past the second tap.
void CubicWeights(double t, double w[4]) {
  constexpr double a = -0.75;
  auto near = [](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };
  auto far = [](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

class Sampler {
 public:
  Sampler(const GridSampleAttrs& a, const Tensor& x, int64_t plane, int64_t h, int64_t w)
      : a_(a), x_(x), plane_(plane), h_(h), w_(w) {
    // Pixel centres span [-0.5, size - 0.5], or [0, size - 1] with corners
    // aligned.
    lo_x_ = a.align_corners ? 0 : -0.5;
    lo_y_ = lo_x_;
    hi_x_ = a.align_corners ? static_cast<double>(w - 1) : static_cast<double>(w) - 0.5;
    hi_y_ = a.align_corners ? static_cast<double>(h - 1) : static_cast<double>(h) - 0.5;
  }

  double At(double nx, double ny) const {
    // A NaN or infinite grid point addresses no pixel.
    if (!std::isfinite(nx) || !std::isfinite(ny)) return 0;
    double x = Denormalize(nx, w_), y = Denormalize(ny, h_);
    if (a_.mode == SampleMode::kNearest) {
      x = std::nearbyint(x);
      y = std::nearbyint(y);
    }
    if (x < lo_x_ || x > hi_x_ || y < lo_y_ || y > hi_y_) {
      if (a_.padding == PaddingMode::kBorder) {
        x = std::clamp(x, 0.0, static_cast<double>(w_ - 1));
        y = std::clamp(y, 0.0, static_cast<double>(h_ - 1));
      } else if (a_.padding == PaddingMode::kReflection) {
        x = Reflect(x, lo_x_, hi_x_);
        y = Reflect(y, lo_y_, hi_y_);
      }
    }
    // Far outside the plane every pixel index clamps or reads zero alike; a
    // bound keeps the conversion defined and x0 + 2 from overflowing.
    constexpr double kFar = 1e15;
    x = std::clamp(x, -kFar, kFar);
    y = std::clamp(y, -kFar, kFar);
    if (a_.mode == SampleMode::kNearest) {
      return Pixel(static_cast<int64_t>(y), static_cast<int64_t>(x));
    }
    const double fx = std::floor(x), fy = std::floor(y);
    const int64_t x0 = static_cast<int64_t>(fx), y0 = static_cast<int64_t>(fy);
    const double dx = x - fx, dy = y - fy;
    if (a_.mode == SampleMode::kBilinear) {
      return (1 - dy) * ((1 - dx) * Pixel(y0, x0) + dx * Pixel(y0, x0 + 1)) +
             dy * ((1 - dx) * Pixel(y0 + 1, x0) + dx * Pixel(y0 + 1, x0 + 1));
    }
    double wx[4], wy[4];
    CubicWeights(dx, wx);
    CubicWeights(dy, wy);
    double v = 0;
    for (int i = 0; i < 4; ++i) {
      double row = 0;
      for (int j = 0; j < 4; ++j) row += wx[j] * Pixel(y0 - 1 + i, x0 - 1 + j);
      v += wy[i] * row;
    }
    return v;
  }

 private:
  double Denormalize(double n, int64_t size) const {
    const double s = static_cast<double>(size);
    return a_.align_corners ? (n + 1) / 2 * (s - 1) : ((n + 1) * s - 1) / 2;
  }

  // The pixel at integer (r, c), through the padding mode.
  double Pixel(int64_t r, int64_t c) const {
    switch (a_.padding) {
      case PaddingMode::kZeros:
        if (r < 0 || r >= h_ || c < 0 || c >= w_) return 0;
        break;
      case PaddingMode::kBorder:
        break;
      case PaddingMode::kReflection:
        c = static_cast<int64_t>(Reflect(static_cast<double>(c), lo_x_, hi_x_));
        r = static_cast<int64_t>(Reflect(static_cast<double>(r), lo_y_, hi_y_));
        break;
    }
    // Border padding, and a guard for reflection's rounding at the edges.
    r = std::clamp<int64_t>(r, 0, h_ - 1);
    c = std::clamp<int64_t>(c, 0, w_ - 1);
    return x_.GetAsDouble(plane_ + r * w_ + c);
  }

  const GridSampleAttrs& a_;
  const Tensor& x_;
  int64_t plane_, h_, w_;
  double lo_x_, lo_y_, hi_x_, hi_y_;
};

Status RunGridSample(KernelContext& ctx) {
  TESSEL_ASSIGN_OR_RETURN(GridSampleAttrs a, ReadGridSample(ctx.node));
  const Tensor& x = ctx.in(0);
  const Tensor& grid = ctx.in(1);
  Tensor& y = ctx.out(0);
  const int64_t n = x.dim(0), channels = x.dim(1), h = x.dim(2), w = x.dim(3);
  const int64_t out_h = grid.dim(1), out_w = grid.dim(2);
  if (h == 0 || w == 0) return Status::Ok();  // every sample is padding: zeros
  int64_t at = 0;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t c = 0; c < channels; ++c) {
      const Sampler sampler(a, x, (b * channels + c) * h * w, h, w);
      for (int64_t i = 0; i < out_h * out_w; ++i, ++at) {
        const int64_t g = (b * out_h * out_w + i) * 2;
        const double v = sampler.At(grid.GetAsDouble(g), grid.GetAsDouble(g + 1));
        DispatchDType(y.dtype(), [&](auto tag) {
          using T = decltype(tag);
          y.data<T>()[at] = FromDouble<T>(v);
        });
      }
    }
  }
  return Status::Ok();
}

}  // namespace

void RegisterSamplingOps(OpRegistry& r) {
  r.Register({.op_type = "GridSample",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 2,
              .max_inputs = 2,
              .infer = InferGridSample,
              .run = RunGridSample});
}

}  // namespace tessel::ops
