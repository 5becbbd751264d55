// tessel bench MODEL: latency statistics and memory of one model.
#include <sys/resource.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common.h"
#include "memory_options.h"
#include "ir/printer.h"
#include "target.h"

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

int64_t PeakRssBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

Status Bench(const BenchArgs& args) {
  TESSEL_ASSIGN_OR_RETURN(CompileOptions copts, MakeCompileOptions(args.model_options));
  TESSEL_ASSIGN_OR_RETURN(CompiledModel model, LoadOrCompile(args.model, copts));
  std::vector<Tensor> inputs = RandomInputs(*model.graph, 1);
  TESSEL_ASSIGN_OR_RETURN(std::unique_ptr<ModelRunner> executor, MakeRunner(model, args.target));
  executor->SetProfiling(false);  // timed runs take no events; one profiled run follows
  for (int i = 0; i < args.warmup; ++i) TESSEL_RETURN_IF_ERROR(executor->Run(inputs).status());
  std::vector<double> times;
  for (int i = 0; i < args.repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    TESSEL_RETURN_IF_ERROR(executor->Run(inputs).status());
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  const Latency lat = Summarize(times);
  const ir::GraphStats stats = ir::ComputeStats(*model.graph);
  const int64_t rss = PeakRssBytes();
  if (args.json) {
    nlohmann::json j = {{"model", args.model},
                        {"runs", args.repeat},
                        {"latency_ms", {{"min", lat.min_ms}, {"median", lat.median_ms}, {"p90", lat.p90_ms}}},
                        {"weights_bytes", stats.parameter_bytes},
                        {"peak_activation_bytes", executor->peak_activation_bytes()},
                        {"peak_rss_bytes", rss},
                        {"target", executor->Describe()}};
    std::cout << j.dump(2) << "\n";
    return Status::Ok();
  }
  std::printf("%s: %d runs after %d warm-up on %s\n", args.model.c_str(), args.repeat, args.warmup,
              executor->Describe().c_str());
  std::printf("latency  min %.3f ms, median %.3f ms, p90 %.3f ms\n", lat.min_ms, lat.median_ms,
              lat.p90_ms);
  std::printf("memory   weights %s, peak activations %s, process peak RSS %s\n",
              FormatBytes(stats.parameter_bytes).c_str(),
              FormatBytes(executor->peak_activation_bytes()).c_str(), FormatBytes(rss).c_str());
  if (args.target.profile) {
    // One more run, profiled on its own (the timed runs above are not).
    executor->SetProfiling(true);
    TESSEL_RETURN_IF_ERROR(executor->Run(inputs).status());
    std::printf("%s", executor->ProfileReport().c_str());
  }
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
  cmd->callback([args, &exit_code] {
    Status s = Bench(*args);
    exit_code = s.ok() ? 0 : ReportError(s);
  });
}

}  // namespace tessel::cli
