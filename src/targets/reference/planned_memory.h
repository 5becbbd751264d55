// A compiled graph bound to its memory plan: the arenas and, for every
// node, a kernel context whose tensors are views into them, all built once.
// The executors of the reference and CPU targets run on it.
//
//   PlannedMemory plan = BindPlannedMemory(graph, layout, scratch, writes_all);
//   plan.BindInputs(graph, inputs);  ...run node i on plan.contexts[i]...
//   std::vector<Tensor> outputs = plan.CollectOutputs(graph);
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "ir/graph.h"
#include "ir/memory_layout.h"
#include "ops/op_registry.h"

namespace tessel::targets {

struct PlannedMemory {
  // One per pool: 64-byte aligned bytes, allocated once.
  std::vector<Tensor> arenas;
  int64_t workspace_bytes = 0;
  // By value id: a view into an arena, or a handle to the caller's tensor
  // (rebound by every Run), or the constant itself.
  std::vector<Tensor> values;
  // By graph input position: copied into its arena view at every Run (else
  // the caller's tensor is bound).
  std::vector<bool> input_in_arena;
  // Graph outputs allocated for the caller at every Run, by value id.
  std::vector<int32_t> caller_outputs;
  // By node.
  std::vector<ops::KernelContext> contexts;
  std::vector<const ops::OpSchema*> schemas;
  // Outputs cleared before their kernel (all but one written in place).
  std::vector<std::vector<Tensor*>> cleared;

  // Binds the caller's inputs (already validated) for one run, and
  // allocates the outputs that are the caller's.
  void BindInputs(const ir::Graph& graph, const std::vector<Tensor>& inputs);
  // Clears node `step`'s outputs that its kernel may accumulate into.
  void ClearOutputs(size_t step);
  // The graph outputs of the run; copies of what lives in an arena, which
  // the next run reuses.
  std::vector<Tensor> CollectOutputs(const ir::Graph& graph) const;
};

// Allocates the read-write pools of `layout` (the plan of `graph`, checked)
// and binds every value and every node's scratch (`scratch[i]`: node i's
// kernel's needs, as many as the layout placed). Constants stay where they
// are (on the host they already are memory kernels can read).
// `writes_every_output(i)`: node i's kernel writes every element of its
// outputs, which then need no clearing.
PlannedMemory BindPlannedMemory(const ir::Graph& graph, const ir::MemoryLayout& layout,
                                const std::vector<std::vector<ops::ScratchNeed>>& scratch,
                                const std::function<bool(size_t)>& writes_every_output);

// ir::PeakLiveBytes of the graph's schedule: what a run without a plan
// would hold at most.
int64_t PredictPeakActivationBytes(const ir::Graph& graph);

}  // namespace tessel::targets
