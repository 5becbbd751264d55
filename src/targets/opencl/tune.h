// Tuning a prepared model's launches: every distinct tunable launch (by its
// tuning key) gets the local size the cache holds, or one the tuner finds,
// which then goes into the cache.
//
//   TESSEL_ASSIGN_OR_RETURN(TuneReport r, TuneLaunches(*exec, cache, {.strategy = kRace}));
//   TESSEL_RETURN_IF_ERROR(cache.Save(path));
//
// Launches of one key share one tuning. A key in the cache costs no launch,
// so a second run with the cache tunes nothing. The executor's runtime must
// profile. After tuning, the buffers hold what the tuning launches left:
// run the model again for real outputs.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "targets/opencl/executor.h"
#include "tuning/cache.h"
#include "tuning/tuner.h"

namespace tessel::opencl {

struct TuneProgress {
  int kernel = 0;   // 1-based, of `kernels`
  int kernels = 0;  // distinct launches to tune
  std::string name;
  int candidates = 0;  // timed so far for this one
  double best_ms = 0;
};

struct TuneLaunchesOptions {
  tuning::Strategy strategy = tuning::Strategy::kRace;
  // Stop starting new tunings after this many seconds (0: no limit); the
  // launches left keep their default.
  double budget_seconds = 0;
  uint64_t seed = 1;
  std::function<void(const TuneProgress&)> progress;
};

// One distinct launch.
struct KernelTuning {
  std::string kernel;  // the kernel's name
  std::string node;    // the first node that launches it
  int uses = 0;        // launches of the model with this key
  tuning::TuneKey key;
  tuning::LocalSize default_local{1, 1, 1}, local{1, 1, 1};
  double default_ms = 0, ms = 0;  // from the cache when cached
  int64_t launches = 0;           // tuning launches (0 when cached)
  int candidates = 0;
  bool cached = false;   // taken from the cache
  bool skipped = false;  // past the time budget: the default stays
};

struct TuneReport {
  std::vector<KernelTuning> kernels;
  int64_t launches = 0;  // tuning launches in all
  double seconds = 0;    // wall time of the tuning
  int fixed = 0;         // launches whose kernel fixes its local size
};

StatusOr<TuneReport> TuneLaunches(OpenClExecutor& exec, tuning::TuningCache& cache,
                                  const TuneLaunchesOptions& options);

// How many back-to-back launches one timing of launch `k` takes: enough
// that a short kernel's launches add up to about 50 µs (at most 4), so
// that the event clock's resolution and one launch's jitter stop deciding
// between sizes 1 µs apart (NVIDIA's event clock ticks in whole µs).
// Probes the default size with 3 launches, which it adds to `launches`.
StatusOr<int> TimingRepeats(OpenClExecutor& exec, size_t k, int64_t& launches);

// What tells a device's launches apart for tuning: the key less platform,
// device, driver and storage, which one executor shares.
std::string LaunchKeyText(const Launch& launch);

// Race's hints for a launch of `kernel`: the sizes that beat the default on
// earlier launches, the same kernel's first, most recent first, at most 3.
std::vector<tuning::LocalSize> Hints(
    const std::vector<std::pair<std::string, tuning::LocalSize>>& winners,
    const std::string& kernel);

// The whole model with default and with tuned local sizes.
struct ModelCheck {
  double default_ms = 0;  // the faster of the two default timings
  double tuned_ms = 0;
  double noise = 0;        // how far apart the two default timings were, relatively
  bool kept_tuned = true;  // false: the launches went back to their defaults
};

// Checks tuned sizes on the whole model, since a launch timed alone is not
// a launch among others: `rounds` rounds each time the model with default
// sizes, tuned sizes and default sizes again (in an order rotating from
// round to round), each configuration keeping its fastest of `repeat` runs.
// When the tuned sizes are slower than the faster default timing, every
// launch goes back to its default, and so do the cache entries of `report`
// (they then record the default as the model's best). With tuned sizes
// set on `exec` (TuneLaunches did) and the model's inputs.
StatusOr<ModelCheck> CheckOnModel(OpenClExecutor& exec, const std::vector<Tensor>& inputs,
                                  int rounds, int repeat, const TuneReport& report,
                                  tuning::TuningCache& cache);

}  // namespace tessel::opencl
