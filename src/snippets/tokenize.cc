#include "snippets/tokenize.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ops/subgraph.h"
#include "snippets/assign_registers.h"
#include "snippets/canonicalize.h"
#include "snippets/lower.h"

namespace tessel::snippets {

namespace {

bool IsScalarConstant(const ir::Value* v) {
  return v->is_constant() && v->constant.num_elements() == 1;
}

// A candidate subgraph cut out of the outer graph.
struct Cut {
  std::unique_ptr<ir::Graph> body;
  std::vector<ir::Value*> inputs;   // outer values, in body-input order
  std::vector<ir::Value*> outputs;  // outer values, in body-output order
};

class Tokenizer {
 public:
  Tokenizer(ir::Graph& graph, const TokenizeOptions& options)
      : graph_(graph), options_(options), opset_(graph.opset_version()) {
    const auto& nodes = graph.nodes();
    for (size_t i = 0; i < nodes.size(); ++i) index_[nodes[i].get()] = static_cast<int>(i);
    consumers_ = graph.Consumers();
    for (const ir::Value* o : graph.outputs()) graph_outputs_.insert(o);
    group_of_.assign(nodes.size(), -1);
  }

  Status Run() {
    const auto& nodes = graph_.nodes();
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (!IsFusable(*nodes[i], opset_)) continue;
      Grow(static_cast<int>(i));
    }
    return Replace();
  }

 private:
  // Joins node `i` to the subgraphs of its producers if legal, else makes it
  // the leader of a new one (if that is legal).
  void Grow(int i) {
    std::vector<int> candidates;
    for (const ir::Value* in : graph_.nodes()[static_cast<size_t>(i)]->inputs) {
      if (!in || !in->producer) continue;
      const int g = group_of_[static_cast<size_t>(index_.at(in->producer))];
      if (g >= 0 && std::find(candidates.begin(), candidates.end(), g) == candidates.end()) {
        candidates.push_back(g);
      }
    }
    std::vector<std::vector<int>> attempts;
    if (!candidates.empty()) attempts.push_back(candidates);
    if (candidates.size() > 1) {
      for (int g : candidates) attempts.push_back({g});
    }
    for (const auto& groups : attempts) {
      std::vector<int> members = {i};
      for (int g : groups) {
        const auto& m = groups_[static_cast<size_t>(g)];
        members.insert(members.end(), m.begin(), m.end());
      }
      std::sort(members.begin(), members.end());
      if (!Legal(members)) continue;
      const int into = groups[0];
      for (int m : members) group_of_[static_cast<size_t>(m)] = into;
      groups_[static_cast<size_t>(into)] = members;
      for (size_t k = 1; k < groups.size(); ++k) groups_[static_cast<size_t>(groups[k])].clear();
      return;
    }
    // Alone it may still be illegal (too many arguments or live values).
    if (!Legal({i})) return;
    group_of_[static_cast<size_t>(i)] = static_cast<int>(groups_.size());
    groups_.push_back({i});
  }

  bool Legal(const std::vector<int>& members) {
    if (static_cast<int>(members.size()) > options_.max_ops) return false;
    if (HasCycle(members)) return false;
    Cut cut = MakeCut(members);
    if (static_cast<int>(cut.inputs.size() + cut.outputs.size()) > options_.max_args) return false;
    auto ir = LowerSubgraph(*cut.body);
    if (!ir.ok()) return false;
    for (const auto* tile : {&ir->body, &ir->scalar_body}) {
      if (!AssignRegisters(*ir, *tile, options_.max_vector_registers).ok()) return false;
    }
    return true;
  }

  // A path that leaves `members` and re-enters it: searched backwards from
  // the members' outside producers. Nodes before the first member cannot be
  // on such a path (the order is topological).
  bool HasCycle(const std::vector<int>& members) {
    const std::unordered_set<int> in_set(members.begin(), members.end());
    const int first = members.front();
    std::vector<int> stack;
    std::unordered_set<int> seen;
    auto push_producers = [&](int n) {
      for (const ir::Value* in : graph_.nodes()[static_cast<size_t>(n)]->inputs) {
        if (!in || !in->producer) continue;
        const int p = index_.at(in->producer);
        if (p >= first && seen.insert(p).second) stack.push_back(p);
      }
    };
    for (int m : members) {
      for (const ir::Value* in : graph_.nodes()[static_cast<size_t>(m)]->inputs) {
        if (!in || !in->producer) continue;
        const int p = index_.at(in->producer);
        if (!in_set.count(p) && p >= first && seen.insert(p).second) stack.push_back(p);
      }
    }
    while (!stack.empty()) {
      const int n = stack.back();
      stack.pop_back();
      if (in_set.count(n)) return true;
      push_producers(n);
    }
    return false;
  }

