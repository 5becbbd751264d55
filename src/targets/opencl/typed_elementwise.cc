#include "targets/opencl/typed_elementwise.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <string_view>

#include "ops/op_util.h"

namespace tessel::opencl {

namespace {

Status Refuse(const ir::Node& node, const std::string& why) {
  return tessel::Unsupported(node.Describe() + ": the OpenCL target " + why);
}

// ---------------------------------------------------------------------------
// Which ops, on which dtypes: the reference kernels' type lists.

using DTypes = std::initializer_list<DType>;
constexpr DTypes kFloatTs = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};
constexpr DTypes kSignedTs = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                              DType::kInt8,    DType::kInt16,   DType::kInt32,   DType::kInt64};
constexpr DTypes kNumericTs = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                               DType::kInt8,    DType::kInt16,   DType::kInt32,   DType::kInt64,
                               DType::kUInt8,   DType::kUInt16,  DType::kUInt32,  DType::kUInt64};
constexpr DTypes kAllTs = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                           DType::kInt8,    DType::kInt16,   DType::kInt32,   DType::kInt64,
                           DType::kUInt8,   DType::kUInt16,  DType::kUInt32,  DType::kUInt64,
                           DType::kBool};
constexpr DTypes kUnsignedTs = {DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64};
constexpr DTypes kPowBaseTs = {DType::kFloat32,  DType::kFloat64, DType::kFloat16,
                               DType::kBFloat16, DType::kInt32,   DType::kInt64};
constexpr DTypes kPReluTs = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                             DType::kInt32,   DType::kInt64,   DType::kUInt32,  DType::kUInt64};

enum class Family {
  kCast,       // x -> the node's output dtype
  kWhere,      // bool, T, T -> T, bits copied
  kBinary,     // T, T -> T
  kCompare,    // T, T -> bool
  kVariadic,   // T... -> T, folded in order
  kPow,        // base, exponent of any numeric dtype -> base's
  kClip,       // x, [min], [max] -> x's
  kUnary,      // T -> T
  kPredicate,  // T -> bool
};

struct OpInfo {
  std::string_view op;
  Family family;
  DTypes types;  // of input 0
};

constexpr OpInfo kOps[] = {
    {"Cast", Family::kCast, kAllTs},
    {"CastLike", Family::kCast, kAllTs},
    {"Where", Family::kWhere, kAllTs},
    {"Add", Family::kBinary, kNumericTs},
    {"Sub", Family::kBinary, kNumericTs},
    {"Mul", Family::kBinary, kNumericTs},
    {"Div", Family::kBinary, kNumericTs},
    {"Mod", Family::kBinary, kNumericTs},
    {"PRelu", Family::kBinary, kPReluTs},
    {"BitShift", Family::kBinary, kUnsignedTs},
    {"Equal", Family::kCompare, kAllTs},
    {"Less", Family::kCompare, kNumericTs},
    {"Greater", Family::kCompare, kNumericTs},
    {"LessOrEqual", Family::kCompare, kNumericTs},
    {"GreaterOrEqual", Family::kCompare, kNumericTs},
    {"Max", Family::kVariadic, kNumericTs},
    {"Min", Family::kVariadic, kNumericTs},
    {"Sum", Family::kVariadic, kFloatTs},
    {"Mean", Family::kVariadic, kFloatTs},
    {"Pow", Family::kPow, kPowBaseTs},
    {"Clip", Family::kClip, kNumericTs},
    {"Abs", Family::kUnary, kNumericTs},
    {"Neg", Family::kUnary, kSignedTs},
    {"Sign", Family::kUnary, kNumericTs},
    {"Relu", Family::kUnary, kSignedTs},
    {"Shrink", Family::kUnary, kNumericTs},
    {"IsNaN", Family::kPredicate, kFloatTs},
    {"IsInf", Family::kPredicate, kFloatTs},
    // The float functions (the reference's kMathFns).
    {"Sqrt", Family::kUnary, kFloatTs},
    {"Exp", Family::kUnary, kFloatTs},
    {"Log", Family::kUnary, kFloatTs},
    {"Reciprocal", Family::kUnary, kFloatTs},
    {"Floor", Family::kUnary, kFloatTs},
    {"Ceil", Family::kUnary, kFloatTs},
    {"Round", Family::kUnary, kFloatTs},
    {"Erf", Family::kUnary, kFloatTs},
    {"Sin", Family::kUnary, kFloatTs},
    {"Cos", Family::kUnary, kFloatTs},
    {"Tan", Family::kUnary, kFloatTs},
    {"Asin", Family::kUnary, kFloatTs},
    {"Acos", Family::kUnary, kFloatTs},
    {"Atan", Family::kUnary, kFloatTs},
    {"Sinh", Family::kUnary, kFloatTs},
    {"Cosh", Family::kUnary, kFloatTs},
    {"Asinh", Family::kUnary, kFloatTs},
    {"Acosh", Family::kUnary, kFloatTs},
    {"Atanh", Family::kUnary, kFloatTs},
    {"Tanh", Family::kUnary, kFloatTs},
    {"Sigmoid", Family::kUnary, kFloatTs},
    {"HardSigmoid", Family::kUnary, kFloatTs},
    {"HardSwish", Family::kUnary, kFloatTs},
    {"Softplus", Family::kUnary, kFloatTs},
    {"Softsign", Family::kUnary, kFloatTs},
    {"Mish", Family::kUnary, kFloatTs},
    {"Gelu", Family::kUnary, kFloatTs},
    {"Swish", Family::kUnary, kFloatTs},
    {"LeakyRelu", Family::kUnary, kFloatTs},
    {"Elu", Family::kUnary, kFloatTs},
    {"Selu", Family::kUnary, kFloatTs},
    {"Celu", Family::kUnary, kFloatTs},
    {"ThresholdedRelu", Family::kUnary, kFloatTs},
};

