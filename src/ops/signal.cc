// Signal processing (opset 17): HannWindow, HammingWindow, BlackmanWindow,
// DFT, STFT, MelWeightMatrix.
//
// Sizes that decide output shapes (window size, dft_length, frame_step, ...)
// must be known at compile time. Transforms are direct O(n^2) sums in
// double: the reference is meant to be obviously right, not fast, and
// reduces k * t modulo n so twiddle angles stay accurate for long signals.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include "ops/op_registry.h"
#include "ops/op_util.h"

namespace tessel::ops {
namespace {

// The float dtypes of the ONNX TensorProto.DataType codes an
// output_datatype attribute may name (the mapping lives in onnx/tensor_io,
// which ops may not depend on).
std::optional<DType> FloatDTypeFromOnnxCode(int64_t code) {
  switch (code) {
    case 1:
      return DType::kFloat32;
    case 10:
      return DType::kFloat16;
    case 11:
      return DType::kFloat64;
    case 16:
      return DType::kBFloat16;
    default:
      return std::nullopt;
  }
}

StatusOr<DType> OutputDType(const ir::Node& node) {
  const int64_t code = node.attrs.Int("output_datatype", 1);
  std::optional<DType> t = FloatDTypeFromOnnxCode(code);
  if (!t) {
    return Unsupported(node.Describe() + ": output_datatype " + std::to_string(code) +
                       " is not supported (1 float32, 10 float16, 11 float64, 16 bfloat16)");
  }
  return *t;
}

void StoreDouble(Tensor& t, int64_t i, double v) { t.SetFromDouble(i, v); }

// A scalar (or one-element) integer input that must be known at compile time.
StatusOr<int64_t> ConstantScalarInt(const ir::Node& node, size_t i, const char* what) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, i, {DType::kInt32, DType::kInt64}));
  TESSEL_ASSIGN_OR_RETURN(const Tensor* t, RequireConstantInput(node, i, what));
  if (t->num_elements() != 1 || t->rank() > 1) {
    return InvalidArgument(node.Describe() + ": " + what + " must be one value; got shape " +
                           ShapeToString(t->shape()));
  }
  // Sizes past int32 would not fit in memory; rejecting them keeps every
  // product of two in int64.
  const int64_t v = t->GetAsInt64(0);
  if (v > std::numeric_limits<int32_t>::max()) {
    return InvalidArgument(node.Describe() + ": " + what + " " + std::to_string(v) +
                           " is too large");
  }
  return v;
}

// ---- HannWindow, HammingWindow, BlackmanWindow -------------------------------

// Generalized cosine windows a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N),
// N = size when periodic, size - 1 when symmetric.
struct CosineWindow {
  double a0, a1, a2;
};
constexpr CosineWindow kHann = {0.5, 0.5, 0};
constexpr CosineWindow kHamming = {25.0 / 46, 21.0 / 46, 0};
constexpr CosineWindow kBlackman = {0.42, 0.5, 0.08};

Status InferWindow(ir::Node& node, int opset) {
  TESSEL_ASSIGN_OR_RETURN(int64_t size, ConstantScalarInt(node, 0, "size"));
  if (size < 0) {
    return InvalidArgument(node.Describe() + ": size " + std::to_string(size) + " must be >= 0");
  }
  TESSEL_ASSIGN_OR_RETURN(DType dtype, OutputDType(node));
  SetOutput(node, 0, dtype, {size});
  return Status::Ok();
}

template <const CosineWindow& kWindow>
Status RunWindow(KernelContext& ctx) {
  Tensor& y = ctx.out(0);
  const int64_t size = y.dim(0);
  const bool periodic = ctx.node.attrs.Int("periodic", 1) != 0;
  const int64_t n = periodic ? size : size - 1;
  for (int64_t i = 0; i < size; ++i) {
    // A symmetric window of one sample has no period; it is its peak, 1.
    if (n == 0) {
      StoreDouble(y, i, 1.0);
      continue;
    }
    const double t = 2 * std::numbers::pi * static_cast<double>(i) / static_cast<double>(n);
    StoreDouble(y, i, kWindow.a0 - kWindow.a1 * std::cos(t) + kWindow.a2 * std::cos(2 * t));
  }
  return Status::Ok();
}

