#include "passes/eliminate_dead_nodes.h"

#include <unordered_map>
#include <unordered_set>

namespace tessel::passes {

void EliminateDeadNodes(ir::Graph& graph) {
  // A Cast to the dtype its input already has (exporters write them around
  // attention's Softmax) does nothing: its readers read the input instead,
  // and the walk below drops it. One whose result is a graph output stays.
  // Nodes are in topological order, so a chain of such Casts resolves to
  // its first input as it goes (linear, however long the chain).
  const std::unordered_set<const ir::Value*> outputs(graph.outputs().begin(),
                                                     graph.outputs().end());
  std::unordered_map<const ir::Value*, ir::Value*> same;  // a Cast's result -> what it casts
  for (const auto& n : graph.nodes()) {
    ir::Value* x = n->input(0);
    const ir::Value* y = n->output(0);
    if (n->op_type != "Cast" || !n->domain.empty() || !x || !y || n->outputs.size() != 1 ||
        x->dtype != y->dtype || x->shape != y->shape || outputs.count(y)) {
      continue;
    }
    const auto it = same.find(x);
    same[y] = it == same.end() ? x : it->second;
  }
  if (!same.empty()) {
    for (const auto& reader : graph.nodes()) {
      for (ir::Value*& in : reader->inputs) {
        const auto it = same.find(in);
        if (it != same.end()) in = it->second;
      }
    }
  }
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
