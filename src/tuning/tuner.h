// The tuner: finds a fast local size for one launch by timing candidates.
// It sees the launch's Problem and a way to time one launch; it knows
// nothing of OpenCL.
//
//   LaunchTimer timer = [&](const LocalSize& l) -> StatusOr<double> { ... };  // ms
//   TESSEL_ASSIGN_OR_RETURN(TuneResult r, Tune(problem, timer, {.strategy = Strategy::kRace}));
//   // r.local, r.ms, r.default_ms, r.launches
//
// Strategies (ParseStrategy takes their names):
//   mace        MACE's candidate lists (space.h)
//   mnn         MNN's power-of-two sweeps
//   exhaustive  every legal size: the oracle the others are judged by
//   random      uniform samples of the exhaustive space, race's budget
//   annealing   simulated annealing over the exhaustive space, race's budget
//   race        tessel's own: single launches screen seeds (the default,
//               the winners of similar launches, the smallest group, groups spanning the contiguous
//               dimension, MACE's structured sizes), uniform samples, then
//               a hill-climb over the exhaustive space from the best
//               candidate not yet expanded; the best third is timed twice
//               more and the finalists race the default, interleaved.
//               Within 13% of exhaustive's launches (RaceBudget, at least
//               18); a small budget screens with two launches a candidate,
//               and a space the budget covers is screened whole
//
// Measurement resists noise: one warm-up launch per tuning, a candidate's
// time is the median of its timed launches, a candidate whose launches
// spread (coefficient of variation above 10%) is timed again, and the
// finalists of every strategy are timed in interleaved rounds against the
// default. A candidate that fails to launch is skipped. The default local
// size is always among the finalists and stays unless another is clearly
// faster there (2% and 0.5 us at the median, its upper quartile below the
// default's lower quartile), so a tuned size is never slower than it as
// measured, and noise does not move a launch off its default.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "tuning/space.h"

namespace tessel::tuning {

enum class Strategy { kMace, kMnn, kExhaustive, kRandom, kAnnealing, kRace };

StatusOr<Strategy> ParseStrategy(std::string_view name);  // InvalidArgument naming the options
std::string_view StrategyName(Strategy s);
const std::vector<Strategy>& AllStrategies();

// Times one launch with `local`: device milliseconds, or an error when the
// launch failed (the candidate is then skipped).
using LaunchTimer = std::function<StatusOr<double>(const LocalSize& local)>;

struct TuneOptions {
  Strategy strategy = Strategy::kRace;
  uint64_t seed = 1;  // random, annealing and race's samples
  // Launches random and annealing may use; 0: what race would use on this
  // problem (RaceBudget).
  int64_t max_launches = 0;
  // Race: sizes that won on similar launches of this device (the same
  // kernel first), timed right after the default when legal here. A device
  // tends to like one shape for one kernel: PoCL's tiny groups, a GPU's
  // whole planes.
  std::vector<LocalSize> hints;
};

struct TuneResult {
  LocalSize local{1, 1, 1};
  double ms = 0;          // its median time in the final rounds
  double default_ms = 0;  // the default's, in the same rounds
  int64_t launches = 0;   // every launch the tuning made, warm-up included
  int candidates = 0;     // distinct local sizes timed
};

// Called after every timed candidate: candidates timed so far, the best ms.
using TuneProgress = std::function<void(int candidates, double best_ms)>;

// Tunes one launch. Fails only when not even the default can be launched.
StatusOr<TuneResult> Tune(const Problem& problem, const LaunchTimer& timer,
                          const TuneOptions& options, const TuneProgress& progress = {});

// The launches race plans for `problem`, before it times anything: at most
// 13% of what exhaustive would use with its three timed launches per
// candidate, at least 24.
int64_t RaceBudget(const Problem& problem);

}  // namespace tessel::tuning
