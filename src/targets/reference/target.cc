#include "targets/reference/target.h"

#include <set>

#include "model/compiled_model.h"

namespace tessel::targets {

ir::KernelChoice ReferenceChoice(const ir::Node& node) {
  // Ops whose reference kernel moves no data, or a few scalars.
  static const std::set<std::string> kFree = {"Reshape",         "Flatten", "Squeeze", "Unsqueeze",
                                              "Identity",        "Shape",   "Size",    "Constant",
                                              "ConstantOfShape", "Range",   "Dropout"};
  return {.family = ir::KernelFamily::kReference, .slow = kFree.count(node.op_type) == 0};
}

std::vector<NodeKernel> ReferenceKernels(const ir::Graph& graph) {
  std::vector<NodeKernel> kernels;
  for (const auto& node : graph.nodes()) {
    kernels.push_back({ReferenceChoice(*node), ops::ScratchNeeds(*node, graph.opset_version())});
  }
  return kernels;
}

std::vector<ValuePlacement> PlainPlacements(const ir::Graph& graph) {
  return std::vector<ValuePlacement>(graph.values().size());
}

StatusOr<std::unique_ptr<ReferenceTarget>> ReferenceTarget::Create(const TargetSpec& spec) {
  if (!spec.options.empty()) {
    return InvalidArgument("the reference target has no options; got '" +
                           spec.options.begin()->first + "'");
  }
  return std::make_unique<ReferenceTarget>();
}

StatusOr<KernelDecisions> ReferenceTarget::SelectKernels(const ir::Graph& graph) const {
  for (const auto& node : graph.nodes()) {
    if (!ops::OpRegistry::Global().Find(node->op_type, node->domain)) {
      return Unsupported(node->Describe() + ": no reference kernel for this op");
    }
  }
  return KernelDecisions{.nodes = ReferenceKernels(graph), .values = PlainPlacements(graph)};
}

StatusOr<std::unique_ptr<Executable>> ReferenceTarget::Prepare(CompiledModel& model) const {
  return std::unique_ptr<Executable>(new ReferenceExecutor(*model.graph, model.memory));
}

ReferenceExecutor::ReferenceExecutor(const ir::Graph& graph, const ir::MemoryLayout& layout)
    : Executable(graph), graph_(graph) {
  std::vector<std::vector<ops::ScratchNeed>> scratch;
  for (const NodeKernel& k : ReferenceKernels(graph)) scratch.push_back(k.scratch);
  planned_ = BindPlannedMemory(graph, layout, scratch, /*writes_every_output=*/{});
  stats_.peak_activation_bytes = PredictPeakActivationBytes(graph);
  stats_.workspace_bytes = planned_.workspace_bytes;
}

StatusOr<std::vector<Tensor>> ReferenceExecutor::RunChecked(const std::vector<Tensor>& inputs) {
  planned_.BindInputs(graph_, inputs);
  for (size_t step = 0; step < graph_.nodes().size(); ++step) {
    planned_.ClearOutputs(step);
    Status s = ops::RunKernel(*planned_.schemas[step], planned_.contexts[step]);
    if (!s.ok()) return Status(s.code(), graph_.nodes()[step]->Describe() + ": " + s.message());
  }
  return planned_.CollectOutputs(graph_);
}

}  // namespace tessel::targets
