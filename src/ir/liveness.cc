#include "ir/liveness.h"

#include <algorithm>

namespace tessel::ir {

Liveness ComputeLiveness(const Graph& graph) {
  Liveness live;
  const auto& nodes = graph.nodes();
  live.num_steps = static_cast<int64_t>(nodes.size());
  live.last_read.assign(graph.values().size(), 0);
  live.read.assign(graph.values().size(), false);
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const Value* in : nodes[i]->inputs) {
      if (!in) continue;
      live.last_read[static_cast<size_t>(in->id)] = static_cast<int64_t>(i) + 1;
      live.read[static_cast<size_t>(in->id)] = true;
    }
  }
  for (const Value* v : graph.outputs()) {
    live.last_read[static_cast<size_t>(v->id)] = std::max<int64_t>(live.num_steps, 1);
    live.read[static_cast<size_t>(v->id)] = true;
  }
  return live;
}

int64_t PeakLiveBytes(const Graph& graph, const Liveness& liveness) {
  const auto& nodes = graph.nodes();
  std::vector<bool> freed(graph.values().size(), false);
  int64_t live = 0, peak = 0;
  for (size_t step = 0; step < nodes.size(); ++step) {
    for (const Value* o : nodes[step]->outputs) {
      if (o) live += static_cast<int64_t>(o->size_bytes());
    }
    peak = std::max(peak, live);
    for (const Value* in : nodes[step]->inputs) {
      if (!in || in->is_constant()) continue;
      const auto id = static_cast<size_t>(in->id);
      if (liveness.last_read[id] == static_cast<int64_t>(step) + 1 && !freed[id] && in->producer) {
        live -= static_cast<int64_t>(in->size_bytes());
        freed[id] = true;
      }
    }
  }
  return peak;
}

}  // namespace tessel::ir
