// The CPU executor: runs a compiled graph's nodes in order, on a memory
// plan. Each node runs on the kernel the CPU target selects for it
// (fast_kernel.h: oneDNN for convolutions and matrix products), on a
// JIT-compiled snippet for Subgraph nodes (fused elementwise regions, over
// the thread pool), or else on the reference kernel of src/ops.
//
//   CpuExecutor exec(graph, layout);   // selects and builds the kernels
//   auto outputs = exec.Run(inputs);   // inputs in graph-input order
//
// The CPU target makes it from the kernels its select-kernels stage built
// (ReleasingPackedConstants with `kernels`), so they are built once; the
// executor packs their weights. Build and run it in the target's CpuScope.
//
// Inputs must match the graph's (targets::Executable::Run checks them for
// the user); nodes are not re-validated. A body the JIT cannot take runs on
// its interpreter, and a body that does not lower at all through the
// Subgraph reference kernel. Run is not reentrant; use one
// executor per thread.
//
// The constructor allocates one arena per read-write pool of the plan,
// leaves constants in the graph (on the CPU they already are host memory;
// read-only pools get no arena) and binds every tensor and scratch buffer at
// its offset (targets/reference/planned_memory.h); Run then allocates no
// tensor but the outputs it returns to the caller. Each output is cleared
// before its kernel (reference kernels may accumulate into it) unless the
// kernel writes it whole or in place over an input. Without a layout, the
// executor plans the graph itself with algorithm "none" (every buffer its
// own bytes).
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "ir/memory_layout.h"
#include "model/target.h"
#include "targets/cpu/fast_kernel.h"
#include "targets/cpu/options.h"
#include "targets/reference/planned_memory.h"

namespace tessel::cpu {

class FastKernel;
class ThreadPool;

struct RunStats : targets::ExecutableStats {
  // Constants whose only copy now is a packed one (ReleasePackedConstants).
  int64_t released_constant_bytes = 0;
};

class CpuExecutor {
 public:
  // `graph` must be typed and verified, and outlive the executor. Runs on
  // `layout` (plan-memory's, for this graph and the CPU target's kernels);
  // it need not outlive the executor.
  CpuExecutor(const ir::Graph& graph, const ir::MemoryLayout& layout);
  // Plans `graph` with algorithm "none" and runs on that.
  explicit CpuExecutor(const ir::Graph& graph);
  ~CpuExecutor();

  StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& inputs);
  const RunStats& stats() const { return stats_; }
  // Like the constructors above (`layout` null: plan it), and drops the
  // data of every constant of `graph` that only fast kernels read, each from
  // its own packed copy, as soon as the last of them has packed it: the
  // weights are held once, in the kernels' layout, and never twice at once.
  // The values keep their dtype and shape, but the graph can no longer be
  // run or saved by anyone else (stats().released_constant_bytes).
  // `kernels`: SelectGraphKernels(graph)'s, as the target built them when
  // it selected them; null: selected here.
  static std::unique_ptr<CpuExecutor> ReleasingPackedConstants(ir::Graph& graph,
                                                               const ir::MemoryLayout* layout,
                                                               GraphKernels* kernels = nullptr);
  // Per-node wall time in seconds summed over the Runs since profiling was
  // turned on (by node index); empty when off. For `tessel bench --profile`.
  void set_profiling(bool on) { node_seconds_.assign(on ? graph_.nodes().size() : 0, 0.0); }
  const std::vector<double>& node_seconds() const { return node_seconds_; }
  // Node i's fast kernel (a snippet for a Subgraph), or null when it runs on
  // the reference.
  const FastKernel* fast_kernel(size_t i) const { return fast_[i].get(); }
  // What every node runs on (typed: "onednn conv (brgconv:avx512_core)",
  // "snippet avx512", "reference" as strings), and the scratch it needs.
  const std::vector<targets::NodeKernel>& kernels() const { return kernels_; }

 private:
  const ir::Graph& graph_;
  int opset_;
  // Per node: the fast kernel the target selected (a Subgraph's is its
  // snippet), else null.
  std::vector<std::unique_ptr<FastKernel>> fast_;
  std::vector<targets::NodeKernel> kernels_;
  RunStats stats_;
  std::vector<double> node_seconds_;
  CpuExecutor(const ir::Graph& graph, ir::Graph* release_packed, GraphKernels* kernels);
  // Releases the constants node `step`'s kernel packed, if no other reader
  // still needs them.
  void ReleasePacked(ir::Graph& graph, size_t step,
                     const std::vector<std::vector<ir::Node*>>& consumers,
                     const std::unordered_map<const ir::Node*, size_t>& index);
  // The memory plan's arenas and bindings.
  targets::PlannedMemory planned_;
  void BindPlan(const ir::MemoryLayout* layout);
  Status RunStep(size_t step);
};

// The CPU target's select-kernels stage: every node's kernel and scratch
// and every value's layout (global memory), with the kernels it built for
// them (a CpuBuiltKernels), which an executor of the same target takes.
targets::KernelDecisions SelectCpuKernels(const ir::Graph& graph);

// Kernels built by SelectCpuKernels, and the options they were built with.
class CpuBuiltKernels : public targets::BuiltKernels {
 public:
  CpuBuiltKernels(GraphKernels kernels, const ir::Graph& graph, const CpuOptions& options)
      : kernels(std::move(kernels)), graph(&graph), options(options) {}
  GraphKernels kernels;
  const ir::Graph* graph;  // what they were built for
  CpuOptions options;      // and with
};

}  // namespace tessel::cpu
