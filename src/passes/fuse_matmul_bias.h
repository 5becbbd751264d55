// FuseMatMulBias: folds the bias add (and a residual add after it) that
// follows a MatMul by constant weights into one tessel FusedMatMul node
// (ops/matmul.cc), so that the library kernel adds them while the product
// is still in cache (oneDNN's bias argument and sum post-op) and the
// intermediate tensors leave the memory plan:
//
//   MatMul(A, W) ─► Add(·, bias) [─► Add(·, Z)]   becomes   FusedMatMul(A, W, bias[, Z])
//
// W: a float32 constant matrix [K, N]; bias: a float32 constant of N values
// along the last axis ([N], or [1, ..., 1, N]); Z: of the output's shape. A
// step is folded only when the value before it has no other reader and is
// not a graph output. Transformers write every linear layer this way (the
// projections, the feed-forward layers with their residual).
//
// Precondition: InferShapes ran. Preserves the topological order (the fused
// node takes the place of the chain's last node); the result is typed.
#pragma once

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::passes {

Status FuseMatMulBias(ir::Graph& graph);

}  // namespace tessel::passes
