// The CPU executor: runs a compiled graph's nodes in order. Each node runs
// on the kernel the CPU target selects for it (fast_kernel.h: oneDNN for
// convolutions and matrix products), on a JIT-compiled snippet for Subgraph
// nodes (fused elementwise regions, over the thread pool), or else on the
// reference kernel of src/ops.
//
//   CpuExecutor exec(graph);           // validates once: every op has a kernel
//   auto outputs = exec.Run(inputs);   // inputs in graph-input order
//
// Inputs are checked (count, dtype, shape) at every Run, since they come from
// the user; nodes are not re-validated. Snippet kernels are compiled once, by
// the constructor, and so are fast kernels (weights packed then); a body the JIT cannot take runs on its interpreter, and a
// body that does not lower at all through the Subgraph reference kernel.
// Intermediate tensors are freed after their last use. Run is not reentrant;
// use one executor per thread.
//
// With a memory plan (CpuExecutor(graph, layout)), the constructor allocates
// one arena per read-write pool, leaves constants in the graph (on the CPU
// they already are host memory; read-only pools get no arena) and binds every tensor
// and scratch buffer at its offset; Run then allocates no tensor but the
// outputs it returns to the caller. Each output is cleared before its kernel
// (kernels may accumulate into it) unless the kernel writes it in place over
// an input. Outputs are the same bits with and without the plan.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "ir/memory_layout.h"

namespace tessel::snippets {
class SnippetKernel;
}

namespace tessel::cpu {

class FastKernel;
class ThreadPool;

struct RunStats {
  // Largest total of intermediate and output tensor bytes alive at once.
  int64_t peak_activation_bytes = 0;
  // With a memory plan: the bytes of the read-write arenas (activations and
  // scratch), which is what the run actually holds.
  int64_t workspace_bytes = 0;
  // Weights the fast kernels hold in their own (packed) layouts, beyond the
  // model's constants.
  int64_t packed_weight_bytes = 0;
  // Constants whose only copy now is a packed one (ReleasePackedConstants).
  int64_t released_constant_bytes = 0;
};

struct PlannedMemory;

class CpuExecutor {
 public:
  // `graph` must be typed and verified, and outlive the executor.
  explicit CpuExecutor(const ir::Graph& graph);
  // Runs on `layout` (plan-memory's, for this graph); it need not outlive
  // the executor.
  CpuExecutor(const ir::Graph& graph, const ir::MemoryLayout& layout);
  ~CpuExecutor();

  StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& inputs);
  const RunStats& stats() const { return stats_; }
  // Like the constructors above (`layout` null: no plan), and drops the
  // data of every constant of `graph` that only fast kernels read, each from
  // its own packed copy, as soon as the last of them has packed it: the
  // weights are held once, in the kernels' layout, and never twice at once.
  // The values keep their dtype and shape, but the graph can no longer be
  // run or saved by anyone else (stats().released_constant_bytes).
  static std::unique_ptr<CpuExecutor> ReleasingPackedConstants(ir::Graph& graph,
                                                               const ir::MemoryLayout* layout);
  // Per-node wall time in seconds summed over the Runs since profiling was
  // turned on (by node index); empty when off. For `tessel bench --profile`.
  void set_profiling(bool on) { node_seconds_.assign(on ? graph_.nodes().size() : 0, 0.0); }
  const std::vector<double>& node_seconds() const { return node_seconds_; }
  // Whether a snippet writes so little that it runs on the calling thread
  // (under ParallelCopyBytes, thread_pool.h): a small memory-bound kernel
  // gains microseconds from a second thread, and on cores shared with other
  // work a parallel region can cost a hundred.
  static bool RunsSerially(const ir::Node& node);
  // Node i's fast kernel, or null when it runs on a snippet or the reference.
  const FastKernel* fast_kernel(size_t i) const { return fast_[i].get(); }

 private:
  const ir::Graph& graph_;
  int opset_;
  std::vector<size_t> last_use_;  // per value id: index of the last node reading it
  // Per node: the compiled snippet of a Subgraph node, else null.
  std::vector<std::unique_ptr<snippets::SnippetKernel>> snippets_;
  // Per node: the fast kernel the target selected, else null.
  std::vector<std::unique_ptr<FastKernel>> fast_;
  // Without a plan: each fast kernel's scratch, allocated once.
  std::vector<std::vector<Tensor>> own_scratch_;
  RunStats stats_;
  std::vector<double> node_seconds_;
  CpuExecutor(const ir::Graph& graph, ir::Graph* release_packed);
  // Releases the constants node `step`'s kernel packed, if no other reader
  // still needs them.
  void ReleasePacked(ir::Graph& graph, size_t step,
                     const std::vector<std::vector<ir::Node*>>& consumers,
                     const std::unordered_map<const ir::Node*, size_t>& index);
  // The memory plan's arenas and bindings (executor_planned.cc); null
  // without a plan.
  std::unique_ptr<PlannedMemory> planned_;
  void BindPlan(const ir::MemoryLayout& layout);
  StatusOr<std::vector<Tensor>> RunPlanned(const std::vector<Tensor>& inputs);
  Status RunStep(PlannedMemory& plan, size_t step, ThreadPool& pool);
  std::vector<Tensor> CollectOutputs(PlannedMemory& plan);
};

// What Run reports as peak_activation_bytes without a plan (the sum of live
// tensors of the reference executor), computed from the schedule alone.
int64_t PredictPeakActivationBytes(const ir::Graph& graph);

// Checks that `inputs` match the graph inputs in count, dtype and shape.
Status ValidateInputs(const ir::Graph& graph, const std::vector<Tensor>& inputs);

}  // namespace tessel::cpu
