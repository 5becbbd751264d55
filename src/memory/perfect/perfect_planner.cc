#include "memory/perfect/perfect_planner.h"

#include <algorithm>
#include <chrono>

#include "memory/exact_solver.h"
#include "memory/perfect/pack_perfectly.h"
#include "memory/planner.h"

namespace tessel::memory {

namespace {

// Zero-waste packings within a fifth of the time limit, then the exact search
// in the time left (or each with node_limit nodes).
StatusOr<AlgorithmResult> Perfect(const PlanContext& ctx) {
  using Clock = std::chrono::steady_clock;
  TESSEL_ASSIGN_OR_RETURN(AlgorithmResult start, BestGreedyPlan(ctx));
  const Clock::time_point begin = Clock::now();
  const double limit_s = ctx.options.time_limit_s;
  const int64_t node_limit = ctx.options.node_limit;
  const Clock::time_point deadline =
      begin + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(std::max(0.0, limit_s / 5)));
  PackPerfectly(
      ctx, start.placements, [&] { return node_limit <= 0 && Clock::now() >= deadline; },
      node_limit > 0 ? node_limit : int64_t{1} << 40);
  const double spent_s = std::chrono::duration<double>(Clock::now() - begin).count();
  return ImproveExactly(ctx, std::move(start.placements), limit_s - spent_s, node_limit);
}

}  // namespace

void RegisterPerfectPlanner() {
  PlannerRegistry& registry = PlannerRegistry::Global();
  if (registry.Find("perfect")) return;
  // Neither `auto` nor `optimal` runs it.
  registry.Register(
      {"perfect", "zero-waste packing of pools without slack (synthetic instances), then optimal",
       Perfect});
}

}  // namespace tessel::memory
