// ReparameterizeBranches: structural re-parameterization, as RepVGG,
// MobileOne and RepViT blocks are folded for inference. Exported as
// trained, such a block runs several convolutions of one input in parallel
// and sums them with an identity branch (a BatchNormalization of the input
// alone); the sum of convolutions is one convolution:
//
//   x ─┬─ Conv 3x3 (W3, B3) ─┐
//      ├─ Conv 1x1 (W1, B1) ─┼─ Add ─ Add ─► y     becomes   x ─ Conv 3x3 (W', B') ─► y
//      └─ (x - m) * s + b ───┘
//
//   W' = W3 + W1 zero-padded to 3x3 + s at the centre of each output
//   channel's own input channel,   B' = B3 + B1 + (b - m * s)
//
// Matched after FoldBatchNorm, so that a branch's Conv -> BatchNormalization
// is one Conv and the identity branch is FoldBatchNorm's per-channel
// (x - mean) * factor + bias (or x itself). The terms of a tree of Adds
// (each inner Add read only by the next) are taken when every term is:
//   - a Conv of x, read only by the tree: float32 constant weights (and
//     bias) of one group count and stride, dilations 1, no auto_pad, odd
//     kernel sizes padded by half on every side (so that every branch
//     samples around the same centre);
//   - or the identity, when the convolutions keep the channel count and
//     stride 1;
//   - or a float32 constant of one value, or one per channel ([C, 1, 1]
//     or [1, C, 1, 1]: MobileOne adds a 0 where a block has no identity),
//     which joins the bias;
// at least one Conv and two terms, of one shape (no broadcasting). When a
// tree has a term that is none of these (a residual from elsewhere), the
// trees right under its root are tried on their own. The
// result differs from the branches' only by rounding: the sum of products
// is the same, in another order.
//
// Then a 1x1 convolution (stride 1, no padding, one group) read straight
// after a convolution (one group) whose output nothing else reads is folded
// into it, when that costs no more multiply-adds than the two (O output,
// M middle and C input channels, a k-tap kernel: O*C*k <= M*C*k + O*M):
//
//   W'[o] = sum over m of W1x1[o, m] * W[m],   B'[o] = sum W1x1[o, m] * B[m] + B1x1[o]
//
// exact in real arithmetic, since the zero padding of the first stays zero
// through the linear second.
//
// Precondition: InferShapes ran. The result is typed and sorted.
#pragma once

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::passes {

// How many blocks and chains were folded (each a tree of Adds, or a 1x1
// after a convolution, become one Conv).
StatusOr<int> ReparameterizeBranches(ir::Graph& graph);

// MergeMixedConvs: MixNet's mixed-kernel convolutions (MixConv, and its
// grouped pointwise ones) split the channels, run a convolution on each
// part and concatenate the results; each part's convolution is a set of
// groups of one convolution:
//
//   x ─ Split ─┬─ Conv 3x3 ─┐
//   (channels) ├─ Conv 5x5 ─┼─ Concat ─► y   becomes   x ─ Conv 7x7 (groups of all parts) ─► y
//              └─ Conv 7x7 ─┘ (channels)
//
// the kernels zero-padded to the largest (centred), weights and biases
// concatenated along the output channels: the same sums of products, with
// no Split or Concat copy (in MixNet-S they were a third of the run, the
// copies of short channel rows). Taken when a Concat along axis 1 of
// float32 4-D tensors takes convolutions read by nothing else (odd kernels
// padded by half, dilations 1, constant weights; one stride; the same
// input and output channels per group: depthwise parts of one multiplier,
// or dense ones of one size), each of a part of one x's channels read by
// nothing else, in order: the outputs of one Split along axis 1, or Slices
// of consecutive channel ranges covering x (torch.export's torch.split).
// Runs before FoldBatchNorm, so that the BatchNormalization after the
// Concat folds into the merged convolution.
// Precondition: InferShapes ran. The result is typed and sorted. Returns
// how many were merged.
StatusOr<int> MergeMixedConvs(ir::Graph& graph);

}  // namespace tessel::passes