const OpInfo* FindOp(std::string_view op) {
  for (const OpInfo& o : kOps) {
    if (o.op == op) return &o;
  }
  return nullptr;
}

bool In(DType t, DTypes list) { return std::find(list.begin(), list.end(), t) != list.end(); }

std::string Names(DTypes list) {
  std::string s;
  for (DType t : list) s += std::string(s.empty() ? "" : ", ") + DTypeName(t);
  return s;
}

bool IsSignedInt(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64;
}
bool IsUnsignedInt(DType t) { return In(t, kUnsignedTs); }

// Ops with float attributes: their names and ONNX defaults (alpha, beta).
struct FloatAttrs {
  std::string_view op;
  const char* a;
  float default_a;
  const char* b;
  float default_b;
};
constexpr FloatAttrs kFloatAttrs[] = {
    {"HardSigmoid", "alpha", 0.2f, "beta", 0.5f},
    {"Swish", "alpha", 1.0f, "", 0},
    {"LeakyRelu", "alpha", 0.01f, "", 0},
    {"Elu", "alpha", 1.0f, "", 0},
    {"Selu", "alpha", 1.67326319217681884765625f, "gamma", 1.05070102214813232421875f},
    {"Celu", "alpha", 1.0f, "", 0},
    {"ThresholdedRelu", "alpha", 1.0f, "", 0},
    {"Shrink", "lambd", 0.5f, "bias", 0.0f},
};

// The element strides to read `in` along `out`'s axes (0 where it
// broadcasts), or nullopt when it does not broadcast to `out`.
std::optional<std::vector<int64_t>> ReadStrides(const Shape& in, const Shape& out) {
  if (in.size() > out.size()) return std::nullopt;
  std::vector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  for (size_t k = in.size(); k-- > 0;) {
    const size_t o = out.size() - in.size() + k;
    if (in[k] != out[o] && in[k] != 1) return std::nullopt;
    strides[o] = in[k] == 1 ? 0 : stride;
    stride *= in[k];
  }
  return strides;
}

// Drops the axes of extent 1 and merges each axis into the next inner one
// where every operand walks the two as one.
void MergeAxes(const Shape& out, TypedElementwise& k) {
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides(k.strides.size());
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    bool merge = !dims.empty();
    for (size_t j = 0; j < strides.size() && merge; ++j) {
      merge = strides[j].back() == k.strides[j][d] * out[d];
    }
    if (merge) {
      dims.back() *= out[d];
      for (size_t j = 0; j < strides.size(); ++j) strides[j].back() = k.strides[j][d];
    } else {
      dims.push_back(out[d]);
      for (size_t j = 0; j < strides.size(); ++j) strides[j].push_back(k.strides[j][d]);
    }
  }
  k.dims = std::move(dims);
  k.strides = std::move(strides);
}

// The output dtype the op gives for `k`'s operands.
DType ExpectedOutput(const OpInfo& info, const ir::Node& node, const TypedElementwise& k) {
  switch (info.family) {
    case Family::kCast:
      return node.output(0)->dtype;
    case Family::kCompare:
    case Family::kPredicate:
      return DType::kBool;
    case Family::kWhere:
      return k.dtypes[1];
    default:
      return k.dtypes[0];
  }
}

// ---------------------------------------------------------------------------
// OpenCL C

// The OpenCL C type a buffer of `t` holds (16-bit floats as their bits).
const char* StorageType(DType t) {
  switch (t) {
    case DType::kFloat32:
      return "float";
    case DType::kFloat64:
      return "double";
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kUInt16:
      return "ushort";
    case DType::kInt8:
      return "char";
    case DType::kInt16:
      return "short";
    case DType::kInt32:
      return "int";
    case DType::kInt64:
      return "long";
    case DType::kUInt8:
    case DType::kBool:
      return "uchar";
    case DType::kUInt32:
      return "uint";
    case DType::kUInt64:
      return "ulong";
    default:
      return "void";
  }
}

