// The Subgraph op (domain "tessel"): a fused region of the graph, produced by
// snippets tokenization, that owns a body Graph. Its inputs map one to one to
// the body's inputs and its outputs to the body's outputs.
//
// The reference kernel interprets the body with the reference kernels of its
// nodes, so every executor (and constant folding) can run a Subgraph without
// a code generator; the CPU target runs a JIT-compiled kernel instead, and
// the OpenCL target an OpenCL C kernel emitted from the same kernel IR.
#pragma once

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::ops {

inline constexpr const char* kSubgraphOpType = "Subgraph";
inline constexpr const char* kTesselDomain = "tessel";

bool IsSubgraph(const ir::Node& node);

// Checks a Subgraph node against its body: a body exists and verifies, every
// body op is registered and its shape inference accepts it, inputs and
// outputs match the body's in count, dtype and shape. Used by the op's infer
// and when a compiled model is loaded.
Status ValidateSubgraph(const ir::Node& node, int opset);

}  // namespace tessel::ops
