#include "snippets/canonicalize.h"

#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_map>

namespace tessel::snippets {

namespace {

enum class Family {
  kFloatUnary,      // float32 -> float32
  kFloatBinary,     // float32, float32 -> float32
  kFloatVariadic,   // float32... -> float32
  kFloatPredicate,  // float32 (, float32) -> bool
  kEqual,           // float32 or bool, same -> bool
  kLogic,           // bool... -> bool
  kPow,
  kClip,
  kWhere,
};

struct FusableOp {
  std::string_view op_type;
  Family family;
};

constexpr FusableOp kFusableOps[] = {
    {"Add", Family::kFloatBinary},
    {"Sub", Family::kFloatBinary},
    {"Mul", Family::kFloatBinary},
    {"Div", Family::kFloatBinary},
    {"PRelu", Family::kFloatBinary},
    {"Max", Family::kFloatVariadic},
    {"Min", Family::kFloatVariadic},
    {"Sum", Family::kFloatVariadic},
    {"Mean", Family::kFloatVariadic},
    {"Pow", Family::kPow},
    {"Clip", Family::kClip},
    {"Where", Family::kWhere},
    {"Relu", Family::kFloatUnary},
    {"LeakyRelu", Family::kFloatUnary},
    {"Elu", Family::kFloatUnary},
    {"Selu", Family::kFloatUnary},
    {"Sigmoid", Family::kFloatUnary},
    {"HardSigmoid", Family::kFloatUnary},
    {"HardSwish", Family::kFloatUnary},
    {"Tanh", Family::kFloatUnary},
    {"Erf", Family::kFloatUnary},
    {"Exp", Family::kFloatUnary},
    {"Log", Family::kFloatUnary},
    {"Sqrt", Family::kFloatUnary},
    {"Abs", Family::kFloatUnary},
    {"Neg", Family::kFloatUnary},
    {"Reciprocal", Family::kFloatUnary},
    {"Floor", Family::kFloatUnary},
    {"Ceil", Family::kFloatUnary},
    {"Round", Family::kFloatUnary},
    {"Softsign", Family::kFloatUnary},
    {"ThresholdedRelu", Family::kFloatUnary},
    {"Less", Family::kFloatPredicate},
    {"Greater", Family::kFloatPredicate},
    {"LessOrEqual", Family::kFloatPredicate},
    {"GreaterOrEqual", Family::kFloatPredicate},
    {"IsNaN", Family::kFloatPredicate},
    {"Equal", Family::kEqual},
    {"And", Family::kLogic},
    {"Or", Family::kLogic},
    {"Xor", Family::kLogic},
    {"Not", Family::kLogic},
};

const FusableOp* FindOp(std::string_view op_type) {
  for (const FusableOp& op : kFusableOps) {
    if (op.op_type == op_type) return &op;
  }
  return nullptr;
}

bool IsScalarConstant(const ir::Value* v) {
  return v && v->is_constant() && v->constant.num_elements() == 1;
}

bool AllInputs(const ir::Node& node, DType dtype) {
  for (const ir::Value* in : node.inputs) {
    if (!in || in->dtype != dtype) return false;
  }
  return !node.inputs.empty();
}

// The exponent PowerStatic takes: a constant integer in [-4, 4]. Repeated
// multiplication stays within 1.5 ulp of std::pow there.
bool StaticExponent(const ir::Value* e, float* power) {
  if (!IsScalarConstant(e)) return false;
  const double p = e->constant.GetAsDouble(0);
  if (!(p >= -4 && p <= 4) || p != std::floor(p)) return false;
  *power = static_cast<float>(p);
  return true;
}

bool FamilyAccepts(const FusableOp& op, const ir::Node& node, int opset) {
  switch (op.family) {
    case Family::kFloatUnary:
    case Family::kFloatBinary:
    case Family::kFloatVariadic:
    case Family::kFloatPredicate:
      return AllInputs(node, DType::kFloat32);
    case Family::kEqual:
      return AllInputs(node, DType::kFloat32) || AllInputs(node, DType::kBool);
    case Family::kLogic:
      return AllInputs(node, DType::kBool);
    case Family::kPow: {
      float p;
      return node.input(0) && node.input(0)->dtype == DType::kFloat32 &&
             StaticExponent(node.input(1), &p);
    }
    case Family::kClip: {
      if (!node.input(0) || node.input(0)->dtype != DType::kFloat32) return false;
      if (opset < 11) return true;
      for (size_t i = 1; i < node.inputs.size(); ++i) {
        const ir::Value* b = node.input(i);
        if (b && (!IsScalarConstant(b) || b->dtype != DType::kFloat32)) return false;
      }
      return true;
    }
    case Family::kWhere: {
      const ir::Value* c = node.input(0);
      const ir::Value* x = node.input(1);
      const ir::Value* y = node.input(2);
      return c && x && y && c->dtype == DType::kBool && x->dtype == y->dtype &&
             (x->dtype == DType::kFloat32 || x->dtype == DType::kBool);
    }
  }
  return false;
}

class Builder {
 public:
  explicit Builder(KernelIR& ir) : ir_(ir) {}

