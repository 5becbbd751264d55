// FuseChannelShuffle: rewrites ShuffleNet's channel shuffle, written in ONNX
// as a chain of copies, into one tessel ChannelShuffle node (ops/tensor.cc)
// that moves each element once:
//
//   Concat(X_0..X_{G-1}, axis 1) ─► Reshape [N, G, C, ...] ─► Transpose (1 2)
//     ─► Reshape [N, G*C, ...] ─► Slice, ..., Slice (equal parts along axis 1)
//
// becomes ChannelShuffle(X_0..X_{G-1}) with one output per Slice, in channel
// order, or a single output when the shuffled tensor is read whole (or by
// anything but such Slices). The chain is rewritten only when every value
// inside it has its one reader in the chain and is not a graph output.
// Exported by PyTorch's ShuffleNetV2 (torchvision) in exactly this form;
// in channels last, it is one gather pass with no reorder around it.
//
// Precondition: InferShapes ran. Preserves the topological order (the
// fused node takes the Concat's place); the result is typed.
#pragma once

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::passes {

Status FuseChannelShuffle(ir::Graph& graph);

}  // namespace tessel::passes
