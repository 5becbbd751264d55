#include "memory/planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <numeric>
#include <random>

#include "memory/greedy.h"
#include "memory/instance_csv.h"
#include "memory/lower_bound.h"
#include "memory/report.h"
#include "memory/testing/random_instance.h"
#include "memory/testing/tight_instance.h"
#include "memory/verifier.h"

namespace tessel::memory {
namespace {

// Small random problems that exercise everything the planner accepts: several
// pools (some bounded, so fallback and failure happen), candidate lists,
// explicit conflicts, alignments, empty buffers and pinned buffers.
Problem RandomProblem(std::mt19937_64& rng, int max_buffers, bool rich) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Problem p;
  const int num_pools = rich ? static_cast<int>(pick(1, 3)) : 1;
  for (int i = 0; i < num_pools; ++i) {
    PoolInfo pool{.name = "pool" + std::to_string(i)};
    if (rich && pick(0, 2) == 0) pool.size_limit_bytes = pick(0, 600);
    p.pools.push_back(pool);
  }
  const int n = static_cast<int>(pick(1, max_buffers));
  for (int i = 0; i < n; ++i) {
    BufferInfo b;
    b.name = "b" + std::to_string(i);
    b.size_bytes = pick(0, 9) == 0 ? 0 : pick(1, 200);
    b.alignment = rich ? int64_t{1} << pick(0, 6) : 1;
    const int64_t first = pick(0, 15);
    b.live = pick(0, 19) == 0 && rich ? Lifespan{} : Lifespan{first, first + pick(1, 8)};
    std::vector<PoolIndex> pools(static_cast<size_t>(num_pools));
    std::iota(pools.begin(), pools.end(), 0);
    std::shuffle(pools.begin(), pools.end(), rng);
    pools.resize(static_cast<size_t>(pick(1, num_pools)));
    b.pool_candidates = pools;
    p.buffers.push_back(std::move(b));
  }
  if (rich) {
    for (int k = pick(0, 3); k > 0; --k) {
      p.buffers[static_cast<size_t>(pick(0, n - 1))].conflicts.push_back(
          static_cast<BufferIndex>(pick(0, n - 1)));
    }
    if (pick(0, 9) == 0) {
      BufferInfo& b = p.buffers[static_cast<size_t>(pick(0, n - 1))];
      b.fixed_offset_bytes = b.alignment * pick(0, 4);
    }
  }
  return p;
}

// Generated tight instances the exact search must pack (smaller than
// bench/planner's 150 to 500 buffers, which take seconds), and its node
// budget for each.
constexpr uint64_t kTightInstances = 8;
constexpr int32_t kTightBuffers = 100;
constexpr int64_t kTightNodes = 2'000'000;

// A deterministic budget: the same plans on every machine, however loaded.
PlannerOptions FastOptions() {
  PlannerOptions o;
  o.node_limit = 2000;
  o.hill_climb_attempts = 20;
  o.verify = true;
  return o;
}

// The least total of pool sizes over every placement order: any plan can be
// compacted into the lowest-gap placement of its buffers in offset order.
int64_t BruteForceOptimum(const Problem& p) {
  const ConflictGraph g = ConflictGraph::Build(p);
  std::vector<BufferIndex> order(p.buffers.size());
  std::iota(order.begin(), order.end(), 0);
  GreedyPlacer placer(p, g);
  std::vector<Placement> placements;
  int64_t best = INT64_MAX;
  do {
    if (placer.Place(order, &placements)) {
      int64_t total = 0;
      for (int64_t u : PoolUsedBytes(p, placements)) total += u;
      best = std::min(best, total);
    }
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

TEST(Planner, Every_algorithm_is_registered_once) {
  EXPECT_EQ(AlgorithmNames(),
            (std::vector<std::string>{"auto", "greedy_by_size", "greedy_by_conflicts", "hill_climb",
                                      "optimal"}));  // `perfect` is opt-in (perfect_planner.h)
}

TEST(Planner, rejects_an_unknown_algorithm_listing_the_known_ones) {
  Problem p;
  StatusOr<Plan> plan = MakePlan(p, "best_fit");
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("'best_fit'"), std::string::npos);
  EXPECT_NE(plan.status().message().find("greedy_by_size"), std::string::npos);
}

TEST(Planner, rejects_invalid_problems_naming_the_buffer) {
  Problem p;
  p.pools.push_back({.name = "p"});
  p.buffers.push_back({.name = "w", .size_bytes = 4, .alignment = 3, .pool_candidates = {0}});
  EXPECT_NE(MakePlan(p, "auto").status().message().find("buffer 'w' has alignment 3"),
            std::string::npos);
  p.buffers[0].alignment = 4;
  p.buffers[0].pool_candidates = {};
  EXPECT_NE(MakePlan(p, "auto").status().message().find("buffer 'w' has no candidate pool"),
            std::string::npos);
  p.buffers[0].pool_candidates = {0};
  p.buffers[0].conflicts = {7};
  EXPECT_NE(MakePlan(p, "auto").status().message().find("conflicts with buffer 7"),
            std::string::npos);
}

TEST(Planner, Falls_back_to_the_next_pool_that_fits) {
  Problem p;
  p.pools.push_back({.name = "sram", .size_limit_bytes = 100});
  p.pools.push_back({.name = "dram"});
  for (int i = 0; i < 3; ++i) {
    p.buffers.push_back({.name = "t" + std::to_string(i),
                         .size_bytes = 60,
                         .live = {0, 2},
                         .pool_candidates = {0, 1}});
  }
  for (const std::string& algo : AlgorithmNames()) {
    StatusOr<Plan> plan = MakePlan(p, algo, FastOptions());
    ASSERT_TRUE(plan.ok()) << algo << ": " << plan.status().message();
    EXPECT_EQ(plan->pool_used_bytes[0], 60) << algo;
    EXPECT_EQ(plan->pool_used_bytes[1], 120) << algo;
  }
}

TEST(Planner, rejects_a_pool_too_small_naming_pool_limit_and_need) {
  Problem p;
  p.pools.push_back({.name = "sram", .size_limit_bytes = 1000});
  for (int i = 0; i < 3; ++i) {
    p.buffers.push_back({.name = "t" + std::to_string(i),
                         .size_bytes = 600,
                         .live = {0, 2},
                         .pool_candidates = {0}});
  }
  for (const std::string& algo : AlgorithmNames()) {
    StatusOr<Plan> plan = MakePlan(p, algo, FastOptions());
    ASSERT_FALSE(plan.ok()) << algo;
    EXPECT_EQ(plan.status().code(), StatusCode::kResourceExhausted);
    const std::string& m = plan.status().message();
    EXPECT_NE(m.find("pool 'sram' is too small"), std::string::npos) << m;
    EXPECT_NE(m.find("limit 1000 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("needs 1.8 KiB (1800 bytes)"), std::string::npos) << m;
  }
}

TEST(Planner, Optimal_solves_the_minimalloc_example_at_its_capacity) {
  StatusOr<Instance> inst = ParseInstanceCsv(
      "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n", "input.12.csv");
  ASSERT_TRUE(inst.ok());
  StatusOr<Plan> plan = MakePlan(inst->problem, "optimal", FastOptions());
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->pool_used_bytes[0], 12);
  EXPECT_TRUE(plan->proven_optimal);
}

TEST(Planner, Optimal_stacks_a_clique_with_the_most_rounding_last_and_proves_it) {
  // 120 constants, all live together, aligned to 64, of sizes whose rounding
  // wastes 0-48 bytes: only the order matters, and the bound is met exactly
  // when a buffer wasting 48 bytes goes last (greedy by size puts the
  // smallest there).
  Problem p;
  p.pools.push_back({.name = "constants"});
  std::mt19937_64 rng(5);
  for (int i = 0; i < 120; ++i) {
    const int64_t tail = std::array<int64_t, 4>{0, 16, 32, 40}[rng() % 4];
    p.buffers.push_back({.name = "c" + std::to_string(i),
                         .size_bytes = 64 * static_cast<int64_t>(1 + rng() % 50) + tail,
                         .alignment = 64,
                         .live = {0, 10},
                         .pool_candidates = {0}});
  }
  p.buffers.push_back(
      {.name = "last", .size_bytes = 80, .alignment = 64, .live = {0, 10}, .pool_candidates = {0}});
  StatusOr<Plan> plan = MakePlan(p, "optimal", FastOptions());
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->pool_used_bytes[0], PoolLowerBounds(p, plan->placements)[0]);
  EXPECT_TRUE(plan->proven_optimal);
  EXPECT_TRUE(VerifyPlan(p, *plan).ok());
}

// A zero-slack instance that the exact search packs at its capacity with a
// limit of 3,200 nodes (measured; 1,600 are not enough).
// Tight instances of MiniMalloc's family (tight_instance.h), made with their
// known fit: `optimal` and `auto` must pack every one at its capacity, which
// is also the lower bound, so the plan is proven optimal. A node budget, not
// the clock, bounds the search.
TEST(Planner, Optimal_and_auto_pack_tight_instances_at_their_bound) {
  PlannerOptions options;
  options.verify = true;
  options.node_limit = kTightNodes;
  for (uint64_t seed = 1; seed <= kTightInstances; ++seed) {
    const TightInstance t = MakeTightInstance({.num_buffers = kTightBuffers, .seed = seed});
    options.target_bytes = t.capacity_bytes;  // as `tessel plan --instance` does
    for (const char* algo : {"optimal", "auto"}) {
      StatusOr<Plan> plan = MakePlan(t.problem, algo, options);
      ASSERT_TRUE(plan.ok()) << plan.status().message();
      EXPECT_EQ(plan->pool_used_bytes[0], t.capacity_bytes) << algo << ", seed " << seed;
      EXPECT_TRUE(plan->proven_optimal) << algo << ", seed " << seed;
    }
  }
}

TEST(Planner, A_node_limit_replaces_the_time_limit) {
  const Problem p = GuillotineInstance({.num_buffers = 400, .seed = 1});
  const int64_t capacity = GuillotineInstanceOptions{}.capacity_bytes;
  PlannerOptions options = FastOptions();
  options.time_limit_s = 0;  // would stop the search at once
  options.node_limit = 100000;
  StatusOr<Plan> plan = MakePlan(p, "optimal", options);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->pool_used_bytes[0], capacity);
  EXPECT_TRUE(plan->proven_optimal);

  options.time_limit_s = 1e9;  // would never stop it
  options.node_limit = 50;
  plan = MakePlan(p, "optimal", options);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_GT(plan->pool_used_bytes[0], capacity);
  EXPECT_FALSE(plan->proven_optimal);
}

// Property: on thousands of random problems every algorithm either returns a
// plan the verifier accepts, at or above the lower bound, or says which pool
// is too small (or which pinned buffers clash). (That the exact search is no
// worse than the greedy plan it starts from holds by construction; whether it
// finds the optimum is Optimal_matches_brute_force_on_small_problems.)
TEST(PlannerProperty, Every_plan_passes_the_verifier) {
  std::mt19937_64 rng(20240611);
  const PlannerOptions options = FastOptions();
  int plans = 0;
  for (int trial = 0; trial < 1200; ++trial) {
    const Problem p = RandomProblem(rng, 20, /*rich=*/true);
    for (const std::string& algo : AlgorithmNames()) {
      StatusOr<Plan> plan = MakePlan(p, algo, options);
      if (!plan.ok()) {
        const StatusCode code = plan.status().code();
        EXPECT_TRUE(code == StatusCode::kResourceExhausted || code == StatusCode::kInvalidArgument)
            << "trial " << trial << " " << algo << ": " << plan.status().message();
        continue;
      }
      ++plans;
      EXPECT_TRUE(VerifyPlan(p, *plan).ok()) << trial << " " << algo;
      const std::vector<int64_t> bounds = PoolLowerBounds(p, plan->placements);
      for (size_t k = 0; k < bounds.size(); ++k) EXPECT_GE(plan->pool_used_bytes[k], bounds[k]);
    }
  }
  EXPECT_GT(plans, 4000);
}

// Property: on small single-pool problems the exact search finds the true
// optimum (a brute force over all placement orders) and proves it.
TEST(PlannerProperty, Optimal_matches_brute_force_on_small_problems) {
  std::mt19937_64 rng(7);
  const PlannerOptions options = FastOptions();
  for (int trial = 0; trial < 600; ++trial) {
    Problem p = RandomProblem(rng, 7, /*rich=*/false);
    if (trial % 2) {
      // Alignments and a conflict no lifespan explains.
      for (BufferInfo& b : p.buffers) b.alignment = int64_t{1} << (rng() % 5);
      p.buffers[0].conflicts.push_back(static_cast<BufferIndex>(rng() % p.buffers.size()));
    }
    const int64_t best = BruteForceOptimum(p);
    StatusOr<Plan> plan = MakePlan(p, "optimal", options);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    if (plan->proven_optimal) {
      EXPECT_EQ(plan->total_used_bytes(), best) << "trial " << trial;
    } else {
      EXPECT_GE(plan->total_used_bytes(), best) << "trial " << trial;
    }
  }
}

TEST(PlannerProperty, Large_random_instances_plan_within_the_verifier) {
  for (int32_t n : {100, 1000, 5000}) {
    const Problem p =
        RandomInstance({.num_buffers = n, .seed = static_cast<uint64_t>(n), .alignment = 64});
    for (const char* algo : {"greedy_by_size", "greedy_by_conflicts", "auto"}) {
      StatusOr<Plan> plan = MakePlan(p, algo, FastOptions());
      ASSERT_TRUE(plan.ok()) << algo << " " << n << ": " << plan.status().message();
      const int64_t bound = PoolLowerBounds(p, plan->placements)[0];
      EXPECT_LE(plan->pool_used_bytes[0], bound * 12 / 10) << algo << " " << n;
    }
  }
}

TEST(Report, Table_and_svg_describe_each_plan) {
  Problem p;
  p.pools.push_back({.name = "work"});
  p.buffers.push_back({.name = "a<&>", .size_bytes = 64, .live = {0, 2}, .pool_candidates = {0}});
  p.buffers.push_back({.name = "b", .size_bytes = 32, .live = {1, 3}, .pool_candidates = {0}});
  StatusOr<Plan> plan = MakePlan(p, "optimal", FastOptions());
  ASSERT_TRUE(plan.ok());
  const std::string table = FormatPlanTable(p, {*plan});
  EXPECT_NE(table.find("optimal"), std::string::npos) << table;
  EXPECT_NE(table.find("work"), std::string::npos) << table;
  EXPECT_NE(table.find("1.0000"), std::string::npos) << table;
  const std::string svg = PlanSvg(p, *plan, "demo");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("a&lt;&amp;&gt;: 64 bytes"), std::string::npos) << svg;
  EXPECT_EQ(std::count(svg.begin(), svg.end(), '\n') > 3, true);
}

}  // namespace
}  // namespace tessel::memory
