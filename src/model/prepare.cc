#include "model/prepare.h"

#include "model/graph_memory.h"

namespace tessel {

namespace {

// The decisions recorded in `model` against those the target takes here,
// field by field: every node's kernel (family, implementation, variant) and
// every value's layout and storage scope.
Status CheckDecisions(const CompiledModel& model, const targets::KernelDecisions& here) {
  const auto& nodes = model.graph->nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::KernelChoice& recorded = nodes[i]->kernel;
    const ir::KernelChoice& built = here.nodes[i].kernel;
    if (!recorded.SameDecision(built)) {
      return InvalidArgument("'" + model.source + "': " + nodes[i]->Describe() +
                             " was compiled for kernel '" + recorded.ToString() +
                             "'; this machine builds '" + built.ToString() +
                             "' (recompile the model here)");
    }
  }
  for (const auto& v : model.graph->values()) {
    const targets::ValuePlacement& p = here.values[static_cast<size_t>(v->id)];
    if (v->layout != p.layout || v->scope != p.scope) {
      return InvalidArgument("'" + model.source + "': value '" + v->name + "' was compiled for " +
                             ir::LayoutName(v->layout) + " in " + ir::StorageScopeName(v->scope) +
                             "; this machine's kernels take it " + ir::LayoutName(p.layout) +
                             " in " + ir::StorageScopeName(p.scope) +
                             " (recompile the model here)");
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<targets::Executable>> Prepare(CompiledModel& model,
                                                       const targets::Target& target) {
  if (!target.Accepts(model.target)) {
    return InvalidArgument("'" + model.source + "' was compiled for target '" +
                           model.target.ToString() + "', not '" + target.spec().ToString() +
                           "' (compile it for this target)");
  }
  if (!model.planned_here || !(model.target == target.spec())) {
    TESSEL_ASSIGN_OR_RETURN(targets::KernelDecisions decisions, target.SelectKernels(*model.graph));
    TESSEL_RETURN_IF_ERROR(CheckDecisions(model, decisions));
    Status s = CheckLayoutFitsKernels(*model.graph, model.memory, decisions.nodes);
    if (!s.ok()) {
      return InvalidArgument(
          "'" + model.source +
          "' has a memory plan this machine's kernels do not fit: " + s.message());
    }
    model.built_kernels = std::move(decisions.built);
  }
  return target.Prepare(model);
}

}  // namespace tessel
