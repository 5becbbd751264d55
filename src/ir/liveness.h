// When every value of a scheduled graph is live, from the node order (the
// schedule): node i runs at step i.
//
//   ir::Liveness live = ir::ComputeLiveness(graph);
//   live.last_read[v->id]   // one past the last step that reads v
//
// A graph output lives to the end (num_steps, at least 1); a value nobody
// reads has last_read 0 (the memory plan gives it the step that produces it).
// Not saved in a .tsl: the plan-memory stage computes it, and so do the
// checks of a plan read from a file and the peak statistic (PeakLiveBytes).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace tessel::ir {

struct Liveness {
  int64_t num_steps = 0;
  std::vector<int64_t> last_read;  // by value id
  std::vector<bool> read;          // by value id: read by a node, or a graph output
};

Liveness ComputeLiveness(const Graph& graph);

// The largest total of intermediate and output tensor bytes alive at once
// when every tensor is freed after its last reader (no plan, no in-place
// reuse): the baseline a memory plan is measured against.
int64_t PeakLiveBytes(const Graph& graph, const Liveness& liveness);

}  // namespace tessel::ir
