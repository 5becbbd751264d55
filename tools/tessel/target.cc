#include "target.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "common.h"
#include "memory_options.h"
#include "targets/cpu/executor.h"
#include "targets/cpu/fast_kernel.h"
#ifdef TESSEL_WITH_OPENCL
#include "targets/opencl/executor.h"
#include "targets/opencl/runtime.h"
#endif

namespace tessel::cli {

namespace {

class CpuRunner : public ModelRunner {
 public:
  explicit CpuRunner(CompiledModel& model) : graph_(*model.graph), exec_(MakeExecutor(model)) {}
  StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& inputs) override {
    profiled_runs_ += profiling_;
    return exec_->Run(inputs);
  }
  int64_t peak_activation_bytes() const override { return exec_->stats().peak_activation_bytes; }
  int64_t workspace_bytes() const override { return exec_->stats().workspace_bytes; }
  int64_t packed_weight_bytes() const override { return exec_->stats().packed_weight_bytes; }
  std::string Describe() const override { return "cpu"; }
  void SetProfiling(bool on) override {
    exec_->set_profiling(on);
    profiling_ = on;
    profiled_runs_ = 0;
  }
  // Time per op type and kernel, averaged over the profiled runs, largest first.
  std::string ProfileReport() const override {
    if (profiled_runs_ == 0) return "";
    std::map<std::string, std::pair<double, int>> by_kind;
    double total = 0;
    for (size_t i = 0; i < graph_.nodes().size(); ++i) {
      const ir::Node& node = *graph_.nodes()[i];
      const cpu::FastKernel* fast = exec_->fast_kernel(i);
      const std::string kernel = fast                          ? fast->Describe()
                                 : node.op_type == "Subgraph" ? "snippet"
                                                               : "reference";
      const double seconds = exec_->node_seconds()[i] / profiled_runs_;
      auto& [sum, count] = by_kind[node.op_type + "  " + kernel];
      sum += seconds;
      count += 1;
      total += seconds;
    }
    std::vector<std::pair<double, std::string>> rows;
    for (const auto& [kind, v] : by_kind) {
      rows.emplace_back(v.first, kind + " (" + std::to_string(v.second) + " nodes)");
    }
    std::sort(rows.rbegin(), rows.rend());
    char line[256];
    std::snprintf(line, sizeof line, "profile  per run, by op and kernel (total %.3f ms, %d runs)\n",
                  total * 1e3, profiled_runs_);
    std::string out = line;
    for (const auto& [seconds, kind] : rows) {
      std::snprintf(line, sizeof line, "  %8.3f ms %5.1f%%  %s\n", seconds * 1e3,
                    total > 0 ? 100 * seconds / total : 0.0, kind.c_str());
      out += line;
    }
    return out;
  }

