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
#ifdef TESSEL_WITH_OPENCL
#include "targets/opencl/target.h"
#include "targets/opencl/tune.h"
#endif

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

#ifdef TESSEL_WITH_OPENCL

Status Tune(TuneArgs args) {
  if (args.target.target.empty()) args.target.target = "opencl";
  if (args.target.target != "opencl") {
    return InvalidArgument("tessel tune tunes OpenCL launches: it needs --target opencl, not " +
                           args.target.target);
  }
  TESSEL_ASSIGN_OR_RETURN(tuning::Strategy strategy, tuning::ParseStrategy(args.strategy));
  args.target.profile = true;  // launches are timed by their events
  args.target.tune = "off";    // the tuning here is this command's own
  TESSEL_ASSIGN_OR_RETURN(CompileOptions copts, MakeCompileOptions(args.model_options));
  TESSEL_ASSIGN_OR_RETURN(LoadedModel lm, LoadModel(args.model, args.target, copts));
  const auto* target = dynamic_cast<const opencl::OpenClTarget*>(lm.target.get());
  if (!target) return InvalidArgument("'" + args.model + "' is not compiled for opencl");
  TESSEL_ASSIGN_OR_RETURN(std::shared_ptr<opencl::Runtime> runtime, target->runtime());
  const opencl::DeviceInfo& dev = runtime->device();

  const std::filesystem::path cache_path = TuneCachePath(args.target);
  std::vector<std::string> notes;
  tuning::TuningCache cache = tuning::TuningCache::LoadOrEmpty(cache_path, &notes);
  cache.Invalidate(dev.platform_name, dev.name, dev.driver_version, &notes);
  for (const std::string& n : notes) std::fprintf(stderr, "tessel: note: %s\n", n.c_str());

  TESSEL_ASSIGN_OR_RETURN(
      std::unique_ptr<opencl::OpenClExecutor> exec,
      opencl::OpenClExecutor::Create(*lm.model.graph, lm.model.memory, *runtime));
  const std::vector<Tensor> inputs = RandomInputs(*lm.model.graph, args.seed);
  exec->set_record_timings(false);
  TESSEL_RETURN_IF_ERROR(exec->Run(inputs).status());  // builds, warms up

  opencl::TuneLaunchesOptions topts{
      .strategy = strategy, .budget_seconds = args.budget_seconds, .seed = args.seed};
  const bool bar = isatty(STDERR_FILENO) && !args.json;
  if (bar) {
    topts.progress = [](const opencl::TuneProgress& p) {
      constexpr int kWidth = 24;
      const int filled = p.kernels ? (p.kernel - 1) * kWidth / p.kernels : kWidth;
      std::fprintf(stderr, "\r[%.*s%*s] kernel %d/%d %-26.26s %4d candidates, best %.4f ms ",
                   filled, "########################", kWidth - filled, "", p.kernel, p.kernels,
                   p.name.c_str(), p.candidates, p.best_ms);
      std::fflush(stderr);
    };
  }
  StatusOr<opencl::TuneReport> tuned = opencl::TuneLaunches(*exec, cache, topts);
  if (bar) std::fprintf(stderr, "\r%110s\r", "");
  TESSEL_ASSIGN_OR_RETURN(opencl::TuneReport report, std::move(tuned));
  // The model before and after; slower tuned sizes go back to the default.
  TESSEL_ASSIGN_OR_RETURN(
      const opencl::ModelCheck check,
      opencl::CheckOnModel(*exec, inputs, args.rounds, args.repeat, report, cache));
  if (report.launches > 0 || !check.kept_tuned) TESSEL_RETURN_IF_ERROR(cache.Save(cache_path));
  const double default_ms = check.default_ms, tuned_ms = check.tuned_ms;

  int cached = 0, skipped = 0;
  for (const opencl::KernelTuning& k : report.kernels) {
    cached += k.cached ? 1 : 0;
    skipped += k.skipped ? 1 : 0;
  }
  if (args.json) {
    nlohmann::json j;
    j["model"] = args.model;
    j["device"] = dev.name;
    j["platform"] = dev.platform_name;
    j["driver"] = dev.driver_version;
    j["strategy"] = args.strategy;
    j["cache"] = cache_path.string();
    j["kernels"] = nlohmann::json::array();
    for (const opencl::KernelTuning& k : report.kernels) {
      j["kernels"].push_back({{"kernel", k.kernel},
                              {"node", k.node},
                              {"uses", k.uses},
                              {"global", tuning::ToString(k.key.global, k.key.dims)},
                              {"default_local", tuning::ToString(k.default_local, k.key.dims)},
                              {"local", tuning::ToString(k.local, k.key.dims)},
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
    j["model_ms"] = {{"default", default_ms}, {"tuned", tuned_ms}, {"noise", check.noise}};
    j["kept_tuned"] = check.kept_tuned;
    std::cout << j.dump(2) << "\n";
    return Status::Ok();
  }
  std::printf("device  %s (%s, driver %s)\n", dev.name.c_str(), dev.platform_name.c_str(),
              dev.driver_version.c_str());
  std::printf("%-26s %-22s %4s %-14s %-10s %-10s %10s %10s %7s %8s\n", "kernel", "node", "uses",
              "global", "default", "tuned", "default ms", "tuned ms", "speedup", "launches");
  for (const opencl::KernelTuning& k : report.kernels) {
    const std::string launches = k.cached    ? "cached"
                                 : k.skipped ? "skipped"
                                             : std::to_string(k.launches);
    std::printf("%-26.26s %-22.22s %4d %-14s %-10s %-10s %10.4f %10.4f %6.2fx %8s\n",
                k.kernel.c_str(), k.node.c_str(), k.uses,
                tuning::ToString(k.key.global, k.key.dims).c_str(),
                tuning::ToString(k.default_local, k.key.dims).c_str(),
                tuning::ToString(k.local, k.key.dims).c_str(), k.default_ms, k.ms,
                k.ms > 0 ? k.default_ms / k.ms : 0.0, launches.c_str());
  }
  std::printf(
      "tuned   %zu kernels (%d from the cache, %d past the budget, %d launches of fixed "
      "size) with %s in %.1f s, %lld tuning launches\n",
      report.kernels.size(), cached, skipped, report.fixed, args.strategy.c_str(), report.seconds,
      static_cast<long long>(report.launches));
  std::printf(
      "model   %.3f ms with default local sizes, %.3f ms tuned (%.2fx; best of %d x %d "
      "runs)\n",
      default_ms, tuned_ms, tuned_ms > 0 ? default_ms / tuned_ms : 0.0, args.rounds, args.repeat);
  std::printf("cache   %s (%zu entries)\n", cache_path.string().c_str(), cache.size());
  return Status::Ok();
}

#else

Status Tune(TuneArgs args) {
  TESSEL_RETURN_IF_ERROR(tuning::ParseStrategy(args.strategy).status());
  return Unsupported("this tessel was built without OpenCL: there is nothing to tune");
}

#endif

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
