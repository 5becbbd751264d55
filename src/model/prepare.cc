#include "model/prepare.h"

#include "memory/planner.h"
#include "model/graph_memory.h"
#include "model/plan_memory.h"

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

// The model's plan made again for `kernels`, with its planner and pools
// (whose size limits a model does not record: none); `why` is what did not
// fit, for the message when that fails.
StatusOr<ir::MemoryLayout> Replan(const CompiledModel& model,
                                  const std::vector<targets::NodeKernel>& kernels,
                                  const Status& why) {
  auto refuse = [&](const std::string& detail) {
    return InvalidArgument(
        "'" + model.source +
        "' has a memory plan this machine's kernels do not fit: " + why.message() + detail);
  };
  if (!CheckMemoryLayout(*model.graph, model.memory).ok()) return refuse("");
  MemoryOptions options;
  if (memory::PlannerRegistry::Global().Find(model.memory.algorithm)) {
    options.algorithm = model.memory.algorithm;
  }
  for (const ir::MemoryPool& p : model.memory.pools) {
    memory::PoolInfo pool;
    pool.name = p.name;
    pool.read_only = p.read_only;
    options.pools.push_back(std::move(pool));
  }
  for (const ir::Value* v : model.graph->inputs()) {
    options.plan_io = options.plan_io || model.memory.values[static_cast<size_t>(v->id)].planned();
  }
  StatusOr<ir::MemoryLayout> again = PlanMemory(*model.graph, kernels, options);
  if (!again.ok()) return refuse("; planning it again failed: " + again.status().message());
  return again;
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
      // A sound plan made for other kernels (another thread count sizes
      // oneDNN's scratchpads differently; another oneDNN picks other
      // implementations): planned again here, for these kernels. A plan
      // that is not sound for its own graph is refused.
      TESSEL_ASSIGN_OR_RETURN(ir::MemoryLayout again, Replan(model, decisions.nodes, s));
      model.memory = std::move(again);
    }
    model.built_kernels = std::move(decisions.built);
  }
  return target.Prepare(model);
}

}  // namespace tessel