// The dtype `t` computes in: 16-bit floats in float32, as the reference does.
DType ComputeDType(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 ? DType::kFloat32 : t;
}
std::string CType(DType t) { return StorageType(ComputeDType(t)); }

// Integer arithmetic in an unsigned type of at least int width wraps, and
// never promotes to a signed int that could overflow.
std::string WrapType(DType t) { return DTypeSize(t) == 8 ? "ulong" : "uint"; }

std::string Load(DType t, const std::string& e) {
  if (t == DType::kFloat16) return "tsl_typed_half_to_float(" + e + ")";
  if (t == DType::kBFloat16) return "tsl_typed_bf16_to_float(" + e + ")";
  return e;
}

// A computed value `v` of compute dtype `from` (float64 also for TSL_WIDE,
// the widest float the device has) stored as `to`, as the reference's
// Convert does: float -> integer truncates and saturates (NaN -> 0),
// integer -> integer wraps, anything -> bool is "!= 0", 16-bit floats round
// to nearest even from float32 (from an integer through double, as
// FromDouble does).
std::string Convert(DType to, DType from, const std::string& v) {
  const bool from_float = from == DType::kFloat32 || from == DType::kFloat64;
  if (to == DType::kBool) return from == DType::kBool ? v : "(uchar)((" + v + ") != 0)";
  if (to == DType::kFloat16 || to == DType::kBFloat16) {
    const std::string f = from == DType::kFloat32 ? v
                          : from_float            ? "(float)(" + v + ")"
                                                  : "(float)(TSL_WIDE)(" + v + ")";
    return std::string(to == DType::kFloat16 ? "tsl_typed_float_to_half("
                                             : "tsl_typed_float_to_bf16(") +
           f + ")";
  }
  if (to == from) return v;
  if (IsFloat(to) || !from_float) return "(" + CType(to) + ")(" + v + ")";
  return "convert_" + CType(to) + "_sat_rtz(" + v + ")";
}

