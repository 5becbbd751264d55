// Elementwise and broadcasting ops: arithmetic, comparisons, logic, unary
// math, activations, Where, Clip and Cast.
//
// Every op is a small functor applied by one of a few generic kernels
// (unary, binary, variadic). A functor names the dtypes it accepts in a
// TypeList, which both validates the input in infer and limits the template
// instantiations in run. 16-bit floats are computed in float and rounded back
// on store; integer arithmetic wraps like the two's complement hardware does
// instead of hitting C++'s undefined signed overflow.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/op_registry.h"
#include "ops/op_util.h"

namespace tessel::ops {
namespace {

// ---------------------------------------------------------------------------
// dtype lists, dispatch and value conversion

template <typename... Ts>
struct TypeList {};

using FloatTs = TypeList<float, double, Half, BFloat16>;
using SignedTs = TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t>;
using NumericTs = TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t,
                           uint8_t, uint16_t, uint32_t, uint64_t>;
using AllTs = TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                       uint16_t, uint32_t, uint64_t, bool>;
using UnsignedTs = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using BoolTs = TypeList<bool>;
using PowBaseTs = TypeList<float, double, Half, BFloat16, int32_t, int64_t>;
using PReluTs = TypeList<float, double, Half, BFloat16, int32_t, int64_t, uint32_t, uint64_t>;

template <typename... Ts>
Status RequireTypes(TypeList<Ts...>, const ir::Node& node, size_t i) {
  return RequireDType(node, i, {DTypeOf<Ts>()...});
}

// Calls f(T{}) for the T of the list whose dtype is `t`; infer guarantees one is.
template <typename... Ts, typename F>
void Dispatch(TypeList<Ts...>, DType t, F&& f) {
  (void)((DTypeOf<Ts>() == t && (f(Ts{}), true)) || ...);
}

template <typename T>
constexpr bool kIs16BitFloat = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
using Compute = std::conditional_t<kIs16BitFloat<T>, float, T>;

template <typename T>
Compute<T> Load(T v) {
  if constexpr (std::is_same_v<T, Half>) {
    return HalfToFloat(v.bits);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16ToFloat(v.bits);
  } else {
    return v;
  }
}

// Float -> integer truncates toward zero. Out-of-range values saturate and
// NaN becomes 0: the C++ conversion is undefined there, and a model must not
// be able to crash the runtime.
template <typename To>
To FloatToInt(double v) {
  if (std::isnan(v)) return 0;
  constexpr To lo = std::numeric_limits<To>::lowest();
  constexpr To hi = std::numeric_limits<To>::max();
  if (v <= static_cast<double>(lo)) return lo;
  if (v >= static_cast<double>(hi)) return hi;
  return static_cast<To>(v);
}

// Converts a computed value (float, double, an integer or bool) to storage
// type To. Integer -> integer wraps (two's complement), anything -> bool is
// "!= 0".
template <typename To, typename From>
To Convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From{0};
  } else if constexpr (kIs16BitFloat<To>) {
    return FromDouble<To>(static_cast<double>(v));
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    return FloatToInt<To>(static_cast<double>(v));
  } else {
    return static_cast<To>(v);
  }
}

// Unsigned type of at least int width: arithmetic in it wraps and never
// promotes to a signed int that could overflow (uint16 * uint16 would).
template <typename C>
using WrapT = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, std::make_unsigned_t<C>>;

// a `op` b; for integers in WrapT, so overflow wraps instead of being undefined.
template <typename C, typename F>
C Arith(C a, C b, F op) {
  if constexpr (std::is_integral_v<C>) {
    using W = WrapT<C>;
    return static_cast<C>(static_cast<W>(op(static_cast<W>(a), static_cast<W>(b))));
  } else {
    return op(a, b);
  }
}
template <typename C>
C Negate(C x) {
  return Arith(C{0}, x, std::minus<>());
}
template <typename C>
bool IsNegative(C v) {
  if constexpr (std::is_unsigned_v<C>) {
    return false;
  } else {
    return v < 0;
  }
}

template <typename C>
bool IsNaN(C v) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// Max/Min propagate NaN, as numpy's maximum/minimum do.
template <typename C>
C Max(C a, C b) {
  return IsNaN(a) ? a : (IsNaN(b) || b > a) ? b : a;
}
template <typename C>
C Min(C a, C b) {
  return IsNaN(a) ? a : (IsNaN(b) || b < a) ? b : a;
}

// ---------------------------------------------------------------------------
// Broadcast iteration

