#include "snippets/kernel_ir.h"

#include <cstdio>

#include "core/check.h"

namespace tessel::snippets {

namespace {

// Indexed by KOp. Aux counts are what x86_emitters.cc and x86_math.cc use;
// a test keeps the two in step by running every op under a register
// allocation with exactly these counts.
constexpr OpInfo kOpInfos[] = {
    {"Parameter", 0, 0, true},  {"Result", 1, 0, true},        {"Scalar", 0, 0, true},
    {"Load", 0, 0, true},       {"BroadcastLoad", 0, 0, true}, {"BroadcastMove", 1, 0, true},
    {"Store", 1, 2, true},      {"ScalarLoad", 0, 0, true},    {"ScalarStore", 1, 0, true},
    {"Copy", 1, 0, true},       {"Add", 2, 0, true},           {"Sub", 2, 0, true},
    {"Mul", 2, 0, true},        {"Div", 2, 0, true},           {"Max", 2, 1, true},
    {"Min", 2, 1, true},        {"ClampLow", 1, 1, true},      {"ClampHigh", 1, 1, true},
    {"Abs", 1, 0, true},        {"Neg", 1, 1, true},           {"Sqrt", 1, 0, true},
    {"Reciprocal", 1, 1, true}, {"Floor", 1, 0, true},         {"Ceil", 1, 0, true},
    {"Round", 1, 0, true},      {"PowerStatic", 1, 2, true},   {"CmpEq", 2, 0, true},
    {"CmpNe", 2, 0, true},      {"CmpLt", 2, 0, true},         {"CmpLe", 2, 0, true},
    {"CmpGt", 2, 0, true},      {"CmpGe", 2, 0, true},         {"Select", 3, 1, true},
    {"LeakyRelu", 1, 2, true},  {"PRelu", 2, 2, true},         {"Elu", 1, 5, false},
    {"Selu", 1, 6, false},      {"Exp", 1, 4, true},           {"Log", 1, 5, false},
    {"Erf", 1, 4, false},       {"Tanh", 1, 7, false},         {"Sigmoid", 1, 5, false},
};
static_assert(sizeof(kOpInfos) / sizeof(kOpInfos[0]) == static_cast<size_t>(KOp::kNumOps));

}  // namespace

const OpInfo& GetOpInfo(KOp op) {
  TESSEL_CHECK(op < KOp::kNumOps);
  return kOpInfos[static_cast<size_t>(op)];
}

void KernelIR::IndexScalars() {
  is_scalar_.assign(static_cast<size_t>(num_values), 0);
  scalar_value_.assign(static_cast<size_t>(num_values), 0.0f);
  for (const Instr& in : body) {
    if (in.op != KOp::kScalar) continue;
    TESSEL_CHECK(in.dst >= 0 && in.dst < num_values);
    is_scalar_[static_cast<size_t>(in.dst)] = 1;
    scalar_value_[static_cast<size_t>(in.dst)] = in.attr[0];
  }
}

void PrintInstrs(const std::vector<Instr>& body, std::ostream& os, const char* indent) {
  for (const Instr& in : body) {
    const OpInfo& info = GetOpInfo(in.op);
    os << indent;
    if (in.dst >= 0) os << "v" << in.dst << " = ";
    os << info.name;
    if (in.arg >= 0) os << " arg" << in.arg << (in.srcs.empty() ? "" : " <-");
    for (int s : in.srcs) os << " v" << s;
    const bool has_attr = in.op == KOp::kScalar || in.op == KOp::kClampLow ||
                          in.op == KOp::kClampHigh || in.op == KOp::kPowerStatic ||
                          in.op == KOp::kLeakyRelu || in.op == KOp::kElu || in.op == KOp::kSelu;
    if (has_attr) {
      char buf[64];
      if (in.op == KOp::kSelu) {
        std::snprintf(buf, sizeof buf, " [%.9g, %.9g]", in.attr[0], in.attr[1]);
      } else {
        std::snprintf(buf, sizeof buf, " [%.9g]", in.attr[0]);
      }
      os << buf;
    }
    os << "\n";
  }
}

}  // namespace tessel::snippets
