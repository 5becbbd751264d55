#include "memory/testing/tight_instance.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/check.h"

namespace tessel::memory {

namespace {

struct Gap {
  int64_t low_bytes, high_bytes;  // [low_bytes, high_bytes)
};

// The free stretches of [0, capacity) between the live buffers' placements.
std::vector<Gap> FreeGaps(const Problem& problem, const std::vector<Placement>& placements,
                          const std::vector<BufferIndex>& live, int64_t capacity) {
  std::vector<Gap> used;
  for (BufferIndex i : live) {
    const int64_t low = placements[static_cast<size_t>(i)].offset_bytes;
    used.push_back({low, low + problem.buffers[static_cast<size_t>(i)].size_bytes});
  }
  std::sort(used.begin(), used.end(),
            [](const Gap& a, const Gap& b) { return a.low_bytes < b.low_bytes; });
  std::vector<Gap> gaps;
  int64_t at = 0;
  for (const Gap& u : used) {
    if (u.low_bytes > at) gaps.push_back({at, u.low_bytes});
    at = std::max(at, u.high_bytes);
  }
  if (at < capacity) gaps.push_back({at, capacity});
  return gaps;
}

class Draw {
 public:
  explicit Draw(const TightInstanceOptions& options) : options_(options), rng_(options.seed) {}

  double Unit() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_); }
  bool Coin() { return rng_() % 2 == 0; }
  size_t Below(size_t n) { return static_cast<size_t>(rng_() % n); }

  // A log-uniform size in [min_size_bytes, max_size_bytes], a multiple of
  // unit_bytes.
  int64_t Size() {
    const int64_t unit = options_.unit_bytes;
    const double lo = std::log(static_cast<double>(options_.min_size_bytes / unit));
    const double hi = std::log(static_cast<double>(options_.max_size_bytes / unit) + 1);
    return std::min(options_.max_size_bytes / unit,
                    std::max(options_.min_size_bytes / unit,
                             static_cast<int64_t>(std::exp(lo + (hi - lo) * Unit())))) *
           unit;
  }

  // Mostly a few steps, 1/k-weighted (activations read by the next op or
  // two); sometimes log-uniform up to max_long_steps (skip connections).
  int64_t LifetimeSteps() {
    const int64_t short_max = options_.max_short_steps;
    if (Unit() < options_.long_lived_share && options_.max_long_steps > short_max) {
      const double lo = std::log(static_cast<double>(short_max + 1));
      const double hi = std::log(static_cast<double>(options_.max_long_steps) + 1);
      return std::min(options_.max_long_steps,
                      static_cast<int64_t>(std::exp(lo + (hi - lo) * Unit())));
    }
    double total = 0;
    for (int64_t k = 1; k <= short_max; ++k) total += 1.0 / static_cast<double>(k);
    double pick = Unit() * total;
    for (int64_t k = 1; k < short_max; ++k) {
      pick -= 1.0 / static_cast<double>(k);
      if (pick < 0) return k;
    }
    return short_max;
  }

 private:
  const TightInstanceOptions& options_;
  std::mt19937_64 rng_;
};

// `want` bytes clipped to the gap, never leaving a remainder that no buffer
// could fill: the gap is used up or keeps at least min_size_bytes.
int64_t FitToGap(int64_t want, int64_t gap_bytes, const TightInstanceOptions& options) {
  const int64_t size = std::min(want, gap_bytes);
  const int64_t rest = gap_bytes - size;
  if (rest == 0 || rest >= options.min_size_bytes) return size;
  return gap_bytes <= options.max_size_bytes ? gap_bytes : gap_bytes - options.min_size_bytes;
}