// A float constant in compute type `c` (float32 or float64), exactly.
std::string Literal(double value, DType c) {
  const bool f32 = c != DType::kFloat64;
  if (f32) value = static_cast<float>(value);
  std::string body;
  if (std::isnan(value)) {
    body = "NAN";
  } else if (std::isinf(value)) {
    body = value > 0 ? "INFINITY" : "(-INFINITY)";
  } else {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%a", value);
    body = std::string(buf) + (f32 ? "f" : "");
  }
  return "((" + std::string(StorageType(c)) + ")" + body + ")";
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

const char* ShortName(DType t) {
  switch (t) {
    case DType::kFloat32:
      return "f32";
    case DType::kFloat64:
      return "f64";
    case DType::kFloat16:
      return "f16";
    case DType::kBFloat16:
      return "bf16";
    case DType::kInt8:
      return "i8";
    case DType::kInt16:
      return "i16";
    case DType::kInt32:
      return "i32";
    case DType::kInt64:
      return "i64";
    case DType::kUInt8:
      return "u8";
    case DType::kUInt16:
      return "u16";
    case DType::kUInt32:
      return "u32";
    case DType::kUInt64:
      return "u64";
    case DType::kBool:
      return "bool";
    default:
      return "x";
  }
}

// The statements computing `v` from the operands a0.. (loaded, in their
// compute dtypes), and the compute dtype of `v`.
struct Body {
  std::string code;
  DType type;
};

Body FloatFunction(const TypedElementwise& k, const std::string& C, DType c) {
  const std::string x = "a0";
  const std::string A = Literal(k.alpha, c), B = Literal(k.beta, c);
  const std::string one = "(" + C + ")1", zero = "(" + C + ")0";
  const std::string& op = k.op;
  std::string e;
  static const std::string_view kPlain[] = {"Sqrt", "Exp",  "Log",   "Floor", "Ceil",  "Erf",
                                            "Sin",  "Cos",  "Tan",   "Asin",  "Acos",  "Atan",
                                            "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Tanh"};
  const auto softplus =
      "(" + x + " > 0 ? " + x + " + log1p(exp(-" + x + ")) : log1p(exp(" + x + ")))";
  if (std::find(std::begin(kPlain), std::end(kPlain), op) != std::end(kPlain)) {
    e = Lower(op) + "(" + x + ")";
  } else if (op == "Reciprocal") {
    e = one + " / " + x;
  } else if (op == "Round") {
    e = "rint(" + x + ")";  // half to even
  } else if (op == "Sigmoid") {
    e = x + " >= 0 ? " + one + " / (" + one + " + exp(-" + x + ")) : exp(" + x + ") / (" + one +
        " + exp(" + x + "))";
  } else if (op == "HardSigmoid" || op == "HardSwish") {
    const std::string t = op == "HardSigmoid" ? A + " * " + x + " + " + B
                                              : "(" + x + " + (" + C + ")3) / (" + C + ")6";
    const std::string clamp = "(t < 0 ? " + zero + " : t > 1 ? " + one + " : t)";
    return {"const " + C + " t = " + t + ";\n  const " + C +
                " v = " + (op == "HardSwish" ? x + " * " + clamp : clamp) + ";\n",
            c};
  } else if (op == "Softplus") {
    e = softplus;
  } else if (op == "Softsign") {
    e = x + " / (" + one + " + fabs(" + x + "))";
  } else if (op == "Mish") {
    e = x + " * tanh(" + softplus + ")";
  } else if (op == "Gelu") {
    e = k.mode == 1 ? Literal(0.5, c) + " * " + x + " * (" + one + " + tanh(" +
                          Literal(0.7978845608028654, c) + " * (" + x + " + " +
                          Literal(0.044715, c) + " * " + x + " * " + x + " * " + x + ")))"
                    : Literal(0.5, c) + " * " + x + " * (" + one + " + erf(" + x + " * " +
                          Literal(0.7071067811865476, c) + "))";
  } else if (op == "Swish") {
    e = x + " / (" + one + " + exp(-" + A + " * " + x + "))";
  } else if (op == "LeakyRelu") {
    e = x + " < 0 ? " + A + " * " + x + " : " + x;
  } else if (op == "Elu") {
    e = x + " < 0 ? " + A + " * expm1(" + x + ") : " + x;
  } else if (op == "Selu") {
    e = x + " > 0 ? " + B + " * " + x + " : " + B + " * " + A + " * expm1(" + x + ")";
  } else if (op == "Celu") {
    e = x + " > 0 ? " + x + " : " + A + " * expm1(" + x + " / " + A + ")";
  } else if (op == "ThresholdedRelu") {
    e = x + " > " + A + " ? " + x + " : " + zero;
  }
  return {"const " + C + " v = " + e + ";\n", c};
}

Body OpBody(const TypedElementwise& k) {
  const DType t = k.dtypes[0];
  const DType c = ComputeDType(t);
  const std::string C = CType(t);
  const std::string W = WrapType(t);
  const bool fl = IsFloat(t), sg = IsSignedInt(t);
  const std::string& op = k.op;
  const auto wrap = [&](const std::string& a, const char* o, const std::string& b) {
    return "(" + C + ")((" + W + ")" + a + " " + o + " (" + W + ")" + b + ")";
  };
  const auto value = [&](const std::string& e) {
    return Body{"const " + C + " v = " + e + ";\n", c};
  };
  if (op == "Cast" || op == "CastLike") return {"const " + C + " v = a0;\n", c};
  if (op == "Add" || op == "Sub" || op == "Mul") {
    const char* o = op == "Add" ? "+" : op == "Sub" ? "-" : "*";
    return value(fl ? "a0 " + std::string(o) + " a1" : wrap("a0", o, "a1"));
  }
  if (op == "Div") {
    // Integer x / 0 is 0; MIN / -1 wraps.
    if (fl) return value("a0 / a1");
    return value("a1 == 0 ? (" + C + ")0 : " +
                 (sg ? "a1 == (" + C + ")-1 ? " + wrap("0", "-", "a0") + " : " : std::string()) +
                 "(" + C + ")(a0 / a1)");
  }
  if (op == "Mod") {
    const bool fmod = k.mode != 0;
    if (fl) {
      if (fmod) return value("fmod(a0, a1)");
      // Floored: the divisor's sign, a zero too.
      return {C + " v = fmod(a0, a1);\n  v = v == 0 ? copysign((" + C +
                  ")0, a1) : (v < 0) != (a1 < 0) ? v + a1 : v;\n",
              c};
    }
    std::string s = C + " v = 0;\n  if (a1 != 0" + (sg ? " && a1 != (" + C + ")-1" : "") +
                    ") {\n    v = (" + C + ")(a0 % a1);\n";
    // Python's %: the divisor's sign.
    if (!fmod && sg)
      s += "    if (v != 0 && (v < 0) != (a1 < 0)) v = " + wrap("v", "+", "a1") + ";\n";
    return {s + "  }\n", c};
  }
  if (op == "PRelu") {
    if (fl) return value("a0 < 0 ? a0 * a1 : a0");
    return value(sg ? "a0 < 0 ? " + wrap("a0", "*", "a1") + " : a0" : "a0");
  }
  if (op == "BitShift") {
    const std::string bits = std::to_string(DTypeSize(t) * 8);
    return value("a1 >= " + bits + " ? (" + C + ")0 : (" + C + ")((" + W + ")a0 " +
                 (k.mode == 1 ? "<<" : ">>") + " a1)");
  }
  if (op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" ||
      op == "GreaterOrEqual") {
    const char* o = op == "Equal"         ? "=="
                    : op == "Less"        ? "<"
                    : op == "Greater"     ? ">"
                    : op == "LessOrEqual" ? "<="
                                          : ">=";
    return {"const uchar v = (uchar)(a0 " + std::string(o) + " a1);\n", DType::kBool};
  }
  if (op == "Max" || op == "Min" || op == "Sum" || op == "Mean") {
    std::string s = C + " v = a0;\n";
    const char* o = op == "Max" ? ">" : "<";
    for (size_t j = 1; j < k.operands.size(); ++j) {
      const std::string a = "a" + std::to_string(j);
      if (op == "Sum" || op == "Mean") {
        s += "  v = v + " + a + ";\n";
      } else if (fl) {
        // NaN propagates, as numpy's maximum does.
        s += "  v = isnan(v) ? v : (isnan(" + a + ") || " + a + " " + o + " v) ? " + a + " : v;\n";
      } else {
        s += "  v = " + a + " " + o + " v ? " + a + " : v;\n";
      }
    }
    if (op == "Mean") s += "  v = v / (" + C + ")" + std::to_string(k.operands.size()) + ";\n";
    return {s, c};
  }
  if (op == "Pow") {
    const DType e = k.dtypes[1];
    if (!fl && !IsFloat(e)) {
      // Exact, by squaring, wrapping; a negative exponent truncates 1 / b^|e|.
      std::string s = C + " v = (" + C + ")tsl_typed_ipow((ulong)a0, (ulong)a1);\n";
      if (IsSignedInt(e)) {
        s += "  if (a1 < 0) v = a0 == 1 ? (" + C + ")1 : a0 == (" + C + ")-1 ? (a1 % 2 == 0 ? (" +
             C + ")1 : a0) : (" + C + ")0;\n";
      }
      return {s, c};
    }
    return {"const TSL_WIDE v = pow((TSL_WIDE)a0, (TSL_WIDE)a1);\n", DType::kFloat64};
  }
  if (op == "Clip") {
    std::string s = C + " v = a0;\n";
    std::string lo, hi;
    if (k.mode == 1) {
      lo = Literal(k.alpha, c);
      hi = Literal(k.beta, c);
    }
    for (size_t j = 1; j < k.operands.size(); ++j) {
      (k.operands[j] == 1 ? lo : hi) = "a" + std::to_string(j);
    }
    // x first, so NaN passes; min > max gives max.
    if (!lo.empty()) s += "  v = v < " + lo + " ? " + lo + " : v;\n";
    if (!hi.empty()) s += "  v = " + hi + " < v ? " + hi + " : v;\n";
    return {s, c};
  }
  if (op == "Abs") {
    return value(fl ? "fabs(a0)" : sg ? "a0 < 0 ? " + wrap("0", "-", "a0") + " : a0" : "a0");
  }
  if (op == "Neg") return value(fl ? "-a0" : wrap("0", "-", "a0"));
  if (op == "Sign") {
    // Zero's sign and NaN stay for floats.
    return value("a0 > 0 ? (" + C + ")1 : " +
                 (IsUnsignedInt(t) ? "(" + C + ")0"
                                   : "a0 < 0 ? (" + C + ")-1 : " + (fl ? "a0" : "(" + C + ")0")));
  }
  if (op == "Relu") return value("a0 < 0 ? (" + C + ")0 : a0");
  if (op == "IsNaN") return {"const uchar v = (uchar)isnan(a0);\n", DType::kBool};
  if (op == "IsInf") {
    const std::string pos = (k.mode & 1) ? "1" : "0", neg = (k.mode & 2) ? "1" : "0";
    return {"const uchar v = (uchar)(isinf(a0) && (a0 > 0 ? " + pos + " : " + neg + "));\n",
            DType::kBool};
  }
  if (op == "Shrink") {
    // In double, as the reference computes it (integers too).
    const std::string L = "(TSL_WIDE)" + Literal(k.alpha, DType::kFloat32);
    const std::string B = "(TSL_WIDE)" + Literal(k.beta, DType::kFloat32);
    return {"const TSL_WIDE w = (TSL_WIDE)a0;\n  const TSL_WIDE v = w < -" + L + " ? w + " + B +
                " : w > " + L + " ? w - " + B + " : (TSL_WIDE)0;\n",
            DType::kFloat64};
  }
  return FloatFunction(k, C, c);
}

}  // namespace

