// tuner_bench: every tuning strategy on every distinct OpenCL launch of some
// models, judged against the exhaustive oracle, and each model's latency
// with default and tuned local sizes.
//
//   tuner_bench [--device SPEC] [--strategies race,mace,...] [--rounds 9]
//               [--max-space N] [--json FILE] MODEL.onnx...
//
// For each distinct launch (by tuning key, over all the models) every
// strategy tunes from scratch, counting its launches and wall time. Then
// the sizes they chose are timed again together, in `rounds` interleaved
// rounds of one timing each (the median counts), so that no strategy is
// judged by its own lucky sample: a strategy's ratio is its choice's time
// over the fastest choice's. A timing is TimingRepeats' back-to-back
// launches, as in TuneLaunches, and launches count each of them. Launches whose exhaustive space
// has more than
// --max-space sizes are left out (their count is reported). Last, each
// model runs with the default local sizes and with race's, in interleaved
// rounds, each keeping its best.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "targets/opencl/executor.h"
#include "targets/opencl/target.h"
#include "targets/opencl/tune.h"
#include "tuning/tuner.h"

namespace tessel {
namespace {

using tuning::LocalSize;
using tuning::Strategy;

struct Options {
  std::string device;
  std::vector<Strategy> strategies;
  int rounds = 15;
  int model_rounds = 8;
  int model_repeat = 30;
  size_t max_space = 100000;
  std::string json;
  std::vector<std::string> models;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

std::vector<Tensor> RandomInputs(const ir::Graph& g) {
  std::vector<Tensor> inputs;
  for (const ir::Value* v : g.inputs()) {
    Tensor t(v->dtype, v->shape);
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      if (v->dtype == DType::kFloat32) t.data<float>()[i] = static_cast<float>(i % 17) * 0.1f;
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

struct StrategyRow {
  std::vector<double> ratios;     // over the fastest choice
  std::vector<double> vs_oracle;  // over exhaustive's choice
  int64_t launches = 0;
  double seconds = 0;
};

int Main(const Options& o) {
  targets::HostOptions host{.profile = true};
  targets::TargetSpec spec{"opencl", {}};
  if (!o.device.empty()) spec.options["device"] = o.device;
  // This benchmark measures the OpenCL target's own launches: it makes that
  // target, by its type.
  StatusOr<std::unique_ptr<opencl::OpenClTarget>> target = opencl::OpenClTarget::Create(spec, host);
  if (!target.ok()) {
    std::fprintf(stderr, "tuner_bench: %s\n", target.status().message().c_str());
    return 2;
  }
  std::shared_ptr<opencl::Runtime> rt = *(*target)->runtime();
  std::printf("device %s (%s, driver %s), %lld compute units\n", rt->device().name.c_str(),
              rt->device().platform_name.c_str(), rt->device().driver_version.c_str(),
              static_cast<long long>(rt->device().compute_units));

  std::map<Strategy, StrategyRow> rows;
  // Race's winners so far, as TuneLaunches keeps them: its hints.
  std::vector<std::pair<std::string, LocalSize>> winners;
  std::set<std::string> seen;
  int too_large = 0;
  nlohmann::json out;
  out["device"] = rt->device().name;
  out["driver"] = rt->device().driver_version;
  for (const std::string& path : o.models) {
    StatusOr<CompiledModel> model = Compile(path, **target);
    if (!model.ok()) {
      std::fprintf(stderr, "tuner_bench: %s: %s\n", path.c_str(), model.status().message().c_str());
      return 2;
    }
    StatusOr<std::unique_ptr<opencl::OpenClExecutor>> made =
        opencl::OpenClExecutor::Create(*model->graph, model->memory, *rt);
    if (!made.ok()) {
      std::fprintf(stderr, "tuner_bench: %s: %s\n", path.c_str(), made.status().message().c_str());
      return 2;
    }
    opencl::OpenClExecutor& exec = **made;
    exec.set_record_timings(false);
    const std::vector<Tensor> inputs = RandomInputs(*model->graph);
    if (!exec.Run(inputs).ok()) return 2;
    const auto& launches = exec.launches();
    std::map<std::string, LocalSize> race_choice;  // by key text, for this model
    int kernels = 0;
    for (size_t k = 0; k < launches.size(); ++k) {
      const opencl::Launch& l = launches[k];
      if (!l.tunable) continue;
      const std::string text = opencl::LaunchKeyText(l);
      if (race_choice.count(text)) continue;
      const size_t space = tuning::ExhaustiveCandidates(l.problem).size();
      if (space > o.max_space) {
        ++too_large;
        race_choice[text] = l.default_local;
        continue;
      }
      // Every strategy, and the judging below, times with the repeats
      // TuneLaunches uses; the probe's launches count for each strategy.
      int64_t probe = 0;
      StatusOr<int> repeats = opencl::TimingRepeats(exec, k, probe);
      if (!repeats.ok()) {
        std::fprintf(stderr, "tuner_bench: %s: %s\n", l.kernel_name.c_str(),
                     repeats.status().message().c_str());
        return 2;
      }
      const tuning::LaunchTimer timer = [&exec, k, n = *repeats](const LocalSize& local) {
        return exec.TimeLaunch(k, local, n);
      };
      std::map<Strategy, tuning::TuneResult> results;
      std::map<Strategy, double> seconds;
      for (Strategy s : o.strategies) {
        const auto t0 = std::chrono::steady_clock::now();
        tuning::TuneOptions topts{.strategy = s};
        if (s == Strategy::kRace) topts.hints = opencl::Hints(winners, l.kernel_name);
        StatusOr<tuning::TuneResult> r = tuning::Tune(l.problem, timer, topts);
        if (!r.ok()) {
          std::fprintf(stderr, "tuner_bench: %s: %s\n", l.kernel_name.c_str(),
                       r.status().message().c_str());
          return 2;
        }
        r->launches = probe + r->launches * *repeats;
        results[s] = *r;
        seconds[s] = Seconds(t0);
      }
      race_choice[text] =
          results.count(Strategy::kRace) ? results[Strategy::kRace].local : l.default_local;
      if (race_choice[text] != l.default_local)
        winners.push_back({l.kernel_name, race_choice[text]});
      if (!seen.insert(text).second) continue;  // judged in an earlier model
      ++kernels;
      // The choices, timed together.
      std::set<LocalSize> distinct{l.default_local};
      for (const auto& [s, r] : results) distinct.insert(r.local);
      const std::vector<LocalSize> chosen(distinct.begin(), distinct.end());
      std::map<LocalSize, std::vector<double>> times;
      for (const LocalSize& c : chosen) (void)timer(c);  // warm-up
      for (int r = 0; r < o.rounds; ++r) {               // each round starts with the next choice
        for (size_t i = 0; i < chosen.size(); ++i) {
          const LocalSize& c = chosen[(i + static_cast<size_t>(r)) % chosen.size()];
          StatusOr<double> ms = timer(c);
          if (ms.ok()) times[c].push_back(*ms);
        }
      }
      double best = 1e300;
      for (const auto& [c, t] : times) best = std::min(best, Median(t));
      nlohmann::json row{{"model", path},
                         {"kernel", l.kernel_name},
                         {"global", tuning::ToString(l.key.global, l.key.dims)},
                         {"space", space},
                         {"repeats", *repeats},
                         {"default_local", tuning::ToString(l.default_local, l.key.dims)},
                         {"default_ms", Median(times[l.default_local])},
                         {"best_ms", best}};
      for (const auto& [s, r] : results) {
        const double ratio = Median(times[r.local]) / best;
        StrategyRow& sr = rows[s];
        sr.ratios.push_back(ratio);
        if (results.count(Strategy::kExhaustive)) {
          sr.vs_oracle.push_back(Median(times[r.local]) /
                                 Median(times[results[Strategy::kExhaustive].local]));
        }
        sr.launches += r.launches;
        sr.seconds += seconds[s];
        row[std::string(tuning::StrategyName(s))] = {{"local", tuning::ToString(r.local, 3)},
                                                     {"ratio", ratio},
                                                     {"launches", r.launches},
                                                     {"seconds", seconds[s]}};
      }
      out["kernels"].push_back(row);
    }
    // The model, default against race's sizes.
    // The model, default against race's sizes (CheckOnModel keeps the
    // defaults where race's are slower on the whole model).
    for (size_t k = 0; k < launches.size(); ++k) {
      const opencl::Launch& l = launches[k];
      if (!l.tunable) continue;
      const std::string text = opencl::LaunchKeyText(l);
      (void)exec.SetLocal(k, race_choice[text]);
    }
    tuning::TuningCache scratch;
    StatusOr<opencl::ModelCheck> check =
        opencl::CheckOnModel(exec, inputs, o.model_rounds, o.model_repeat, {}, scratch);
    if (!check.ok()) {
      std::fprintf(stderr, "tuner_bench: %s\n", check.status().message().c_str());
      return 2;
    }
    const double default_ms = check->default_ms, noise = check->noise;
    const double tuned_ms = check->kept_tuned ? check->tuned_ms : check->default_ms;
    std::printf(
        "model %-40s %3d new kernels  default %8.3f ms  tuned %8.3f ms  %.2fx  (defaults differ "
        "by %.1f%%)%s\n",
        path.c_str(), kernels, default_ms, tuned_ms, default_ms / tuned_ms, 100 * noise,
        check->kept_tuned ? "" : "  race's sizes were slower: defaults kept");
    std::fflush(stdout);
    out["models"].push_back({{"model", path},
                             {"default_ms", default_ms},
                             {"tuned_ms", tuned_ms},
                             {"default_noise", noise},
                             {"race_alone_ms", check->tuned_ms},
                             {"kept_tuned", check->kept_tuned},
                             {"kernels", kernels}});
    if (!o.json.empty()) std::ofstream(o.json) << out.dump(1) << "\n";  // so far
  }
  const int64_t exhaustive_launches =
      rows.count(Strategy::kExhaustive) ? rows[Strategy::kExhaustive].launches : 0;
  std::printf("\n%zu kernels judged (%d left out: exhaustive space > %zu)\n", seen.size(),
              too_large, o.max_space);
  std::printf(
      "| strategy | over exhaustive's choice: median | worst | over the fastest choice: median "
      "| p90 | worst | within 3%% | launches | of exhaustive's | tuning s |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (Strategy s : o.strategies) {
    StrategyRow& r = rows[s];
    std::vector<double> v = r.ratios, e = r.vs_oracle;
    std::sort(v.begin(), v.end());
    std::sort(e.begin(), e.end());
    if (v.empty()) continue;
    const size_t within =
        static_cast<size_t>(std::count_if(v.begin(), v.end(), [](double x) { return x <= 1.03; }));
    const double share = exhaustive_launches ? 100.0 * static_cast<double>(r.launches) /
                                                   static_cast<double>(exhaustive_launches)
                                             : 0.0;
    std::printf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %zu/%zu | %lld | %.1f%% | %.1f |\n",
                std::string(tuning::StrategyName(s)).c_str(), e.empty() ? 0.0 : e[e.size() / 2],
                e.empty() ? 0.0 : e.back(), v[v.size() / 2],
                v[std::min(v.size() - 1, v.size() * 9 / 10)], v.back(), within, v.size(),
                static_cast<long long>(r.launches), share, r.seconds);
    out["strategies"][std::string(tuning::StrategyName(s))] = {
        {"median", v[v.size() / 2]},
        {"worst", v.back()},
        {"median_vs_exhaustive", e.empty() ? 0.0 : e[e.size() / 2]},
        {"worst_vs_exhaustive", e.empty() ? 0.0 : e.back()},
        {"launches", r.launches},
        {"launch_share", share},
        {"seconds", r.seconds}};
  }
  if (!o.json.empty()) std::ofstream(o.json) << out.dump(1) << "\n";
  return 0;
}

}  // namespace
}  // namespace tessel

int main(int argc, char** argv) {
  tessel::Options o;
  std::string strategies = "race,mace,mnn,exhaustive,random,annealing";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tuner_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--device") {
      o.device = value();
    } else if (a == "--strategies") {
      strategies = value();
    } else if (a == "--rounds") {
      o.rounds = std::atoi(value().c_str());
    } else if (a == "--model-rounds") {
      o.model_rounds = std::atoi(value().c_str());
    } else if (a == "--model-repeat") {
      o.model_repeat = std::atoi(value().c_str());
    } else if (a == "--max-space") {
      o.max_space = static_cast<size_t>(std::atoll(value().c_str()));
    } else if (a == "--json") {
      o.json = value();
    } else if (a == "--help" || a == "-h") {
      std::printf(
          "usage: tuner_bench [--device SPEC] [--strategies race,mace,mnn,exhaustive,random,"
          "annealing] [--rounds N] [--model-rounds N] [--model-repeat N] [--max-space N] "
          "[--json FILE] MODEL.onnx...\n");
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "tuner_bench: unknown option %s (see --help)\n", a.c_str());
      return 2;
    } else {
      o.models.push_back(a);
    }
  }
  std::stringstream ss(strategies);
  for (std::string name; std::getline(ss, name, ',');) {
    tessel::StatusOr<tessel::tuning::Strategy> s = tessel::tuning::ParseStrategy(name);
    if (!s.ok()) {
      std::fprintf(stderr, "tuner_bench: %s\n", s.status().message().c_str());
      return 2;
    }
    o.strategies.push_back(*s);
  }
  if (o.models.empty()) {
    std::fprintf(stderr, "tuner_bench: no model given (see --help)\n");
    return 2;
  }
  return tessel::Main(o);
}
