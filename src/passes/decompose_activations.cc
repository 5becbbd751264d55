#include "passes/decompose_activations.h"

#include <string>
#include <unordered_set>
#include <vector>

#include "ops/op_registry.h"

namespace tessel::passes {

namespace {

// Builds the replacement of one node: new nodes named after it, typed as it
// goes, the last one writing the node's own output.
class Builder {
 public:
  Builder(ir::Graph& graph, const ir::Node& node)
      : graph_(graph), node_(node), x_(node.inputs[0]) {}

  ir::Value* Scalar(float v) {
    return graph_.AddConstant(graph_.UniqueValueName(node_.name + "/const"),
                              Tensor::FromVector<float>({v}, {}));
  }
  // op(a, b) into a new value, or into `out` when given.
  StatusOr<ir::Value*> Op(const char* op_type, std::vector<ir::Value*> in,
                          ir::Value* out = nullptr) {
    if (!out) out = graph_.AddValue(graph_.UniqueValueName(node_.name + "/" + op_type));
    // Named after the node it replaces, which had a unique name.
    const std::string name = node_.name + "/" + op_type + "." + std::to_string(count_++);
    ir::Node* n = graph_.AddNode(op_type, name, std::move(in), {out});
    TESSEL_RETURN_IF_ERROR(ops::InferNode(*n, graph_.opset_version()));
    return out;
  }
  ir::Value* x() const { return x_; }

 private:
  ir::Graph& graph_;
  const ir::Node& node_;
  ir::Value* x_;
  int count_ = 0;
};

Status Decompose(ir::Graph& graph, ir::Node& node, ir::Value* y) {
  Builder b(graph, node);
  ir::Value* x = b.x();
  if (node.op_type == "Swish") {
    const float alpha = node.attrs.Float("alpha", 1.0f);
    ir::Value* ax = x;
    if (alpha != 1.0f) {
      TESSEL_ASSIGN_OR_RETURN(ax, b.Op("Mul", {x, b.Scalar(alpha)}));
    }
    TESSEL_ASSIGN_OR_RETURN(ir::Value * s, b.Op("Sigmoid", {ax}));
    return b.Op("Mul", {x, s}, y).status();
  }
  // Gelu
  ir::Value* inner = nullptr;
  if (node.attrs.String("approximate", "none") == "tanh") {
    TESSEL_ASSIGN_OR_RETURN(ir::Value * x2, b.Op("Mul", {x, x}));
    TESSEL_ASSIGN_OR_RETURN(ir::Value * x3, b.Op("Mul", {x2, x}));
    TESSEL_ASSIGN_OR_RETURN(ir::Value * c, b.Op("Mul", {x3, b.Scalar(0.044715f)}));
    TESSEL_ASSIGN_OR_RETURN(ir::Value * sum, b.Op("Add", {x, c}));
    TESSEL_ASSIGN_OR_RETURN(ir::Value * arg, b.Op("Mul", {sum, b.Scalar(0.7978845608028654f)}));
    TESSEL_ASSIGN_OR_RETURN(inner, b.Op("Tanh", {arg}));
  } else {
    TESSEL_ASSIGN_OR_RETURN(ir::Value * arg, b.Op("Mul", {x, b.Scalar(0.7071067811865476f)}));
    TESSEL_ASSIGN_OR_RETURN(inner, b.Op("Erf", {arg}));
  }
  TESSEL_ASSIGN_OR_RETURN(ir::Value * one_plus, b.Op("Add", {inner, b.Scalar(1.0f)}));
  TESSEL_ASSIGN_OR_RETURN(ir::Value * half_x, b.Op("Mul", {x, b.Scalar(0.5f)}));
  return b.Op("Mul", {half_x, one_plus}, y).status();
}

}  // namespace

Status DecomposeActivations(ir::Graph& graph) {
  std::vector<ir::Node*> targets;
  for (const auto& n : graph.nodes()) {
    if ((n->op_type == "Gelu" || n->op_type == "Swish") && n->domain.empty() &&
        n->inputs.size() == 1 && n->outputs.size() == 1 && n->input(0) &&
        n->input(0)->dtype == DType::kFloat32) {
      targets.push_back(n.get());
    }
  }
  if (targets.empty()) return Status::Ok();
  std::unordered_set<const ir::Node*> replaced(targets.begin(), targets.end());
  for (ir::Node* n : targets) {
    ir::Value* y = n->outputs[0];
    n->outputs[0] = nullptr;  // the decomposition's last node produces it
    TESSEL_RETURN_IF_ERROR(Decompose(graph, *n, y));
  }
  graph.RemoveNodes([&](const ir::Node& n) { return replaced.count(&n) != 0; });
  return graph.SortTopologically();
}

}  // namespace tessel::passes
