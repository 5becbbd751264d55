// The CPU executor: runs a compiled graph's nodes in order with the reference
// kernels of src/ops.
//
//   CpuExecutor exec(graph);           // validates once: every op has a kernel
//   auto outputs = exec.Run(inputs);   // inputs in graph-input order
//
// Inputs are checked (count, dtype, shape) at every Run, since they come from
// the user; nodes are not re-validated. Intermediate tensors are freed after
// their last use. Run is not reentrant; use one executor per thread.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::cpu {

struct RunStats {
  // Largest total of intermediate and output tensor bytes alive at once.
  int64_t peak_activation_bytes = 0;
};

class CpuExecutor {
 public:
  // `graph` must be typed and verified, and outlive the executor.
  explicit CpuExecutor(const ir::Graph& graph);

  StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& inputs);
  const RunStats& stats() const { return stats_; }

 private:
  const ir::Graph& graph_;
  int opset_;
  std::vector<size_t> last_use_;  // per value id: index of the last node reading it
  RunStats stats_;
};

// Checks that `inputs` match the graph inputs in count, dtype and shape.
Status ValidateInputs(const ir::Graph& graph, const std::vector<Tensor>& inputs);

}  // namespace tessel::cpu
