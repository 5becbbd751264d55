// What the fusion passes share: who reads each value (a chain of nodes may
// swallow a value only when its one reader is the next link and nobody
// outside the graph sees it), and the rewrite of a chain into one node.
#pragma once

#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/check.h"
#include "ir/graph.h"

namespace tessel::passes {

// Whether `n` is the default-domain op `op_type` with one output.
inline bool IsOnnxOp(const ir::Node* n, const char* op_type) {
  return n && n->domain.empty() && n->op_type == op_type && n->outputs.size() == 1 &&
         n->output(0) != nullptr;
}

// A new int64 constant holding `shape`: a Reshape's second input.
inline ir::Value* ShapeConstant(ir::Graph& graph, const std::string& name, const Shape& shape) {
  return graph.AddConstant(
      graph.UniqueValueName(name),
      Tensor::FromVector<int64_t>(std::vector<int64_t>(shape.begin(), shape.end()),
                                  {static_cast<int64_t>(shape.size())}));
}

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

// Rewrites chains of nodes into one tessel node each. A pass looks its
// readers up once, before its first rewrite, so they go stale as it rewrites:
// a node already absorbed into a fused node, or turned into one, must not
// join a second chain (two convolutions meeting at one residual Add, as in a
// projection shortcut, both see that Add as their sole reader), or the
// second rewrite would read a value the first one removed.
class ChainFusion {
 public:
  // Whether `node` is part of a chain fused before.
  bool Taken(const ir::Node* node) const { return taken_.count(node) != 0; }

  // Turns `host`, a node of `chain`, into the tessel node `op_type` named
  // `name` that does the whole chain; the chain's other nodes go at Finish.
  // The host keeps its outputs. No node of `chain` may be Taken.
  void Fuse(const std::vector<ir::Node*>& chain, ir::Node* host, std::string op_type,
            std::string name, AttributeMap attrs, std::vector<ir::Value*> inputs) {
    for (ir::Node* n : chain) TESSEL_CHECK_MSG(!Taken(n), "a node joins two fused chains");
    host->op_type = std::move(op_type);
    host->domain = "tessel";
    host->name = std::move(name);
    host->attrs = std::move(attrs);
    host->inputs = std::move(inputs);
    for (ir::Node* n : chain) taken_.insert(n);
    taken_.insert(host);
    for (ir::Node* n : chain) {
      if (n != host) removed_.insert(n);
    }
  }

  // Removes the nodes the fused ones absorbed.
  void Finish(ir::Graph& graph) const {
    graph.RemoveNodes([&](const ir::Node& n) { return removed_.count(&n) != 0; });
  }

 private:
  std::unordered_set<const ir::Node*> taken_;
  std::unordered_set<const ir::Node*> removed_;
};

}  // namespace tessel::passes
