#include "passes/infer_shapes.h"

#include "ops/op_registry.h"

namespace tessel::passes {

namespace {

// Ops whose output holds input 0's elements unchanged, in the same order.
bool KeepsElements(const ir::Node& node) {
  return ops::IsView(node) && node.outputs[0] && node.input(0) &&
         node.outputs[0]->dtype == node.input(0)->dtype;
}

bool AllInputsConstant(const ir::Node& node) {
  for (const ir::Value* in : node.inputs) {
    if (in && !in->is_constant()) return false;
  }
  return true;
}

}  // namespace

Status InferShapes(ir::Graph& graph, const InferShapesOptions& options) {
  const int opset = graph.opset_version();
  for (const auto& node_ptr : graph.nodes()) {
    ir::Node& node = *node_ptr;
    TESSEL_RETURN_IF_ERROR(ops::InferNode(node, opset));
    bool all_outputs_known = true;
    int64_t out_bytes = 0;
    for (const ir::Value* o : node.outputs) {
      if (!o) continue;
      all_outputs_known = all_outputs_known && o->is_constant();
      out_bytes += static_cast<int64_t>(o->size_bytes());
    }
    const ops::OpSchema* schema = ops::OpRegistry::Global().Find(node.op_type, node.domain);
    if (all_outputs_known || !schema->foldable || !AllInputsConstant(node) ||
        out_bytes > options.max_folded_bytes) {
      continue;
    }
    if (KeepsElements(node)) {
      // Shares the input's storage: models repeat weights through Identity
      // (one per layer, as exporters write shared parameters), and a copy
      // each would multiply their memory.
      node.outputs[0]->constant = node.input(0)->constant.Reshaped(node.outputs[0]->shape);
      continue;
    }
    std::vector<const Tensor*> inputs;
    for (const ir::Value* in : node.inputs) inputs.push_back(in ? &in->constant : nullptr);
    TESSEL_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, ops::EvaluateNode(node, opset, inputs));
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i]) node.outputs[i]->constant = std::move(outputs[i]);
    }
  }
  return Status::Ok();
}

}  // namespace tessel::passes
