#include "targets/reference/target.h"

#include "model/compiled_model.h"

namespace tessel::targets {

std::vector<NodeKernel> ReferenceKernels(const ir::Graph& graph) {
  std::vector<NodeKernel> kernels;
  for (const auto& node : graph.nodes()) {
    kernels.push_back({"reference", ops::ScratchNeeds(*node, graph.opset_version())});
  }
  return kernels;
}

StatusOr<std::unique_ptr<ReferenceTarget>> ReferenceTarget::Create(const TargetSpec& spec) {
  if (!spec.options.empty()) {
    return InvalidArgument("the reference target has no options; got '" +
                           spec.options.begin()->first + "'");
  }
  return std::make_unique<ReferenceTarget>();
}

StatusOr<std::vector<NodeKernel>> ReferenceTarget::SelectKernels(const ir::Graph& graph) const {
  for (const auto& node : graph.nodes()) {
    if (!ops::OpRegistry::Global().Find(node->op_type, node->domain)) {
      return Unsupported(node->Describe() + ": no reference kernel for this op");
    }
  }
  return ReferenceKernels(graph);
}

StatusOr<std::unique_ptr<Executable>> ReferenceTarget::Prepare(CompiledModel& model) const {
  return std::unique_ptr<Executable>(new ReferenceExecutor(*model.graph, model.memory));
}

ReferenceExecutor::ReferenceExecutor(const ir::Graph& graph, const ir::MemoryLayout& layout)
    : graph_(graph) {
  std::vector<std::vector<ops::ScratchNeed>> scratch;
  for (const NodeKernel& k : ReferenceKernels(graph)) scratch.push_back(k.scratch);
  planned_ = BindPlannedMemory(graph, layout, scratch, /*writes_every_output=*/{});
  stats_.peak_activation_bytes = PredictPeakActivationBytes(graph);
  stats_.workspace_bytes = planned_.workspace_bytes;
}

StatusOr<std::vector<Tensor>> ReferenceExecutor::Run(const std::vector<Tensor>& inputs) {
  TESSEL_RETURN_IF_ERROR(ValidateInputs(graph_, inputs));
  planned_.BindInputs(graph_, inputs);
  for (size_t step = 0; step < graph_.nodes().size(); ++step) {
    planned_.ClearOutputs(step);
    Status s = ops::RunKernel(*planned_.schemas[step], planned_.contexts[step]);
    if (!s.ok()) return Status(s.code(), graph_.nodes()[step]->Describe() + ": " + s.message());
  }
  return planned_.CollectOutputs(graph_);
}

}  // namespace tessel::targets
