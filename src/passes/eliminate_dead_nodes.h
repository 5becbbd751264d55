// EliminateDeadNodes: removes nodes whose results are not needed at run time.
//
// Precondition: InferShapes ran. A node goes if every present output is a
// compile-time constant (it was folded), or if no graph output depends on it.
#pragma once

#include "ir/graph.h"

namespace tessel::passes {

void EliminateDeadNodes(ir::Graph& graph);

}  // namespace tessel::passes