// ---- DFT --------------------------------------------------------------------

// out[k] = sum_t in[t] e^(-+2 pi i k t / n) over t < min(count, n) (the
// signal is truncated or zero-padded to n), for k < bins. `in` holds
// count complex values `stride` apart.
void Transform(const double* re, const double* im, int64_t count, int64_t stride, int64_t n,
               int64_t bins, bool inverse, double* out_re, double* out_im) {
  const double sign = inverse ? 1.0 : -1.0;
  const int64_t used = std::min(count, n);
  for (int64_t k = 0; k < bins; ++k) {
    double sr = 0, si = 0;
    for (int64_t t = 0; t < used; ++t) {
      const double angle =
          sign * 2 * std::numbers::pi * static_cast<double>((k * t) % n) / static_cast<double>(n);
      const double c = std::cos(angle), s = std::sin(angle);
      const double xr = re[t * stride], xi = im[t * stride];
      sr += xr * c - xi * s;
      si += xr * s + xi * c;
    }
    out_re[k] = inverse ? sr / static_cast<double>(n) : sr;
    out_im[k] = inverse ? si / static_cast<double>(n) : si;
  }
}

struct DftPlan {
  int64_t axis = 1;
  int64_t n = 0;     // transform length
  int64_t bins = 0;  // output length along axis
  bool inverse = false;
};

// Input 0: signal (... x L x 1 for real or x 2 for complex values); input 1
// the optional dft_length. The transform runs along `axis`, which may not be
// the last (real/imaginary) dimension.
StatusOr<DftPlan> PlanDft(const ir::Node& node, const Shape& x, std::optional<int64_t> length) {
  DftPlan p;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank < 2 || (x.back() != 1 && x.back() != 2)) {
    return InvalidArgument(node.Describe() + ": input shape " + ShapeToString(x) +
                           " must end in 1 (real) or 2 (complex) values");
  }
  const int64_t axis = node.attrs.Int("axis", 1);
  if (axis < -rank || axis > rank - 2 || axis == -1) {
    return InvalidArgument(node.Describe() + ": axis " + std::to_string(axis) +
                           " is out of range [-" + std::to_string(rank) + ", -2] or [0, " +
                           std::to_string(rank - 2) + "] for input shape " + ShapeToString(x));
  }
  p.axis = axis < 0 ? axis + rank : axis;
  p.n = length.value_or(x[p.axis]);
  if (p.n < 1) {
    return InvalidArgument(node.Describe() + ": dft_length " + std::to_string(p.n) +
                           " must be >= 1");
  }
  p.inverse = node.attrs.Int("inverse", 0) != 0;
  const bool onesided = node.attrs.Int("onesided", 0) != 0;
  if (onesided && p.inverse) {
    return Unsupported(node.Describe() + ": onesided inverse DFT is not supported");
  }
  p.bins = onesided ? p.n / 2 + 1 : p.n;
  return p;
}

Status InferDft(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, kFloatTypes));
  std::optional<int64_t> length;
  if (node.input(1)) {
    TESSEL_ASSIGN_OR_RETURN(length, ConstantScalarInt(node, 1, "dft_length"));
  }
  TESSEL_ASSIGN_OR_RETURN(DftPlan p, PlanDft(node, node.input(0)->shape, length));
  Shape out = node.input(0)->shape;
  out[p.axis] = p.bins;
  out.back() = 2;
  SetOutput(node, 0, node.input(0)->dtype, out);
  return Status::Ok();
}

