// The activation a fused node (tessel's FusedConv, made by
// passes/fuse_conv_activation) applies to its result: one typed value,
// parsed from the node's attributes here and only here. The pass writes it
// with SetFusedActivation; the reference kernel (ops/nn_conv.cc), oneDNN's
// post-ops (targets/cpu/onednn_conv.cc) and the OpenCL epilogue
// (targets/opencl/op_launches.cc, whose kernel compares with the
// TESSEL_ACT_* codes of ActivationCDefines) read it with
// ParseFusedActivation.
//
// On the node, as attributes:
//
//   activation        absent, "" or "none" (kNone), or "Relu", "Clip",
//                     "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish",
//                     "Swish"
//   activation_min    Clip's lower bound   (default -FLT_MAX: none)
//   activation_max    Clip's upper bound   (default FLT_MAX: none)
//   activation_alpha  LeakyRelu's slope    (default 0.01),
//                     HardSigmoid's alpha  (default 0.2)
//   activation_beta   HardSigmoid's beta   (default 0.5)
//
// Each computes what the ONNX op of its name computes; Swish is
// v * Sigmoid(v), HardSwish v * HardSigmoid(v) with alpha 1/6, beta 1/2.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::ops {

// The integer value is the code the OpenCL epilogue receives
// (ActivationCDefines writes them for the kernel source): any order works,
// but kNone stays 0.
enum class ActivationKind : int {
  kNone = 0,
  kRelu,
  kClip,
  kLeakyRelu,
  kSigmoid,
  kHardSigmoid,
  kHardSwish,
  kSwish,
};

// Every kind, kNone first: for tables and tests that cover them all.
inline constexpr ActivationKind kActivationKinds[] = {
    ActivationKind::kNone,      ActivationKind::kRelu,    ActivationKind::kClip,
    ActivationKind::kLeakyRelu, ActivationKind::kSigmoid, ActivationKind::kHardSigmoid,
    ActivationKind::kHardSwish, ActivationKind::kSwish,
};

// A kind and its two parameters, which mean, by kind:
//   kClip         alpha = min, beta = max (oneDNN's eltwise_clip convention)
//   kLeakyRelu    alpha = slope for v < 0
//   kHardSigmoid  max(0, min(1, alpha * v + beta))
//   others        none; both 0
struct FusedActivation {
  ActivationKind kind = ActivationKind::kNone;
  float alpha = 0;
  float beta = 0;

  bool operator==(const FusedActivation&) const = default;
};

// `kind` with the defaults of its parameters (the table above).
FusedActivation DefaultActivation(ActivationKind kind);

// The attribute's value ("Relu", ...); "none" for kNone, which
// SetFusedActivation writes by leaving the attribute out.
const char* ActivationName(ActivationKind kind);

// The activation of a fused `node`, its parameters defaulted where the node
// leaves them out. An unknown name is InvalidArgument naming the node and
// listing the known ones:
//   FusedConv 'c1': activation 'Gelu'; supported: none, Relu, Clip, ...
StatusOr<FusedActivation> ParseFusedActivation(const ir::Node& node);

// Writes `activation` into `attrs` as ParseFusedActivation reads it: the
// name (nothing for kNone) and the parameters its kind has.
void SetFusedActivation(AttributeMap& attrs, const FusedActivation& activation);

// y = activation(y), elementwise, in place: the reference.
void ApplyActivation(const FusedActivation& activation, std::span<float> y);
void ApplyActivation(const FusedActivation& activation, std::span<double> y);

// "#define TESSEL_ACT_NONE 0\n#define TESSEL_ACT_RELU 1\n...": the codes of
// every kind (static_cast<int>(kind)) for a C-family kernel source.
std::string ActivationCDefines();

}  // namespace tessel::ops
