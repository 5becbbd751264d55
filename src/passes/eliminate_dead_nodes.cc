#include "passes/eliminate_dead_nodes.h"

#include <unordered_set>

namespace tessel::passes {

void EliminateDeadNodes(ir::Graph& graph) {
  // Walk backwards from the graph outputs, through nodes that must run.
  std::unordered_set<const ir::Value*> needed(graph.outputs().begin(), graph.outputs().end());
  std::unordered_set<const ir::Node*> live;
  const auto& nodes = graph.nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const ir::Node& node = **it;
    bool folded = true;
    bool used = false;
    for (const ir::Value* o : node.outputs) {
      if (!o) continue;
      folded = folded && o->is_constant();
      used = used || needed.count(o);
    }
    if (folded || !used) continue;
    live.insert(&node);
    for (const ir::Value* in : node.inputs) {
      if (in && !in->is_constant()) needed.insert(in);
    }
  }
  graph.RemoveNodes([&](const ir::Node& n) { return !live.count(&n); });
}

}  // namespace tessel::passes
