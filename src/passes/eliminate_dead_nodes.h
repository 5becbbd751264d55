// EliminateDeadNodes: removes nodes whose results are not needed at run time.
//
// Precondition: InferShapes ran. A node goes if every present output is a
// compile-time constant (it was folded), or if no graph output depends on it.
// A Cast to its input's own dtype goes too, its readers reading the input
// (unless its result is a graph output).
#pragma once

#include "ir/graph.h"

namespace tessel::passes {

void EliminateDeadNodes(ir::Graph& graph);

}  // namespace tessel::passes
