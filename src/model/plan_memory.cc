#include "model/plan_memory.h"

namespace tessel {

StatusOr<ir::MemoryLayout> PlanMemory(const ir::Graph& graph,
                                      const std::vector<targets::NodeKernel>& kernels,
                                      const MemoryOptions& options) {
  return PlanMemory(graph, ir::ComputeLiveness(graph), kernels, options);
}

StatusOr<ir::MemoryLayout> PlanMemory(const ir::Graph& graph, const ir::Liveness& liveness,
                                      const std::vector<targets::NodeKernel>& kernels,
                                      const MemoryOptions& options) {
  TESSEL_ASSIGN_OR_RETURN(GraphMemoryProblem buffers,
                          BuildMemoryProblem(graph, liveness, kernels, options));
  if (options.algorithm == "none") return MakeMemoryLayout(buffers, PlaceUnshared(buffers.problem));
  TESSEL_ASSIGN_OR_RETURN(memory::Plan plan,
                          memory::MakePlan(buffers.problem, options.algorithm, options.planner));
  return MakeMemoryLayout(buffers, plan);
}

}  // namespace tessel
