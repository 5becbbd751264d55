#include "memory/hill_climb.h"

#include <chrono>
#include <random>

#include "memory/greedy.h"
#include "memory/lower_bound.h"

namespace tessel::memory {

namespace {

int64_t Total(const std::vector<int64_t>& used) {
  int64_t total = 0;
  for (int64_t u : used) total += u;
  return total;
}

}  // namespace

StatusOr<AlgorithmResult> HillClimb(const PlanContext& ctx) {
  const Problem& problem = ctx.problem;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(ctx.options.time_limit_s));
  std::vector<BufferIndex> order = OrderBySize(problem, ctx.conflicts);
  std::vector<int64_t> position(problem.buffers.size(), -1);
  for (size_t i = 0; i < order.size(); ++i)
    position[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);

  GreedyPlacer placer(problem, ctx.conflicts);
  std::vector<Placement> current, trial;
  if (!placer.Place(order, &current))
    return PlacementFailure(problem, ctx.conflicts, order, placer);
  std::vector<int64_t> current_used = PoolUsedBytes(problem, current);
  int64_t current_total = Total(current_used);
  std::vector<Placement> best = current;
  int64_t best_total = current_total;
  const int64_t bound = Total(PoolLowerBounds(problem, current));

  std::mt19937_64 rng(ctx.options.seed);
  auto pick = [&](const std::vector<BufferIndex>& v) { return v[rng() % v.size()]; };
  auto swap = [&](BufferIndex a, BufferIndex b) {
    std::swap(order[static_cast<size_t>(position[static_cast<size_t>(a)])],
              order[static_cast<size_t>(position[static_cast<size_t>(b)])]);
    std::swap(position[static_cast<size_t>(a)], position[static_cast<size_t>(b)]);
  };
  std::vector<BufferIndex> tops, first_level, second_level;
  for (int attempt = 1; attempt <= ctx.options.hill_climb_attempts && best_total > bound;
       ++attempt) {
    if (ctx.options.node_limit <= 0 && std::chrono::steady_clock::now() >= deadline) break;
    tops.clear();
    for (size_t i = 0; i < current.size(); ++i) {
      const Placement& p = current[i];
      const int64_t size = problem.buffers[i].size_bytes;
      if (size > 0 && p.offset_bytes + size == current_used[static_cast<size_t>(p.pool)] &&
          position[i] >= 0) {
        tops.push_back(static_cast<BufferIndex>(i));
      }
    }
    if (tops.empty()) break;
    const BufferIndex top = pick(tops);
    // Only buffers placed before `top` decide where it lands.
    first_level.clear();
    second_level.clear();
    for (BufferIndex n : ctx.conflicts.neighbors(top)) {
      const int64_t pn = position[static_cast<size_t>(n)];
      if (pn < 0) continue;
      if (pn < position[static_cast<size_t>(top)]) first_level.push_back(n);
      for (BufferIndex m : ctx.conflicts.neighbors(n)) {
        const int64_t pm = position[static_cast<size_t>(m)];
        if (pm >= 0 && pm < pn) second_level.push_back(m);
      }
    }
    if (first_level.empty()) continue;
    const BufferIndex a = pick(first_level);
    BufferIndex b = a;
    for (int tries = 0; tries < 8 && b == a; ++tries) {
      b = !second_level.empty() && rng() % 100 > 25 ? pick(second_level) : pick(first_level);
    }
    if (a == b) continue;
    swap(a, b);
    const bool fits = placer.Place(order, &trial);
    const int64_t total = fits ? Total(PoolUsedBytes(problem, trial)) : 0;
    const bool accept =
        fits && (total <= current_total ||
                 static_cast<int64_t>(rng() % 100) <
                     50 * (total - current_total) / std::max<int64_t>(total, 1) / attempt);
    if (!accept) {
      swap(a, b);
      continue;
    }
    current.swap(trial);
    current_used = PoolUsedBytes(problem, current);
    current_total = total;
    if (total < best_total) {
      best = current;
      best_total = total;
    }
  }
  return AlgorithmResult{std::move(best), false};
}

}  // namespace tessel::memory
