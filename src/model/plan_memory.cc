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
  if (options.algorithm == "none") {
    return MakeMemoryLayout(buffers, PlaceUnshared(buffers.problem),
                            memory::PlaceTexturesUnshared(buffers.textures));
  }
  TESSEL_ASSIGN_OR_RETURN(memory::Plan plan,
                          memory::MakePlan(buffers.problem, options.algorithm, options.planner));
  TESSEL_ASSIGN_OR_RETURN(memory::TexturePlan textures,
                          memory::PlanTextures(buffers.textures, options.textures));
  if (options.planner.verify) {
    if (Status s = memory::VerifyTexturePlan(buffers.textures, textures); !s.ok()) {
      return Internal(s.message());
    }
  }
  return MakeMemoryLayout(buffers, plan, textures);
}

}  // namespace tessel
