// FoldBatchNorm: folds an inference BatchNormalization that follows a Conv
// into the Conv's weights and bias, at compile time:
//
//   Conv(X, W, B) ─► BatchNormalization(scale, bias, mean, var, epsilon)
//   becomes Conv(X, W', B') with, per output channel c,
//     s = scale[c] / sqrt(var[c] + epsilon)
//     W'[c] = W[c] * s,   B'[c] = (B[c] - mean[c]) * s + bias[c]   (B = 0 if absent)
//
// Only when W, B and the four BatchNormalization parameters are float32
// constants, the Conv's output has no other reader and is not a graph
// output. New constants hold W' and B' (W may be shared with other nodes);
// the old ones disappear when nothing else reads them. Models exported
// from training frameworks without their own folding (the demo model,
// torchvision in training-style export) keep a BatchNormalization per
// convolution, which otherwise runs as a separate pass over the activations
// and stands between the Conv and the activation that fuse-conv folds.
//
// Every other inference BatchNormalization of float32 with constant
// parameters (DenseNet's pre-activation BN -> ReLU -> Conv, a BN after a
// Concat) becomes three broadcasting ops over per-channel constants,
//   Y = (X - mean) * s + bias,   s = scale / sqrt(var + epsilon),
// which the snippets fuse with their neighbours into one pass, in any
// layout, on every target.
//
// Precondition: InferShapes ran. The result is typed and topologically
// sorted.
#pragma once

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::passes {

Status FoldBatchNorm(ir::Graph& graph);

}  // namespace tessel::passes