// Calls f(i, offsets) for every element i of `out`, with offsets[k] the element
// of input k (of shape *ins[k]) it reads. The innermost dimension runs as a
// plain loop so the walker's per-dimension bookkeeping is paid once per row.
template <size_t N, typename F>
void BroadcastLoop(const Shape& out, const std::array<const Shape*, N>& ins, F&& f) {
  const int64_t n = NumElements(out);
  if (n == 0) return;
  std::array<int64_t, N> off{};
  bool same = true;
  for (const Shape* s : ins) same = same && *s == out;
  if (same) {
    for (int64_t i = 0; i < n; ++i) {
      off.fill(i);
      f(i, off);
    }
    return;
  }
  const int64_t inner = out.back();
  std::vector<std::vector<int64_t>> strides(N);
  std::array<int64_t, N> step{};
  for (size_t k = 0; k < N; ++k) {
    strides[k] = BroadcastStrides(*ins[k], out);
    step[k] = strides[k].back();
    strides[k].pop_back();
  }
  BroadcastWalker walker(Shape(out.begin(), out.end() - 1), std::move(strides));
  for (int64_t i = 0; i < n; walker.Next()) {
    for (int64_t j = 0; j < inner; ++j, ++i) {
      for (size_t k = 0; k < N; ++k) off[k] = walker.offset(k) + j * step[k];
      f(i, off);
    }
  }
}

// ---------------------------------------------------------------------------
// Functors. `Types` are the accepted input dtypes; a predicate's output is
// bool, any other op's output has the input dtype. Check validates attributes
// at infer time; ops with attributes read them in a constructor from the node.

template <typename Ts, bool kPred = false>
struct OpBase {
  using Types = Ts;
  static constexpr bool kPredicate = kPred;
  // Input B is a slope that stretches to A, never the other way round
  // (PRelu); other binary ops broadcast both ways.
  static constexpr bool kSlope = false;
  static Status Check(const ir::Node&, int) { return Status::Ok(); }
};

template <typename Op>
Op MakeOp(const ir::Node& node, int opset) {
  if constexpr (std::is_constructible_v<Op, const ir::Node&, int>) {
    return Op(node, opset);
  } else if constexpr (std::is_constructible_v<Op, const ir::Node&>) {
    return Op(node);
  } else {
    return Op{};
  }
}

// A functor from a captureless lambda (default-constructible since C++20).
template <typename Ts, bool kPred, typename F>
struct Fn : OpBase<Ts, kPred>, F {
  using F::operator();
};

struct ModOp : OpBase<NumericTs> {
  explicit ModOp(const ir::Node& node) : fmod(node.attrs.Int("fmod", 0) != 0) {}
  static Status Check(const ir::Node& node, int opset) {
    const int64_t f = node.attrs.Int("fmod", 0);
    if (f != 0 && f != 1) {
      return InvalidArgument(node.Describe() + ": fmod=" + std::to_string(f) + " must be 0 or 1");
    }
    // Mod-28 defines fmod=0 for floats: A - floor(A / B) * B.
    if (f == 0 && IsFloat(node.input(0)->dtype) && opset < 28) {
      return InvalidArgument(node.Describe() + ": fmod=0 is not defined for dtype " +
                             DTypeName(node.input(0)->dtype) + "; float inputs need fmod=1");
    }
    return Status::Ok();
  }
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      C r = std::fmod(a, b);
      if (fmod) return r;
      // Floored: the sign of the divisor (a zero takes it too); an infinite
      // divisor gives a when the signs agree, else b, as r + b does.
      if (r == 0) return std::copysign(C{0}, b);
      if ((r < 0) != (b < 0)) r += b;
      return r;
    } else {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return 0;
      }
      auto r = static_cast<C>(a % b);
      // Python's % takes the sign of the divisor.
      if (!fmod && r != 0 && IsNegative(r) != IsNegative(b)) r = Arith(r, b, std::plus<>());
      return r;
    }
  }
  bool fmod;
};

struct PReluOp : OpBase<PReluTs> {
  static constexpr bool kSlope = true;
  template <typename C>
  C operator()(C x, C slope) const {
    return IsNegative(x) ? Arith(x, slope, std::multiplies<>()) : x;
  }
};

struct BitShiftOp : OpBase<UnsignedTs> {
  explicit BitShiftOp(const ir::Node& node) : left(node.attrs.String("direction", "") == "LEFT") {}
  static Status Check(const ir::Node& node, int) {
    if (!node.attrs.Has("direction")) {
      return InvalidArgument(node.Describe() + ": attribute 'direction' is required");
    }
    const std::string d = node.attrs.String("direction", "");
    if (d != "LEFT" && d != "RIGHT") {
      return InvalidArgument(node.Describe() + ": direction '" + d + "' must be LEFT or RIGHT");
    }
    return Status::Ok();
  }
  // Shifting by the bit width or more gives 0 (C++ leaves it undefined).
  template <typename C>
  C operator()(C a, C b) const {
    if (b >= sizeof(C) * 8) return 0;
    const auto w = static_cast<WrapT<C>>(a);
    return static_cast<C>(left ? w << b : w >> b);
  }
  bool left;
};

