// Normalization: BatchNormalization (inference), InstanceNormalization,
// LayerNormalization, LpNormalization, MeanVarianceNormalization, LRN.
//
// Statistics accumulate in double whatever the element type, so the reference
// is at least as accurate as any target it checks.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops/nn_internal.h"
#include "ops/op_registry.h"
#include "ops/op_util.h"

namespace tessel::ops {

namespace {

Status RequireMinRank(const ir::Node& node, size_t i, size_t rank, const char* layout) {
  const ir::Value* v = node.input(i);
  if (v->shape.size() >= rank) return Status::Ok();
  return InvalidArgument(node.Describe() + ": input '" + v->name + "' has shape " +
                         ShapeToString(v->shape) + "; expected rank >= " + std::to_string(rank) +
                         " (" + layout + ")");
}

// Input i must have shape `expected`; `what` says what it holds.
Status RequireShape(const ir::Node& node, size_t i, const char* role, const Shape& expected,
                    const char* what) {
  const ir::Value* v = node.input(i);
  if (v->shape == expected) return Status::Ok();
  return InvalidArgument(node.Describe() + ": " + role + " '" + v->name + "' has shape " +
                         ShapeToString(v->shape) + "; expected " + ShapeToString(expected) + " (" +
                         what + ")");
}

// Per-channel parameters are small; reading them as double lets them have
// any float dtype (BatchNormalization-15 allows them to differ from X).
std::vector<double> ReadParams(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) v[i] = t.GetAsDouble(i);
  return v;
}

Status RequireEpsilon(const ir::Node& node, float epsilon) {
  if (epsilon >= 0 && std::isfinite(epsilon)) return Status::Ok();
  return InvalidArgument(node.Describe() + ": epsilon " + std::to_string(epsilon) +
                         " must be a finite value >= 0");
}

// ---- BatchNormalization ----------------------------------------------------

// Before opset 9, spatial=0 normalizes per activation: parameters then span all
// of C x D1 x ... instead of C.
bool BatchNormSpatial(const ir::Node& node, int opset) {
  return opset >= 9 || node.attrs.Int("spatial", 1) != 0;
}

Status InferBatchNorm(ir::Node& node, int opset) {
  for (size_t i = 0; i < 5; ++i) TESSEL_RETURN_IF_ERROR(RequireDType(node, i, kFloatTypes));
  if (node.attrs.Int("training_mode", 0) != 0) {
    return Unsupported(node.Describe() +
                       ": training_mode=1 is not supported; tessel runs inference only");
  }
  // Before opset 7, is_test (default 0) picked the mode: 0 normalizes with the
  // batch's own statistics, as in training.
  if (opset < 7 && node.attrs.Int("is_test", 0) == 0) {
    return Unsupported(node.Describe() + ": is_test=0 (training mode, the default before opset " +
                       "7) is not supported; tessel runs inference only and needs is_test=1");
  }
  for (size_t i = 1; i < node.outputs.size(); ++i) {
    if (node.output(i) != nullptr) {
      return Unsupported(node.Describe() + ": output " + std::to_string(i) + " ('" +
                         node.output(i)->name +
                         "') is a training statistic; tessel runs inference only and "
                         "supports only Y");
    }
  }
  TESSEL_RETURN_IF_ERROR(RequireEpsilon(node, node.attrs.Float("epsilon", 1e-5f)));
  TESSEL_RETURN_IF_ERROR(RequireMinRank(node, 0, 2, "N x C x D1 ..."));
  const Shape& x = node.input(0)->shape;
  const bool spatial = BatchNormSpatial(node, opset);
  const Shape expected = spatial ? Shape{x[1]} : Shape(x.begin() + 1, x.end());
  const char* what = spatial ? "one per channel of X" : "X without its batch dim (spatial=0)";
  static const char* const kRoles[] = {"scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i) {
    TESSEL_RETURN_IF_ERROR(RequireShape(node, i, kRoles[i - 1], expected, what));
  }
  SetOutput(node, 0, node.input(0)->dtype, x);
  return Status::Ok();
}

template <typename T>
Status RunBatchNormT(KernelContext& ctx) {
  const Shape& xs = ctx.in(0).shape();
  const double eps = ctx.node.attrs.Float("epsilon", 1e-5f);
  const std::vector<double> scale = ReadParams(ctx.in(1)), bias = ReadParams(ctx.in(2));
  const std::vector<double> mean = ReadParams(ctx.in(3)), var = ReadParams(ctx.in(4));
  const int64_t params = static_cast<int64_t>(scale.size());
  const int64_t per_sample = NumElements(Shape(xs.begin() + 1, xs.end()));
  // Each parameter covers `block` consecutive elements of a sample.
  const int64_t block = params > 0 ? per_sample / params : 0;
  const T* x = ctx.in(0).data<T>();
  T* y = ctx.out(0).data<T>();
  for (int64_t n = 0; n < xs[0]; ++n) {
    for (int64_t q = 0; q < params; ++q) {
      const double a = scale[q] / std::sqrt(var[q] + eps);
      const int64_t base = n * per_sample + q * block;
      for (int64_t i = 0; i < block; ++i) {
        y[base + i] = static_cast<T>((static_cast<double>(x[base + i]) - mean[q]) * a + bias[q]);
      }
    }
  }
  return Status::Ok();
}

// ---- InstanceNormalization -------------------------------------------------

Status InferInstanceNorm(ir::Node& node, int opset) {
  for (size_t i = 0; i < 3; ++i) TESSEL_RETURN_IF_ERROR(RequireDType(node, i, kFloatTypes));
  TESSEL_RETURN_IF_ERROR(RequireEpsilon(node, node.attrs.Float("epsilon", 1e-5f)));
  TESSEL_RETURN_IF_ERROR(RequireMinRank(node, 0, 3, "N x C x D1 ..."));
  const Shape& x = node.input(0)->shape;
  TESSEL_RETURN_IF_ERROR(RequireShape(node, 1, "scale", {x[1]}, "one per channel of X"));
  TESSEL_RETURN_IF_ERROR(RequireShape(node, 2, "B", {x[1]}, "one per channel of X"));
  SetOutput(node, 0, node.input(0)->dtype, x);
  return Status::Ok();
}

// Mean and population variance of n elements `stride` apart.
template <typename T>
void MeanVar(const T* x, int64_t n, int64_t stride, double* mean, double* var) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i * stride]);
  *mean = n > 0 ? sum / static_cast<double>(n) : 0.0;
  double sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(x[i * stride]) - *mean;
    sq += d * d;
  }
  *var = n > 0 ? sq / static_cast<double>(n) : 0.0;
}

