// tessel tune MODEL --target opencl: finds the local work size of every
// distinct OpenCL launch of a model, saves them in the tuning cache, and
// reports each kernel's time before and after, and the model's.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common.h"
#include "target.h"
#include "tuning/tuner.h"

namespace tessel::cli {

namespace {

struct TuneArgs {
  std::string model;
  std::string strategy = "race";
  double budget_seconds = 0;
  int repeat = 10;  // runs per round when timing the model
  int rounds = 3;
  uint32_t seed = 1;
  bool json = false;
  ModelOptions model_options;
  TargetOptions target;
};

// The target tunes itself (targets::Executable::Tune); a target with
// nothing to tune says so, naming itself.
Status Tune(TuneArgs args) {
  if (args.target.target.empty()) args.target.target = "opencl";
  TESSEL_RETURN_IF_ERROR(tuning::ParseStrategy(args.strategy).status());
  args.target.profile = true;  // launches are timed by their events
  args.target.tune = "off";    // the tuning here is this command's own
  TESSEL_ASSIGN_OR_RETURN(CompilerOptions copts, MakeCompileOptions(args.model_options));
  TESSEL_ASSIGN_OR_RETURN(LoadedModel lm, LoadModel(args.model, args.target, copts));
  TESSEL_ASSIGN_OR_RETURN(std::unique_ptr<targets::Executable> exe, lm.target->Prepare(lm.model));

  targets::TuneRequest request{.strategy = args.strategy,
                               .budget_seconds = args.budget_seconds,
                               .seed = args.seed,
                               .rounds = args.rounds,
                               .repeat = args.repeat,
                               .inputs = RandomInputs(*lm.model.graph, args.seed)};
  const bool bar = isatty(STDERR_FILENO) && !args.json;
  if (bar) {
    request.progress = [](int kernel, int kernels, const std::string& name, int candidates,
                          double best_ms) {
      constexpr int kWidth = 24;
      const int filled = kernels ? (kernel - 1) * kWidth / kernels : kWidth;
      std::fprintf(stderr, "\r[%.*s%*s] kernel %d/%d %-26.26s %4d candidates, best %.4f ms ",
                   filled, "########################", kWidth - filled, "", kernel, kernels,
                   name.c_str(), candidates, best_ms);
      std::fflush(stderr);
    };
  }
  StatusOr<targets::TuneReport> tuned = exe->Tune(request);
  if (bar) std::fprintf(stderr, "\r%110s\r", "");
  TESSEL_ASSIGN_OR_RETURN(const targets::TuneReport report, std::move(tuned));

  int cached = 0, skipped = 0;
  for (const targets::TunedKernel& k : report.kernels) {
    cached += k.cached ? 1 : 0;
    skipped += k.skipped ? 1 : 0;
  }
  if (args.json) {
    nlohmann::json j;
    j["model"] = args.model;
    j["device"] = report.device;
    j["platform"] = report.platform;
    j["driver"] = report.driver;
    j["strategy"] = args.strategy;
    j["cache"] = report.cache;
    j["kernels"] = nlohmann::json::array();
    for (const targets::TunedKernel& k : report.kernels) {
      j["kernels"].push_back({{"kernel", k.kernel},
                              {"node", k.node},
                              {"uses", k.uses},
                              {"global", k.global},
                              {"default_local", k.default_local},
                              {"local", k.local},
                              {"default_ms", k.default_ms},
                              {"tuned_ms", k.ms},
                              {"speedup", k.ms > 0 ? k.default_ms / k.ms : 0.0},
                              {"tuning_launches", k.launches},
                              {"cached", k.cached},
                              {"skipped", k.skipped}});
    }
    j["tuning_launches"] = report.launches;
    j["tuning_seconds"] = report.seconds;
    j["fixed_launches"] = report.fixed;
    j["model_ms"] = {
        {"default", report.default_ms}, {"tuned", report.tuned_ms}, {"noise", report.noise}};
    j["kept_tuned"] = report.kept_tuned;
    std::cout << j.dump(2) << "\n";
    return Status::Ok();
  }
  std::printf("device  %s (%s, driver %s)\n", report.device.c_str(), report.platform.c_str(),
              report.driver.c_str());
  std::printf("%-26s %-22s %4s %-14s %-10s %-10s %10s %10s %7s %8s\n", "kernel", "node", "uses",
              "global", "default", "tuned", "default ms", "tuned ms", "speedup", "launches");
  for (const targets::TunedKernel& k : report.kernels) {
    const std::string launches = k.cached    ? "cached"
                                 : k.skipped ? "skipped"
                                             : std::to_string(k.launches);
    std::printf("%-26.26s %-22.22s %4d %-14s %-10s %-10s %10.4f %10.4f %6.2fx %8s\n",
                k.kernel.c_str(), k.node.c_str(), k.uses, k.global.c_str(), k.default_local.c_str(),
                k.local.c_str(), k.default_ms, k.ms, k.ms > 0 ? k.default_ms / k.ms : 0.0,
                launches.c_str());
  }
  std::printf(
      "tuned   %zu kernels (%d from the cache, %d past the budget, %d launches of fixed "
      "size) with %s in %.1f s, %lld tuning launches\n",
      report.kernels.size(), cached, skipped, report.fixed, args.strategy.c_str(), report.seconds,
      static_cast<long long>(report.launches));
  std::printf(
      "model   %.3f ms with default local sizes, %.3f ms tuned (%.2fx; best of %d x %d "
      "runs)\n",
      report.default_ms, report.tuned_ms,
      report.tuned_ms > 0 ? report.default_ms / report.tuned_ms : 0.0, args.rounds, args.repeat);
  std::printf("cache   %s (%zu entries)\n", report.cache.c_str(), report.cache_entries);
  return Status::Ok();
}

}  // namespace

void AddTuneCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Tune the OpenCL work-group sizes of a model and save them in the tuning cache");
  cmd->add_option("model", args->model, "Model file: .onnx or compiled by 'tessel compile'")
      ->required();
  cmd->add_option("--strategy", args->strategy,
                  "Search: race (default, tessel's), mace, mnn, exhaustive, random, annealing");
  cmd->add_option("--cache", args->target.tune_cache,
                  "Tuning cache to read and extend (default <cache dir>/opencl/tuning.json)");
  cmd->add_option("--budget-seconds", args->budget_seconds,
                  "Start no new kernel's tuning after this long (0, default: no limit)")
      ->check(CLI::Range(0.0, 1e7));
  cmd->add_option("--repeat", args->repeat, "Runs per round when timing the model")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--rounds", args->rounds, "Interleaved rounds timing the model (default 3)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--seed", args->seed, "Seed of the random inputs and strategies");
  cmd->add_flag("--json", args->json, "Print the results as JSON");
  AddModelOptions(*cmd, args->model_options);
  AddTargetOptions(*cmd, args->target, /*profile=*/false);
  cmd->callback([args, &exit_code] {
    Status s = Tune(*args);
    exit_code = s.ok() ? 0 : ReportError(s);
  });
}

}  // namespace tessel::cli
