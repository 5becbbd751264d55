// VerifyGraph: the IR's brute-force checker, run between compiler stages in
// debug and test builds and on every loaded compiled model.
//
// Checks: unique value and node names; every node input is a graph input, a
// constant, or produced by an earlier node; producers agree with outputs;
// graph outputs are produced or constant; with `require_types`, every value
// in use has a dtype and static shape, and constants match them.
#pragma once

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::ir {

Status VerifyGraph(const Graph& graph, bool require_types = true);

}  // namespace tessel::ir