template <typename T>
Status RunInstanceNormT(KernelContext& ctx) {
  const Shape& xs = ctx.in(0).shape();
  const double eps = ctx.node.attrs.Float("epsilon", 1e-5f);
  const std::vector<double> scale = ReadParams(ctx.in(1)), bias = ReadParams(ctx.in(2));
  const int64_t channels = xs[1];
  const int64_t size = NumElements(Shape(xs.begin() + 2, xs.end()));
  const T* x = ctx.in(0).data<T>();
  T* y = ctx.out(0).data<T>();
  for (int64_t plane = 0; plane < xs[0] * channels; ++plane) {
    const int64_t c = plane % channels;
    const T* in = x + plane * size;
    T* out = y + plane * size;
    double mean = 0, var = 0;
    MeanVar(in, size, 1, &mean, &var);
    const double a = scale[c] / std::sqrt(var + eps);
    for (int64_t i = 0; i < size; ++i) {
      out[i] = static_cast<T>((static_cast<double>(in[i]) - mean) * a + bias[c]);
    }
  }
  return Status::Ok();
}

// ---- GroupNormalization ----------------------------------------------------

// Scale and bias: one per group at opset 18, one per channel from 21.
Status InferGroupNorm(ir::Node& node, int opset) {
  for (size_t i = 0; i < 3; ++i) TESSEL_RETURN_IF_ERROR(RequireDType(node, i, kFloatTypes));
  TESSEL_RETURN_IF_ERROR(RequireEpsilon(node, node.attrs.Float("epsilon", 1e-5f)));
  TESSEL_RETURN_IF_ERROR(RequireMinRank(node, 0, 2, "N x C x D1 ..."));
  const Shape& x = node.input(0)->shape;
  const int64_t groups = node.attrs.Int("num_groups", 0);
  if (groups <= 0 || x[1] % groups != 0) {
    return InvalidArgument(node.Describe() + ": num_groups " + std::to_string(groups) +
                           " must divide the " + std::to_string(x[1]) + " channels of X");
  }
  if (node.attrs.Int("stash_type", 1) != 1) {
    return Unsupported(node.Describe() + ": stash_type other than 1 (float) is not supported");
  }
  const bool per_channel = opset >= 21;
  const Shape params = {per_channel ? x[1] : groups};
  const char* what = per_channel ? "one per channel of X" : "one per group (opset 18)";
  TESSEL_RETURN_IF_ERROR(RequireShape(node, 1, "scale", params, what));
  TESSEL_RETURN_IF_ERROR(RequireShape(node, 2, "bias", params, what));
  SetOutput(node, 0, node.input(0)->dtype, x);
  return Status::Ok();
}

