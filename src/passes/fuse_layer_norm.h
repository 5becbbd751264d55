// FuseLayerNorm: finds layer normalization written out in elementwise ops,
// as exporters write it before opset 17 (PyTorch's nn.LayerNorm at opset 13:
// BERT, ViT, ConvNeXt), and makes it one LayerNormalization node:
//
//   m = ReduceMean(X, trailing axes)      d = Sub(X, m)
//   v = ReduceMean(Pow(d, 2) | Mul(d, d))  s = Sqrt(Add(v, epsilon))
//   Y = Div(d, s) [* gamma] [+ beta]
//   becomes   Y = LayerNormalization(X, gamma, beta) {axis, epsilon}
//
// Only float32, keepdims=1, the same trailing axes in both means, epsilon,
// gamma and beta constants (gamma and beta of the normalized shape, leading
// 1s allowed), and every value in between read by the pattern alone and not
// a graph output. Without a gamma, the node gets a constant of ones. The
// node sits where the pattern's last node was; a target runs it as one
// kernel instead of two reductions and a chain of snippets.
//
// Precondition: InferShapes ran. Preserves the topological order; the result
// is typed.
#pragma once

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::passes {

Status FuseLayerNorm(ir::Graph& graph);

}  // namespace tessel::passes
