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
// A size replaces the default only when it is this much faster, relatively
// and in milliseconds (half a microsecond: a GPU launch costs about ten of
// its own, and the timer resolves a quarter when a short kernel's timing
// is the mean of 4 back-to-back launches, as OpenCL tuning does it).
constexpr double kMinGain = 0.02;
constexpr double kMinGainMs = 0.0005;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The q-quantile of `v`, interpolated between the samples around it.
double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(at));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (at - static_cast<double>(lo)) * (v[hi] - v[lo]);
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
  bool Failed(const LocalSize& l) const { return failed_.count(l) > 0; }
  double MedianOf(const LocalSize& l) const { return Median(samples_.at(l)); }
  // The timed candidates, fastest first by their fastest launch: what slows
  // a launch down (another process, a clock dip) only ever adds time, so
  // the minimum ranks a candidate timed once or twice best.
  std::vector<LocalSize> Ranked() const {
    std::vector<std::pair<double, LocalSize>> r;
    for (const auto& [l, s] : samples_) r.push_back({*std::min_element(s.begin(), s.end()), l});
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
// timing each per round, interleaved (in rotating order) so that drift
// hits them all alike; the fastest median of these rounds wins.
StatusOr<TuneResult> Finish(Meter& meter, const LocalSize& def, int finalists, int rounds) {
  std::vector<LocalSize> last{def};
  for (const LocalSize& l : meter.Ranked()) {
    if (static_cast<int>(last.size()) > finalists) break;
    if (l != def) last.push_back(l);
  }
  // Each round starts with the next one: the first timing after a wait
  // can be slower (an idle device), and that must not always be the
  // default's.
  std::map<LocalSize, std::vector<double>> times;
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < last.size(); ++i) {
      const LocalSize& l = last[(i + static_cast<size_t>(r)) % last.size()];
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
  double best = r.default_ms;
  LocalSize best_local = def;
  for (const auto& [l, t] : times) {
    const double m = Median(t);
    if (m < best) {
      best = m;
      best_local = l;
    }
  }
  // The default stays unless another size is clearly faster: by 2% and
  // a microsecond at the median, and with every launch of its upper quartile faster than the
  // default's lower quartile. A gain within the noise is not worth a cache
  // entry that may be slower in the model.
  if (best < r.default_ms * (1 - kMinGain) && best < r.default_ms - kMinGainMs &&
      Quantile(times[best_local], 0.75) < Quantile(times[def], 0.25)) {
    r.ms = best;
    r.local = best_local;
  }
  r.launches = meter.launches();
  r.candidates = meter.candidates();
  return r;
}

// Finalists and rounds that fit what is left of a budget (at least the
// default and one other, four rounds: fewer let noise decide).
std::pair<int, int> FinalShape(int64_t left) {
  if (left >= 20) return {3, 5};
  if (left >= 12) return {2, 4};
  return {1, 4};
}

// MACE, MNN and exhaustive: every candidate of the list timed alike.
StatusOr<TuneResult> TuneList(const std::vector<LocalSize>& list, const LocalSize& def,
                              Meter& meter) {
  meter.TimeOne(def);  // warm-up
  meter.Time(def, kScreenRepeats);
  for (const LocalSize& l : list) {
    if (!meter.Timed(l)) meter.Time(l, kScreenRepeats);
  }
  return Finish(meter, def, 3, 5);
}

// The sorted values each dimension takes in `space`.
std::array<std::vector<size_t>, 3> DimValues(const std::vector<LocalSize>& space) {
  std::array<std::vector<size_t>, 3> values;
  for (const LocalSize& l : space) {
    for (size_t d = 0; d < 3; ++d) values[d].push_back(l[d]);
  }
  for (auto& v : values) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  return values;
}

// Where race starts, in order of priority: the default, up to three hints
// (sizes that won on similar launches of this device), the smallest group
// (a launch of few long-running items spreads best over the compute units),
// groups spanning dimension 0 whole with dimension 1 whole or 1 and powers
// of two in dimension 2, then MACE's structured candidates.
std::vector<LocalSize> RaceSeeds(const Problem& p, const LocalSize& def,
                                 const std::vector<LocalSize>& hints) {
  std::vector<LocalSize> seeds{def};
  for (const LocalSize& h : hints) {
    if (seeds.size() < 4) seeds.push_back(h);
  }
  seeds.push_back({1, 1, 1});
  const auto at_most = [&](size_t d, size_t v) {
    return d < static_cast<size_t>(p.dims) ? std::min(v, p.max_item[d]) : size_t{1};
  };
  const size_t g0 = at_most(0, p.global[0]), g1 = at_most(1, p.global[1]);
  std::vector<LocalSize> spans;
  for (size_t z = 1; z <= at_most(2, p.global[2]); z *= 2) {
    for (size_t y : {size_t{1}, g1}) {
      if (g0 * y * z <= p.max_group) spans.push_back({g0, y, at_most(2, z)});
    }
  }
  // Nearest first to 128 items, the size GPUs are usually best at.
  std::stable_sort(spans.begin(), spans.end(), [](const LocalSize& a, const LocalSize& b) {
    const auto off = [](const LocalSize& l) {
      return std::fabs(std::log2(static_cast<double>(l[0] * l[1] * l[2]) / 128.0));
    };
    return off(a) < off(b);
  });
  seeds.insert(seeds.end(), spans.begin(), spans.end());
  for (const LocalSize& l : MaceCandidates(p)) seeds.push_back(l);
  return seeds;
}

// A candidate's neighbours: one dimension moved one or two values along its
// list, or a factor of two moved from one dimension to another.
std::vector<LocalSize> Neighbours(const Problem& p, const LocalSize& l,
                                  const std::array<std::vector<size_t>, 3>& values) {
  std::vector<LocalSize> out;
  for (size_t d = 0; d < static_cast<size_t>(p.dims); ++d) {
    const auto& v = values[d];
    const auto at = std::lower_bound(v.begin(), v.end(), l[d]) - v.begin();
    for (int64_t step : {-1, 1, -2, 2}) {
      const int64_t to = at + step;
      if (to < 0 || to >= static_cast<int64_t>(v.size())) continue;
      LocalSize n = l;
      n[d] = v[static_cast<size_t>(to)];
      out.push_back(n);
    }
  }
  for (size_t a = 0; a < static_cast<size_t>(p.dims); ++a) {
    for (size_t b = 0; b < static_cast<size_t>(p.dims); ++b) {
      if (a == b || l[b] % 2 != 0) continue;
      LocalSize n = l;
      n[a] *= 2;
      n[b] /= 2;
      out.push_back(n);
    }
  }
  return out;
}

// Race: single launches first, over seeds, uniform samples and then a
// hill-climb from the best candidate not yet expanded; the best third is timed twice more, and
// the finalists race the default in interleaved rounds. A space the
// budget covers is screened whole.
StatusOr<TuneResult> TuneRace(const Problem& p, const LocalSize& def, uint64_t seed,
                              const std::vector<LocalSize>& hints, Meter& meter) {
  const std::vector<LocalSize> space = ExhaustiveCandidates(p);
  const std::set<LocalSize> legal(space.begin(), space.end());
  const std::array<std::vector<size_t>, 3> values = DimValues(space);
  const int64_t budget = RaceBudget(p);
  const auto [finalists, rounds] = FinalShape(budget / 3);
  const int64_t final_cost = static_cast<int64_t>(finalists + 1) * rounds;
  // Screening launches s, plus two for each of the best s / 3 when the
  // budget is large enough for that; a small one all goes to screening.
  // A small budget times each screened candidate twice instead (ranked by
  // the faster: a size's first launch may pay for the driver setting it up).
  const int64_t left = budget - 1 - final_cost;
  const bool retime = left >= 25;
  const int per = retime ? 1 : 2;
  const int64_t screen = std::max<int64_t>(retime ? left * 3 / 5 : left / 2, 2);
  int64_t screened = 0;
  const auto screen_one = [&](const LocalSize& l) {
    if (screened >= screen || meter.Timed(l) || meter.Failed(l)) return;
    if (l != def && !legal.count(l)) return;
    ++screened;
    meter.Time(l, per);
  };
  meter.TimeOne(def);                                      // warm-up
  if (static_cast<int64_t>(space.size()) + 1 <= screen) {  // the whole space
    screen_one(def);
    for (const LocalSize& l : space) screen_one(l);
  } else {
    // A quarter of the screening for seeds, a quarter for uniform samples
    // of the space (it has many near-best points), the rest for climbing.
    const std::vector<LocalSize> seeds = RaceSeeds(p, def, hints);
    for (size_t i = 0; i < seeds.size() && screened < std::max<int64_t>(screen / 4, 3); ++i) {
      screen_one(seeds[i]);
    }
    std::vector<LocalSize> shuffled = space;
    std::mt19937_64 rng(seed);
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    for (size_t i = 0; i < shuffled.size() && screened < screen / 2; ++i) screen_one(shuffled[i]);
    std::set<LocalSize> expanded;
    while (screened < screen) {
      const std::vector<LocalSize> ranked = meter.Ranked();
      auto next = std::find_if(ranked.begin(), ranked.end(),
                               [&](const LocalSize& l) { return !expanded.count(l); });
      if (next == ranked.end()) break;
      expanded.insert(*next);
      for (const LocalSize& n : Neighbours(p, *next, values)) screen_one(n);
    }
  }
  if (retime) {
    std::vector<LocalSize> ranked = meter.Ranked();
    ranked.resize(std::min(ranked.size(), static_cast<size_t>(screen / 3)));
    for (const LocalSize& l : ranked) meter.Time(l, 2);
  }
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
  const std::array<std::vector<size_t>, 3> values = DimValues(space);
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
  return std::max<int64_t>((1 + kScreenRepeats * space) * 13 / 100, 18);
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
      return TuneRace(problem, def, options.seed, options.hints, meter);
  }
  return InvalidArgument("unknown strategy");
}

}  // namespace tessel::tuning