template <typename T>
Status RunGroupNormT(KernelContext& ctx) {
  const Shape& xs = ctx.in(0).shape();
  const double eps = ctx.node.attrs.Float("epsilon", 1e-5f);
  const std::vector<double> scale = ReadParams(ctx.in(1)), bias = ReadParams(ctx.in(2));
  const bool per_channel = ctx.opset >= 21;
  const int64_t channels = xs[1];
  const int64_t groups = ctx.node.attrs.Int("num_groups", 1);
  const int64_t per_group = channels / groups;
  const int64_t size = NumElements(Shape(xs.begin() + 2, xs.end()));
  const T* x = ctx.in(0).data<T>();
  T* y = ctx.out(0).data<T>();
  for (int64_t ng = 0; ng < xs[0] * groups; ++ng) {
    const int64_t g = ng % groups;
    const int64_t base = ng * per_group * size;
    double mean = 0, var = 0;
    MeanVar(x + base, per_group * size, 1, &mean, &var);
    const double inv_std = 1.0 / std::sqrt(var + eps);
    for (int64_t k = 0; k < per_group; ++k) {
      const int64_t p = per_channel ? g * per_group + k : g;
      for (int64_t i = 0; i < size; ++i) {
        const int64_t at = base + k * size + i;
        y[at] = static_cast<T>((static_cast<double>(x[at]) - mean) * inv_std * scale[p] + bias[p]);
      }
    }
  }
  return Status::Ok();
}

// ---- LayerNormalization ----------------------------------------------------

// Scale and B must broadcast (numpy, right-aligned) to the normalized shape.
Status RequireBroadcastsTo(const ir::Node& node, size_t i, const char* role, const Shape& to) {
  const ir::Value* v = node.input(i);
  if (!v) return Status::Ok();
  bool ok = v->shape.size() <= to.size();
  for (size_t d = 0; ok && d < v->shape.size(); ++d) {
    const int64_t dim = v->shape[v->shape.size() - 1 - d];
    ok = dim == 1 || dim == to[to.size() - 1 - d];
  }
  if (ok) return Status::Ok();
  return InvalidArgument(node.Describe() + ": " + role + " '" + v->name + "' has shape " +
                         ShapeToString(v->shape) + ", which does not broadcast to the " +
                         "normalized shape " + ShapeToString(to));
}