struct IsInfOp : OpBase<FloatTs, true> {
  explicit IsInfOp(const ir::Node& node)
      : neg(node.attrs.Int("detect_negative", 1) != 0),
        pos(node.attrs.Int("detect_positive", 1) != 0) {}
  template <typename C>
  bool operator()(C x) const {
    return std::isinf(x) && (x > 0 ? pos : neg);
  }
  bool neg, pos;
};
// Computed in double so integer inputs work with the float attributes.
struct ShrinkOp : OpBase<NumericTs> {
  explicit ShrinkOp(const ir::Node& node)
      : bias(node.attrs.Float("bias", 0.0f)), lambd(node.attrs.Float("lambd", 0.5f)) {}
  template <typename C>
  double operator()(C x) const {
    const auto v = static_cast<double>(x);
    return v < -lambd ? v + bias : v > lambd ? v - bias : 0.0;
  }
  double bias, lambd;
};

// ---------------------------------------------------------------------------
// Float-only unary functions, as a table: fn(x, a, b) where a and b are the
// float attributes named in the entry (with their ONNX defaults).

template <typename F>
F Clamp01(F v) {
  return v < 0 ? F{0} : v > 1 ? F{1} : v;
}
template <typename F>
F Softplus(F x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

struct MathFn {
  const char* op_type;
  float (*f32)(float, float, float);
  double (*f64)(double, double, double);
  const char* attr_a;
  float default_a;
  const char* attr_b;
  float default_b;
};

template <typename L>
constexpr MathFn Math(const char* op_type, L fn, const char* attr_a = "", float default_a = 0,
                      const char* attr_b = "", float default_b = 0) {
  return {op_type, fn, fn, attr_a, default_a, attr_b, default_b};
}

constexpr MathFn kMathFns[] = {
    Math("Sqrt", [](auto x, auto, auto) { return std::sqrt(x); }),
    Math("Exp", [](auto x, auto, auto) { return std::exp(x); }),
    Math("Log", [](auto x, auto, auto) { return std::log(x); }),
    Math("Reciprocal", [](auto x, auto, auto) { return 1 / x; }),
    Math("Floor", [](auto x, auto, auto) { return std::floor(x); }),
    Math("Ceil", [](auto x, auto, auto) { return std::ceil(x); }),
    // The default rounding mode rounds half to even.
    Math("Round", [](auto x, auto, auto) { return std::nearbyint(x); }),
    Math("Erf", [](auto x, auto, auto) { return std::erf(x); }),
    Math("Sin", [](auto x, auto, auto) { return std::sin(x); }),
    Math("Cos", [](auto x, auto, auto) { return std::cos(x); }),
    Math("Tan", [](auto x, auto, auto) { return std::tan(x); }),
    Math("Asin", [](auto x, auto, auto) { return std::asin(x); }),
    Math("Acos", [](auto x, auto, auto) { return std::acos(x); }),
    Math("Atan", [](auto x, auto, auto) { return std::atan(x); }),
    Math("Sinh", [](auto x, auto, auto) { return std::sinh(x); }),
    Math("Cosh", [](auto x, auto, auto) { return std::cosh(x); }),
    Math("Asinh", [](auto x, auto, auto) { return std::asinh(x); }),
    Math("Acosh", [](auto x, auto, auto) { return std::acosh(x); }),
    Math("Atanh", [](auto x, auto, auto) { return std::atanh(x); }),
    Math("Tanh", [](auto x, auto, auto) { return std::tanh(x); }),
    // Split at 0 so exp never overflows for large |x|.
    Math("Sigmoid",
         [](auto x, auto, auto) {
           return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
         }),
    Math(
        "HardSigmoid", [](auto x, auto a, auto b) { return Clamp01(a * x + b); }, "alpha", 0.2f,
        "beta", 0.5f),
    Math("HardSwish", [](auto x, auto, auto) { return x * Clamp01((x + 3) / 6); }),
    Math("Softplus", [](auto x, auto, auto) { return Softplus(x); }),
    Math("Softsign", [](auto x, auto, auto) { return x / (1 + std::abs(x)); }),
    Math("Mish", [](auto x, auto, auto) { return x * std::tanh(Softplus(x)); }),
    // Gelu-20: `a` is 1 for approximate="tanh", 0 for "none" (MathOp reads it).
    Math("Gelu",
         [](auto x, auto a, auto) {
           using F = decltype(x);
           if (a != 0) {
             const F k = static_cast<F>(0.7978845608028654);  // sqrt(2 / pi)
             return F{0.5} * x * (1 + std::tanh(k * (x + static_cast<F>(0.044715) * x * x * x)));
           }
           return F{0.5} * x * (1 + std::erf(x * static_cast<F>(0.7071067811865476)));
         }),
    Math(
        "Swish", [](auto x, auto a, auto) { return x / (1 + std::exp(-a * x)); }, "alpha", 1.0f),
    Math(
        "LeakyRelu", [](auto x, auto a, auto) { return x < 0 ? a * x : x; }, "alpha", 0.01f),
    Math(
        "Elu", [](auto x, auto a, auto) { return x < 0 ? a * std::expm1(x) : x; }, "alpha", 1.0f),
    Math(
        "Selu", [](auto x, auto a, auto g) { return x > 0 ? g * x : g * a * std::expm1(x); },
        "alpha", 1.67326319217681884765625f, "gamma", 1.05070102214813232421875f),
    Math(
        "Celu", [](auto x, auto a, auto) { return x > 0 ? x : a * std::expm1(x / a); }, "alpha",
        1.0f),
    Math(
        "ThresholdedRelu", [](auto x, auto a, auto) { return x > a ? x : 0; }, "alpha", 1.0f),
};

struct MathOp : OpBase<FloatTs> {
  MathOp(const ir::Node& node, int opset) {
    for (const MathFn& m : kMathFns) {
      if (node.op_type == m.op_type) fn = &m;
    }
    float default_a = fn->default_a, default_b = fn->default_b;
    // Selu-1 (opsets 1-5) rounded its defaults to 1.6732 and 1.0507.
    if (opset < 6 && node.op_type == "Selu") {
      default_a = 1.6732f;
      default_b = 1.0507f;
    }
    a = node.attrs.Float(fn->attr_a, default_a);
    b = node.attrs.Float(fn->attr_b, default_b);
    if (node.op_type == "Gelu") a = node.attrs.String("approximate", "none") == "tanh" ? 1 : 0;
  }
  static Status Check(const ir::Node& node, int) {
    const std::string approximate = node.attrs.String("approximate", "none");
    if (node.op_type == "Gelu" && approximate != "none" && approximate != "tanh") {
      return InvalidArgument(node.Describe() + ": approximate '" + approximate +
                             "' must be none or tanh");
    }
    return Status::Ok();
  }
  float operator()(float x) const { return fn->f32(x, a, b); }
  double operator()(double x) const { return fn->f64(x, a, b); }
  const MathFn* fn = nullptr;
  float a = 0, b = 0;
};

// ---------------------------------------------------------------------------
// Generic infer and run

DType OutDType(bool predicate, DType in) { return predicate ? DType::kBool : in; }

template <typename Op>
Status InferUnary(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireTypes(typename Op::Types{}, node, 0));
  TESSEL_RETURN_IF_ERROR(Op::Check(node, opset));
  const ir::Value* x = node.input(0);
  SetOutput(node, 0, OutDType(Op::kPredicate, x->dtype), x->shape);
  return Status::Ok();
}

