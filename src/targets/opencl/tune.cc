#include "targets/opencl/tune.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

namespace tessel::opencl {

std::string LaunchKeyText(const Launch& launch) {
  const tuning::TuneKey& key = launch.key;
  return key.kernel + "|" + key.source_hash + "|" + key.args_hash + "|" +
         tuning::ToString(key.global, key.dims);
}

std::vector<tuning::LocalSize> Hints(
    const std::vector<std::pair<std::string, tuning::LocalSize>>& winners,
    const std::string& kernel) {
  std::vector<tuning::LocalSize> same, other;
  for (auto it = winners.rbegin(); it != winners.rend(); ++it) {
    std::vector<tuning::LocalSize>& list = it->first == kernel ? same : other;
    if (std::find(list.begin(), list.end(), it->second) == list.end()) list.push_back(it->second);
  }
  same.insert(same.end(), other.begin(), other.end());
  if (same.size() > 3) same.resize(3);
  return same;
}

StatusOr<int> TimingRepeats(OpenClExecutor& exec, size_t k, int64_t& launches) {
  constexpr double kBatchMs = 0.05;
  constexpr int kMaxRepeats = 4;
  const tuning::LocalSize& def = exec.launches()[k].default_local;
  double fastest = 1e300;
  for (int i = 0; i < 3; ++i) {  // the first one warms up
    TESSEL_ASSIGN_OR_RETURN(double ms, exec.TimeLaunch(k, def));
    ++launches;
    if (i > 0) fastest = std::min(fastest, ms);
  }
  if (fastest <= 0) return kMaxRepeats;
  return static_cast<int>(std::clamp(std::ceil(kBatchMs / fastest), 1.0, double{kMaxRepeats}));
}

StatusOr<TuneReport> TuneLaunches(OpenClExecutor& exec, tuning::TuningCache& cache,
                                  const TuneLaunchesOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  TuneReport report;
  // Distinct keys, in schedule order, with every launch that has each.
  std::vector<std::vector<size_t>> users;
  std::map<std::string, size_t> index;  // by the key's text
  const std::vector<Launch>& launches = exec.launches();
  for (size_t k = 0; k < launches.size(); ++k) {
    const Launch& l = launches[k];
    if (!l.tunable) {
      ++report.fixed;
      continue;
    }
    const std::string text = LaunchKeyText(l);
    auto [it, added] = index.try_emplace(text, users.size());
    if (added) {
      users.emplace_back();
      KernelTuning t;
      t.kernel = l.kernel_name;
      t.node = exec.graph().nodes()[static_cast<size_t>(l.node)]->name;
      t.key = l.key;
      t.default_local = l.default_local;
      t.local = l.default_local;
      report.kernels.push_back(t);
    }
    users[it->second].push_back(k);
    ++report.kernels[it->second].uses;
  }
  const int total = static_cast<int>(report.kernels.size());
  // Sizes that beat the default in this tuning, by kernel, in order.
  std::vector<std::pair<std::string, tuning::LocalSize>> winners;
  for (size_t i = 0; i < report.kernels.size(); ++i) {
    KernelTuning& t = report.kernels[i];
    const size_t first = users[i].front();
    if (const tuning::TuneEntry* e = cache.Find(t.key)) {
      if (tuning::IsLegal(launches[first].problem, e->local)) {
        t.cached = true;
        t.local = e->local;
        t.ms = e->ms;
        t.default_ms = e->default_ms;
        for (size_t k : users[i]) TESSEL_RETURN_IF_ERROR(exec.SetLocal(k, t.local));
        continue;
      }
    }
    if (options.budget_seconds > 0 && elapsed() > options.budget_seconds) {
      t.skipped = true;
      continue;
    }
    int64_t probe = 0;
    StatusOr<int> repeats = TimingRepeats(exec, first, probe);
    if (!repeats.ok()) {
      return repeats.status().WithContext("timing kernel '" + t.kernel + "' of node '" + t.node +
                                          "'");
    }
    const auto timer = [&exec, first, n = *repeats](const tuning::LocalSize& l) {
      return exec.TimeLaunch(first, l, n);
    };
    const auto progress = [&](int candidates, double best_ms) {
      if (options.progress) {
        options.progress({static_cast<int>(i) + 1, total, t.kernel, candidates, best_ms});
      }
    };
    tuning::TuneOptions topts{.strategy = options.strategy, .seed = options.seed};
    topts.hints = Hints(winners, t.kernel);
    StatusOr<tuning::TuneResult> r = tuning::Tune(launches[first].problem, timer, topts, progress);
    if (!r.ok()) {
      return r.status().WithContext("tuning kernel '" + t.kernel + "' of node '" + t.node + "'");
    }
    t.local = r->local;
    t.ms = r->ms;
    t.default_ms = r->default_ms;
    t.launches = probe + r->launches * *repeats;
    t.candidates = r->candidates;
    report.launches += t.launches;
    for (size_t k : users[i]) TESSEL_RETURN_IF_ERROR(exec.SetLocal(k, t.local));
    if (t.local != t.default_local) winners.push_back({t.kernel, t.local});
    cache.Put({.key = t.key,
               .local = t.local,
               .ms = t.ms,
               .default_ms = t.default_ms,
               .strategy = std::string(tuning::StrategyName(options.strategy)),
               .launches = t.launches});
  }
  report.seconds = elapsed();
  return report;
}

StatusOr<ModelCheck> CheckOnModel(OpenClExecutor& exec, const std::vector<Tensor>& inputs,
                                  int rounds, int repeat, const TuneReport& report,
                                  tuning::TuningCache& cache) {
  const std::vector<Launch>& launches = exec.launches();
  std::vector<tuning::LocalSize> tuned;
  for (const Launch& l : launches) tuned.push_back(l.local);
  const auto use = [&](bool tuned_sizes) -> Status {
    for (size_t k = 0; k < launches.size(); ++k) {
      TESSEL_RETURN_IF_ERROR(exec.SetLocal(k, tuned_sizes ? tuned[k] : launches[k].default_local));
    }
    return Status::Ok();
  };
  double best[3] = {1e300, 1e300, 1e300};  // default, tuned, default again
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < 3; ++i) {
      const int c = (i + r) % 3;
      TESSEL_RETURN_IF_ERROR(use(c == 1));
      for (int k = 0; k < repeat; ++k) {
        const auto start = std::chrono::steady_clock::now();
        TESSEL_RETURN_IF_ERROR(exec.Run(inputs).status());
        best[c] = std::min(best[c], std::chrono::duration<double, std::milli>(
                                        std::chrono::steady_clock::now() - start)
                                        .count());
      }
    }
  }
  ModelCheck check;
  check.default_ms = std::min(best[0], best[2]);
  check.tuned_ms = best[1];
  check.noise = std::fabs(best[0] - best[2]) / check.default_ms;
  check.kept_tuned = check.tuned_ms <= check.default_ms;
  TESSEL_RETURN_IF_ERROR(use(check.kept_tuned));
  if (!check.kept_tuned) {
    for (const KernelTuning& k : report.kernels) {
      if (k.local == k.default_local || k.skipped) continue;
      cache.Put({.key = k.key,
                 .local = k.default_local,
                 .ms = k.default_ms,
                 .default_ms = k.default_ms,
                 .strategy = "default (kept by the model check)",
                 .launches = k.launches});
    }
  }
  return check;
}

}  // namespace tessel::opencl