// A random gap that holds `want` bytes, else the widest one, so that large
// buffers land where there is room for them.
size_t PickGap(const std::vector<Gap>& gaps, int64_t want, Draw& draw) {
  std::vector<size_t> roomy;
  size_t widest = 0;
  for (size_t g = 0; g < gaps.size(); ++g) {
    const int64_t width = gaps[g].high_bytes - gaps[g].low_bytes;
    if (width >= want) roomy.push_back(g);
    if (width > gaps[widest].high_bytes - gaps[widest].low_bytes) widest = g;
  }
  return roomy.empty() ? widest : roomy[draw.Below(roomy.size())];
}

}  // namespace

TightInstance MakeTightInstance(const TightInstanceOptions& options) {
  const int64_t unit = options.unit_bytes;
  TESSEL_CHECK(unit > 0 && options.min_size_bytes >= unit &&
               options.max_size_bytes >= options.min_size_bytes);
  TESSEL_CHECK(options.min_size_bytes % unit == 0 && options.max_size_bytes % unit == 0 &&
               options.capacity_bytes % unit == 0);
  TESSEL_CHECK(options.capacity_bytes >= options.min_size_bytes);
  TESSEL_CHECK(options.max_short_steps >= 1 && options.peaks >= 0);

  Draw draw(options);
  TightInstance out;
  Problem& problem = out.problem;
  problem.pools.push_back({.name = "memory"});
  std::vector<BufferIndex> live;
  int64_t peaks_done = 0;
  for (int64_t step = 0; static_cast<int32_t>(problem.buffers.size()) < options.num_buffers;
       ++step) {
    std::erase_if(live, [&](BufferIndex i) {
      return problem.buffers[static_cast<size_t>(i)].live.last_use <= step;
    });
    int64_t live_bytes = 0;
    for (BufferIndex i : live) live_bytes += problem.buffers[static_cast<size_t>(i)].size_bytes;
    // Peak k: the first step once k * num_buffers / (peaks + 1) buffers exist.
    const int64_t made = static_cast<int64_t>(problem.buffers.size());
    const bool peak = peaks_done < options.peaks &&
                      made * (options.peaks + 1) >= (peaks_done + 1) * options.num_buffers;
    peaks_done += peak;
    const double share =
        peak ? 1.0 : options.min_fill + (options.max_fill - options.min_fill) * draw.Unit();
    const int64_t target =
        static_cast<int64_t>(share * static_cast<double>(options.capacity_bytes));
    std::vector<Gap> gaps = FreeGaps(problem, out.placements, live, options.capacity_bytes);
    while (live_bytes < target && !gaps.empty() &&
           static_cast<int32_t>(problem.buffers.size()) < options.num_buffers) {
      // Short of a full step, the last buffer takes about what is missing.
      int64_t want = draw.Size();
      if (target < options.capacity_bytes) {
        want = std::min(want, std::max(options.min_size_bytes,
                                       AlignUp(target - live_bytes, options.unit_bytes)));
      }
      const size_t g = PickGap(gaps, want, draw);
      Gap& gap = gaps[g];
      const int64_t size = FitToGap(want, gap.high_bytes - gap.low_bytes, options);
      int64_t offset = gap.low_bytes;
      if (draw.Coin()) {
        offset = gap.high_bytes - size;
        gap.high_bytes -= size;
      } else {
        gap.low_bytes += size;
      }
      if (gap.low_bytes == gap.high_bytes) gaps.erase(gaps.begin() + static_cast<ptrdiff_t>(g));
      const BufferIndex index = static_cast<BufferIndex>(problem.buffers.size());
      problem.buffers.push_back({.name = "b" + std::to_string(index),
                                 .size_bytes = size,
                                 .alignment = 1,
                                 .live = {step, step + draw.LifetimeSteps()},
                                 .pool_candidates = {0}});
      out.placements.push_back({.pool = 0, .offset_bytes = offset});
      live.push_back(index);
      live_bytes += size;
    }
  }
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    out.capacity_bytes = std::max(out.capacity_bytes,
                                  out.placements[i].offset_bytes + problem.buffers[i].size_bytes);
  }
  return out;
}

}  // namespace tessel::memory
