#include "passes/infer_shapes.h"

#include "core/resources.h"
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

// Whether `v` (typed) may exist: its size fits in 64 bits and the limit.
Status CheckTensorSize(const ir::Value& v, const ir::Node* producer, int64_t limit) {
  if (!v.shape_known) return Status::Ok();
  int64_t bytes = 0;
  const std::string what = "value '" + v.name + "'" +
                           (producer          ? " of " + producer->Describe()
                            : v.is_constant() ? std::string(" (an initializer)")
                                              : std::string(" (an input)")) +
                           " has shape " + ShapeToString(v.shape) + " of " + DTypeName(v.dtype);
  int64_t extent = 0;
  if (!CheckedByteSize(v.shape, v.dtype, &bytes, &extent)) {
    return ResourceExhausted(what + ": its dimensions multiply past 64 bits");
  }
  if (limit > 0 && bytes > limit) {
    return ResourceExhausted(what + ", " + FormatByteSize(bytes) + ": over the limit of " +
                             FormatByteSize(limit) + " for one tensor (--max-tensor-size)");
  }
  // An empty tensor's other dimensions still size loops and index tables.
  if (limit > 0 && extent > limit) {
    return ResourceExhausted(what + ": empty, but its other dimensions span " +
                             FormatByteSize(extent) + ", over the limit of " +
                             FormatByteSize(limit) + " for one tensor (--max-tensor-size)");
  }
  return Status::Ok();
}

}  // namespace

Status InferShapes(ir::Graph& graph, const InferShapesOptions& options) {
  const int opset = graph.opset_version();
  for (const ir::Value* v : graph.inputs()) {
    TESSEL_RETURN_IF_ERROR(CheckTensorSize(*v, nullptr, options.max_tensor_bytes));
  }
  for (const auto& v : graph.values()) {
    if (v->is_constant() && v->producer == nullptr)
      TESSEL_RETURN_IF_ERROR(CheckTensorSize(*v, nullptr, options.max_tensor_bytes));
  }
  for (const auto& node_ptr : graph.nodes()) {
    ir::Node& node = *node_ptr;
    TESSEL_RETURN_IF_ERROR(ops::InferNode(node, opset));
    for (const ir::Value* o : node.outputs) {
      if (o) TESSEL_RETURN_IF_ERROR(CheckTensorSize(*o, &node, options.max_tensor_bytes));
    }
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
