// tessel bench MODEL: latency statistics and memory of one model.
//
// Memory is reported the way bench/peers/run.sh measures every engine: the
// process's peak resident set (VmHWM) minus its resident set just before the
// model is loaded, next to what tessel itself accounts for (weights, packed
// weights, arenas).
//
// On a device target (OpenCL) it also reports the host time of each run
// until it waits for the device, and how the runs were submitted (one
// recorded command buffer, or the launch loop): the cost replay removes,
// before and after with --no-replay.
#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common.h"
#include "ir/printer.h"
#include "target.h"
#include "targets/cpu/thread_pool.h"

namespace tessel::cli {

namespace {

struct BenchArgs {
  std::string model;
  int warmup = 3;
  int repeat = 20;
  bool json = false;
  ModelOptions model_options;
  TargetOptions target;
};

// A field of /proc/self/status in bytes ("VmRSS", "VmHWM"); 0 if unreadable.
int64_t ProcStatusBytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) != 0) continue;
    std::istringstream in(line.substr(field.size() + 1));
    int64_t kib = 0;
    in >> kib;
    return kib * 1024;
  }
  return 0;
}

Status Bench(const BenchArgs& args) {
  TESSEL_ASSIGN_OR_RETURN(CompilerOptions copts, MakeCompileOptions(args.model_options));
  const int64_t rss_before_load = ProcStatusBytes("VmRSS");
  TESSEL_ASSIGN_OR_RETURN(LoadedModel lm, LoadModel(args.model, args.target, copts));
  CompiledModel& model = lm.model;
  std::vector<Tensor> inputs = RandomInputs(*model.graph, 1);
  const ir::GraphStats stats = ir::ComputeStats(*model.graph);  // before packing drops any
  TESSEL_ASSIGN_OR_RETURN(std::unique_ptr<targets::Executable> executor,
                          Prepare(model, *lm.target));
  executor->SetProfiling(false);  // the timed runs record no timings
  for (int i = 0; i < args.warmup; ++i) TESSEL_RETURN_IF_ERROR(executor->Run(inputs).status());
  std::vector<double> times, submit_times;
  for (int i = 0; i < args.repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    TESSEL_RETURN_IF_ERROR(executor->Run(inputs).status());
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    submit_times.push_back(executor->stats().host_submit_ms);
  }
  const Latency lat = Summarize(times);
  const Latency submit = Summarize(submit_times);
  // How the timed runs were submitted; empty on targets without a device.
  const std::string submission = executor->stats().submission;
  const bool replays = executor->stats().replays;
  std::string profile;
  std::vector<targets::ProfileRow> profile_rows;
  if (args.target.profile) {
    // Separate runs, so that the timers do not weigh on the latencies above.
    executor->SetProfiling(true);
    for (int i = 0; i < args.repeat; ++i) TESSEL_RETURN_IF_ERROR(executor->Run(inputs).status());
    profile = executor->ProfileReport();
    profile_rows = executor->Profile();
  }
  // The threads the kernels run on (CPU); 1 on other targets.
  const int threads = executor->stats().threads;
  const int64_t peak_rss = ProcStatusBytes("VmHWM");
  const int64_t rss_delta = peak_rss - rss_before_load;
  if (args.json) {
    nlohmann::json j = {
        {"model", args.model},
        {"engine", "tessel"},
        {"target", executor->Describe()},
        {"threads", threads},
        {"runs", args.repeat},
        {"warmup", args.warmup},
        {"latency_ms", {{"min", lat.min_ms}, {"median", lat.median_ms}, {"p90", lat.p90_ms}}},
        {"weights_bytes", stats.parameter_bytes},
        {"packed_weights_bytes", executor->stats().packed_weight_bytes},
        {"workspace_bytes", executor->stats().workspace_bytes},
        {"peak_activation_bytes", executor->stats().peak_activation_bytes},
        {"rss_before_load_bytes", rss_before_load},
        {"peak_rss_bytes", peak_rss},
        {"rss_delta_bytes", rss_delta}};
    if (!submission.empty()) {
      j["host_submit_ms"] = {{"min", submit.min_ms}, {"median", submit.median_ms}};
      j["replay"] = replays;
      j["submission"] = submission;
    }
    if (!profile_rows.empty()) {
      double total = 0, slow = 0;
      for (const auto& r : profile_rows) {
        total += r.ms;
        if (r.slow) slow += r.ms;
      }
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& r : profile_rows) {
        nlohmann::json row = {{"op_type", r.op_type},
                              {"kernel", r.kernel},
                              {"nodes", r.nodes},
                              {"ms", r.ms},
                              {"percent", total > 0 ? 100 * r.ms / total : 0.0},
                              {"slow", r.slow}};
        if (r.launches > 0) {
          // A device's launches: their rates over the kernels' own time.
          const double s = r.ms * 1e-3;
          row["launches"] = r.launches;
          row["gb_per_s"] = s > 0 ? static_cast<double>(r.bytes) / s * 1e-9 : 0.0;
          row["gflop_per_s"] = s > 0 ? static_cast<double>(r.flops) / s * 1e-9 : 0.0;
        }
        rows.push_back(std::move(row));
      }
      j["profile"] = rows;
      j["slow_path_percent"] = total > 0 ? 100 * slow / total : 0.0;
    }
    std::cout << j.dump(2) << "\n";
    return Status::Ok();
  }
  std::printf("%s: %d runs after %d warm-up on %s, %d host thread%s\n", args.model.c_str(),
              args.repeat, args.warmup, executor->Describe().c_str(), threads,
              threads == 1 ? "" : "s");
  std::printf("latency  min %.3f ms, median %.3f ms, p90 %.3f ms\n", lat.min_ms, lat.median_ms,
              lat.p90_ms);
  if (!submission.empty()) {
    std::printf(
        "submit   host %.3f ms per run until it waits for the device (median; min %.3f), %s\n",
        submit.median_ms, submit.min_ms, submission.c_str());
  }
  std::printf("memory   weights %s, packed weights %s, arenas %s, peak activations %s\n",
              FormatBytes(stats.parameter_bytes).c_str(),
              FormatBytes(executor->stats().packed_weight_bytes).c_str(),
              FormatBytes(executor->stats().workspace_bytes).c_str(),
              FormatBytes(executor->stats().peak_activation_bytes).c_str());
  std::printf("process  peak RSS %s, %s above the RSS before loading the model\n",
              FormatBytes(peak_rss).c_str(), FormatBytes(rss_delta).c_str());
  std::printf("%s", profile.c_str());
  return Status::Ok();
}

}  // namespace

void AddBenchCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand("bench", "Measure a model's latency and memory");
  cmd->add_option("model", args->model, "Model file: .onnx or compiled")->required();
  cmd->add_option("--warmup", args->warmup, "Warm-up runs")->check(CLI::Range(0, 100000));
  cmd->add_option("--repeat", args->repeat, "Measured runs")->check(CLI::Range(1, 1000000));
  cmd->add_flag("--json", args->json, "Print the results as JSON");
  AddModelOptions(*cmd, args->model_options);
  AddTargetOptions(*cmd, args->target, /*profile=*/true);
  AddTuningOptions(*cmd, args->target);
  cmd->callback([args, &exit_code] {
    Status s = Bench(*args);
    exit_code = s.ok() ? 0 : ReportError(s);
  });
}

}  // namespace tessel::cli