template <typename Op>
Status RunUnary(KernelContext& ctx) {
  const Op op = MakeOp<Op>(ctx.node, ctx.opset);
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  Dispatch(typename Op::Types{}, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using R = std::conditional_t<Op::kPredicate, bool, T>;
    const T* in = x.data<T>();
    R* out = y.data<R>();
    const int64_t n = x.num_elements();
    for (int64_t i = 0; i < n; ++i) out[i] = Convert<R>(op(Load(in[i])));
  });
  return Status::Ok();
}

// Checks that all inputs are present, accepted and of one dtype.
template <typename Types>
Status CheckBroadcastInputs(const ir::Node& node) {
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!node.input(i)) {
      return InvalidArgument(node.Describe() + ": input " + std::to_string(i) + " is missing");
    }
    TESSEL_RETURN_IF_ERROR(RequireTypes(Types{}, node, i));
    TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, i}));
  }
  return Status::Ok();
}

// Before opset 7 a binary op broadcasts only B towards A, and only with
// broadcast=1: B's dims then line up with a contiguous run of A's dims that
// starts at `axis` (by default, A's trailing dims). Returns the shape to read B
// with under numpy rules: B's dims at that run, 1 elsewhere. A size-1 dim of B
// stretches too; the spec of that time left it out, but PyTorch's exporter
// emitted it (B 2x1 against A 2x3, axis=0).
StatusOr<Shape> LegacyBroadcastShapeOfB(const ir::Node& node, int opset, const Shape& a,
                                        const Shape& b) {
  const std::string before = "; before opset 7 (model opset " + std::to_string(opset) + ")";
  if (node.attrs.Int("broadcast", 0) == 0) {
    if (a == b) return b;
    return InvalidArgument(node.Describe() + ": input shapes " + ShapeToString(a) + " and " +
                           ShapeToString(b) + " differ" + before +
                           " that needs attribute broadcast=1");
  }
  const int64_t rank_a = static_cast<int64_t>(a.size()), rank_b = static_cast<int64_t>(b.size());
  int64_t axis = rank_a - rank_b;
  if (node.attrs.Has("axis")) {
    TESSEL_ASSIGN_OR_RETURN(axis, NormalizeAxis(node, node.attrs.Int("axis", 0), rank_a));
  }
  bool fits = axis >= 0 && axis + rank_b <= rank_a;
  Shape aligned(a.size(), 1);
  for (int64_t i = 0; fits && i < rank_b; ++i) {
    fits = b[i] == a[axis + i] || b[i] == 1;
    aligned[axis + i] = b[i];
  }
  if (!fits) {
    return InvalidArgument(node.Describe() + ": B shape " + ShapeToString(b) +
                           " does not match A shape " + ShapeToString(a) + " from axis " +
                           std::to_string(axis) + before + " only B broadcasts, to A");
  }
  return aligned;
}