// Real and imaginary parts of a tensor whose last dimension holds 1 or 2
// components.
void Components(const Tensor& x, std::vector<double>& re, std::vector<double>& im) {
  const int64_t comps = x.shape().back();
  const int64_t n = x.num_elements() / comps;
  re.assign(static_cast<size_t>(n), 0);
  im.assign(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i < n; ++i) {
    re[i] = x.GetAsDouble(i * comps);
    if (comps == 2) im[i] = x.GetAsDouble(i * comps + 1);
  }
}

Status RunDft(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  std::optional<int64_t> length;
  if (ctx.has_in(1)) length = ctx.in(1).GetAsInt64(0);
  TESSEL_ASSIGN_OR_RETURN(DftPlan p, PlanDft(ctx.node, x.shape(), length));
  std::vector<double> re, im;
  Components(x, re, im);
  const Shape& s = x.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < p.axis; ++d) outer *= s[d];
  for (size_t d = p.axis + 1; d + 1 < s.size(); ++d) inner *= s[d];
  const int64_t count = s[p.axis];
  if (count == 0) return Status::Ok();  // an empty signal, zero-padded: all zeros
  std::vector<double> out_re(static_cast<size_t>(p.bins)), out_im(static_cast<size_t>(p.bins));
  Tensor& y = ctx.out(0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * count * inner + i;
      Transform(&re[base], &im[base], count, inner, p.n, p.bins, p.inverse, out_re.data(),
                out_im.data());
      for (int64_t k = 0; k < p.bins; ++k) {
        const int64_t at = ((o * p.bins + k) * inner + i) * 2;
        StoreDouble(y, at, out_re[k]);
        StoreDouble(y, at + 1, out_im[k]);
      }
    }
  }
  return Status::Ok();
}

// ---- STFT -------------------------------------------------------------------

// Inputs: 0 signal (batch x length x 1|2), 1 frame_step, 2 window (optional,
// frame_length values), 3 frame_length (optional). Output batch x frames x
// bins x 2.
struct StftPlan {
  int64_t step = 1, frame_length = 0, frames = 0, bins = 0;
};

StatusOr<StftPlan> PlanStft(const ir::Node& node, const Shape& x, int64_t step,
                            std::optional<int64_t> frame_length, const Shape* window) {
  if (x.size() != 3 || (x[2] != 1 && x[2] != 2)) {
    return InvalidArgument(node.Describe() + ": signal shape " + ShapeToString(x) +
                           " must be batch x length x 1 (real) or 2 (complex)");
  }
  StftPlan p;
  p.step = step;
  p.frame_length = frame_length.value_or(window && !window->empty() ? (*window)[0] : x[1]);
  if (window && (window->size() != 1 || (*window)[0] != p.frame_length)) {
    return InvalidArgument(node.Describe() + ": window shape " + ShapeToString(*window) +
                           " must be frame_length " + std::to_string(p.frame_length));
  }
  if (step < 1 || p.frame_length < 1 || p.frame_length > x[1]) {
    return InvalidArgument(node.Describe() + ": frame_step " + std::to_string(step) +
                           " and frame_length " + std::to_string(p.frame_length) +
                           " must be >= 1, the frame no longer than the signal (" +
                           std::to_string(x[1]) + ")");
  }
  const bool onesided = node.attrs.Int("onesided", 1) != 0;
  if (onesided && x[2] == 2) {
    return InvalidArgument(node.Describe() + ": onesided output needs a real signal; got shape " +
                           ShapeToString(x));
  }
  p.frames = 1 + (x[1] - p.frame_length) / step;
  p.bins = onesided ? p.frame_length / 2 + 1 : p.frame_length;
  return p;
}

