// Reductions (Reduce*, ArgMax/ArgMin) and the softmax family.
//
// Float reductions accumulate in double whatever the element type, so the
// reference is at least as accurate as any target. Integer reductions
// accumulate in uint64 so that overflow wraps instead of being undefined.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/op_registry.h"
#include "ops/op_util.h"
#include "ops/reduce_plan.h"

namespace tessel::ops {
namespace {

enum class ReduceKind {
  kSum,
  kMean,
  kMax,
  kMin,
  kProd,
  kL1,
  kL2,
  kLogSum,
  kLogSumExp,
  kSumSquare,
};

// L2, LogSum and LogSumExp have no meaningful integer result.
constexpr bool AllowsIntegers(ReduceKind k) {
  return k != ReduceKind::kL2 && k != ReduceKind::kLogSum && k != ReduceKind::kLogSumExp;
}

std::string AxesToString(const std::vector<int64_t>& axes) {
  std::string s = "[";
  for (size_t i = 0; i < axes.size(); ++i) s += (i ? "," : "") + std::to_string(axes[i]);
  return s + "]";
}

struct ReducePlan {
  bool identity = false;      // noop_with_empty_axes with no axes
  std::vector<bool> reduced;  // per input dimension
  Shape out_shape;
  int64_t count = 1;  // input elements folded into each output element
};

// ReduceSum takes its axes as input 1 from opset 13, the other reductions
// from opset 18; before that `axes` is an attribute.
bool AxesFromInput(const ir::Node& node, int opset) {
  return node.op_type == "ReduceSum" ? opset >= 13 : opset >= 18;
}

StatusOr<ReducePlan> PlanReduce(const ir::Node& node, int opset, const Shape& in,
                                const Tensor* axes_input) {
  std::vector<int64_t> axes;
  ReducePlan p;
  if (AxesFromInput(node, opset)) {
    if (axes_input) axes = axes_input->ToInt64Vector();
    p.identity = axes.empty() && node.attrs.Int("noop_with_empty_axes", 0) != 0;
  } else {
    axes = node.attrs.Ints("axes");
  }
  const int64_t rank = static_cast<int64_t>(in.size());
  p.reduced.assign(in.size(), axes.empty() && !p.identity);
  for (int64_t axis : axes) {
    TESSEL_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(node, axis, rank));
    if (p.reduced[a]) {
      return InvalidArgument(node.Describe() + ": axis " + std::to_string(axis) +
                             " is repeated in axes " + AxesToString(axes));
    }
    p.reduced[a] = true;
  }
  const bool keepdims = node.attrs.Int("keepdims", 1) != 0;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!p.reduced[d]) {
      p.out_shape.push_back(in[d]);
    } else {
      p.count *= in[d];
      if (keepdims) p.out_shape.push_back(1);
    }
  }
  return p;
}

template <ReduceKind K>
Status InferReduce(ir::Node& node, int opset) {
  if constexpr (AllowsIntegers(K)) {
    TESSEL_RETURN_IF_ERROR(RequireDType(node, 0,
                                        {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                                         DType::kFloat64, DType::kInt32, DType::kInt64}));
  } else {
    TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, kFloatTypes));
  }
  const Tensor* axes = nullptr;
  if (AxesFromInput(node, opset) && node.attrs.Has("axes")) {
    return InvalidArgument(node.Describe() + ": axes is an input in opset " +
                           std::to_string(opset) + ", not an attribute");
  }
  if (node.input(1)) {
    if (!AxesFromInput(node, opset)) {
      return InvalidArgument(node.Describe() + ": axes is an attribute in opset " +
                             std::to_string(opset) + ", not an input");
    }
    TESSEL_RETURN_IF_ERROR(RequireDType(node, 1, {DType::kInt64}));
    TESSEL_ASSIGN_OR_RETURN(axes, RequireConstantInput(node, 1, "axes"));
    if (axes->rank() > 1) {
      return InvalidArgument(node.Describe() + ": axes must be 1-D; got shape " +
                             ShapeToString(axes->shape()));
    }
  }
  TESSEL_ASSIGN_OR_RETURN(ReducePlan p, PlanReduce(node, opset, node.input(0)->shape, axes));
  SetOutput(node, 0, node.input(0)->dtype, p.out_shape);
  return Status::Ok();
}

