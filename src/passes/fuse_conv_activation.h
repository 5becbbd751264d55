// FuseConvActivation: folds what follows a float32 Conv into one tessel
// FusedConv node (domain "tessel", ops/nn_conv.cc), so that a library
// kernel applies it as post-ops while the output is still in cache, and the
// intermediate tensors disappear from the memory plan:
//
//   Conv ─► Add(·, Z) ─► activation      becomes   FusedConv(X, W, B, Z) {activation}
//
// each of the Add and the activation optional, in that order. The
// activation is Relu, Clip (constant bounds), LeakyRelu, Sigmoid,
// HardSigmoid, HardSwish, or Swish as exporters write it, Mul(v,
// Sigmoid(v)) with v read by those two only (EfficientNet's SiLU). A step
// is folded only when the value before it has no other reader and is not a
// graph output; the Add only when Z has the output's dtype and shape (no
// broadcasting). The fused node takes the place of the last node of the
// chain, so Z is computed before it. The activation is written with
// ops::SetFusedActivation (ops/fused_activation.h: names, parameters and
// their defaults), which every FusedConv kernel reads back.
//
// Precondition: InferShapes ran (shapes and constants are known). Preserves
// the topological order; the result is typed.
#pragma once

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::passes {

Status FuseConvActivation(ir::Graph& graph);

}  // namespace tessel::passes