Status InferStft(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, kFloatTypes));
  TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, 2}));
  TESSEL_ASSIGN_OR_RETURN(int64_t step, ConstantScalarInt(node, 1, "frame_step"));
  std::optional<int64_t> frame_length;
  if (node.input(3)) {
    TESSEL_ASSIGN_OR_RETURN(frame_length, ConstantScalarInt(node, 3, "frame_length"));
  }
  const Shape* window = node.input(2) ? &node.input(2)->shape : nullptr;
  const Shape& x = node.input(0)->shape;
  TESSEL_ASSIGN_OR_RETURN(StftPlan p, PlanStft(node, x, step, frame_length, window));
  SetOutput(node, 0, node.input(0)->dtype, {x[0], p.frames, p.bins, 2});
  return Status::Ok();
}

Status RunStft(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor* window = ctx.has_in(2) ? &ctx.in(2) : nullptr;
  std::optional<int64_t> frame_length;
  if (ctx.has_in(3)) frame_length = ctx.in(3).GetAsInt64(0);
  const Shape* window_shape = window ? &window->shape() : nullptr;
  TESSEL_ASSIGN_OR_RETURN(StftPlan p, PlanStft(ctx.node, x.shape(), ctx.in(1).GetAsInt64(0),
                                               frame_length, window_shape));
  std::vector<double> re, im;
  Components(x, re, im);
  const int64_t length = x.dim(1);
  std::vector<double> frame_re(static_cast<size_t>(p.frame_length));
  std::vector<double> frame_im(static_cast<size_t>(p.frame_length));
  std::vector<double> out_re(static_cast<size_t>(p.bins)), out_im(static_cast<size_t>(p.bins));
  Tensor& y = ctx.out(0);
  for (int64_t b = 0; b < x.dim(0); ++b) {
    for (int64_t f = 0; f < p.frames; ++f) {
      for (int64_t t = 0; t < p.frame_length; ++t) {
        const int64_t at = b * length + f * p.step + t;
        const double w = window ? window->GetAsDouble(t) : 1.0;
        frame_re[t] = re[at] * w;
        frame_im[t] = im[at] * w;
      }
      Transform(frame_re.data(), frame_im.data(), p.frame_length, 1, p.frame_length, p.bins,
                /*inverse=*/false, out_re.data(), out_im.data());
      for (int64_t k = 0; k < p.bins; ++k) {
        const int64_t at = ((b * p.frames + f) * p.bins + k) * 2;
        StoreDouble(y, at, out_re[k]);
        StoreDouble(y, at + 1, out_im[k]);
      }
    }
  }
  return Status::Ok();
}

// ---- MelWeightMatrix --------------------------------------------------------

// Inputs: num_mel_bins, dft_length, sample_rate, lower_edge_hertz,
// upper_edge_hertz. Output (dft_length / 2 + 1) x num_mel_bins.
Status InferMelWeightMatrix(ir::Node& node, int opset) {
  TESSEL_ASSIGN_OR_RETURN(int64_t mel_bins, ConstantScalarInt(node, 0, "num_mel_bins"));
  TESSEL_ASSIGN_OR_RETURN(int64_t dft_length, ConstantScalarInt(node, 1, "dft_length"));
  TESSEL_ASSIGN_OR_RETURN(int64_t sample_rate, ConstantScalarInt(node, 2, "sample_rate"));
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 3, kFloatTypes));
  TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {3, 4}));
  for (size_t i : {3, 4}) {
    if (NumElements(node.input(i)->shape) != 1) {
      return InvalidArgument(node.Describe() + ": input '" + node.input(i)->name + "' has shape " +
                             ShapeToString(node.input(i)->shape) + "; expected one value");
    }
  }
  if (mel_bins < 1 || dft_length < 1 || sample_rate < 1) {
    return InvalidArgument(node.Describe() + ": num_mel_bins " + std::to_string(mel_bins) +
                           ", dft_length " + std::to_string(dft_length) + " and sample_rate " +
                           std::to_string(sample_rate) + " must be >= 1");
  }
  TESSEL_ASSIGN_OR_RETURN(DType dtype, OutputDType(node));
  SetOutput(node, 0, dtype, {dft_length / 2 + 1, mel_bins});
  return Status::Ok();
}

