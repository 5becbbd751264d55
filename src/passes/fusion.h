// What the fusion passes share: who reads each value (a chain of nodes may
// swallow a value only when its one reader is the next link and nobody
// outside the graph sees it), and the rewrite of a chain into one node.
#pragma once

#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace tessel::passes {

class Readers {
 public:
  explicit Readers(const ir::Graph& graph)
      : consumers_(graph.Consumers()), outputs_(graph.outputs().begin(), graph.outputs().end()) {}

  const std::vector<ir::Node*>& of(const ir::Value* v) const {
    return consumers_[static_cast<size_t>(v->id)];
  }
  bool IsGraphOutput(const ir::Value* v) const { return outputs_.count(v) != 0; }
  // The single reader of `v` when v may disappear into a fused node; else null.
  ir::Node* Sole(const ir::Value* v) const {
    if (of(v).size() != 1 || IsGraphOutput(v)) return nullptr;
    return of(v)[0];
  }

 private:
  std::vector<std::vector<ir::Node*>> consumers_;
  std::unordered_set<const ir::Value*> outputs_;
};

// Turns `host`, a node of `chain`, into the tessel node `op_type` named
// `name` that does the whole chain, and marks the chain's other nodes in
// `removed` (for Graph::RemoveNodes). The host keeps its outputs.
inline void FuseChain(const std::vector<ir::Node*>& chain, ir::Node* host, std::string op_type,
                      std::string name, AttributeMap attrs, std::vector<ir::Value*> inputs,
                      std::unordered_set<const ir::Node*>& removed) {
  host->op_type = std::move(op_type);
  host->domain = "tessel";
  host->name = std::move(name);
  host->attrs = std::move(attrs);
  host->inputs = std::move(inputs);
  for (ir::Node* n : chain) {
    if (n != host) removed.insert(n);
  }
}

}  // namespace tessel::passes