template <ReduceKind K>
double FloatInit() {
  if constexpr (K == ReduceKind::kMax) return -std::numeric_limits<double>::infinity();
  if constexpr (K == ReduceKind::kMin) return std::numeric_limits<double>::infinity();
  if constexpr (K == ReduceKind::kProd) return 1.0;
  return 0.0;
}

// Max/Min propagate NaN: once the accumulator is NaN no comparison replaces it.
template <ReduceKind K>
double FloatCombine(double acc, double x) {
  switch (K) {
    case ReduceKind::kMax:
      return (x > acc || std::isnan(x)) ? x : acc;
    case ReduceKind::kMin:
      return (x < acc || std::isnan(x)) ? x : acc;
    case ReduceKind::kProd:
      return acc * x;
    case ReduceKind::kL1:
      return acc + std::fabs(x);
    case ReduceKind::kL2:
    case ReduceKind::kSumSquare:
      return acc + x * x;
    default:
      return acc + x;
  }
}

template <ReduceKind K>
double FloatFinish(double acc, int64_t count) {
  switch (K) {
    case ReduceKind::kMean:
      return acc / static_cast<double>(count);
    case ReduceKind::kL2:
      return std::sqrt(acc);
    case ReduceKind::kLogSum:
      return std::log(acc);
    default:
      return acc;
  }
}

template <ReduceKind K, typename T>
void ReduceFloat(const T* in, int64_t n_in, BroadcastWalker w, T* out, int64_t n_out,
                 int64_t count) {
  std::vector<double> acc(static_cast<size_t>(n_out), FloatInit<K>());
  if constexpr (K == ReduceKind::kLogSumExp) {
    // log(sum(exp(x))) = m + log(sum(exp(x - m))) with m the maximum, so no
    // exp overflows.
    std::vector<double> max(static_cast<size_t>(n_out), FloatInit<ReduceKind::kMax>());
    BroadcastWalker w2 = w;
    for (int64_t i = 0; i < n_in; ++i, w.Next()) {
      double& m = max[w.offset(0)];
      m = FloatCombine<ReduceKind::kMax>(m, ToDouble(in[i]));
    }
    for (int64_t i = 0; i < n_in; ++i, w2.Next()) {
      const double m = max[w2.offset(0)];
      if (!std::isinf(m)) acc[w2.offset(0)] += std::exp(ToDouble(in[i]) - m);
    }
    for (int64_t o = 0; o < n_out; ++o) {
      out[o] = FromDouble<T>(std::isinf(max[o]) ? max[o] : max[o] + std::log(acc[o]));
    }
  } else {
    for (int64_t i = 0; i < n_in; ++i, w.Next()) {
      double& a = acc[w.offset(0)];
      a = FloatCombine<K>(a, ToDouble(in[i]));
    }
    for (int64_t o = 0; o < n_out; ++o) out[o] = FromDouble<T>(FloatFinish<K>(acc[o], count));
  }
}