Status InferLayerNorm(ir::Node& node, int opset) {
  for (size_t i = 0; i < 3; ++i) TESSEL_RETURN_IF_ERROR(RequireDType(node, i, kFloatTypes));
  TESSEL_RETURN_IF_ERROR(RequireEpsilon(node, node.attrs.Float("epsilon", 1e-5f)));
  const int64_t stash_type = node.attrs.Int("stash_type", 1);
  if (stash_type != 1) {
    return Unsupported(node.Describe() + ": stash_type " + std::to_string(stash_type) +
                       " is not supported; only 1 (float32)");
  }
  const Shape& x = node.input(0)->shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank < 1) {
    return InvalidArgument(node.Describe() + ": input '" + node.input(0)->name +
                           "' is a scalar; expected rank >= 1");
  }
  TESSEL_ASSIGN_OR_RETURN(const int64_t axis,
                          NormalizeAxis(node, node.attrs.Int("axis", -1), rank));
  const Shape normalized(x.begin() + axis, x.end());
  TESSEL_RETURN_IF_ERROR(RequireBroadcastsTo(node, 1, "Scale", normalized));
  TESSEL_RETURN_IF_ERROR(RequireBroadcastsTo(node, 2, "B", normalized));
  Shape stats(x.begin(), x.begin() + axis);
  stats.resize(x.size(), 1);
  SetOutput(node, 0, node.input(0)->dtype, x);
  SetOutput(node, 1, DType::kFloat32, stats);
  SetOutput(node, 2, DType::kFloat32, stats);
  return Status::Ok();
}

// For every element of the normalized shape, its index into a parameter
// tensor of shape `param` that broadcasts to it.
std::vector<int64_t> ParamIndex(const Shape& param, const Shape& normalized) {
  const int64_t n = NumElements(normalized);
  std::vector<int64_t> index(static_cast<size_t>(n));
  BroadcastWalker w(normalized, {BroadcastStrides(param, normalized)});
  for (int64_t i = 0; i < n; ++i, w.Next()) index[i] = w.offset(0);
  return index;
}

template <typename T>
Status RunLayerNormT(KernelContext& ctx) {
  const Shape& xs = ctx.in(0).shape();
  const int64_t rank = static_cast<int64_t>(xs.size());
  const int64_t attr_axis = ctx.node.attrs.Int("axis", -1);
  const int64_t axis = attr_axis < 0 ? attr_axis + rank : attr_axis;
  const double eps = ctx.node.attrs.Float("epsilon", 1e-5f);
  const Shape normalized(xs.begin() + axis, xs.end());
  const int64_t inner = NumElements(normalized);
  const int64_t outer = NumElements(Shape(xs.begin(), xs.begin() + axis));
  const std::vector<double> scale = ReadParams(ctx.in(1));
  const std::vector<int64_t> scale_at = ParamIndex(ctx.in(1).shape(), normalized);
  std::vector<double> bias;
  std::vector<int64_t> bias_at;
  if (ctx.has_in(2)) {
    bias = ReadParams(ctx.in(2));
    bias_at = ParamIndex(ctx.in(2).shape(), normalized);
  }
  const T* x = ctx.in(0).data<T>();
  T* y = ctx.out(0).data<T>();
  float* mean_out = ctx.has_out(1) ? ctx.out(1).data<float>() : nullptr;
  float* inv_std_out = ctx.has_out(2) ? ctx.out(2).data<float>() : nullptr;
  for (int64_t r = 0; r < outer; ++r) {
    const T* in = x + r * inner;
    T* out = y + r * inner;
    double mean = 0, var = 0;
    MeanVar(in, inner, 1, &mean, &var);
    const double inv_std = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < inner; ++i) {
      double v = (static_cast<double>(in[i]) - mean) * inv_std * scale[scale_at[i]];
      if (!bias.empty()) v += bias[bias_at[i]];
      out[i] = static_cast<T>(v);
    }
    if (mean_out) mean_out[r] = static_cast<float>(mean);
    if (inv_std_out) inv_std_out[r] = static_cast<float>(inv_std);
  }
  return Status::Ok();
}

// ---- RMSNormalization (opset 23) ---------------------------------------------

