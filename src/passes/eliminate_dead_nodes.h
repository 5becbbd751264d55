// EliminateDeadNodes: removes nodes whose results are not needed at run time.
//
// Precondition: InferShapes ran. A node goes if every present output is a
// compile-time constant (it was folded), or if no graph output depends on it.
// A node that returns its input unchanged goes too, its readers reading the
// input (unless its result is a graph output): a Cast to its input's own
// dtype, an Identity, a Slice of everything, an Expand or Transpose that
// keeps the shape and axes, a Concat of one input.
#pragma once

#include "ir/graph.h"

namespace tessel::passes {

void EliminateDeadNodes(ir::Graph& graph);

}  // namespace tessel::passes