// PRelu before opset 7 followed Caffe2: a one-element slope is shared, and a
// 1-D slope as long as X's channel dim (axis 1) applies per channel. Any other
// slope is read as from opset 7 on.
Shape LegacySlopeShape(const Shape& x, const Shape& slope) {
  if (NumElements(slope) == 1) return {};
  if (slope.size() == 1 && x.size() >= 2 && slope[0] == x[1]) {
    Shape per_channel(x.size() - 1, 1);
    per_channel[0] = slope[0];
    return per_channel;
  }
  return slope;
}

// The shape a binary op reads B with when it broadcasts B against A.
template <typename Op>
StatusOr<Shape> ShapeOfB(const ir::Node& node, int opset, const Shape& a, const Shape& b) {
  if (opset >= 7) return b;
  if constexpr (Op::kSlope) {
    return LegacySlopeShape(a, b);
  } else {
    return LegacyBroadcastShapeOfB(node, opset, a, b);
  }
}

template <typename Op>
Status InferBinary(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(CheckBroadcastInputs<typename Op::Types>(node));
  const Shape& a = node.input(0)->shape;
  const Shape& b = node.input(1)->shape;
  TESSEL_ASSIGN_OR_RETURN(Shape b_read, ShapeOfB<Op>(node, opset, a, b));
  TESSEL_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(node, {a, b_read}));
  if (Op::kSlope && shape != a) {
    return InvalidArgument(node.Describe() + ": slope shape " + ShapeToString(b) +
                           " does not broadcast to X shape " + ShapeToString(a));
  }
  TESSEL_RETURN_IF_ERROR(Op::Check(node, opset));
  SetOutput(node, 0, OutDType(Op::kPredicate, node.input(0)->dtype), std::move(shape));
  return Status::Ok();
}

template <typename Op>
Status InferVariadic(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(CheckBroadcastInputs<typename Op::Types>(node));
  std::vector<Shape> shapes;
  for (const ir::Value* v : node.inputs) shapes.push_back(v->shape);
  TESSEL_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(node, shapes));
  TESSEL_RETURN_IF_ERROR(Op::Check(node, opset));
  SetOutput(node, 0, OutDType(Op::kPredicate, node.input(0)->dtype), std::move(shape));
  return Status::Ok();
}

template <typename Op>
Status RunBinary(KernelContext& ctx) {
  const Op op = MakeOp<Op>(ctx.node, ctx.opset);
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(1);
  Tensor& y = ctx.out(0);
  TESSEL_ASSIGN_OR_RETURN(const Shape b_shape,
                          ShapeOfB<Op>(ctx.node, ctx.opset, a.shape(), b.shape()));
  Dispatch(typename Op::Types{}, a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using R = std::conditional_t<Op::kPredicate, bool, T>;
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    R* out = y.data<R>();
    BroadcastLoop<2>(y.shape(), {&a.shape(), &b_shape}, [&](int64_t i, const auto& o) {
      out[i] = Convert<R>(op(Load(pa[o[0]]), Load(pb[o[1]])));
    });
  });
  return Status::Ok();
}

// Folds all inputs into an accumulator of the compute type, so 16-bit sums
// round once. Mean divides the sum by the input count.
template <typename Op, bool kMean = false>
Status RunVariadic(KernelContext& ctx) {
  const Op op = MakeOp<Op>(ctx.node, ctx.opset);
  Tensor& y = ctx.out(0);
  Dispatch(typename Op::Types{}, y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = Compute<T>;
    std::vector<C> acc(static_cast<size_t>(y.num_elements()));
    for (size_t k = 0; k < ctx.inputs.size(); ++k) {
      const Tensor& x = ctx.in(k);
      const T* in = x.data<T>();
      BroadcastLoop<1>(y.shape(), {&x.shape()}, [&](int64_t i, const auto& o) {
        const C v = Load(in[o[0]]);
        acc[i] = k == 0 ? v : op(acc[i], v);
      });
    }
    T* out = y.data<T>();
    for (size_t i = 0; i < acc.size(); ++i) {
      if constexpr (kMean) acc[i] /= static_cast<C>(ctx.inputs.size());
      out[i] = Convert<T>(acc[i]);
    }
  });
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Ops with their own kernels

Status InferWhere(ir::Node& node, int) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, {DType::kBool}));
  TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {1, 2}));
  std::vector<Shape> shapes;
  for (size_t i = 0; i < 3; ++i) shapes.push_back(node.input(i)->shape);
  TESSEL_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(node, shapes));
  SetOutput(node, 0, node.input(1)->dtype, std::move(shape));
  return Status::Ok();
}

