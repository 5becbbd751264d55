// PlanMemory: the plan-memory stage. The graph's buffers (every tensor
// between and inside nodes, the kernels' scratch, constants; see
// model/graph_memory.h for their lifespans) go to a planner of src/memory
// as one problem, and its values in a texture scope to the 2D planner
// (memory/texture_plan.h); both plans become the model's ir::MemoryLayout.
// Precondition: the graph is typed, verified and final (no pass runs after
// this one: value ids and node order are the layout's keys).
#pragma once

#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "ir/liveness.h"
#include "ir/memory_layout.h"
#include "model/graph_memory.h"
#include "model/target.h"

namespace tessel {

// The stage.
StatusOr<ir::MemoryLayout> PlanMemory(const ir::Graph& graph, const ir::Liveness& liveness,
                                      const std::vector<targets::NodeKernel>& kernels,
                                      const MemoryOptions& options);
StatusOr<ir::MemoryLayout> PlanMemory(const ir::Graph& graph,
                                      const std::vector<targets::NodeKernel>& kernels,
                                      const MemoryOptions& options);

}  // namespace tessel
