#include "tuning/tuner.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <set>

namespace tessel::tuning {

namespace {

// Timed launches of a candidate screened by a list strategy.
constexpr int kScreenRepeats = 3;
// Above this coefficient of variation a candidate's launches are timed again.
constexpr double kMaxCv = 0.10;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double Cv(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  var /= static_cast<double>(v.size() - 1);
  return mean > 0 ? std::sqrt(var) / mean : 0;
}

// Times candidates and remembers every sample; counts the launches.
class Meter {
 public:
  Meter(const LaunchTimer& timer, const TuneProgress& progress)
      : timer_(timer), progress_(progress) {}

  // One timed launch of `l`, or nothing when it fails to launch (then
  // never again).
  std::optional<double> TimeOne(const LocalSize& l) {
    if (failed_.count(l)) return std::nullopt;
    ++launches_;
    StatusOr<double> ms = timer_(l);
    if (!ms.ok()) {
      failed_.insert(l);
      samples_.erase(l);
      return std::nullopt;
    }
    samples_[l].push_back(*ms);
    return *ms;
  }
  // `k` timed launches of `l`, and `k` more when they spread; false when it
  // failed to launch.
  bool Time(const LocalSize& l, int k) {
    for (int round = 0; round < 2; ++round) {
      for (int i = 0; i < k; ++i) {
        if (!TimeOne(l)) return false;
      }
      if (k < 3 || Cv(samples_[l]) <= kMaxCv) break;
    }
    best_ = std::min(best_, MedianOf(l));
    if (progress_) progress_(candidates(), best_);
    return true;
  }
  bool Timed(const LocalSize& l) const { return samples_.count(l) > 0; }
  double MedianOf(const LocalSize& l) const { return Median(samples_.at(l)); }
  // The timed candidates, fastest first.
  std::vector<LocalSize> Ranked() const {
    std::vector<std::pair<double, LocalSize>> r;
    for (const auto& [l, s] : samples_) r.push_back({Median(s), l});
    std::sort(r.begin(), r.end());
    std::vector<LocalSize> out;
    for (const auto& [ms, l] : r) out.push_back(l);
    return out;
  }
  int64_t launches() const { return launches_; }
  int candidates() const { return static_cast<int>(samples_.size() + failed_.size()); }