// Y = X / sqrt(mean(X^2 over axes [axis, rank)) + epsilon) * Scale.
Status InferRmsNorm(ir::Node& node, int opset) {
  for (size_t i = 0; i < 2; ++i) TESSEL_RETURN_IF_ERROR(RequireDType(node, i, kFloatTypes));
  TESSEL_RETURN_IF_ERROR(RequireEpsilon(node, node.attrs.Float("epsilon", 1e-5f)));
  const int64_t stash_type = node.attrs.Int("stash_type", 1);
  if (stash_type != 1) {
    return Unsupported(node.Describe() + ": stash_type " + std::to_string(stash_type) +
                       " is not supported; only 1 (float32)");
  }
  const Shape& x = node.input(0)->shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  TESSEL_ASSIGN_OR_RETURN(const int64_t axis,
                          NormalizeAxis(node, node.attrs.Int("axis", -1), rank));
  TESSEL_RETURN_IF_ERROR(RequireBroadcastsTo(node, 1, "scale", Shape(x.begin() + axis, x.end())));
  SetOutput(node, 0, node.input(0)->dtype, x);
  return Status::Ok();
}

template <typename T>
Status RunRmsNormT(KernelContext& ctx) {
  const Shape& xs = ctx.in(0).shape();
  const int64_t rank = static_cast<int64_t>(xs.size());
  const int64_t attr_axis = ctx.node.attrs.Int("axis", -1);
  const int64_t axis = attr_axis < 0 ? attr_axis + rank : attr_axis;
  const double eps = ctx.node.attrs.Float("epsilon", 1e-5f);
  const Shape normalized(xs.begin() + axis, xs.end());
  const int64_t inner = NumElements(normalized);
  const int64_t outer = NumElements(Shape(xs.begin(), xs.begin() + axis));
  const std::vector<double> scale = ReadParams(ctx.in(1));
  const std::vector<int64_t> scale_at = ParamIndex(ctx.in(1).shape(), normalized);
  const T* x = ctx.in(0).data<T>();
  T* y = ctx.out(0).data<T>();
  for (int64_t r = 0; r < outer; ++r) {
    const T* in = x + r * inner;
    double sq = 0;
    for (int64_t i = 0; i < inner; ++i) sq += static_cast<double>(in[i]) * in[i];
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(inner) + eps);
    for (int64_t i = 0; i < inner; ++i) {
      y[r * inner + i] = static_cast<T>(static_cast<double>(in[i]) * inv * scale[scale_at[i]]);
    }
  }
  return Status::Ok();
}

// ---- LpNormalization -------------------------------------------------------

Status InferLpNorm(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, kFloatTypes));
  const Shape& x = node.input(0)->shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank < 1) {
    return InvalidArgument(node.Describe() + ": input '" + node.input(0)->name +
                           "' is a scalar; expected rank >= 1");
  }
  TESSEL_RETURN_IF_ERROR(NormalizeAxis(node, node.attrs.Int("axis", -1), rank).status());
  const int64_t p = node.attrs.Int("p", 2);
  if (p != 1 && p != 2) {
    return InvalidArgument(node.Describe() + ": p " + std::to_string(p) + " must be 1 or 2");
  }
  SetOutput(node, 0, node.input(0)->dtype, x);
  return Status::Ok();
}

template <typename T>
Status RunLpNormT(KernelContext& ctx) {
  const Shape& xs = ctx.in(0).shape();
  const int64_t rank = static_cast<int64_t>(xs.size());
  const int64_t attr_axis = ctx.node.attrs.Int("axis", -1);
  const int64_t axis = attr_axis < 0 ? attr_axis + rank : attr_axis;
  const bool l1 = ctx.node.attrs.Int("p", 2) == 1;
  const int64_t len = xs[axis];
  const int64_t inner = NumElements(Shape(xs.begin() + axis + 1, xs.end()));
  const int64_t outer = NumElements(Shape(xs.begin(), xs.begin() + axis));
  const T* x = ctx.in(0).data<T>();
  T* y = ctx.out(0).data<T>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * len * inner + i;
      double norm = 0;
      for (int64_t k = 0; k < len; ++k) {
        const double v = static_cast<double>(x[base + k * inner]);
        norm += l1 ? std::fabs(v) : v * v;
      }
      if (!l1) norm = std::sqrt(norm);
      // A zero norm means an all-zero slice, which stays zero.
      for (int64_t k = 0; k < len; ++k) {
        const double v = static_cast<double>(x[base + k * inner]);
        y[base + k * inner] = static_cast<T>(norm > 0 ? v / norm : v);
      }
    }
  }
  return Status::Ok();
}

