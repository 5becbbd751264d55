#include "passes/eliminate_dead_nodes.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tessel::passes {

namespace {

// Whether a node whose one output has its input 0's dtype and shape returns
// that input unchanged: a Cast to the dtype it has, an Identity, a Slice of
// everything (positive steps: GhostNet's out[:, :oup] when oup is all of
// them), an Expand to the shape it has, a Transpose that keeps every axis in
// place, a Concat of one input.
bool ReturnsItsInput(const ir::Node& n) {
  if (!n.domain.empty()) return false;
  const std::string& op = n.op_type;
  if (op == "Cast" || op == "Identity" || op == "Expand") return true;
  if (op == "Concat") return n.inputs.size() == 1;
  if (op == "Transpose") {
    const std::vector<int64_t> perm = n.attrs.Ints("perm");
    for (size_t i = 0; i < perm.size(); ++i) {
      if (perm[i] != static_cast<int64_t>(i)) return false;
    }
    return !perm.empty() || n.input(0)->shape.size() <= 1;
  }
  if (op == "Slice") {
    const ir::Value* steps = n.input(4);
    if (!steps) return true;
    if (!steps->is_constant()) return false;
    for (int64_t step : steps->constant.ToInt64Vector()) {
      if (step <= 0) return false;
    }
    return true;
  }
  return false;
}

}  // namespace

void EliminateDeadNodes(ir::Graph& graph) {
  // A node that returns its input unchanged (ReturnsItsInput: exporters
  // write Casts to the same dtype around attention's Softmax, whole Slices)
  // does nothing: its readers read the input instead, and the walk below
  // drops it. One whose result is a graph output stays. Nodes are in
  // topological order, so a chain of them resolves to its first input as it
  // goes (linear, however long the chain).
  const std::unordered_set<const ir::Value*> outputs(graph.outputs().begin(),
                                                     graph.outputs().end());
  std::unordered_map<const ir::Value*, ir::Value*> same;  // a result -> its input
  for (const auto& n : graph.nodes()) {
    ir::Value* x = n->input(0);
    const ir::Value* y = n->output(0);
    if (!x || !y || n->outputs.size() != 1 || x->dtype != y->dtype || x->shape != y->shape ||
        !x->shape_known || !y->shape_known || outputs.count(y) || !ReturnsItsInput(*n)) {
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
