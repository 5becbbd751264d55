// The CPU executor's state when it runs on a memory plan (executor.h): the
// arenas and, for every node, a kernel context whose tensors are views into
// them, all built once by the constructor.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "ops/op_registry.h"

namespace tessel::cpu {

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
  // Scratch raw pointers and argument pointers for snippet kernels, reused.
  std::vector<const void*> snippet_inputs;
  std::vector<void*> snippet_outputs;
};

}  // namespace tessel::cpu