template <ReduceKind K, typename T>
void ReduceInt(const T* in, int64_t n_in, BroadcastWalker w, T* out, int64_t n_out, int64_t count) {
  if constexpr (K == ReduceKind::kMax || K == ReduceKind::kMin) {
    std::vector<T> acc(static_cast<size_t>(n_out), K == ReduceKind::kMax
                                                       ? std::numeric_limits<T>::lowest()
                                                       : std::numeric_limits<T>::max());
    for (int64_t i = 0; i < n_in; ++i, w.Next()) {
      T& a = acc[w.offset(0)];
      a = K == ReduceKind::kMax ? std::max(a, in[i]) : std::min(a, in[i]);
    }
    for (int64_t o = 0; o < n_out; ++o) out[o] = acc[o];
  } else {
    std::vector<uint64_t> acc(static_cast<size_t>(n_out), K == ReduceKind::kProd ? 1 : 0);
    for (int64_t i = 0; i < n_in; ++i, w.Next()) {
      const uint64_t x = static_cast<uint64_t>(static_cast<int64_t>(in[i]));
      uint64_t& a = acc[w.offset(0)];
      switch (K) {
        case ReduceKind::kProd:
          a *= x;
          break;
        case ReduceKind::kL1:
          a += in[i] < 0 ? 0 - x : x;
          break;
        case ReduceKind::kSumSquare:
          a += x * x;
          break;
        default:
          a += x;
          break;
      }
    }
    for (int64_t o = 0; o < n_out; ++o) {
      int64_t v = static_cast<int64_t>(acc[o]);
      // Integer mean truncates toward zero, as C++ (and onnxruntime) divide.
      if (K == ReduceKind::kMean) v = count > 0 ? v / count : 0;
      out[o] = static_cast<T>(v);
    }
  }
}

template <ReduceKind K>
Status RunReduce(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  TESSEL_ASSIGN_OR_RETURN(ReducePlan p, PlanReduce(ctx.node, ctx.opset, x.shape(),
                                                   ctx.has_in(1) ? &ctx.in(1) : nullptr));
  if (p.identity) {
    if (x.size_bytes() > 0) std::memcpy(y.raw_data(), x.raw_data(), x.size_bytes());
    return Status::Ok();
  }
  // Walk the input in order; each element lands on the output element with
  // its reduced coordinates dropped (stride 0 on the reduced dimensions).
  Shape kept = x.shape();
  for (size_t d = 0; d < kept.size(); ++d) {
    if (p.reduced[d]) kept[d] = 1;
  }
  std::vector<int64_t> strides = StridesOf(kept);
  for (size_t d = 0; d < kept.size(); ++d) {
    if (p.reduced[d]) strides[d] = 0;
  }
  BroadcastWalker w(x.shape(), {strides});
  const int64_t n_in = x.num_elements(), n_out = y.num_elements();
  auto run = [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      ReduceInt<K>(x.data<T>(), n_in, w, y.data<T>(), n_out, p.count);
    } else {
      ReduceFloat<K>(x.data<T>(), n_in, w, y.data<T>(), n_out, p.count);
    }
    return Status::Ok();
  };
  switch (x.dtype()) {
    case DType::kFloat32:
      return run(float{});
    case DType::kFloat16:
      return run(Half{});
    case DType::kBFloat16:
      return run(BFloat16{});
    case DType::kFloat64:
      return run(double{});
    case DType::kInt32:
      if constexpr (AllowsIntegers(K)) return run(int32_t{});
      break;
    case DType::kInt64:
      if constexpr (AllowsIntegers(K)) return run(int64_t{});
      break;
    default:
      break;
  }
  return Internal(ctx.node.Describe() + ": no kernel for dtype " + DTypeName(x.dtype()));
}

// A tensor viewed as outer x n x inner around the dimension being reduced.
struct AxisSplit {
  int64_t outer = 1, n = 1, inner = 1;
};

AxisSplit SplitAt(const Shape& shape, int64_t axis, bool flatten_tail) {
  AxisSplit s;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < axis) {
      s.outer *= shape[d];
    } else if (d == axis || flatten_tail) {
      s.n *= shape[d];
    } else {
      s.inner *= shape[d];
    }
  }
  return s;
}

// Storage types compare through float for the 16-bit floats, natively
// otherwise (int64 does not survive a round trip through double).
template <typename T>
auto Comparable(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return static_cast<float>(ToDouble(v));
  } else {
    return v;
  }
}