StatusOr<std::optional<TypedElementwise>> PlanTypedElementwise(const ir::Node& node, int opset) {
  if (!node.domain.empty() && node.domain != "ai.onnx") return std::optional<TypedElementwise>();
  const OpInfo* info = FindOp(node.op_type);
  if (!info) return std::optional<TypedElementwise>();
  const ir::Value* out = node.output(0);
  if (!out || node.outputs.size() != 1) return Refuse(node, "runs it with one output only");
  TypedElementwise k;
  k.op = node.op_type == "CastLike" ? "Cast" : node.op_type;
  // The inputs read: every present one (Clip's bounds are optional),
  // CastLike's first alone.
  const size_t read = node.op_type == "CastLike" ? 1 : node.inputs.size();
  for (size_t i = 0; i < read; ++i) {
    const ir::Value* v = node.input(i);
    if (!v) {
      if (info->family == Family::kClip && i > 0) continue;
      return Refuse(node, "needs input " + std::to_string(i));
    }
    k.operands.push_back(static_cast<int>(i));
    k.dtypes.push_back(v->dtype);
  }
  if (k.operands.empty() || k.operands[0] != 0) return Refuse(node, "needs input 0");
  const DType t = k.dtypes[0];
  if (!In(t, info->types)) {
    return Refuse(
        node, "runs " + node.op_type + " on " + Names(info->types) + " only, not " + DTypeName(t));
  }
  const size_t arity = k.operands.size();
  switch (info->family) {
    case Family::kCast:
      if (!In(out->dtype, kAllTs)) {
        return Refuse(node, std::string("cannot cast to ") + DTypeName(out->dtype));
      }
      break;
    case Family::kWhere:
      if (arity != 3 || k.dtypes[0] != DType::kBool || k.dtypes[1] != k.dtypes[2]) {
        return Refuse(node, "takes Where of a bool condition and two values of one dtype only");
      }
      break;
    case Family::kBinary:
    case Family::kCompare:
    case Family::kPow:
      if (arity != 2) return Refuse(node, "takes two inputs only");
      if (info->family == Family::kPow && !In(k.dtypes[1], kNumericTs)) {
        return Refuse(node, std::string("takes no exponent of dtype ") + DTypeName(k.dtypes[1]));
      }
      if (info->family != Family::kPow && k.dtypes[1] != t) {
        return Refuse(node, "takes inputs of one dtype only");
      }
      break;
    case Family::kVariadic:
    case Family::kClip:
      for (DType d : k.dtypes) {
        if (d != t) return Refuse(node, "takes inputs of one dtype only");
      }
      break;
    case Family::kUnary:
    case Family::kPredicate:
      if (arity != 1) return Refuse(node, "takes one input only");
      break;
  }
  if (arity > 8) {
    return Refuse(node,
                  "runs " + node.op_type + " on at most 8 inputs, not " + std::to_string(arity));
  }
  // Attributes, checked as the reference checks them.
  const auto& attrs = node.attrs;
  if (node.op_type == "Mod") {
    k.mode = attrs.Int("fmod", 0);
    if (k.mode != 0 && k.mode != 1) return Refuse(node, "takes fmod 0 or 1 only");
    if (k.mode == 0 && IsFloat(t) && opset < 28) {
      return Refuse(node, "takes float Mod with fmod=1 only before opset 28");
    }
  } else if (node.op_type == "BitShift") {
    const std::string d = attrs.String("direction", "");
    if (d != "LEFT" && d != "RIGHT") return Refuse(node, "shifts LEFT or RIGHT only");
    k.mode = d == "LEFT" ? 1 : 0;
  } else if (node.op_type == "IsInf") {
    k.mode = (attrs.Int("detect_positive", 1) != 0 ? 1 : 0) |
             (attrs.Int("detect_negative", 1) != 0 ? 2 : 0);
  } else if (node.op_type == "Gelu") {
    const std::string a = attrs.String("approximate", "none");
    if (a != "none" && a != "tanh") return Refuse(node, "takes approximate none or tanh only");
    k.mode = a == "tanh" ? 1 : 0;
  } else if (node.op_type == "Clip" && opset < 11) {
    if (arity != 1) return Refuse(node, "takes Clip's bounds as attributes before opset 11");
    if (!IsFloat(t)) return Refuse(node, "clips floats only before opset 11");
    k.mode = 1;
    k.alpha = attrs.Float("min", std::numeric_limits<float>::lowest());
    k.beta = attrs.Float("max", std::numeric_limits<float>::max());
  }
  for (const FloatAttrs& f : kFloatAttrs) {
    if (f.op != node.op_type) continue;
    float default_a = f.default_a, default_b = f.default_b;
    if (node.op_type == "Selu" && opset < 6) {  // Selu-1's rounded defaults
      default_a = 1.6732f;
      default_b = 1.0507f;
    }
    k.alpha = attrs.Float(f.a, default_a);
    k.beta = *f.b ? attrs.Float(f.b, default_b) : 0.0f;
  }
  k.output = out->dtype;
  if (ExpectedOutput(*info, node, k) != k.output) {
    return Refuse(node, std::string("expects its output of dtype ") +
                            DTypeName(ExpectedOutput(*info, node, k)) + ", not " +
                            DTypeName(k.output));
  }
  // Shapes and broadcasting.
  if (!out->shape_known) return Refuse(node, "needs the output's shape known");
  for (int p : k.operands) {
    if (!node.input(static_cast<size_t>(p))->shape_known) {
      return Refuse(node, "needs every input's shape known");
    }
  }
  const bool binary = info->family == Family::kBinary || info->family == Family::kCompare ||
                      info->family == Family::kPow;
  for (size_t j = 0; j < arity; ++j) {
    Shape shape = node.input(static_cast<size_t>(k.operands[j]))->shape;
    if (j == 1 && binary && opset < 7) {
      StatusOr<Shape> b = ops::BinaryShapeOfB(node, opset, node.input(0)->shape, shape);
      if (!b.ok()) {
        return Refuse(node, "cannot read B's shape " + ShapeToString(shape) + " against A's");
      }
      shape = *std::move(b);
    }
    if (info->family == Family::kClip && j > 0 && NumElements(shape) != 1) {
      return Refuse(node, "clips to scalar bounds only");
    }
    const Shape& read = info->family == Family::kClip && j > 0 ? Shape{} : shape;
    std::optional<std::vector<int64_t>> s = ReadStrides(read, out->shape);
    if (!s) {
      return Refuse(node, "cannot broadcast input shape " + ShapeToString(shape) + " to " +
                              ShapeToString(out->shape));
    }
    k.strides.push_back(std::move(*s));
  }
  MergeAxes(out->shape, k);
  if (k.dims.size() > static_cast<size_t>(kMaxTypedRank)) {
    return Refuse(node, "walks at most " + std::to_string(kMaxTypedRank) + " broadcast axes, not " +
                            std::to_string(k.dims.size()));
  }
  const auto is64 = [](DType d) {
    return d == DType::kInt32 || d == DType::kInt64 || d == DType::kUInt32 || d == DType::kUInt64;
  };
  k.needs_fp64 = k.output == DType::kFloat64 ||
                 std::find(k.dtypes.begin(), k.dtypes.end(), DType::kFloat64) != k.dtypes.end() ||
                 (node.op_type == "Shrink" && is64(t));
  return std::optional<TypedElementwise>(std::move(k));
}