Status RunWhere(KernelContext& ctx) {
  const Tensor& c = ctx.in(0);
  const Tensor& x = ctx.in(1);
  const Tensor& y = ctx.in(2);
  Tensor& z = ctx.out(0);
  Dispatch(AllTs{}, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const bool* pc = c.data<bool>();
    const T* px = x.data<T>();
    const T* py = y.data<T>();
    T* out = z.data<T>();
    BroadcastLoop<3>(z.shape(), {&c.shape(), &x.shape(), &y.shape()},
                     [&](int64_t i, const auto& o) { out[i] = pc[o[0]] ? px[o[1]] : py[o[2]]; });
  });
  return Status::Ok();
}

// Integer base and exponent: exact, by squaring, wrapping on overflow. A
// negative exponent gives 1 / base^|e| truncated: 0 unless |base| is 1.
template <typename B, typename E>
B IntPow(B base, E e) {
  if (IsNegative(e)) {
    if (base == 1) return 1;
    if (IsNegative(base) && base == static_cast<B>(-1)) return (e % 2 == 0) ? 1 : base;
    return 0;
  }
  uint64_t result = 1, b = static_cast<uint64_t>(base), k = static_cast<uint64_t>(e);
  for (; k != 0; k >>= 1, b *= b) {
    if (k & 1) result *= b;
  }
  return static_cast<B>(result);
}

// Pow reads its exponent as the other binary ops read B.
using PowOp = OpBase<PowBaseTs>;

Status InferPow(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireTypes(PowBaseTs{}, node, 0));
  TESSEL_RETURN_IF_ERROR(RequireTypes(NumericTs{}, node, 1));
  const Shape& a = node.input(0)->shape;
  TESSEL_ASSIGN_OR_RETURN(Shape b, ShapeOfB<PowOp>(node, opset, a, node.input(1)->shape));
  TESSEL_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(node, {a, b}));
  SetOutput(node, 0, node.input(0)->dtype, std::move(shape));
  return Status::Ok();
}

Status RunPow(KernelContext& ctx) {
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(1);
  Tensor& y = ctx.out(0);
  TESSEL_ASSIGN_OR_RETURN(const Shape b_shape,
                          ShapeOfB<PowOp>(ctx.node, ctx.opset, a.shape(), b.shape()));
  Dispatch(PowBaseTs{}, a.dtype(), [&](auto base_tag) {
    Dispatch(NumericTs{}, b.dtype(), [&](auto exp_tag) {
      using T = decltype(base_tag);
      using E = decltype(exp_tag);
      const T* pa = a.data<T>();
      const E* pb = b.data<E>();
      T* out = y.data<T>();
      BroadcastLoop<2>(y.shape(), {&a.shape(), &b_shape}, [&](int64_t i, const auto& o) {
        const auto base = Load(pa[o[0]]);
        const auto e = Load(pb[o[1]]);
        if constexpr (std::is_integral_v<decltype(base)> && std::is_integral_v<decltype(e)>) {
          out[i] = IntPow(base, e);
        } else {
          out[i] = Convert<T>(std::pow(static_cast<double>(base), static_cast<double>(e)));
        }
      });
    });
  });
  return Status::Ok();
}

// Opset < 11 takes min/max as float attributes; later opsets as optional
// scalar inputs of the input's dtype.
Status InferClip(ir::Node& node, int opset) {
  if (opset < 11) {
    TESSEL_RETURN_IF_ERROR(RequireTypes(FloatTs{}, node, 0));
    if (node.input(1) || node.input(2)) {
      return InvalidArgument(node.Describe() + ": opset " + std::to_string(opset) +
                             " takes min and max as attributes, not inputs");
    }
  } else {
    TESSEL_RETURN_IF_ERROR(RequireTypes(NumericTs{}, node, 0));
    TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, 1, 2}));
    for (size_t i = 1; i <= 2; ++i) {
      const ir::Value* v = node.input(i);
      if (v && NumElements(v->shape) != 1) {
        return InvalidArgument(node.Describe() + ": " + (i == 1 ? "min" : "max") + " '" + v->name +
                               "' has shape " + ShapeToString(v->shape) + "; expected a scalar");
      }
    }
  }
  SetOutput(node, 0, node.input(0)->dtype, node.input(0)->shape);
  return Status::Ok();
}

Status RunClip(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  Dispatch(NumericTs{}, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = Compute<T>;
    using Limits = std::numeric_limits<C>;
    C lo = Limits::has_infinity ? -Limits::infinity() : Limits::lowest();
    C hi = Limits::has_infinity ? Limits::infinity() : Limits::max();
    if (ctx.opset < 11) {
      if constexpr (std::is_floating_point_v<C>) {
        lo = static_cast<C>(ctx.node.attrs.Float("min", std::numeric_limits<float>::lowest()));
        hi = static_cast<C>(ctx.node.attrs.Float("max", std::numeric_limits<float>::max()));
      }
    } else {
      if (ctx.has_in(1)) lo = Load(ctx.in(1).data<T>()[0]);
      if (ctx.has_in(2)) hi = Load(ctx.in(2).data<T>()[0]);
    }
    const T* in = x.data<T>();
    T* out = y.data<T>();
    // x first, so NaN passes through; min > max gives max, as ONNX specifies.
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      out[i] = Convert<T>(std::min(std::max(Load(in[i]), lo), hi));
    }
  });
  return Status::Ok();
}

