#include "ops/fused_activation.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <iterator>

#include "core/check.h"

namespace tessel::ops {

namespace {

constexpr char kActivationAttr[] = "activation";

// One row per kind, in enum order: the names (attribute value, C macro
// suffix), the attributes that hold alpha and beta (null: the kind has no
// such parameter) and their defaults.
struct KindInfo {
  ActivationKind kind;
  const char* name;
  const char* macro;
  const char* alpha_attr;
  const char* beta_attr;
  float alpha;
  float beta;
};

constexpr KindInfo kKinds[] = {
    {ActivationKind::kNone, "none", "NONE", nullptr, nullptr, 0, 0},
    {ActivationKind::kRelu, "Relu", "RELU", nullptr, nullptr, 0, 0},
    {ActivationKind::kClip, "Clip", "CLIP", "activation_min", "activation_max", -FLT_MAX, FLT_MAX},
    {ActivationKind::kLeakyRelu, "LeakyRelu", "LEAKY_RELU", "activation_alpha", nullptr, 0.01f, 0},
    {ActivationKind::kSigmoid, "Sigmoid", "SIGMOID", nullptr, nullptr, 0, 0},
    {ActivationKind::kHardSigmoid, "HardSigmoid", "HARD_SIGMOID", "activation_alpha",
     "activation_beta", 0.2f, 0.5f},
    {ActivationKind::kHardSwish, "HardSwish", "HARD_SWISH", nullptr, nullptr, 0, 0},
    {ActivationKind::kSwish, "Swish", "SWISH", nullptr, nullptr, 0, 0},
};
static_assert(std::size(kKinds) == std::size(kActivationKinds));

constexpr bool TableInEnumOrder() {
  for (size_t i = 0; i < std::size(kKinds); ++i) {
    if (kKinds[i].kind != kActivationKinds[i] || static_cast<size_t>(kKinds[i].kind) != i) {
      return false;
    }
  }
  return true;
}
static_assert(TableInEnumOrder(), "kKinds and kActivationKinds list the kinds in enum order");

const KindInfo& Info(ActivationKind kind) {
  const auto i = static_cast<size_t>(kind);
  TESSEL_CHECK(i < std::size(kKinds));
  return kKinds[i];
}

template <typename T>
void Apply(const FusedActivation& a, std::span<T> y) {
  switch (a.kind) {
    case ActivationKind::kNone:
      return;
    case ActivationKind::kRelu:
      for (T& v : y) v = std::max(v, T(0));
      return;
    case ActivationKind::kClip: {
      const T lo = static_cast<T>(a.alpha), hi = static_cast<T>(a.beta);
      for (T& v : y) v = std::min(std::max(v, lo), hi);
      return;
    }
    case ActivationKind::kLeakyRelu: {
      const T alpha = static_cast<T>(a.alpha);
      for (T& v : y) v = v < T(0) ? alpha * v : v;
      return;
    }
    case ActivationKind::kSigmoid:
    case ActivationKind::kSwish: {
      // As the Sigmoid kernel computes it (elementwise.cc), split at 0.
      auto sigmoid = [](T x) {
        return x >= 0 ? T(1) / (T(1) + std::exp(-x)) : std::exp(x) / (T(1) + std::exp(x));
      };
      if (a.kind == ActivationKind::kSwish) {
        for (T& v : y) v = v * sigmoid(v);
      } else {
        for (T& v : y) v = sigmoid(v);
      }
      return;
    }
    case ActivationKind::kHardSigmoid: {
      const T alpha = static_cast<T>(a.alpha), beta = static_cast<T>(a.beta);
      for (T& v : y) v = std::max(T(0), std::min(T(1), alpha * v + beta));
      return;
    }
    case ActivationKind::kHardSwish:
      for (T& v : y) v *= std::max(T(0), std::min(T(1), (v + 3) / 6));
      return;
  }
  TESSEL_CHECK_MSG(false, "every ActivationKind is handled");
}

}  // namespace

FusedActivation DefaultActivation(ActivationKind kind) {
  const KindInfo& info = Info(kind);
  return {.kind = kind, .alpha = info.alpha, .beta = info.beta};
}

const char* ActivationName(ActivationKind kind) { return Info(kind).name; }

StatusOr<FusedActivation> ParseFusedActivation(const ir::Node& node) {
  const std::string name = node.attrs.String(kActivationAttr, "");
  if (name.empty()) return DefaultActivation(ActivationKind::kNone);
  for (const KindInfo& info : kKinds) {
    if (name != info.name) continue;
    FusedActivation a = DefaultActivation(info.kind);
    if (info.alpha_attr) a.alpha = node.attrs.Float(info.alpha_attr, a.alpha);
    if (info.beta_attr) a.beta = node.attrs.Float(info.beta_attr, a.beta);
    return a;
  }
  std::string known;
  for (const KindInfo& info : kKinds) known += (known.empty() ? "" : ", ") + std::string(info.name);
  return InvalidArgument(node.Describe() + ": activation '" + name + "'; supported: " + known);
}

void SetFusedActivation(AttributeMap& attrs, const FusedActivation& activation) {
  const KindInfo& info = Info(activation.kind);
  if (activation.kind == ActivationKind::kNone) {
    attrs.Erase(kActivationAttr);
    return;
  }
  attrs.Set(kActivationAttr, std::string(info.name));
  if (info.alpha_attr) attrs.Set(info.alpha_attr, activation.alpha);
  if (info.beta_attr) attrs.Set(info.beta_attr, activation.beta);
}

void ApplyActivation(const FusedActivation& activation, std::span<float> y) {
  Apply(activation, y);
}
void ApplyActivation(const FusedActivation& activation, std::span<double> y) {
  Apply(activation, y);
}

std::string ActivationCDefines() {
  std::string out;
  for (const KindInfo& info : kKinds) {
    out += "#define TESSEL_ACT_" + std::string(info.macro) + " " +
           std::to_string(static_cast<int>(info.kind)) + "\n";
  }
  return out;
}

}  // namespace tessel::ops
