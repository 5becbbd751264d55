#include "memory/planner.h"

#include <algorithm>
#include <chrono>

#include "core/check.h"
#include "memory/exact_solver.h"
#include "memory/greedy.h"
#include "memory/hill_climb.h"
#include "memory/lower_bound.h"
#include "memory/pool_assignment.h"
#include "memory/verifier.h"

namespace tessel::memory {

namespace {

StatusOr<AlgorithmResult> PlaceGreedily(const PlanContext& ctx,
                                        const std::vector<BufferIndex>& order) {
  GreedyPlacer placer(ctx.problem, ctx.conflicts);
  AlgorithmResult result;
  if (!placer.Place(order, &result.placements)) {
    return PlacementFailure(ctx.problem, ctx.conflicts, order, placer);
  }
  return result;
}

StatusOr<AlgorithmResult> GreedyBySize(const PlanContext& ctx) {
  return PlaceGreedily(ctx, OrderBySize(ctx.problem, ctx.conflicts));
}

StatusOr<AlgorithmResult> GreedyByConflicts(const PlanContext& ctx) {
  return PlaceGreedily(ctx, OrderByConflicts(ctx.problem, ctx.conflicts));
}

StatusOr<AlgorithmResult> Optimal(const PlanContext& ctx, double time_limit_s) {
  TESSEL_ASSIGN_OR_RETURN(AlgorithmResult start, BestGreedyPlan(ctx));
  return ImproveExactly(ctx, std::move(start.placements), time_limit_s, ctx.options.node_limit);
}

}  // namespace

StatusOr<AlgorithmResult> BestGreedyPlan(const PlanContext& ctx) {
  StatusOr<AlgorithmResult> by_size = GreedyBySize(ctx);
  StatusOr<AlgorithmResult> by_conflicts = GreedyByConflicts(ctx);
  if (!by_size.ok()) return by_conflicts.ok() ? by_conflicts : by_size;
  if (!by_conflicts.ok()) return by_size;
  auto total = [&](const AlgorithmResult& r) {
    int64_t t = 0;
    for (int64_t u : PoolUsedBytes(ctx.problem, r.placements)) t += u;
    return t;
  };
  return total(*by_conflicts) < total(*by_size) ? by_conflicts : by_size;
}

PlannerRegistry& PlannerRegistry::Global() {
  static PlannerRegistry* registry = [] {
    auto* r = new PlannerRegistry();
    r->Register({"auto", "the best greedy plan, improved by the exact search within the budget",
                 [](const PlanContext& ctx) {
                   return Optimal(
                       ctx, std::min(ctx.options.time_limit_s, ctx.options.auto_time_limit_s));
                 }});
    r->Register(
        {"greedy_by_size", "largest buffer first, each in the lowest gap that fits", GreedyBySize});
    r->Register({"greedy_by_conflicts",
                 "most conflicted buffer first, each in the lowest gap that fits",
                 GreedyByConflicts});
    r->Register(
        {"hill_climb", "greedy placement of an order improved by random swaps (TVM)", HillClimb});
    r->Register({"optimal", "branch and bound over canonical placements, within the budget",
                 [](const PlanContext& ctx) { return Optimal(ctx, ctx.options.time_limit_s); }});
    // `perfect` is opt-in, in its own library (perfect/perfect_planner.h).
    return r;
  }();
  return *registry;
}

void PlannerRegistry::Register(AlgorithmInfo algorithm) {
  TESSEL_CHECK_MSG(Find(algorithm.name) == nullptr, algorithm.name.c_str());
  algorithms_.push_back(std::move(algorithm));
}

const AlgorithmInfo* PlannerRegistry::Find(std::string_view name) const {
  for (const AlgorithmInfo& a : algorithms_) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::vector<std::string> AlgorithmNames() {
  std::vector<std::string> names;
  for (const AlgorithmInfo& a : PlannerRegistry::Global().all()) names.push_back(a.name);
  return names;
}

StatusOr<Plan> MakePlan(const Problem& problem, std::string_view algorithm,
                        const PlannerOptions& options) {
  const AlgorithmInfo* info = PlannerRegistry::Global().Find(algorithm);
  if (!info) {
    std::string known;
    for (const std::string& n : AlgorithmNames()) known += (known.empty() ? "" : ", ") + n;
    return InvalidArgument("unknown planning algorithm '" + std::string(algorithm) +
                           "' (algorithms: " + known + ")");
  }
  TESSEL_RETURN_IF_ERROR(ValidateProblem(problem));
  const auto start = std::chrono::steady_clock::now();
  const ConflictGraph conflicts = ConflictGraph::Build(problem);
  StatusOr<AlgorithmResult> run = InvalidArgument("not run");
  if (HasPoolChoice(problem)) {
    // The conflict graph does not depend on pools: it serves both problems.
    const Problem assigned = WithAssignedPools(problem, AssignPools(problem, conflicts));
    run = info->run({assigned, conflicts, options});
    // Every built-in algorithm plans the assignment (its pools fit both
    // greedy orders); when one registered elsewhere cannot, or when the
    // assignment overflows a bounded last candidate, first-fit fallback
    // plans as before, or says which pool is too small.
    if (!run.ok() && run.status().code() == StatusCode::kResourceExhausted) {
      run = info->run({problem, conflicts, options});
    }
  } else {
    run = info->run({problem, conflicts, options});
  }
  TESSEL_ASSIGN_OR_RETURN(AlgorithmResult result, std::move(run));
  Plan plan;
  plan.algorithm = info->name;
  plan.placements = std::move(result.placements);
  plan.pool_used_bytes = PoolUsedBytes(problem, plan.placements);
  plan.planning_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  plan.proven_optimal = result.proven_optimal;
  if (!plan.proven_optimal) {
    const std::vector<int64_t> bounds = PoolLowerBounds(problem, plan.placements);
    plan.proven_optimal = true;
    for (size_t p = 0; p < bounds.size(); ++p) {
      plan.proven_optimal = plan.proven_optimal && plan.pool_used_bytes[p] <= bounds[p];
    }
  }
  if (options.verify) {
    Status s = VerifyPlan(problem, plan);
    if (!s.ok()) return Internal("the planner produced an invalid plan: " + s.message());
  }
  return plan;
}

}  // namespace tessel::memory
