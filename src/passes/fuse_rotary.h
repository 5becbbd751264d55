// FuseRotary: the rotary position embedding as the exporters write it out
// becomes one tessel Rotary node (ops/attention.h), which reads X once
// instead of slicing, negating and concatenating its halves:
//
//   Add(Mul(x, cos), Mul(rot(x), sin))       becomes   Rotary(x, cos, sin)
//   rot(x) = Concat(Neg(Slice(x, R/2:R)), Slice(x, 0:R/2))           (rotate_half:
//            Llama, Qwen, Gemma, Phi, ModernBERT)
//   rot(x) = Reshape(Concat(Unsqueeze(Neg(Slice(x, 1::2))),
//                           Unsqueeze(Slice(x, 0::2))), x's shape)   (interleaved: EVA-02)
//
// the Slices on the last axis, the Concats on it (the interleaved one on a
// new last axis), Mul and Add either way round. A partial rotation (Phi:
// x = Slice(X, 0:R), the rest Slice(X, R:) concatenated after the
// embedding) becomes one node of rotary_dim R over X. cos and sin are any
// float32 values that broadcast to x. Prefix tokens left out of the rotation
// (EVA-02's class token: the first P rows of X along the sequence sliced off
// and concatenated back before the embedded rest) join the node when cos
// and sin are constants: rows of cos 1 and sin 0 are put before theirs.
// Every value of the chain has one
// reader and is no graph output, but x, which only the chain may read when
// it is a Slice of X.
//
// Precondition: InferShapes ran. The graph stays sorted and typed; returns
// how many embeddings were fused.
#pragma once

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::passes {

StatusOr<int> FuseRotary(ir::Graph& graph);

}  // namespace tessel::passes