// ---- MeanVarianceNormalization ---------------------------------------------

Status ResolveMvnAxes(const ir::Node& node, int64_t rank, std::vector<bool>* reduced) {
  const std::vector<int64_t> axes = node.attrs.Ints("axes", {0, 2, 3});
  reduced->assign(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    TESSEL_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(node, a, rank, "axes entry"));
    if ((*reduced)[axis]) {
      return InvalidArgument(node.Describe() + ": axes " + IntsToString(axes) + " names axis " +
                             std::to_string(axis) + " twice");
    }
    (*reduced)[axis] = true;
  }
  return Status::Ok();
}

Status InferMvn(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, kFloatTypes));
  const Shape& x = node.input(0)->shape;
  std::vector<bool> reduced;
  TESSEL_RETURN_IF_ERROR(ResolveMvnAxes(node, static_cast<int64_t>(x.size()), &reduced));
  SetOutput(node, 0, node.input(0)->dtype, x);
  return Status::Ok();
}

template <typename T>
Status RunMvnT(KernelContext& ctx) {
  // The ONNX function body: (X - mean) / (sqrt(variance) + 1e-9).
  constexpr double kEpsilon = 1e-9;
  const Shape& xs = ctx.in(0).shape();
  std::vector<bool> reduced;
  TESSEL_RETURN_IF_ERROR(ResolveMvnAxes(ctx.node, static_cast<int64_t>(xs.size()), &reduced));
  Shape kept = xs;
  for (size_t d = 0; d < xs.size(); ++d) {
    if (reduced[d]) kept[d] = 1;
  }
  const int64_t n = NumElements(xs), groups = NumElements(kept);
  const double count = groups > 0 ? static_cast<double>(n / groups) : 1.0;
  const std::vector<int64_t> strides = BroadcastStrides(kept, xs);
  const T* x = ctx.in(0).data<T>();
  T* y = ctx.out(0).data<T>();
  std::vector<double> mean(static_cast<size_t>(groups), 0.0), sq(static_cast<size_t>(groups), 0.0);
  {
    BroadcastWalker w(xs, {strides});
    for (int64_t i = 0; i < n; ++i, w.Next()) mean[w.offset(0)] += static_cast<double>(x[i]);
  }
  for (double& m : mean) m /= count;
  {
    BroadcastWalker w(xs, {strides});
    for (int64_t i = 0; i < n; ++i, w.Next()) {
      const double d = static_cast<double>(x[i]) - mean[w.offset(0)];
      sq[w.offset(0)] += d * d;
    }
  }
  BroadcastWalker w(xs, {strides});
  for (int64_t i = 0; i < n; ++i, w.Next()) {
    const int64_t g = w.offset(0);
    const double stddev = std::sqrt(sq[g] / count);
    y[i] = static_cast<T>((static_cast<double>(x[i]) - mean[g]) / (stddev + kEpsilon));
  }
  return Status::Ok();
}

// ---- LRN -------------------------------------------------------------------

Status InferLrn(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, kFloatTypes));
  TESSEL_RETURN_IF_ERROR(RequireMinRank(node, 0, 3, "N x C x D1 ..."));
  if (!node.attrs.Has("size")) {
    return InvalidArgument(node.Describe() + ": attribute size is required");
  }
  const int64_t size = node.attrs.Int("size", 0);
  if (size < 1) {
    return InvalidArgument(node.Describe() + ": size " + std::to_string(size) + " must be >= 1");
  }
  SetOutput(node, 0, node.input(0)->dtype, node.input(0)->shape);
  return Status::Ok();
}