  int Emit(KOp op, std::vector<int> srcs, float a0 = 0, float a1 = 0) {
    Instr in;
    in.op = op;
    in.dst = ir_.num_values++;
    in.srcs = std::move(srcs);
    in.attr = {a0, a1};
    ir_.body.push_back(std::move(in));
    return ir_.body.back().dst;
  }
  int Scalar(float v) { return Emit(KOp::kScalar, {}, v); }
  int Parameter(int arg) {
    const int v = Emit(KOp::kParameter, {});
    ir_.body.back().arg = arg;
    return v;
  }
  void Result(int arg, int v) {
    Instr in;
    in.op = KOp::kResult;
    in.arg = arg;
    in.srcs = {v};
    ir_.body.push_back(std::move(in));
  }

 private:
  KernelIR& ir_;
};

// Emits the instructions of one node; returns its result value.
StatusOr<int> Lower(const ir::Node& node, int opset, const std::vector<int>& in, Builder& b) {
  const std::string& t = node.op_type;
  auto fold = [&](KOp op) {
    int acc = in[0];
    for (size_t k = 1; k < in.size(); ++k) acc = b.Emit(op, {acc, in[k]});
    return acc;
  };
  auto clamp01 = [&](int v) {
    return b.Emit(KOp::kClampHigh, {b.Emit(KOp::kClampLow, {v}, 0.0f)}, 1.0f);
  };
  const auto& attrs = node.attrs;
  if (t == "Add") return b.Emit(KOp::kAdd, {in[0], in[1]});
  if (t == "Sub") return b.Emit(KOp::kSub, {in[0], in[1]});
  if (t == "Mul" || t == "And") return b.Emit(KOp::kMul, {in[0], in[1]});
  if (t == "Div") return b.Emit(KOp::kDiv, {in[0], in[1]});
  if (t == "PRelu") return b.Emit(KOp::kPRelu, {in[0], in[1]});
  if (t == "Max") return fold(KOp::kMax);
  if (t == "Min") return fold(KOp::kMin);
  if (t == "Sum") return fold(KOp::kAdd);
  if (t == "Mean") {
    const int sum = fold(KOp::kAdd);
    return in.size() == 1 ? sum : b.Emit(KOp::kDiv, {sum, b.Scalar(static_cast<float>(in.size()))});
  }
  if (t == "Or") return b.Emit(KOp::kMax, {in[0], in[1]});
  if (t == "Xor") return b.Emit(KOp::kCmpNe, {in[0], in[1]});
  if (t == "Not") return b.Emit(KOp::kCmpEq, {in[0], b.Scalar(0.0f)});
  if (t == "Equal") return b.Emit(KOp::kCmpEq, {in[0], in[1]});
  if (t == "Less") return b.Emit(KOp::kCmpLt, {in[0], in[1]});
  if (t == "Greater") return b.Emit(KOp::kCmpGt, {in[0], in[1]});
  if (t == "LessOrEqual") return b.Emit(KOp::kCmpLe, {in[0], in[1]});
  if (t == "GreaterOrEqual") return b.Emit(KOp::kCmpGe, {in[0], in[1]});
  if (t == "IsNaN") return b.Emit(KOp::kCmpNe, {in[0], in[0]});
  if (t == "Where") return b.Emit(KOp::kSelect, {in[0], in[1], in[2]});
  if (t == "Pow") {
    float p = 0;
    if (!StaticExponent(node.input(1), &p)) {
      return Unsupported(node.Describe() + ": exponent is not a constant integer in [-4, 4]");
    }
    return b.Emit(KOp::kPowerStatic, {in[0]}, p);
  }
  if (t == "Relu") return b.Emit(KOp::kClampLow, {in[0]}, 0.0f);
  if (t == "Clip") {
    // Opset < 11 clamps to the attribute bounds, whose defaults are the
    // finite float limits (so -inf becomes lowest()); later opsets skip an
    // absent bound.
    int v = in[0];
    if (opset < 11) {
      constexpr float kMax = std::numeric_limits<float>::max();
      v = b.Emit(KOp::kClampLow, {v}, attrs.Float("min", -kMax));
      return b.Emit(KOp::kClampHigh, {v}, attrs.Float("max", kMax));
    }
    if (node.input(1)) v = b.Emit(KOp::kClampLow, {v}, node.input(1)->constant.data<float>()[0]);
    if (node.input(2)) v = b.Emit(KOp::kClampHigh, {v}, node.input(2)->constant.data<float>()[0]);
    return v == in[0] ? b.Emit(KOp::kCopy, {v}) : v;
  }
  if (t == "LeakyRelu") return b.Emit(KOp::kLeakyRelu, {in[0]}, attrs.Float("alpha", 0.01f));
  if (t == "Elu") return b.Emit(KOp::kElu, {in[0]}, attrs.Float("alpha", 1.0f));
  if (t == "Selu") {
    const float alpha = attrs.Float("alpha", 1.67326319217681884765625f);
    const float gamma = attrs.Float("gamma", 1.05070102214813232421875f);
    return b.Emit(KOp::kSelu, {in[0]}, gamma, gamma * alpha);
  }
  if (t == "ThresholdedRelu") {
    const int above = b.Emit(KOp::kCmpGt, {in[0], b.Scalar(attrs.Float("alpha", 1.0f))});
    return b.Emit(KOp::kSelect, {above, in[0], b.Scalar(0.0f)});
  }
  if (t == "HardSigmoid") {
    const int ax = b.Emit(KOp::kMul, {in[0], b.Scalar(attrs.Float("alpha", 0.2f))});
    return clamp01(b.Emit(KOp::kAdd, {ax, b.Scalar(attrs.Float("beta", 0.5f))}));
  }
  if (t == "HardSwish") {
    const int shifted = b.Emit(KOp::kAdd, {in[0], b.Scalar(3.0f)});
    const int gate = clamp01(b.Emit(KOp::kDiv, {shifted, b.Scalar(6.0f)}));
    return b.Emit(KOp::kMul, {in[0], gate});
  }
  if (t == "Softsign") {
    const int denom = b.Emit(KOp::kAdd, {b.Emit(KOp::kAbs, {in[0]}), b.Scalar(1.0f)});
    return b.Emit(KOp::kDiv, {in[0], denom});
  }
  static const std::pair<std::string_view, KOp> kUnary[] = {
      {"Sigmoid", KOp::kSigmoid}, {"Tanh", KOp::kTanh}, {"Erf", KOp::kErf},
      {"Exp", KOp::kExp},         {"Log", KOp::kLog},   {"Sqrt", KOp::kSqrt},
      {"Abs", KOp::kAbs},         {"Neg", KOp::kNeg},   {"Reciprocal", KOp::kReciprocal},
      {"Floor", KOp::kFloor},     {"Ceil", KOp::kCeil}, {"Round", KOp::kRound},
  };
  for (const auto& [name, op] : kUnary) {
    if (t == name) return b.Emit(op, {in[0]});
  }
  return Unsupported(node.Describe() + ": not a snippet op");
}

}  // namespace

bool IsFusable(const ir::Node& node, int opset) {
  if (!node.domain.empty() && node.domain != "ai.onnx") return false;
  const FusableOp* op = FindOp(node.op_type);
  if (!op || node.outputs.size() != 1 || !node.output(0)) return false;
  const ir::Value* out = node.output(0);
  if (!out->shape_known || out->shape.size() > static_cast<size_t>(kDomainRank) ||
      NumElements(out->shape) == 0) {
    return false;
  }
  if (out->dtype != DType::kFloat32 && out->dtype != DType::kBool) return false;
  return FamilyAccepts(*op, node, opset);
}

StatusOr<KernelIR> Canonicalize(const ir::Graph& body) {
  KernelIR ir;
  ir.name = body.name();
  Builder b(ir);
  std::unordered_map<const ir::Value*, int> ssa;
  auto add_arg = [&](const ir::Value* v, bool is_output) -> Status {
    if (v->dtype != DType::kFloat32 && v->dtype != DType::kBool) {
      return Unsupported("snippet argument '" + v->name + "' has dtype " + DTypeName(v->dtype));
    }
    ir.args.push_back(
        {.name = v->name, .dtype = v->dtype, .is_output = is_output, .shape = v->shape});
    return Status::Ok();
  };
  for (const ir::Value* in : body.inputs()) {
    TESSEL_RETURN_IF_ERROR(add_arg(in, false));
    ssa[in] = b.Parameter(static_cast<int>(ir.args.size()) - 1);
  }
  ir.num_inputs = static_cast<int>(ir.args.size());
  auto value_of = [&](const ir::Value* v) -> StatusOr<int> {
    auto it = ssa.find(v);
    if (it != ssa.end()) return it->second;
    if (!IsScalarConstant(v)) {
      return Unsupported("snippet body reads '" + v->name +
                         "', which is neither a body input nor a scalar constant");
    }
    const int s = b.Scalar(static_cast<float>(v->constant.GetAsDouble(0)));
    ssa[v] = s;
    return s;
  };
  for (const auto& node : body.nodes()) {
    if (!IsFusable(*node, body.opset_version())) {
      return Unsupported(node->Describe() + " cannot be part of a snippet");
    }
    std::vector<int> in;
    for (const ir::Value* v : node->inputs) {
      if (!v) continue;
      // Clip's bounds and Pow's exponent are attributes of the kernel op,
      // not operands.
      const bool attribute_input =
          (node->op_type == "Clip" || node->op_type == "Pow") && v != node->input(0);
      if (attribute_input) continue;
      TESSEL_ASSIGN_OR_RETURN(int s, value_of(v));
      in.push_back(s);
    }
    TESSEL_ASSIGN_OR_RETURN(int result, Lower(*node, body.opset_version(), in, b));
    ssa[node->output(0)] = result;
    ir.source_ops.push_back(node->op_type);
  }
  for (const ir::Value* out : body.outputs()) {
    TESSEL_RETURN_IF_ERROR(add_arg(out, true));
    TESSEL_ASSIGN_OR_RETURN(int s, value_of(out));
    b.Result(static_cast<int>(ir.args.size()) - 1, s);
  }
  if (static_cast<int>(ir.args.size()) > kMaxKernelArgs) {
    return Unsupported("snippet '" + ir.name + "' has " + std::to_string(ir.args.size()) +
                       " inputs and outputs; at most " + std::to_string(kMaxKernelArgs) +
                       " fit the kernel's registers");
  }
  ir.IndexScalars();
  return ir;
}

}  // namespace tessel::snippets
