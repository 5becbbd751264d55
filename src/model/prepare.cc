#include "model/prepare.h"

#include "model/graph_memory.h"

namespace tessel {

StatusOr<std::unique_ptr<targets::Executable>> Prepare(CompiledModel& model,
                                                       const targets::Target& target) {
  if (!target.Accepts(model.target)) {
    return InvalidArgument("'" + model.source + "' was compiled for target '" +
                           model.target.ToString() + "', not '" + target.spec().ToString() +
                           "' (compile it for this target)");
  }
  if (!model.planned_here || !(model.target == target.spec())) {
    TESSEL_ASSIGN_OR_RETURN(std::vector<targets::NodeKernel> kernels,
                            target.SelectKernels(*model.graph));
    const auto& nodes = model.graph->nodes();
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (targets::KernelFamily(kernels[i].kernel) != targets::KernelFamily(nodes[i]->kernel)) {
        return InvalidArgument("'" + model.source + "': " + nodes[i]->Describe() +
                               " was compiled for kernel '" + nodes[i]->kernel +
                               "'; this machine builds '" + kernels[i].kernel +
                               "' (recompile the model here)");
      }
    }
    Status s = CheckLayoutFitsKernels(*model.graph, model.memory, kernels);
    if (!s.ok()) {
      return InvalidArgument("'" + model.source +
                             "' has a memory plan this machine's kernels do "
                             "not fit: " +
                             s.message());
    }
  }
  return target.Prepare(model);
}

}  // namespace tessel
