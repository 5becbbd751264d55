// InferShapes: gives every value a dtype and static shape, folding constants
// on the way.
//
// Precondition: nodes are in topological order; graph inputs and constants are
// typed. Walks the nodes once; for each, runs the op's shape inference and,
// when every input is a compile-time constant and the op is foldable, runs the
// reference kernel so the outputs become constants too (this is what makes
// Shape -> Gather -> Concat -> Reshape chains static). Folded nodes stay in
// the graph; EliminateDeadNodes removes them.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::passes {

struct InferShapesOptions {
  // Results larger than this are not folded (they would bloat the model).
  int64_t max_folded_bytes = int64_t{64} << 20;
  // A graph input or node output larger than this (or whose size overflows)
  // stops the pass with ResourceExhausted, naming the value, its shape and
  // size, before anything of that size is allocated; 0: only overflow.
  int64_t max_tensor_bytes = 0;
};

Status InferShapes(ir::Graph& graph, const InferShapesOptions& options = {});

}  // namespace tessel::passes
