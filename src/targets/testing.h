// Targets for tests: one of each per process (the CPU target's ISA belongs
// to the process), in default options.
//
//   Compile(path, targets::testing::Cpu(), options);
//   Prepare(model, targets::testing::Reference());
//   RunReference(graph, inputs);   // the oracle, on a bare typed graph
#pragma once

#include "core/check.h"
#include "model/plan_memory.h"
#include "targets/reference/target.h"
#include "targets/registry.h"

namespace tessel::targets::testing {

inline const Target& Named(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Target>> made;
  std::unique_ptr<Target>& t = made[name];
  if (!t) {
    StatusOr<std::unique_ptr<Target>> target = MakeTarget({name, {}});
    TESSEL_CHECK_MSG(target.ok(), target.status().message().c_str());
    t = std::move(*target);
  }
  return *t;
}

inline const Target& Cpu() { return Named("cpu"); }
inline const Target& Reference() { return Named("reference"); }

// Runs a typed, verified graph on the reference target (planned with
// algorithm "none"): what the other targets' tests compare with.
inline StatusOr<std::vector<Tensor>> RunReference(const ir::Graph& graph,
                                                  const std::vector<Tensor>& inputs) {
  MemoryOptions unshared;
  unshared.algorithm = "none";
  TESSEL_ASSIGN_OR_RETURN(ir::MemoryLayout layout,
                          PlanMemory(graph, ReferenceKernels(graph), unshared));
  ReferenceExecutor executor(graph, layout);
  return executor.Run(inputs);
}

}  // namespace tessel::targets::testing
