// DecomposeActivations: rewrites the activations ONNX added as ops of their
// own into the elementwise ops they are made of, so the snippets fuse them
// with their neighbours and every target runs them (the form the
// TorchScript exporter writes; the dynamo exporter writes the ops):
//
//   Gelu(x)                  -> 0.5 * x * (1 + Erf(x / sqrt(2)))
//   Gelu(x, approximate=tanh) -> 0.5 * x * (1 + Tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
//   Swish(x, alpha)          -> x * Sigmoid(alpha * x)
//
// float32 only (what the snippets fuse); other dtypes keep the op and its
// reference kernel. Precondition: InferShapes ran. The result is typed and
// topologically sorted (new nodes take the place of the op they replace
// where nothing else becomes ready earlier).
#pragma once

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::passes {

Status DecomposeActivations(ir::Graph& graph);

}  // namespace tessel::passes