std::string TypedKernelName(const TypedElementwise& k, size_t index) {
  return std::string(ShortName(k.output)) + "_" + Lower(k.op) + "_" + std::to_string(index) +
         "__opencl";
}

const std::string& TypedElementwisePrelude() {
  // 16-bit floats as the reference converts them (ir/dtype.cc): round to
  // nearest even, NaN kept quiet; no half arithmetic (cl_khr_fp16) needed.
  static const std::string prelude = R"CLC(
// Typed elementwise kernels (targets/opencl/typed_elementwise.cc).
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define TSL_WIDE double
#else
#define TSL_WIDE float
#endif
float tsl_typed_half_to_float(ushort h) {
  const uint sign = (uint)(h & 0x8000) << 16;
  const uint e = (h >> 10) & 0x1f;
  const uint m = h & 0x3ff;
  if (e == 0) return as_float(as_uint((float)m * 5.9604644775390625e-8f) | sign);
  if (e == 31) return as_float(sign | 0x7f800000u | (m << 13));
  return as_float(sign | ((e + 112) << 23) | (m << 13));
}
ushort tsl_typed_float_to_half(float f) {
  const uint x = as_uint(f);
  const uint sign = (x >> 16) & 0x8000;
  const uint a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return (ushort)(sign | 0x7c00 | (a > 0x7f800000u ? 0x200 : 0));
  if (a >= 0x477ff000u) return (ushort)(sign | 0x7c00);
  if (a < 0x38800000u) return (ushort)(sign | (uint)rint(as_float(a) * 16777216.0f));
  uint h = (((a >> 23) - 112) << 10) | ((a & 0x7fffff) >> 13);
  const uint rest = a & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;
  return (ushort)(sign | h);
}
float tsl_typed_bf16_to_float(ushort b) { return as_float((uint)b << 16); }
ushort tsl_typed_float_to_bf16(float f) {
  const uint x = as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (ushort)((x >> 16) | 0x40);
  return (ushort)((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}
ulong tsl_typed_ipow(ulong b, ulong k) {
  ulong r = 1;
  for (; k != 0; k >>= 1, b *= b) {
    if (k & 1) r *= b;
  }
  return r;
}
)CLC";
  return prelude;
}

std::string EmitTypedElementwise(const TypedElementwise& k, const std::string& name) {
  const size_t n = k.operands.size();
  const auto idx = [](size_t j) { return std::to_string(j); };
  std::string s;
  if (k.needs_fp64) s += "#if defined(cl_khr_fp64)\n";
  s += "__kernel void " + name + "(";
  for (size_t j = 0; j < n; ++j) {
    s += "__global const " + std::string(StorageType(k.dtypes[j])) + "* x" + idx(j) + ", int xo" +
         idx(j) + ", ";
  }
  s += "__global " + std::string(StorageType(k.output)) + "* y, int yo, int n, int8 dims";
  for (size_t j = 0; j < n; ++j) s += ", int8 s" + idx(j);
  s += ") {\n  const int i = get_global_id(0);\n  if (i >= n) return;\n";
  for (size_t j = 0; j < n; ++j) s += "  int j" + idx(j) + " = 0;\n";
  const size_t rank = k.dims.size();
  if (rank > 0) {
    s += "  int r = i;\n";
    for (size_t d = rank; d-- > 1;) {
      const std::string D = "dims.s" + idx(d);
      s += "  {\n    const int q = r / " + D + ";\n    const int c = r - q * " + D +
           ";\n    r = q;\n";
      for (size_t j = 0; j < n; ++j)
        s += "    j" + idx(j) + " += c * s" + idx(j) + ".s" + idx(d) + ";\n";
      s += "  }\n";
    }
    for (size_t j = 0; j < n; ++j) s += "  j" + idx(j) + " += r * s" + idx(j) + ".s0;\n";
  }
  const auto at = [&](size_t j) { return "x" + idx(j) + "[xo" + idx(j) + " + j" + idx(j) + "]"; };
  if (k.op == "Where") {
    s += "  y[yo + i] = " + at(0) + " ? " + at(1) + " : " + at(2) + ";\n}\n";
  } else {
    for (size_t j = 0; j < n; ++j) {
      s += "  const " + CType(k.dtypes[j]) + " a" + idx(j) + " = " + Load(k.dtypes[j], at(j)) +
           ";\n";
    }
    const Body body = OpBody(k);
    s += "  " + body.code + "  y[yo + i] = " + Convert(k.output, body.type, "v") + ";\n}\n";
  }
  if (k.needs_fp64) s += "#endif\n";
  return s;
}

std::vector<PendingLaunch> TypedElementwiseLaunches(const TypedElementwise& k,
                                                    const NodeContext& ctx,
                                                    const std::string& name) {
  const ir::Value* out = ctx.node.output(0);
  const int64_t n = NumElements(out->shape);
  if (n == 0) return {};
  const auto pad = [](const std::vector<int64_t>& v) {
    std::array<int64_t, 8> a{};
    std::copy(v.begin(), v.end(), a.begin());
    return a;
  };
  PendingLaunch l;
  l.kernel_name = name;
  l.program = KernelProgram::kSnippets;
  for (int p : k.operands) {
    const ir::Value* v = ctx.node.input(static_cast<size_t>(p));
    l.args.Tensor(ctx.ref(v));
    l.bytes += static_cast<int64_t>(v->size_bytes());
  }
  l.args.Tensor(ctx.ref(out)).Int(n).Ints(pad(k.dims));
  for (const std::vector<int64_t>& s : k.strides) l.args.Ints(pad(s));
  l.bytes += static_cast<int64_t>(out->size_bytes());
  l.geometry.dims = 1;
  l.geometry.global = {static_cast<size_t>(n), 1, 1};
  l.flops = n * static_cast<int64_t>(std::max<size_t>(k.operands.size() - 1, 1));
  return {std::move(l)};
}

Status CheckTypedKernelsRun(const std::vector<std::optional<TypedElementwise>>& typed,
                            const ir::Graph& graph, const DeviceInfo& dev) {
  bool fp64_known = false, fp64 = false;
  for (size_t i = 0; i < typed.size(); ++i) {
    if (!typed[i] || !typed[i]->needs_fp64) continue;
    if (!fp64_known) {
      cl_device_fp_config config = 0;
      const cl_int rc =
          clGetDeviceInfo(dev.device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof config, &config, nullptr);
      fp64 = rc == CL_SUCCESS && config != 0;
      fp64_known = true;
    }
    if (!fp64) {
      return tessel::Unsupported(graph.nodes()[i]->Describe() + ": the OpenCL device '" + dev.name +
                                 "' has no cl_khr_fp64, which " + typed[i]->op +
                                 " on these dtypes needs");
    }
  }
  return Status::Ok();
}

}  // namespace tessel::opencl