Status RunMelWeightMatrix(KernelContext& ctx) {
  const int64_t mel_bins = ctx.in(0).GetAsInt64(0);
  const int64_t dft_length = ctx.in(1).GetAsInt64(0);
  const int64_t sample_rate = ctx.in(2).GetAsInt64(0);
  const int64_t spectrum_bins = dft_length / 2 + 1;
  auto to_mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  const double low = to_mel(ctx.in(3).GetAsDouble(0));
  const double high = to_mel(ctx.in(4).GetAsDouble(0));
  // mel_bins + 2 edges evenly spaced in mel (the step divides by their count,
  // as the ONNX reference does), mapped to spectrum bins.
  const double step = (high - low) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> edge(static_cast<size_t>(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double hz = 700 * (std::pow(10.0, (static_cast<double>(i) * step + low) / 2595) - 1);
    const double bin =
        std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate));
    // Every edge but the last is a row of some band; the last only bounds one.
    const double last_row = static_cast<double>(i <= mel_bins ? spectrum_bins - 1 : spectrum_bins);
    if (!(bin >= 0 && bin <= last_row)) {
      char hz_text[32];
      std::snprintf(hz_text, sizeof hz_text, "%g", hz);
      return InvalidArgument(ctx.node.Describe() + ": mel band edge " + std::to_string(i) + " (" +
                             hz_text + " Hz) falls outside the " + std::to_string(spectrum_bins) +
                             " spectrum bins of dft_length " + std::to_string(dft_length) +
                             " at sample_rate " + std::to_string(sample_rate));
    }
    edge[i] = static_cast<int64_t>(bin);
  }
  Tensor& y = ctx.out(0);
  auto set = [&](int64_t row, int64_t col, double v) { StoreDouble(y, row * mel_bins + col, v); };
  // Triangles rising from edge i to edge i + 1 and falling to edge i + 2.
  for (int64_t m = 0; m < mel_bins; ++m) {
    const int64_t lo = edge[m], mid = edge[m + 1], hi = edge[m + 2];
    if (mid == lo) {
      set(mid, m, 1);
    } else {
      for (int64_t j = lo; j <= mid; ++j) {
        set(j, m, static_cast<double>(j - lo) / static_cast<double>(mid - lo));
      }
    }
    for (int64_t j = mid; j < hi; ++j) {
      set(j, m, static_cast<double>(hi - j) / static_cast<double>(hi - mid));
    }
  }
  return Status::Ok();
}

}  // namespace

void RegisterSignalOps(OpRegistry& r) {
  const OpClass kOpq = OpClass::kOpaque;
  r.Register({.op_type = "HannWindow",
              .domain = "",
              .op_class = kOpq,
              .infer = InferWindow,
              .run = RunWindow<kHann>});
  r.Register({.op_type = "HammingWindow",
              .domain = "",
              .op_class = kOpq,
              .infer = InferWindow,
              .run = RunWindow<kHamming>});
  r.Register({.op_type = "BlackmanWindow",
              .domain = "",
              .op_class = kOpq,
              .infer = InferWindow,
              .run = RunWindow<kBlackman>});
  r.Register({.op_type = "DFT",
              .domain = "",
              .op_class = kOpq,
              .min_inputs = 1,
              .max_inputs = 2,
              .infer = InferDft,
              .run = RunDft});
  r.Register({.op_type = "STFT",
              .domain = "",
              .op_class = kOpq,
              .min_inputs = 2,
              .max_inputs = 4,
              .infer = InferStft,
              .run = RunStft});
  r.Register({.op_type = "MelWeightMatrix",
              .domain = "",
              .op_class = kOpq,
              .min_inputs = 5,
              .max_inputs = 5,
              .infer = InferMelWeightMatrix,
              .run = RunMelWeightMatrix});
}

}  // namespace tessel::ops