template <typename T>
Status RunLrnT(KernelContext& ctx) {
  const Shape& xs = ctx.in(0).shape();
  const double alpha = ctx.node.attrs.Float("alpha", 1e-4f);
  const double beta = ctx.node.attrs.Float("beta", 0.75f);
  const double bias = ctx.node.attrs.Float("bias", 1.0f);
  const int64_t size = ctx.node.attrs.Int("size", 1);
  const int64_t channels = xs[1];
  const int64_t plane = NumElements(Shape(xs.begin() + 2, xs.end()));
  // The window around channel c: floor((size - 1) / 2) below, ceil above.
  const int64_t below = (size - 1) / 2, above = size - 1 - below;
  const T* x = ctx.in(0).data<T>();
  T* y = ctx.out(0).data<T>();
  std::vector<double> sq(static_cast<size_t>(plane));
  for (int64_t n = 0; n < xs[0]; ++n) {
    const T* sample = x + n * channels * plane;
    for (int64_t c = 0; c < channels; ++c) {
      std::fill(sq.begin(), sq.end(), 0.0);
      const int64_t lo = std::max<int64_t>(0, c - below);
      const int64_t hi = std::min(channels - 1, c + above);
      for (int64_t k = lo; k <= hi; ++k) {
        const T* in = sample + k * plane;
        for (int64_t i = 0; i < plane; ++i) {
          const double v = static_cast<double>(in[i]);
          sq[i] += v * v;
        }
      }
      const T* in = sample + c * plane;
      T* out = y + (n * channels + c) * plane;
      for (int64_t i = 0; i < plane; ++i) {
        const double d = std::pow(bias + alpha / static_cast<double>(size) * sq[i], beta);
        out[i] = static_cast<T>(static_cast<double>(in[i]) / d);
      }
    }
  }
  return Status::Ok();
}

Status RunBatchNorm(KernelContext& ctx) {
  return RunFloatKernel(ctx, RunBatchNormT<float>, RunBatchNormT<double>);
}
Status RunInstanceNorm(KernelContext& ctx) {
  return RunFloatKernel(ctx, RunInstanceNormT<float>, RunInstanceNormT<double>);
}
Status RunRmsNorm(KernelContext& ctx) {
  return RunFloatKernel(ctx, RunRmsNormT<float>, RunRmsNormT<double>);
}
Status RunGroupNorm(KernelContext& ctx) {
  return RunFloatKernel(ctx, RunGroupNormT<float>, RunGroupNormT<double>);
}
Status RunLayerNorm(KernelContext& ctx) {
  return RunFloatKernel(ctx, RunLayerNormT<float>, RunLayerNormT<double>);
}
Status RunLpNorm(KernelContext& ctx) {
  return RunFloatKernel(ctx, RunLpNormT<float>, RunLpNormT<double>);
}
Status RunMvn(KernelContext& ctx) { return RunFloatKernel(ctx, RunMvnT<float>, RunMvnT<double>); }
Status RunLrn(KernelContext& ctx) { return RunFloatKernel(ctx, RunLrnT<float>, RunLrnT<double>); }

}  // namespace

void RegisterNormOps(OpRegistry& r) {
  struct Entry {
    const char* op_type;
    int min_inputs, max_inputs, max_outputs;
    InferFn infer;
    KernelFn run;
  };
  const Entry entries[] = {
      // Outputs 1-4 of BatchNormalization are training statistics; infer
      // rejects them with a clearer message than a count mismatch would.
      {"BatchNormalization", 5, 5, 5, InferBatchNorm, RunBatchNorm},
      {"InstanceNormalization", 3, 3, 1, InferInstanceNorm, RunInstanceNorm},
      {"GroupNormalization", 3, 3, 1, InferGroupNorm, RunGroupNorm},
      {"LayerNormalization", 2, 3, 3, InferLayerNorm, RunLayerNorm},
      {"RMSNormalization", 2, 2, 1, InferRmsNorm, RunRmsNorm},
      {"LpNormalization", 1, 1, 1, InferLpNorm, RunLpNorm},
      {"MeanVarianceNormalization", 1, 1, 1, InferMvn, RunMvn},
      {"LRN", 1, 1, 1, InferLrn, RunLrn},
  };
  for (const Entry& e : entries) {
    r.Register({.op_type = e.op_type,
                .domain = "",
                .op_class = OpClass::kOpaque,
                .min_inputs = e.min_inputs,
                .max_inputs = e.max_inputs,
                .min_outputs = 1,
                .max_outputs = e.max_outputs,
                .infer = e.infer,
                .run = e.run});
  }
}

}  // namespace tessel::ops