Status InferArgExtreme(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(
      RequireDType(node, 0,
                   {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64,
                    DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64, DType::kUInt8,
                    DType::kUInt16, DType::kUInt32, DType::kUInt64}));
  const Shape& in = node.input(0)->shape;
  TESSEL_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, node.attrs.Int("axis", 0),
                                                      static_cast<int64_t>(in.size())));
  if (in[axis] == 0) {
    return InvalidArgument(node.Describe() + ": axis " + std::to_string(axis) + " of input shape " +
                           ShapeToString(in) + " is empty");
  }
  Shape out = in;
  if (node.attrs.Int("keepdims", 1) != 0) {
    out[axis] = 1;
  } else {
    out.erase(out.begin() + axis);
  }
  SetOutput(node, 0, DType::kInt64, out);
  return Status::Ok();
}

template <bool kIsMax>
Status RunArgExtreme(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  int64_t axis = ctx.node.attrs.Int("axis", 0);
  if (axis < 0) axis += x.rank();
  // On ties the first index wins unless select_last_index is set.
  const bool last = ctx.node.attrs.Int("select_last_index", 0) != 0;
  const AxisSplit s = SplitAt(x.shape(), axis, false);
  int64_t* out = ctx.out(0).data<int64_t>();
  return DispatchDType(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      return Internal(ctx.node.Describe() + ": no kernel for dtype bool");
    } else {
      const T* in = x.data<T>();
      for (int64_t o = 0; o < s.outer; ++o) {
        for (int64_t i = 0; i < s.inner; ++i) {
          const T* base = in + o * s.n * s.inner + i;
          auto best = Comparable(base[0]);
          int64_t best_index = 0;
          for (int64_t j = 1; j < s.n; ++j) {
            const auto v = Comparable(base[j * s.inner]);
            const bool better =
                kIsMax ? (last ? v >= best : v > best) : (last ? v <= best : v < best);
            if (better) {
              best = v;
              best_index = j;
            }
          }
          out[o * s.inner + i] = best_index;
        }
      }
      return Status::Ok();
    }
  });
}

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

// Before opset 13 the input is coerced to 2-D at `axis` (default 1) and the
// op works on whole rows of the flattened tail; from 13 it works along `axis`
// alone (default -1).
int64_t SoftmaxDefaultAxis(int opset) { return opset < 13 ? 1 : -1; }

template <SoftmaxKind K>
Status InferSoftmax(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, kFloatTypes));
  const Shape& in = node.input(0)->shape;
  TESSEL_RETURN_IF_ERROR(NormalizeAxis(node, node.attrs.Int("axis", SoftmaxDefaultAxis(opset)),
                                       static_cast<int64_t>(in.size()))
                             .status());
  SetOutput(node, 0, node.input(0)->dtype, in);
  return Status::Ok();
}

template <SoftmaxKind K, typename T>
void SoftmaxTyped(const T* in, T* out, const AxisSplit& s) {
  std::vector<double> row(static_cast<size_t>(s.n));
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      const int64_t base = o * s.n * s.inner + i;
      double max = -std::numeric_limits<double>::infinity();
      int64_t arg = 0;
      for (int64_t j = 0; j < s.n; ++j) {
        row[j] = ToDouble(in[base + j * s.inner]);
        if (row[j] > max) {
          max = row[j];
          arg = j;
        }
      }
      if constexpr (K == SoftmaxKind::kHardmax) {
        for (int64_t j = 0; j < s.n; ++j) out[base + j * s.inner] = FromDouble<T>(j == arg);
      } else {
        // Shifting by the maximum keeps every exp() in (0, 1].
        double sum = 0;
        for (int64_t j = 0; j < s.n; ++j) sum += std::exp(row[j] - max);
        for (int64_t j = 0; j < s.n; ++j) {
          const double y = K == SoftmaxKind::kSoftmax ? std::exp(row[j] - max) / sum
                                                      : row[j] - max - std::log(sum);
          out[base + j * s.inner] = FromDouble<T>(y);
        }
      }
    }
  }
}

