// The `cpu` target: oneDNN, the snippets JIT and the thread pool
// (executor.h), with the options of options.h.
//
//   TargetSpec{"cpu", {{"isa", "avx2"}, {"threads", "2"}}}
//
// Create resolves isa "auto" to this CPU's best and refuses an ISA this CPU
// lacks (one line naming both), or one other than oneDNN's for this process
// (FixProcessIsa). The options and a pool of `threads` belong to the target
// object: its kernels are built and run in a CpuScope of them, so two CPU
// targets in one process never see each other's. A model compiled for one
// isa and winograd runs only with the same; threads and the parallel
// thresholds may differ.
#pragma once

#include <memory>

#include "model/target.h"
#include "targets/cpu/options.h"
#include "targets/cpu/thread_pool.h"

namespace tessel::cpu {

class CpuTarget : public targets::Target {
 public:
  static StatusOr<std::unique_ptr<CpuTarget>> Create(const targets::TargetSpec& spec,
                                                     const targets::HostOptions& host = {});

  const targets::TargetSpec& spec() const override { return spec_; }
  bool Accepts(const targets::TargetSpec& compiled_for) const override;
  StatusOr<targets::KernelDecisions> SelectKernels(const ir::Graph& graph) const override;
  StatusOr<std::unique_ptr<targets::Executable>> Prepare(CompiledModel& model) const override;

  const CpuOptions& options() const { return options_; }

 private:
  CpuTarget(targets::TargetSpec spec, CpuOptions options, std::shared_ptr<ThreadPool> pool)
      : spec_(std::move(spec)), options_(std::move(options)), pool_(std::move(pool)) {}
  targets::TargetSpec spec_;
  CpuOptions options_;
  std::shared_ptr<ThreadPool> pool_;
};

}  // namespace tessel::cpu
