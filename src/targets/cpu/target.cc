#include "targets/cpu/target.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "model/compiled_model.h"
#include "targets/cpu/executor.h"
#include "targets/cpu/fast_kernel.h"
#include "targets/cpu/thread_pool.h"

namespace tessel::cpu {

namespace {

StatusOr<double> ParseNumber(const targets::TargetSpec& spec, const std::string& key,
                             double fallback, double min) {
  const std::string text = spec.Option(key);
  if (text.empty()) return fallback;
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(v >= min) || v > 1e9) {
    return InvalidArgument("cpu option " + key + "='" + text +
                           "': expected a number >= " + std::to_string(static_cast<int64_t>(min)));
  }
  return v;
}

std::string FormatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

class CpuExecutable : public targets::Executable {
 public:
  // Builds the kernels with the target's options and threads, as Run runs them.
  CpuExecutable(CompiledModel& model, std::string describe, const CpuOptions& options,
                std::shared_ptr<ThreadPool> pool, GraphKernels* built)
      : Executable(*model.graph),
        graph_(*model.graph),
        options_(options),
        pool_(std::move(pool)),
        describe_(std::move(describe)) {
    const CpuScope scope(options_, *pool_);
    exec_ = CpuExecutor::ReleasingPackedConstants(*model.graph, &model.memory, built);
  }

  StatusOr<std::vector<Tensor>> RunChecked(const std::vector<Tensor>& inputs) override {
    profiled_runs_ += profiling_;
    const CpuScope scope(options_, *pool_);
    return exec_->Run(inputs);
  }
  targets::ExecutableStats stats() const override {
    targets::ExecutableStats stats = exec_->stats();
    stats.threads = pool_->num_threads();
    stats.widest_parallel_loop = pool_->widest_team();
    return stats;
  }
  std::string Describe() const override { return describe_; }
  void SetProfiling(bool on) override {
    exec_->set_profiling(on);
    profiling_ = on;
    profiled_runs_ = 0;
  }
  // Time per op type and kernel, averaged over the profiled runs.
  std::vector<targets::ProfileRow> Profile() const override {
    if (profiled_runs_ == 0) return {};
    std::map<std::pair<std::string, std::string>, targets::ProfileRow> by_kind;
    for (size_t i = 0; i < graph_.nodes().size(); ++i) {
      const ir::Node& node = *graph_.nodes()[i];
      const ir::KernelChoice& kernel = exec_->kernels()[i].kernel;
      targets::ProfileRow& row = by_kind[{node.op_type, kernel.ToString()}];
      row.op_type = node.op_type;
      row.kernel = kernel.ToString();
      row.nodes += 1;
      row.ms += exec_->node_seconds()[i] / profiled_runs_ * 1e3;
      row.slow = kernel.slow;
    }
    std::vector<targets::ProfileRow> rows;
    for (auto& [key, row] : by_kind) rows.push_back(std::move(row));
    return rows;
  }
  std::string ProfileReport() const override {
    return profiled_runs_ == 0 ? "" : targets::FormatProfile(Profile(), profiled_runs_);
  }

 private:
  const ir::Graph& graph_;
  const CpuOptions options_;
  const std::shared_ptr<ThreadPool> pool_;
  std::unique_ptr<CpuExecutor> exec_;
  std::string describe_;
  bool profiling_ = false;
  int profiled_runs_ = 0;
};

}  // namespace

StatusOr<std::unique_ptr<CpuTarget>> CpuTarget::Create(const targets::TargetSpec& spec,
                                                       const targets::HostOptions& host) {
  static const char* const kKeys[] = {"isa", "threads", "winograd", "parallel_min_mflop",
                                      "parallel_min_kib"};
  for (const auto& [key, value] : spec.options) {
    if (std::find_if(std::begin(kKeys), std::end(kKeys), [&](const char* k) { return key == k; }) ==
        std::end(kKeys)) {
      return InvalidArgument("cpu target: unknown option '" + key +
                             "' (options: isa, threads, winograd, parallel_min_mflop, "
                             "parallel_min_kib)");
    }
  }
  CpuOptions o;
  TESSEL_ASSIGN_OR_RETURN(o.isa, ResolveIsa(spec.Option("isa", "auto")));
  TESSEL_ASSIGN_OR_RETURN(o.winograd, ParseWinograd(spec.Option("winograd", "auto")));
  TESSEL_ASSIGN_OR_RETURN(double threads, ParseNumber(spec, "threads", 0, 0));
  if (threads != static_cast<int>(threads) || threads > 4096) {
    return InvalidArgument("cpu option threads='" + spec.Option("threads") +
                           "': expected a whole number of threads (0: one per core)");
  }
  o.threads = static_cast<int>(threads);
  TESSEL_ASSIGN_OR_RETURN(o.parallel_min_mflop,
                          ParseNumber(spec, "parallel_min_mflop", o.parallel_min_mflop, 0));
  TESSEL_ASSIGN_OR_RETURN(o.parallel_min_kib,
                          ParseNumber(spec, "parallel_min_kib", o.parallel_min_kib, 0));
  o.snippets_dump_dir = host.dump_dir.string();
  TESSEL_RETURN_IF_ERROR(FixProcessIsa(o.isa));
  targets::TargetSpec resolved{"cpu",
                               {{"isa", IsaOptionName(o.isa)},
                                {"threads", std::to_string(o.threads)},
                                {"winograd", WinogradName(o.winograd)},
                                {"parallel_min_mflop", FormatNumber(o.parallel_min_mflop)},
                                {"parallel_min_kib", FormatNumber(o.parallel_min_kib)}}};
  std::shared_ptr<ThreadPool> pool = ThreadPool::Make(o.threads);
  return std::unique_ptr<CpuTarget>(new CpuTarget(std::move(resolved), o, std::move(pool)));
}

bool CpuTarget::Accepts(const targets::TargetSpec& compiled_for) const {
  return compiled_for.name == spec_.name && compiled_for.Option("isa") == spec_.Option("isa") &&
         compiled_for.Option("winograd") == spec_.Option("winograd");
}

StatusOr<targets::KernelDecisions> CpuTarget::SelectKernels(const ir::Graph& graph) const {
  const CpuScope scope(options_, *pool_);
  return SelectCpuKernels(graph);
}

StatusOr<std::unique_ptr<targets::Executable>> CpuTarget::Prepare(CompiledModel& model) const {
  // The kernels this target built when it selected them for this very graph
  // are taken, not built again.
  std::shared_ptr<targets::BuiltKernels> built = std::move(model.built_kernels);
  auto* mine = dynamic_cast<CpuBuiltKernels*>(built.get());
  GraphKernels* kernels = mine && mine->graph == model.graph.get() && mine->options == options_
                              ? &mine->kernels
                              : nullptr;
  return std::unique_ptr<targets::Executable>(
      new CpuExecutable(model, spec_.ToString(), options_, pool_, kernels));
}

}  // namespace tessel::cpu