 private:
  const LaunchTimer& timer_;
  const TuneProgress& progress_;
  std::map<LocalSize, std::vector<double>> samples_;
  std::set<LocalSize> failed_;
  int64_t launches_ = 0;
  double best_ = 1e300;
};

// Final rounds: the best `finalists` timed candidates and the default, one
// launch each per round, interleaved so that drift hits them all alike; the
// fastest median of these rounds wins.
StatusOr<TuneResult> Finish(Meter& meter, const LocalSize& def, int finalists, int rounds) {
  std::vector<LocalSize> last{def};
  for (const LocalSize& l : meter.Ranked()) {
    if (static_cast<int>(last.size()) > finalists) break;
    if (l != def) last.push_back(l);
  }
  std::map<LocalSize, std::vector<double>> times;
  for (int r = 0; r < rounds; ++r) {
    for (const LocalSize& l : last) {
      if (std::optional<double> ms = meter.TimeOne(l)) times[l].push_back(*ms);
    }
  }
  if (!times.count(def)) {
    return Internal("the default local size " + ToString(def, 3) + " failed to launch");
  }
  TuneResult r;
  r.default_ms = Median(times[def]);
  r.local = def;
  r.ms = r.default_ms;
  for (const auto& [l, t] : times) {
    const double m = Median(t);
    if (m < r.ms) {
      r.ms = m;
      r.local = l;
    }
  }
  r.launches = meter.launches();
  r.candidates = meter.candidates();
  return r;
}

// Finalists and rounds that fit what is left of a budget (at least the
// default and one other, two rounds).
std::pair<int, int> FinalShape(int64_t left) {
  if (left >= 20) return {3, 5};
  if (left >= 12) return {2, 4};
  return {1, 2};
}

// The race's cheap analytic filter: which candidates a device would run
// well, from what it reports. Keeps sizes whose work-groups are nearly full
// (waste within 1/16 of the least possible), whose items fill whole warps
// (CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE) unless one group holds
// every item, and that make enough work-groups to occupy every compute unit
// when the launch is large enough for that.
std::vector<LocalSize> Prune(const Problem& p, const std::vector<LocalSize>& space) {
  double least_waste = 1e300;
  size_t items = 1;
  for (int d = 0; d < p.dims; ++d) items *= std::max<size_t>(p.global[static_cast<size_t>(d)], 1);
  for (const LocalSize& l : space) least_waste = std::min(least_waste, Waste(p, l));
  const size_t warp = std::max<size_t>(p.preferred_multiple, 1);
  const size_t cu = static_cast<size_t>(std::max<int64_t>(p.compute_units, 1));
  std::vector<LocalSize> kept;
  for (const LocalSize& l : space) {
    const size_t t = l[0] * l[1] * l[2];
    if (Waste(p, l) > least_waste * (1.0 + 1.0 / 16)) continue;
    if (t % warp != 0 && t < items) continue;
    if (Groups(p, l) < cu && items >= cu * warp * 2 && t > warp) continue;
    kept.push_back(l);
  }
  return kept;
}

// How far a candidate is from what GPUs like: 128 to 256 items, and at
// least a warp's worth (or all) of the contiguous dimension. Lower is
// better; orders the pruned list when the budget cannot time it all.
double Prior(const Problem& p, const LocalSize& l) {
  const double t = static_cast<double>(l[0] * l[1] * l[2]);
  const size_t warp = std::max<size_t>(p.preferred_multiple, 1);
  double score = std::fabs(std::log2(t / 181.0));
  if (l[0] < std::min(warp, p.global[0])) score += 1;
  return score + 4 * (Waste(p, l) - 1);
}

StatusOr<TuneResult> TuneList(const std::vector<LocalSize>& list, const LocalSize& def,
                              Meter& meter) {
  meter.TimeOne(def);  // warm-up
  meter.Time(def, kScreenRepeats);
  for (const LocalSize& l : list) {
    if (!meter.Timed(l)) meter.Time(l, kScreenRepeats);
  }
  return Finish(meter, def, 3, 5);
}

StatusOr<TuneResult> TuneRace(const Problem& p, const LocalSize& def, Meter& meter) {
  const int64_t budget = RaceBudget(p);
  std::vector<LocalSize> field = Prune(p, ExhaustiveCandidates(p));
  std::stable_sort(field.begin(), field.end(), [&](const LocalSize& a, const LocalSize& b) {
    return Prior(p, a) < Prior(p, b);
  });
  const auto [finalists, rounds] = FinalShape(budget / 3);
  const int64_t final_cost = static_cast<int64_t>(finalists + 1) * rounds;
  // Round one times each entrant (the default among them) once; round two
  // times the best third of them twice more.
  int64_t entrants = std::max<int64_t>((budget - 1 - final_cost) * 3 / 5, 2);
  while (entrants > 2 &&
         1 + entrants + 2 * std::max<int64_t>(entrants / 3, 1) + final_cost > budget)
    --entrants;
  field.erase(std::remove(field.begin(), field.end(), def), field.end());
  if (static_cast<int64_t>(field.size()) > entrants - 1)
    field.resize(static_cast<size_t>(entrants - 1));
  meter.TimeOne(def);  // warm-up
  meter.Time(def, 1);
  for (const LocalSize& l : field) meter.Time(l, 1);
  std::vector<LocalSize> ranked = meter.Ranked();
  ranked.resize(std::min(ranked.size(), std::max<size_t>((field.size() + 1) / 3, 1)));
  for (const LocalSize& l : ranked) meter.Time(l, 2);
  return Finish(meter, def, finalists, rounds);
}

StatusOr<TuneResult> TuneRandom(const Problem& p, const LocalSize& def, int64_t budget,
                                uint64_t seed, Meter& meter) {
  std::vector<LocalSize> space = ExhaustiveCandidates(p);
  std::mt19937_64 rng(seed);
  std::shuffle(space.begin(), space.end(), rng);
  const auto [finalists, rounds] = FinalShape(budget / 3);
  const int64_t screen = budget - 1 - static_cast<int64_t>(finalists + 1) * rounds;
  meter.TimeOne(def);  // warm-up
  meter.Time(def, 1);
  for (const LocalSize& l : space) {
    if (meter.launches() >= screen + 1) break;
    if (!meter.Timed(l)) meter.Time(l, 1);
  }
  return Finish(meter, def, finalists, rounds);
}

// Simulated annealing: a step moves one dimension to a neighbouring value of
// the exhaustive space; a slower size is accepted with probability
// exp(-relative slowdown / temperature), the temperature cooling
// geometrically from 0.3 to 0.01 over the budget.
StatusOr<TuneResult> TuneAnnealing(const Problem& p, const LocalSize& def, int64_t budget,
                                   uint64_t seed, Meter& meter) {
  const std::vector<LocalSize> space = ExhaustiveCandidates(p);
  std::array<std::vector<size_t>, 3> values;
  for (const LocalSize& l : space) {
    for (size_t d = 0; d < 3; ++d) values[d].push_back(l[d]);
  }
  for (auto& v : values) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  const std::set<LocalSize> legal(space.begin(), space.end());
  std::mt19937_64 rng(seed);
  const auto [finalists, rounds] = FinalShape(budget / 3);
  const int64_t screen = budget - 1 - static_cast<int64_t>(finalists + 1) * rounds;
  meter.TimeOne(def);  // warm-up
  meter.Time(def, 1);
  LocalSize current = def;
  double current_ms = meter.MedianOf(def);
  const double t0 = 0.3, t1 = 0.01;
  for (int64_t step = 0; step < screen * 8 && meter.launches() < screen + 1; ++step) {
    const double progress = static_cast<double>(meter.launches()) / static_cast<double>(screen);
    const double temperature = t0 * std::pow(t1 / t0, std::min(progress, 1.0));
    LocalSize next = current;
    const size_t d = rng() % static_cast<size_t>(p.dims);
    const auto& v = values[d];
    const auto at = std::lower_bound(v.begin(), v.end(), current[d]) - v.begin();
    const int64_t move = (rng() % 2) ? 1 : -1;
    const int64_t to = std::clamp<int64_t>(at + move * static_cast<int64_t>(1 + rng() % 2), 0,
                                           static_cast<int64_t>(v.size()) - 1);
    next[d] = v[static_cast<size_t>(to)];
    if (next == current || !legal.count(next)) continue;
    if (!meter.Timed(next) && !meter.Time(next, 1)) continue;
    const double ms = meter.MedianOf(next);
    const double slower = (ms - current_ms) / current_ms;
    std::uniform_real_distribution<double> u(0, 1);
    if (slower <= 0 || u(rng) < std::exp(-slower / temperature)) {
      current = next;
      current_ms = ms;
    }
  }
  return Finish(meter, def, finalists, rounds);
}

}  // namespace

StatusOr<Strategy> ParseStrategy(std::string_view name) {
  for (Strategy s : AllStrategies()) {
    if (StrategyName(s) == name) return s;
  }
  return InvalidArgument("unknown tuning strategy '" + std::string(name) +
                         "' (strategies: race, mace, mnn, exhaustive, random, annealing)");
}

std::string_view StrategyName(Strategy s) {
  switch (s) {
    case Strategy::kMace:
      return "mace";
    case Strategy::kMnn:
      return "mnn";
    case Strategy::kExhaustive:
      return "exhaustive";
    case Strategy::kRandom:
      return "random";
    case Strategy::kAnnealing:
      return "annealing";
    case Strategy::kRace:
      return "race";
  }
  return "?";
}

const std::vector<Strategy>& AllStrategies() {
  static const std::vector<Strategy> all{Strategy::kRace,   Strategy::kMace,
                                         Strategy::kMnn,    Strategy::kExhaustive,
                                         Strategy::kRandom, Strategy::kAnnealing};
  return all;
}

int64_t RaceBudget(const Problem& problem) {
  const auto space = static_cast<int64_t>(ExhaustiveCandidates(problem).size());
  return std::max<int64_t>((1 + kScreenRepeats * space) * 12 / 100, 12);
}

StatusOr<TuneResult> Tune(const Problem& problem, const LaunchTimer& timer,
                          const TuneOptions& options, const TuneProgress& progress) {
  Meter meter(timer, progress);
  const LocalSize def = DefaultLocal(problem);
  const int64_t budget = options.max_launches > 0 ? options.max_launches : RaceBudget(problem);
  switch (options.strategy) {
    case Strategy::kMace:
      return TuneList(MaceCandidates(problem), def, meter);
    case Strategy::kMnn:
      return TuneList(MnnCandidates(problem), def, meter);
    case Strategy::kExhaustive:
      return TuneList(ExhaustiveCandidates(problem), def, meter);
    case Strategy::kRandom:
      return TuneRandom(problem, def, budget, options.seed, meter);
    case Strategy::kAnnealing:
      return TuneAnnealing(problem, def, budget, options.seed, meter);
    case Strategy::kRace:
      return TuneRace(problem, def, meter);
  }
  return InvalidArgument("unknown strategy");
}

}  // namespace tessel::tuning