template <SoftmaxKind K>
Status RunSoftmax(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  int64_t axis = ctx.node.attrs.Int("axis", SoftmaxDefaultAxis(ctx.opset));
  if (axis < 0) axis += x.rank();
  const AxisSplit s = SplitAt(x.shape(), axis, ctx.opset < 13);
  Tensor& y = ctx.out(0);
  switch (x.dtype()) {
    case DType::kFloat32:
      SoftmaxTyped<K>(x.data<float>(), y.data<float>(), s);
      break;
    case DType::kFloat16:
      SoftmaxTyped<K>(x.data<Half>(), y.data<Half>(), s);
      break;
    case DType::kBFloat16:
      SoftmaxTyped<K>(x.data<BFloat16>(), y.data<BFloat16>(), s);
      break;
    case DType::kFloat64:
      SoftmaxTyped<K>(x.data<double>(), y.data<double>(), s);
      break;
    default:
      return Internal(ctx.node.Describe() + ": no kernel for dtype " + DTypeName(x.dtype()));
  }
  return Status::Ok();
}

template <ReduceKind K>
void RegisterReduce(OpRegistry& r, const char* name) {
  // Input 1 (axes) is accepted by every reduction; infer rejects it in the
  // opsets where axes is still an attribute.
  r.Register({.op_type = name,
              .domain = "",
              .op_class = OpClass::kReduction,
              .min_inputs = 1,
              .max_inputs = 2,
              .infer = InferReduce<K>,
              .run = RunReduce<K>});
}

}  // namespace

StatusOr<ReducedAxes> PlanReducedAxes(const ir::Node& node, int opset) {
  const ir::Value* x = node.input(0);
  const ir::Value* axes = node.input(1);
  if (x == nullptr) return InvalidArgument(node.Describe() + ": no input");
  if (axes && !axes->is_constant()) {
    return Unsupported(node.Describe() + ": axes are not known at compile time");
  }
  TESSEL_ASSIGN_OR_RETURN(ReducePlan p,
                          PlanReduce(node, opset, x->shape, axes ? &axes->constant : nullptr));
  return ReducedAxes{p.identity, p.reduced};
}

void RegisterReductionOps(OpRegistry& r) {
  RegisterReduce<ReduceKind::kSum>(r, "ReduceSum");
  RegisterReduce<ReduceKind::kMean>(r, "ReduceMean");
  RegisterReduce<ReduceKind::kMax>(r, "ReduceMax");
  RegisterReduce<ReduceKind::kMin>(r, "ReduceMin");
  RegisterReduce<ReduceKind::kProd>(r, "ReduceProd");
  RegisterReduce<ReduceKind::kL1>(r, "ReduceL1");
  RegisterReduce<ReduceKind::kL2>(r, "ReduceL2");
  RegisterReduce<ReduceKind::kLogSum>(r, "ReduceLogSum");
  RegisterReduce<ReduceKind::kLogSumExp>(r, "ReduceLogSumExp");
  RegisterReduce<ReduceKind::kSumSquare>(r, "ReduceSumSquare");
  r.Register({.op_type = "ArgMax",
              .domain = "",
              .op_class = OpClass::kReduction,
              .infer = InferArgExtreme,
              .run = RunArgExtreme<true>});
  r.Register({.op_type = "ArgMin",
              .domain = "",
              .op_class = OpClass::kReduction,
              .infer = InferArgExtreme,
              .run = RunArgExtreme<false>});
  r.Register({.op_type = "Softmax",
              .domain = "",
              .op_class = OpClass::kReduction,
              .infer = InferSoftmax<SoftmaxKind::kSoftmax>,
              .run = RunSoftmax<SoftmaxKind::kSoftmax>});
  r.Register({.op_type = "LogSoftmax",
              .domain = "",
              .op_class = OpClass::kReduction,
              .infer = InferSoftmax<SoftmaxKind::kLogSoftmax>,
              .run = RunSoftmax<SoftmaxKind::kLogSoftmax>});
  r.Register({.op_type = "Hardmax",
              .domain = "",
              .op_class = OpClass::kReduction,
              .infer = InferSoftmax<SoftmaxKind::kHardmax>,
              .run = RunSoftmax<SoftmaxKind::kHardmax>});
}

}  // namespace tessel::ops
