// The planner: algorithms registered by name, chosen by a string.
//
//   memory::Problem problem = ...;                 // buffers and pools
//   StatusOr<memory::Plan> plan = memory::MakePlan(problem, "auto");
//
// Algorithms (AlgorithmNames() lists them, with a line each):
//   greedy_by_size       largest buffer first, lowest gap that fits
//   greedy_by_conflicts  most conflicted buffer first, lowest gap that fits
//   hill_climb           TVM's: greedy placement of an order improved by
//                        random swaps among neighbours of the top buffer
//   optimal              branch and bound over canonical placements
//                        (exact_solver.h) from the best greedy plan, within
//                        the search budget; says whether it proved optimality
//   auto (default)       the best greedy plan, improved by `optimal` within
//                        the search budget when it is above the lower bound
//   perfect (opt-in)     zero-waste packings for pools without slack
//                        (perfect/perfect_planner.h), then `optimal`; only
//                        synthetic instances have such pools. Registered
//                        only by RegisterPerfectPlanner(), in builds with
//                        TESSEL_WITH_PERFECT_PLANNER.
// The search budget is a number of search nodes by default (node_limit), so
// the same problem gets the same plan on every machine, however loaded; with
// node_limit 0 the time limits apply instead.
//
// Where some buffer has a choice of pools, the pool of every buffer is
// decided first (pool_assignment.h: each later pool's peak lowered as far as
// the earlier pools' limits allow), and the algorithm places that assignment.
// If it cannot, it places the problem as given, each buffer in its first
// candidate pool that still fits (first-fit fallback); when none does, the
// answer is ResourceExhausted naming the pool, its limit and what the plan
// needs there. Bad input (ValidateProblem) is
// InvalidArgument. With `verify`, every plan passes VerifyPlan before it is
// returned (a failure there is an Internal error: a bug in tessel).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "memory/conflict_graph.h"
#include "memory/problem.h"

namespace tessel::memory {

#ifdef NDEBUG
inline constexpr bool kVerifyPlansByDefault = false;
#else
inline constexpr bool kVerifyPlansByDefault = true;
#endif

// What `optimal` reports while it searches (about ten times a second).
struct SearchProgress {
  double elapsed_s = 0;
  double limit_s = 0;             // with node_limit 0
  int64_t nodes = 0;              // search nodes so far
  int64_t node_limit = 0;         // the budget, when it is nodes
  int64_t best_bytes = 0;         // total used by the best plan so far
  int64_t lower_bound_bytes = 0;  // total of the pools' lower bounds
};

struct PlannerOptions {
  // The default search budget of `auto`, `optimal` and `perfect`: search
  // nodes, not seconds, so that a compile is reproducible. Models meet their
  // lower bound with the greedy plan and never search. Where a gap is, a
  // million nodes take a few seconds: 2.3 to 3.0 s on the tight instances
  // of bench/planner it does not solve (tight_01, 06, 09, 11, 15; 19 of the
  // 24 are packed at their capacity) on a shared 2-core x86 machine.
  static constexpr int64_t kDefaultNodeLimit = 1'000'000;
  // When positive, the budget: the exact search of `auto`, `optimal` and
  // `perfect` stops after this many search nodes (`perfect`'s packing gets as
  // many per pool before it), and hill_climb only at hill_climb_attempts.
  // The plan is then the same on every machine. 0: the time limits below
  // apply instead (`tessel --time-limit`), and the plan depends on the
  // machine's speed and load.
  int64_t node_limit = kDefaultNodeLimit;
  // With node_limit 0: the time `optimal` (and `perfect`) may search before
  // returning its best plan.
  double time_limit_s = 10.0;
  // With node_limit 0: the time `auto` lets the exact search improve the best
  // greedy plan (at most time_limit_s). It stops at once when that plan meets
  // the lower bound, so the budget is spent only where a gap is.
  double auto_time_limit_s = 10.0;
  // The size a pool's plan must fit (an instance's capacity); 0: none. A
  // pool's own size limit counts the same. When the best greedy plan is
  // above it, the exact search asks for it first, with most of its budget,
  // before it looks for anything smaller.
  int64_t target_bytes = 0;
  // hill_climb's number of reorderings (TVM uses 500); it also stops at
  // time_limit_s when node_limit is 0.
  int hill_climb_attempts = 500;
  uint64_t seed = 1;
  // Run VerifyPlan on the plan before returning it.
  bool verify = kVerifyPlansByDefault;
  std::function<void(const SearchProgress&)> progress;
};

// What an algorithm sees.
struct PlanContext {
  const Problem& problem;
  const ConflictGraph& conflicts;
  const PlannerOptions& options;
};

// What an algorithm returns: a placement per buffer, and whether it knows
// each pool to be as small as possible for the buffers it holds.
struct AlgorithmResult {
  std::vector<Placement> placements;
  bool proven_optimal = false;
};

using AlgorithmFn = std::function<StatusOr<AlgorithmResult>(const PlanContext&)>;

struct AlgorithmInfo {
  std::string name;
  std::string description;
  AlgorithmFn run;
};

class PlannerRegistry {
 public:
  // The built-in algorithms, registered once.
  static PlannerRegistry& Global();

  void Register(AlgorithmInfo algorithm);
  const AlgorithmInfo* Find(std::string_view name) const;
  const std::vector<AlgorithmInfo>& all() const { return algorithms_; }

 private:
  std::vector<AlgorithmInfo> algorithms_;
};

inline constexpr std::string_view kDefaultAlgorithm = "auto";

// The smaller of the greedy_by_size and greedy_by_conflicts plans
// (greedy_by_size on a tie); fails only when both fail. What `auto` and
// `optimal` start from, and algorithms registered elsewhere may.
StatusOr<AlgorithmResult> BestGreedyPlan(const PlanContext& ctx);

// Names of the registered algorithms, in registration order.
std::vector<std::string> AlgorithmNames();

// Validates the problem, runs the named algorithm and fills the plan's used
// sizes, its time and (when every pool reaches its lower bound) the proof of
// optimality. Unknown names are InvalidArgument, listing the known ones.
StatusOr<Plan> MakePlan(const Problem& problem, std::string_view algorithm,
                        const PlannerOptions& options = {});

}  // namespace tessel::memory