// Cast's `to` is an ONNX TensorProto.DataType code. The onnx layer owns the
// full mapping, but ops cannot depend on it.
struct OnnxType {
  int64_t code;
  DType dtype;  // kUndefined: a valid ONNX type tessel does not support
  const char* name;
};
constexpr OnnxType kOnnxTypes[] = {{1, DType::kFloat32, "FLOAT"},
                                   {2, DType::kUInt8, "UINT8"},
                                   {3, DType::kInt8, "INT8"},
                                   {4, DType::kUInt16, "UINT16"},
                                   {5, DType::kInt16, "INT16"},
                                   {6, DType::kInt32, "INT32"},
                                   {7, DType::kInt64, "INT64"},
                                   {8, DType::kUndefined, "STRING"},
                                   {9, DType::kBool, "BOOL"},
                                   {10, DType::kFloat16, "FLOAT16"},
                                   {11, DType::kFloat64, "DOUBLE"},
                                   {12, DType::kUInt32, "UINT32"},
                                   {13, DType::kUInt64, "UINT64"},
                                   {14, DType::kUndefined, "COMPLEX64"},
                                   {15, DType::kUndefined, "COMPLEX128"},
                                   {16, DType::kBFloat16, "BFLOAT16"},
                                   {17, DType::kUndefined, "FLOAT8E4M3FN"},
                                   {18, DType::kUndefined, "FLOAT8E4M3FNUZ"},
                                   {19, DType::kUndefined, "FLOAT8E5M2"},
                                   {20, DType::kUndefined, "FLOAT8E5M2FNUZ"},
                                   {21, DType::kUndefined, "UINT4"},
                                   {22, DType::kUndefined, "INT4"},
                                   {23, DType::kUndefined, "FLOAT4E2M1"},
                                   {24, DType::kUndefined, "FLOAT8E8M0"},
                                   {25, DType::kUndefined, "UINT2"},
                                   {26, DType::kUndefined, "INT2"},
                                   {27, DType::kUndefined, "FLOAT6E2M3"},
                                   {28, DType::kUndefined, "FLOAT6E3M2"}};

// Cast-1 (opsets 1-5) names the target type ("FLOAT"); later opsets give its
// code.
StatusOr<DType> CastTarget(const ir::Node& node, int opset) {
  if (!node.attrs.Has("to")) {
    return InvalidArgument(node.Describe() + ": attribute 'to' is required");
  }
  int64_t to = node.attrs.Int("to", 0);
  if (opset < 6) {
    const std::string name = node.attrs.String("to", "");
    const OnnxType* named = nullptr;
    for (const OnnxType& t : kOnnxTypes) {
      if (name == t.name) named = &t;
    }
    if (!named) {
      return InvalidArgument(node.Describe() + ": to='" + name +
                             "' is not an ONNX tensor data type name (opset " +
                             std::to_string(opset) + " names the type, e.g. 'FLOAT')");
    }
    to = named->code;
  }
  for (const OnnxType& t : kOnnxTypes) {
    if (t.code != to) continue;
    if (t.dtype == DType::kUndefined) {
      return Unsupported(node.Describe() + ": cast to " + t.name + " (to=" + std::to_string(to) +
                         ") is not supported");
    }
    return t.dtype;
  }
  return InvalidArgument(node.Describe() + ": to=" + std::to_string(to) +
                         " is not an ONNX tensor data type");
}

Status InferCast(ir::Node& node, int opset) {
  TESSEL_ASSIGN_OR_RETURN(DType to, CastTarget(node, opset));
  SetOutput(node, 0, to, node.input(0)->shape);
  return Status::Ok();
}

Status InferCastLike(ir::Node& node, int) {
  SetOutput(node, 0, node.input(1)->dtype, node.input(0)->shape);
  return Status::Ok();
}

Status RunCast(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  Dispatch(AllTs{}, x.dtype(), [&](auto from_tag) {
    Dispatch(AllTs{}, y.dtype(), [&](auto to_tag) {
      using From = decltype(from_tag);
      using To = decltype(to_tag);
      const From* in = x.data<From>();
      To* out = y.data<To>();
      for (int64_t i = 0; i < x.num_elements(); ++i) out[i] = Convert<To>(Load(in[i]));
    });
  });
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Registration

void RegisterOp(OpRegistry& r, const char* op_type, OpClass op_class, int min_inputs,
                int max_inputs, InferFn infer, KernelFn run) {
  r.Register({.op_type = op_type,
              .domain = "",
              .op_class = op_class,
              .min_inputs = min_inputs,
              .max_inputs = max_inputs,
              .infer = infer,
              .run = run});
}

template <typename Op>
void Unary(OpRegistry& r, const char* op_type) {
  RegisterOp(r, op_type, OpClass::kElementwise, 1, 1, InferUnary<Op>, RunUnary<Op>);
}
template <typename Ts, bool kPred = false, typename F>
void Unary(OpRegistry& r, const char* op_type, F) {
  Unary<Fn<Ts, kPred, F>>(r, op_type);
}

template <typename Op>
void Binary(OpRegistry& r, const char* op_type) {
  RegisterOp(r, op_type, OpClass::kBroadcast, 2, 2, InferBinary<Op>, RunBinary<Op>);
}
template <typename Ts, bool kPred = false, typename F>
void Binary(OpRegistry& r, const char* op_type, F) {
  Binary<Fn<Ts, kPred, F>>(r, op_type);
}

template <bool kMean = false, typename Ts, typename F>
void Variadic(OpRegistry& r, const char* op_type, Ts, F) {
  using Op = Fn<Ts, false, F>;
  RegisterOp(r, op_type, OpClass::kBroadcast, 1, std::numeric_limits<int>::max(), InferVariadic<Op>,
             RunVariadic<Op, kMean>);
}

}  // namespace

