#include "snippets/c_emitter.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <ostream>
#include <sstream>

#include "core/check.h"

namespace tessel::snippets {

std::string CFloatLiteral(float f) {
  if (f != f) return "NAN";
  if (f == __builtin_inff()) return "INFINITY";
  if (f == -__builtin_inff()) return "(-INFINITY)";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%af", static_cast<double>(f));
  return buf;
}

std::string CCommentText(std::string text) {
  for (const std::string bad : {"*/", "/*", "??"}) {
    for (size_t at = text.find(bad); at != std::string::npos; at = text.find(bad, at + 2)) {
      text.insert(at + 1, " ");
    }
  }
  return text;
}

namespace {

std::string Literal(float f) { return CFloatLiteral(f); }

std::string V(int v) { return "v" + std::to_string(v); }

// The expression computing `in` from its sources, in `dialect`.
std::string Expression(const Instr& in, const CDialect& dialect) {
  const auto s = [&](size_t k) { return V(in.srcs[k]); };
  // A math function of the dialect: fabs, or fabsf in C99.
  const auto fn = [&](const char* name) { return std::string(name) + dialect.math_suffix + "("; };
  const std::string a0 = Literal(in.attr[0]);
  const std::string a1 = Literal(in.attr[1]);
  switch (in.op) {
    case KOp::kCopy:
    case KOp::kBroadcastMove:
      return s(0);
    case KOp::kAdd:
      return s(0) + " + " + s(1);
    case KOp::kSub:
      return s(0) + " - " + s(1);
    case KOp::kMul:
      return s(0) + " * " + s(1);
    case KOp::kDiv:
      return s(0) + " / " + s(1);
    // NaN in a wins, then NaN in b, then the larger (smaller), as src/ops.
    case KOp::kMax:
      return "isnan(" + s(0) + ") ? " + s(0) + " : (isnan(" + s(1) + ") || " + s(1) + " > " + s(0) +
             ") ? " + s(1) + " : " + s(0);
    case KOp::kMin:
      return "isnan(" + s(0) + ") ? " + s(0) + " : (isnan(" + s(1) + ") || " + s(1) + " < " + s(0) +
             ") ? " + s(1) + " : " + s(0);
    case KOp::kClampLow:
      return s(0) + " < " + a0 + " ? " + a0 + " : " + s(0);
    case KOp::kClampHigh:
      return a0 + " < " + s(0) + " ? " + a0 + " : " + s(0);
    case KOp::kAbs:
      return fn("fabs") + s(0) + ")";
    case KOp::kNeg:
      return "0.0f - " + s(0);
    case KOp::kSqrt:
      return fn("sqrt") + s(0) + ")";
    case KOp::kReciprocal:
      return "1.0f / " + s(0);
    case KOp::kFloor:
      return fn("floor") + s(0) + ")";
    case KOp::kCeil:
      return fn("ceil") + s(0) + ")";
    case KOp::kRound:
      return fn("rint") + s(0) + ")";
    case KOp::kPowerStatic:
      // OpenCL's pown; C99 has pow in double, which is what the interpreter
      // computes.
      if (dialect.one_element_per_call) {
        return "pown(" + s(0) + ", " + std::to_string(static_cast<int>(in.attr[0])) + ")";
      }
      return "(float)pow((double)" + s(0) + ", (double)" + a0 + ")";
    case KOp::kCmpEq:
      return s(0) + " == " + s(1) + " ? 1.0f : 0.0f";
    case KOp::kCmpNe:
      return s(0) + " != " + s(1) + " ? 1.0f : 0.0f";
    case KOp::kCmpLt:
      return s(0) + " < " + s(1) + " ? 1.0f : 0.0f";
    case KOp::kCmpLe:
      return s(0) + " <= " + s(1) + " ? 1.0f : 0.0f";
    case KOp::kCmpGt:
      return s(0) + " > " + s(1) + " ? 1.0f : 0.0f";
    case KOp::kCmpGe:
      return s(0) + " >= " + s(1) + " ? 1.0f : 0.0f";
    case KOp::kSelect:
      return s(0) + " != 0.0f ? " + s(1) + " : " + s(2);
    case KOp::kLeakyRelu:
      return s(0) + " < 0.0f ? " + a0 + " * " + s(0) + " : " + s(0);
    case KOp::kPRelu:
      return s(0) + " < 0.0f ? " + s(0) + " * " + s(1) + " : " + s(0);
    case KOp::kElu:
      return s(0) + " < 0.0f ? " + a0 + " * " + fn("expm1") + s(0) + ") : " + s(0);
    case KOp::kSelu:
      return s(0) + " > 0.0f ? " + a0 + " * " + s(0) + " : " + a1 + " * " + fn("expm1") + s(0) +
             ")";
    case KOp::kExp:
      return fn("exp") + s(0) + ")";
    case KOp::kLog:
      return fn("log") + s(0) + ")";
    case KOp::kErf:
      return fn("erf") + s(0) + ")";
    case KOp::kTanh:
      return fn("tanh") + s(0) + ")";
    case KOp::kSigmoid:
      return s(0) + " >= 0.0f ? 1.0f / (1.0f + " + fn("exp") + "-" + s(0) + ")) : " + fn("exp") +
             s(0) + ") / (1.0f + " + fn("exp") + s(0) + "))";
    default:
      break;
  }
  TESSEL_CHECK_MSG(false, GetOpInfo(in.op).name);
  return "";
}

// One instruction of the scalar body as a statement; `at(k)` is the element
// of argument k this element reads or writes.
void EmitInstr(const KernelIR& ir, const Instr& in, const CDialect& dialect,
               const std::function<std::string(int)>& at, std::ostream& os) {
  switch (in.op) {
    case KOp::kScalar:
      os << "const float " << V(in.dst) << " = " << Literal(in.attr[0]) << ";";
      return;
    case KOp::kScalarLoad:
    case KOp::kLoad:
    case KOp::kBroadcastLoad: {
      const KernelArg& a = ir.args[static_cast<size_t>(in.arg)];
      os << "const float " << V(in.dst) << " = "
         << (a.dtype == DType::kBool ? "(" + at(in.arg) + " != 0) ? 1.0f : 0.0f" : at(in.arg))
         << ";";
      return;
    }
    case KOp::kScalarStore:
    case KOp::kStore: {
      const KernelArg& a = ir.args[static_cast<size_t>(in.arg)];
      os << at(in.arg) << " = "
         << (a.dtype == DType::kBool
                 ? "(" + std::string(dialect.bool_type) + ")(" + V(in.srcs[0]) + " != 0.0f)"
                 : V(in.srcs[0]))
         << ";";
      return;
    }
    default:
      os << "const float " << V(in.dst) << " = " << Expression(in, dialect) << ";";
      return;
  }
}

// The domain axes above 1, outermost first.
std::vector<int> LoopAxes(const KernelIR& ir) {
  std::vector<int> dims;
  for (int d = 0; d < kDomainRank; ++d) {
    if (ir.domain[static_cast<size_t>(d)] > 1) dims.push_back(d);
  }
  return dims;
}

std::string Parameters(const KernelIR& ir, const CDialect& dialect) {
  std::string out;
  for (size_t k = 0; k < ir.args.size(); ++k) {
    const KernelArg& a = ir.args[k];
    const std::string type = a.dtype == DType::kBool ? dialect.bool_type : "float";
    out += std::string(dialect.global_space) + (a.is_output ? "" : "const ") + type + "* a" +
           std::to_string(k);
    if (dialect.one_element_per_call) out += ", int a" + std::to_string(k) + "_off";
    out += k + 1 < ir.args.size() || dialect.one_element_per_call ? ", " : "";
  }
  if (dialect.one_element_per_call) out += "int n";
  if (ir.args.empty() && !dialect.one_element_per_call) out += "void";
  return out;
}

// OpenCL: element i of the row-major domain, split into its axes.
void EmitOneElement(const KernelIR& ir, const CDialect& dialect, std::ostream& os) {
  os << "  const int i = get_global_id(0);\n";
  os << "  if (i >= n) return;\n";
  os << "  int r = i;\n";
  std::vector<int> dims = LoopAxes(ir);
  std::reverse(dims.begin(), dims.end());  // innermost first
  for (size_t j = 0; j < dims.size(); ++j) {
    const int d = dims[j];
    if (j + 1 == dims.size()) {
      os << "  const int d" << d << " = r;\n";
    } else {
      os << "  const int d" << d << " = r % " << ir.domain[static_cast<size_t>(d)]
         << "; r /= " << ir.domain[static_cast<size_t>(d)] << ";\n";
    }
  }
  for (size_t k = 0; k < ir.args.size(); ++k) {
    os << "  const int o" << k << " = a" << k << "_off";
    for (int d : dims) {
      const int64_t stride = ir.args[k].strides[static_cast<size_t>(d)];
      if (stride != 0) os << " + d" << d << " * " << stride;
    }
    os << ";\n";
  }
  const auto at = [](int k) { return "a" + std::to_string(k) + "[o" + std::to_string(k) + "]"; };
  for (const Instr& in : ir.scalar_body) {
    os << "  ";
    EmitInstr(ir, in, dialect, at, os);
    os << "\n";
  }
}

// C99: one loop per axis above 1, the innermost last; each argument indexed
// by its constant strides (1 where it is contiguous, absent where it is
// broadcast).
void EmitLoops(const KernelIR& ir, const CDialect& dialect, std::ostream& os) {
  const std::vector<int> dims = LoopAxes(ir);
  std::string indent = "  ";
  for (int d : dims) {
    os << indent << "for (long d" << d << " = 0; d" << d << " < "
       << ir.domain[static_cast<size_t>(d)] << "; ++d" << d << ") {\n";
    indent += "  ";
  }
  const auto at = [&](int k) {
    std::string index;
    for (int d : dims) {
      const int64_t stride = ir.args[static_cast<size_t>(k)].strides[static_cast<size_t>(d)];
      if (stride == 0) continue;
      index += (index.empty() ? "" : " + ") + ("d" + std::to_string(d)) +
               (stride == 1 ? "" : " * " + std::to_string(stride));
    }
    return "a" + std::to_string(k) + "[" + (index.empty() ? "0" : index) + "]";
  };
  for (const Instr& in : ir.scalar_body) {
    os << indent;
    EmitInstr(ir, in, dialect, at, os);
    os << "\n";
  }
  for (size_t j = dims.size(); j-- > 0;) {
    indent.resize(indent.size() - 2);
    os << indent << "}\n";
  }
}

}  // namespace

const CDialect& OpenClDialect() {
  static const CDialect d{"__kernel void", "__global ", "uchar", "", true};
  return d;
}

const CDialect& C99Dialect() {
  static const CDialect d{"static void", "", "unsigned char", "f", false};
  return d;
}

bool ImageSnippetShapes(const KernelIR& ir) {
  if (ir.output_shape.size() != 4 || ir.num_outputs() != 1) return false;
  for (int64_t d : ir.output_shape) {
    if (d < 1) return false;
  }
  for (const KernelArg& a : ir.args) {
    if (a.shape.size() > 4) return false;
    const size_t lead = 4 - a.shape.size();
    for (size_t d = 0; d < a.shape.size(); ++d) {
      if (a.shape[d] != 1 && a.shape[d] != ir.output_shape[lead + d]) return false;
    }
  }
  return ir.args.back().dtype == DType::kFloat32 && ir.args.back().shape == ir.output_shape;
}

std::string EmitOpenClImageKernel(const KernelIR& ir, const std::string& name,
                                  const std::vector<bool>& image_args) {
  TESSEL_CHECK(!ir.scalar_body.empty() && ImageSnippetShapes(ir));
  TESSEL_CHECK(image_args.size() == ir.args.size() && image_args.back());
  const Shape& out = ir.output_shape;
  const int64_t c4 = (out[1] + 3) / 4;
  std::ostringstream os;
  std::string from = "From kernel IR '" + ir.name + "', on NCHW4c images:";
  for (const std::string& op : ir.source_ops) from += " " + op;
  os << "/* " << CCommentText(from) << " */\n__kernel void " << name << "(";
  for (size_t k = 0; k < ir.args.size(); ++k) {
    const KernelArg& a = ir.args[k];
    const std::string ks = std::to_string(k);
    if (image_args[k]) {
      TESSEL_CHECK(a.dtype == DType::kFloat32 && a.shape.size() == 4);
      os << (a.is_output ? "__write_only" : "__read_only") << " image2d_t a" << ks << ", int a"
         << ks << "_x, int a" << ks << "_y";
    } else {
      os << "__global " << (a.is_output ? "" : "const ")
         << (a.dtype == DType::kBool ? "uchar" : "float") << "* a" << ks << ", int a" << ks
         << "_off";
    }
    os << (k + 1 < ir.args.size() ? ", " : "");
  }
  // One work item per output texel: x = w, y = (n*C4 + c4)*H + h.
  os << ") {\n"
     << "  const int w = get_global_id(0), y = get_global_id(1);\n"
     << "  if (w >= " << out[3] << " || y >= " << out[0] * c4 * out[2] << ") return;\n"
     << "  const int h = y % " << out[2] << ", c4 = (y / " << out[2] << ") % " << c4 << ", n = y / "
     << c4 * out[2] << ";\n"
     << "  const sampler_t smp = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | "
        "CLK_FILTER_NEAREST;\n";
  // Each image input's texel, read once for the four lanes; a channel
  // broadcast reads lane 0 of its texel (a single channel inside RGBA).
  const auto dims4 = [](const KernelArg& a) {
    Shape s(4 - a.shape.size(), 1);
    s.insert(s.end(), a.shape.begin(), a.shape.end());
    return s;
  };
  for (size_t k = 0; k + 1 < ir.args.size(); ++k) {
    if (!image_args[k]) continue;
    const Shape s = dims4(ir.args[k]);
    const std::string ks = std::to_string(k);
    const int64_t ac4 = (s[1] + 3) / 4;
    os << "  float t" << ks << "[4];\n  vstore4(read_imagef(a" << ks << ", smp, (int2)(a" << ks
       << "_x + " << (s[3] == 1 ? "0" : "w") << ", a" << ks << "_y + (" << (s[0] == 1 ? "0" : "n")
       << " * " << ac4 << " + " << (s[1] == 1 ? "0" : "c4") << ") * " << s[2] << " + "
       << (s[2] == 1 ? "0" : "h") << ")), 0, t" << ks << ");\n";
  }
  const size_t out_k = ir.args.size() - 1;
  os << "  float r[4] = {0.0f, 0.0f, 0.0f, 0.0f};\n"
     << "  for (int lane = 0; lane < 4 && c4 * 4 + lane < " << out[1] << "; ++lane) {\n"
     << "    const int c = c4 * 4 + lane;\n";
  const auto at = [&](int k) {
    const auto uk = static_cast<size_t>(k);
    const std::string ks = std::to_string(k);
    if (uk == out_k) return std::string("r[lane]");
    const Shape s = dims4(ir.args[uk]);
    if (image_args[uk]) return "t" + ks + (s[1] == 1 ? "[0]" : "[lane]");
    // A buffer: row-major in its own shape, broadcast axes skipped.
    std::string index = "a" + ks + "_off";
    int64_t stride = 1;
    const char* axis[4] = {"n", "c", "h", "w"};
    for (int d = 3; d >= 0; --d) {
      if (s[static_cast<size_t>(d)] != 1) {
        index += std::string(" + ") + axis[d] + " * " + std::to_string(stride);
      }
      stride *= s[static_cast<size_t>(d)];
    }
    return "a" + ks + "[" + index + "]";
  };
  for (const Instr& in : ir.scalar_body) {
    os << "    ";
    EmitInstr(ir, in, OpenClDialect(), at, os);
    os << "\n";
  }
  os << "  }\n"
     << "  write_imagef(a" << out_k << ", (int2)(a" << out_k << "_x + w, a" << out_k
     << "_y + y), vload4(0, r));\n"
     << "}\n";
  return os.str();
}

std::string EmitCFamilyKernel(const KernelIR& ir, const std::string& name,
                              const CDialect& dialect) {
  TESSEL_CHECK(!ir.scalar_body.empty());
  std::ostringstream os;
  std::string from = "From kernel IR '" + ir.name + "':";
  for (const std::string& op : ir.source_ops) from += " " + op;
  os << "/* " << CCommentText(from);
  os << " */\n"
     << dialect.function_prefix << " " << name << "(" << Parameters(ir, dialect) << ") {\n";
  if (dialect.one_element_per_call) {
    EmitOneElement(ir, dialect, os);
  } else {
    EmitLoops(ir, dialect, os);
  }
  os << "}\n";
  return os.str();
}

}  // namespace tessel::snippets
