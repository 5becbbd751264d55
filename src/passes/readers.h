// Who reads each value of a graph, for the fusion passes: a chain of nodes
// may swallow a value only when the value's one reader is the next link and
// nobody outside the graph sees it.
#pragma once

#include <unordered_set>
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

}  // namespace tessel::passes
