// FuseAttention: the scaled dot-product attention written out in ops becomes
// one tessel FusedAttention node (ops/attention.cc), which the targets run
// as one tiled kernel with an online softmax: the scores of all queries by
// all keys never exist in memory, nor do the copies around them.
//
//   MatMul(Q [* a], K^T [* b]) [* c | / c] [+ bias] ─► Softmax(last axis)
//     [─► Where(IsNaN(p), 0, p)] ─► MatMul(·, V)
//   becomes   FusedAttention(Q, K, V[, bias]), scale a * b * c (or / c)
//
// a, b, c: float32 scalar constants (torch's scaled_dot_product_attention
// scales both Q and K^T by the root of its scale; BERT divides the scores).
// Every value of the chain has one reader and is no graph output. Q, K^T
// and V are rank 3 or 4 of equal leading axes; the bias broadcasts to the
// scores from the right. The Where marks the node zero_masked_rows.
//
// K^T is what the graph has; the node reads K. Where K^T is a Transpose of
// K that swaps the last two axes, the node reads K; otherwise a Transpose
// swapping them back is added, and FoldTransposes merges it with the head
// Transpose that made K^T (BERT's [0, 2, 3, 1] becomes [0, 2, 1, 3], the
// heads' Transpose a target reads through strides).
//
// Grouped-query attention: K and V that repeat each key/value head
// (Unsqueeze, Expand along the new axis, Reshape to the query heads, as
// Llama's repeat_kv exports, with views in between) are replaced by the
// heads before the Expand: the node reads head h / repeats, no copy.
//
// Precondition: InferShapes ran. The graph stays sorted and typed; returns
// how many attentions were fused.
#pragma once

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::passes {

StatusOr<int> FuseAttention(ir::Graph& graph);

}  // namespace tessel::passes