  Cut MakeCut(const std::vector<int>& members) const {
    const auto& nodes = graph_.nodes();
    std::unordered_set<const ir::Node*> in_set;
    for (int m : members) in_set.insert(nodes[static_cast<size_t>(m)].get());
    Cut cut;
    cut.body = std::make_unique<ir::Graph>();
    ir::Graph& body = *cut.body;
    body.set_opset_version(opset_);
    body.set_name(nodes[static_cast<size_t>(members.front())]->name);
    std::unordered_map<const ir::Value*, ir::Value*> copy;
    auto body_value = [&](ir::Value* v) {
      auto it = copy.find(v);
      if (it != copy.end()) return it->second;
      ir::Value* c = IsScalarConstant(v) ? body.AddConstant(v->name, v->constant)
                                         : body.AddValue(v->name, v->dtype, v->shape, true);
      copy[v] = c;
      return c;
    };
    for (int m : members) {
      const ir::Node& n = *nodes[static_cast<size_t>(m)];
      std::vector<ir::Value*> ins, outs;
      for (ir::Value* in : n.inputs) {
        if (!in) {
          ins.push_back(nullptr);
          continue;
        }
        const bool inside = in->producer && in_set.count(in->producer);
        if (!inside && !IsScalarConstant(in) && !copy.count(in)) {
          cut.inputs.push_back(in);
          body.inputs().push_back(body_value(in));
        }
        ins.push_back(body_value(in));
      }
      for (ir::Value* out : n.outputs) outs.push_back(out ? body_value(out) : nullptr);
      ir::Node* c = body.AddNode(n.op_type, n.name, std::move(ins), std::move(outs));
      c->domain = n.domain;
      c->attrs = n.attrs;
    }
    for (int m : members) {
      for (ir::Value* out : nodes[static_cast<size_t>(m)]->outputs) {
        if (!out) continue;
        bool used_outside = graph_outputs_.count(out) > 0;
        for (const ir::Node* c : consumers_[static_cast<size_t>(out->id)]) {
          used_outside = used_outside || !in_set.count(c);
        }
        if (!used_outside) continue;
        cut.outputs.push_back(out);
        body.outputs().push_back(copy.at(out));
      }
    }
    return cut;
  }

  Status Replace() {
    std::unordered_set<std::string> names;
    for (const auto& n : graph_.nodes()) names.insert(n->name);
    std::unordered_set<const ir::Node*> fused;
    int counter = 0;
    for (const auto& members : groups_) {
      if (members.empty()) continue;
      Cut cut = MakeCut(members);
      std::string name;
      do {
        name = "snippet_" + std::to_string(counter++);
      } while (names.count(name));
      names.insert(name);
      ir::Node* node = graph_.AddNode(ops::kSubgraphOpType, name, cut.inputs, cut.outputs);
      node->domain = ops::kTesselDomain;
      node->body = std::move(cut.body);
      for (int m : members) fused.insert(graph_.nodes()[static_cast<size_t>(m)].get());
    }
    if (fused.empty()) return Status::Ok();
    graph_.RemoveNodes([&](const ir::Node& n) { return fused.count(&n) > 0; });
    return graph_.SortTopologically();
  }

  ir::Graph& graph_;
  const TokenizeOptions options_;
  const int opset_;
  std::unordered_map<const ir::Node*, int> index_;
  std::vector<std::vector<ir::Node*>> consumers_;
  std::unordered_set<const ir::Value*> graph_outputs_;
  std::vector<int> group_of_;
  std::vector<std::vector<int>> groups_;
};

}  // namespace

Status TokenizeSnippets(ir::Graph& graph, const TokenizeOptions& options) {
  return Tokenizer(graph, options).Run();
}

}  // namespace tessel::snippets
