// The `reference` target: every node on its op's own kernel (src/ops), one
// thread, plain layouts, over the memory plan. It is the oracle every other
// target is tested against (`tessel check --target reference`, `tessel
// conformance --target reference`), and it has no options.
//
//   TESSEL_ASSIGN_OR_RETURN(auto target, ReferenceTarget::Create({"reference", {}}));
#pragma once

#include <memory>

#include "model/target.h"
#include "targets/reference/planned_memory.h"

namespace tessel::targets {

class ReferenceTarget : public Target {
 public:
  static StatusOr<std::unique_ptr<ReferenceTarget>> Create(const TargetSpec& spec);

  const TargetSpec& spec() const override { return spec_; }
  StatusOr<KernelDecisions> SelectKernels(const ir::Graph& graph) const override;
  StatusOr<std::unique_ptr<Executable>> Prepare(CompiledModel& model) const override;

 private:
  TargetSpec spec_{"reference", {}};
};

// Runs `graph` on its reference kernels over `layout` (a plan for the
// reference target's kernels). The graph must outlive it.
class ReferenceExecutor : public Executable {
 public:
  ReferenceExecutor(const ir::Graph& graph, const ir::MemoryLayout& layout);

  ExecutableStats stats() const override { return stats_; }
  std::string Describe() const override { return "reference"; }

 protected:
  StatusOr<std::vector<Tensor>> RunChecked(const std::vector<Tensor>& inputs) override;

 private:
  const ir::Graph& graph_;
  PlannedMemory planned_;
  ExecutableStats stats_;
};

// The reference kernel of `node`, as a target that runs it so records it:
// slow, unless the op moves no data (views and metadata: Reshape, Shape...).
ir::KernelChoice ReferenceChoice(const ir::Node& node);
// The reference target's choice for every node: its op's kernel and scratch.
std::vector<NodeKernel> ReferenceKernels(const ir::Graph& graph);
// Every value of `graph` plain, in global memory.
std::vector<ValuePlacement> PlainPlacements(const ir::Graph& graph);

}  // namespace tessel::targets