void RegisterElementwiseOps(OpRegistry& r) {
  Binary<NumericTs>(r, "Add", [](auto a, auto b) { return Arith(a, b, std::plus<>()); });
  Binary<NumericTs>(r, "Sub", [](auto a, auto b) { return Arith(a, b, std::minus<>()); });
  Binary<NumericTs>(r, "Mul", [](auto a, auto b) { return Arith(a, b, std::multiplies<>()); });
  // Integer x / 0 is 0 (as numpy gives) rather than a crash; MIN / -1 wraps.
  Binary<NumericTs>(r, "Div", [](auto a, auto b) {
    using C = decltype(a);
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return C{0};
      if (IsNegative(b) && b == C(-1)) return Negate(a);
    }
    return static_cast<C>(a / b);
  });
  Binary<ModOp>(r, "Mod");
  Binary<PReluOp>(r, "PRelu");
  Binary<BitShiftOp>(r, "BitShift");
  Binary<AllTs, true>(r, "Equal", [](auto a, auto b) { return a == b; });
  Binary<NumericTs, true>(r, "Less", [](auto a, auto b) { return a < b; });
  Binary<NumericTs, true>(r, "Greater", [](auto a, auto b) { return a > b; });
  Binary<NumericTs, true>(r, "LessOrEqual", [](auto a, auto b) { return a <= b; });
  Binary<NumericTs, true>(r, "GreaterOrEqual", [](auto a, auto b) { return a >= b; });
  Binary<BoolTs>(r, "And", [](bool a, bool b) { return a && b; });
  Binary<BoolTs>(r, "Or", [](bool a, bool b) { return a || b; });
  Binary<BoolTs>(r, "Xor", [](bool a, bool b) { return a != b; });
  Variadic(r, "Max", NumericTs{}, [](auto a, auto b) { return Max(a, b); });
  Variadic(r, "Min", NumericTs{}, [](auto a, auto b) { return Min(a, b); });
  Variadic(r, "Sum", FloatTs{}, [](auto a, auto b) { return a + b; });
  Variadic<true>(r, "Mean", FloatTs{}, [](auto a, auto b) { return a + b; });
  RegisterOp(r, "Pow", OpClass::kBroadcast, 2, 2, InferPow, RunPow);
  RegisterOp(r, "Where", OpClass::kBroadcast, 3, 3, InferWhere, RunWhere);

  for (const MathFn& m : kMathFns) Unary<MathOp>(r, m.op_type);
  Unary<BoolTs>(r, "Not", [](bool x) { return !x; });
  Unary<NumericTs>(r, "Abs", [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      return std::abs(x);
    } else {
      return IsNegative(x) ? Negate(x) : x;
    }
  });
  Unary<SignedTs>(r, "Neg", [](auto x) { return Negate(x); });
  // Keeps zero's sign and NaN for floats.
  Unary<NumericTs>(r, "Sign", [](auto x) {
    using C = decltype(x);
    return x > 0 ? C{1} : IsNegative(x) ? C(-1) : std::is_floating_point_v<C> ? x : C{0};
  });
  Unary<SignedTs>(r, "Relu", [](auto x) { return x < 0 ? decltype(x){0} : x; });
  Unary<FloatTs, true>(r, "IsNaN", [](auto x) { return std::isnan(x); });
  Unary<IsInfOp>(r, "IsInf");
  Unary<ShrinkOp>(r, "Shrink");
  RegisterOp(r, "Clip", OpClass::kElementwise, 1, 3, InferClip, RunClip);
  RegisterOp(r, "Cast", OpClass::kElementwise, 1, 1, InferCast, RunCast);
  RegisterOp(r, "CastLike", OpClass::kElementwise, 2, 2, InferCastLike, RunCast);
}

StatusOr<Shape> BinaryShapeOfB(const ir::Node& node, int opset, const Shape& a, const Shape& b) {
  if (opset >= 7) return b;
  if (node.op_type == "PRelu") return LegacySlopeShape(a, b);
  return LegacyBroadcastShapeOfB(node, opset, a, b);
}

}  // namespace tessel::ops