 private:
  const ir::Graph& graph_;
  std::unique_ptr<cpu::CpuExecutor> exec_;
  bool profiling_ = false;
  int profiled_runs_ = 0;
};

#ifdef TESSEL_WITH_OPENCL
class OpenClRunner : public ModelRunner {
 public:
  OpenClRunner(const CompiledModel& model, std::unique_ptr<opencl::Runtime> rt,
               std::unique_ptr<opencl::OpenClExecutor> exec)
      : graph_(*model.graph), rt_(std::move(rt)), exec_(std::move(exec)) {
    peak_ = cpu::PredictPeakActivationBytes(*model.graph);
  }
  StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& inputs) override {
    return exec_->Run(inputs);
  }
  int64_t peak_activation_bytes() const override { return peak_; }
  void SetProfiling(bool on) override { exec_->set_record_timings(on); }
  int64_t workspace_bytes() const override { return exec_->workspace_bytes(); }
  std::string Describe() const override {
    return "opencl:" + std::to_string(rt_->device().index) + " " + rt_->device().name;
  }
  std::string ProfileReport() const override {
    const auto& timings = exec_->last_timings();
    if (timings.empty()) return "";
    // Per kernel name: total time, launches, bytes, flops.
    struct Row {
      double ms = 0;
      int launches = 0;
      int64_t bytes = 0, flops = 0;
    };
    std::map<std::string, Row> rows;
    double total = 0;
    for (const auto& t : timings) {
      Row& r = rows[t.launch->kernel_name];
      r.ms += t.ms;
      r.launches += 1;
      r.bytes += t.launch->bytes;
      r.flops += t.launch->flops;
      total += t.ms;
    }
    std::vector<std::pair<std::string, Row>> sorted(rows.begin(), rows.end());
    std::sort(sorted.begin(), sorted.end(),
              [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
    std::string out;
    char line[256];
    std::snprintf(line, sizeof line,
                  "profile (OpenCL events, last run): %zu launches, %.3f ms of kernels\n",
                  timings.size(), total);
    out += line;
    std::snprintf(line, sizeof line, "  %-34s %8s %6s %9s %10s %10s\n", "kernel", "ms", "share",
                  "launches", "GB/s", "GFLOP/s");
    out += line;
    constexpr size_t kMaxRows = 15;
    for (size_t i = 0; i < sorted.size() && i < kMaxRows; ++i) {
      const auto& [name, r] = sorted[i];
      const double s = r.ms * 1e-3;
      std::snprintf(line, sizeof line, "  %-34s %8.3f %5.1f%% %9d %10.1f %10.1f\n", name.c_str(),
                    r.ms, total > 0 ? 100.0 * r.ms / total : 0.0, r.launches,
                    s > 0 ? static_cast<double>(r.bytes) / s * 1e-9 : 0.0,
                    s > 0 ? static_cast<double>(r.flops) / s * 1e-9 : 0.0);
      out += line;
    }
    if (sorted.size() > kMaxRows) {
      std::snprintf(line, sizeof line, "  ... %zu more kernels\n", sorted.size() - kMaxRows);
      out += line;
    }
    // The slowest single launches, with their nodes.
    std::vector<const opencl::LaunchTiming*> slow;
    for (const auto& t : timings) slow.push_back(&t);
    std::sort(slow.begin(), slow.end(), [](const auto* a, const auto* b) { return a->ms > b->ms; });
    out += "  slowest launches:\n";
    for (size_t i = 0; i < std::min<size_t>(slow.size(), 10); ++i) {
      const auto& l = *slow[i]->launch;
      const double s = slow[i]->ms * 1e-3;
      std::snprintf(line, sizeof line, "    %8.3f ms  %-26s %-30s %8.1f GB/s %8.1f GFLOP/s\n",
                    slow[i]->ms, l.kernel_name.c_str(),
                    graph_.nodes()[static_cast<size_t>(l.node)]->name.substr(0, 30).c_str(),
                    s > 0 ? static_cast<double>(l.bytes) / s * 1e-9 : 0.0,
                    s > 0 ? static_cast<double>(l.flops) / s * 1e-9 : 0.0);
      out += line;
    }
    return out;
  }

 private:
  const ir::Graph& graph_;
  std::unique_ptr<opencl::Runtime> rt_;
  std::unique_ptr<opencl::OpenClExecutor> exec_;
  int64_t peak_ = 0;
};
#endif

}  // namespace

void AddTargetOptions(CLI::App& app, TargetOptions& opts, bool profile) {
  app.add_option("--target", opts.target, "Where to run: cpu (default) or opencl")
      ->check(CLI::IsMember({"cpu", "opencl"}));
  app.add_option("--device", opts.device,
                 "OpenCL device: opencl:N or a substring of its name (see tessel info)");
  if (profile) {
    app.add_flag("--profile", opts.profile,
                 "Print where the time goes: per op and kernel on cpu, per kernel (OpenCL "
                 "events) on opencl");
  }
}

StatusOr<std::unique_ptr<ModelRunner>> MakeRunner(CompiledModel& model,
                                                  const TargetOptions& opts) {
  if (opts.target == "cpu") {
    if (!opts.device.empty()) {
      return InvalidArgument("--device '" + opts.device + "' needs --target opencl");
    }
    return std::unique_ptr<ModelRunner>(new CpuRunner(model));
  }
#ifdef TESSEL_WITH_OPENCL
  opencl::RuntimeOptions ro;
  ro.profiling = opts.profile;
  TESSEL_ASSIGN_OR_RETURN(std::unique_ptr<opencl::Runtime> rt,
                          opencl::Runtime::Create(opts.device, ro));
  TESSEL_ASSIGN_OR_RETURN(std::unique_ptr<opencl::OpenClExecutor> exec,
                          opencl::OpenClExecutor::Create(*model.graph, model.memory, *rt));
  return std::unique_ptr<ModelRunner>(new OpenClRunner(model, std::move(rt), std::move(exec)));
#else
  return Unsupported(
      "--target opencl: this tessel was built without OpenCL (TESSEL_WITH_OPENCL=OFF)");
#endif
}

void AddInfoCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("info", "List the OpenCL devices and their limits");
  cmd->callback([&exit_code] {
#ifdef TESSEL_WITH_OPENCL
    StatusOr<std::vector<opencl::DeviceInfo>> devices = opencl::ListDevices();
    if (!devices.ok()) {
      exit_code = ReportError(devices.status());
      return;
    }
    std::printf("%s", opencl::DescribeDevices(*devices).c_str());
    exit_code = 0;
#else
    std::printf("built without OpenCL (TESSEL_WITH_OPENCL=OFF)\n");
    exit_code = 0;
#endif
  });
}

}  // namespace tessel::cli
