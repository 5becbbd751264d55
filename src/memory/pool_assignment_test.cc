#include "memory/pool_assignment.h"

#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <random>

#include "memory/greedy.h"
#include "memory/lower_bound.h"
#include "memory/planner.h"
#include "memory/report.h"
#include "memory/testing/random_instance.h"
#include "memory/verifier.h"

namespace tessel::memory {
namespace {

constexpr PoolIndex kSram = 0, kDram = 1;

PlannerOptions FastOptions() {
  PlannerOptions o;
  o.node_limit = 2000;
  o.hill_climb_attempts = 20;
  o.verify = true;
  return o;
}

Problem SramAndDram(int64_t sram_bytes) {
  Problem p;
  p.pools.push_back({.name = "sram", .size_limit_bytes = sram_bytes});
  p.pools.push_back({.name = "dram"});
  return p;
}

void Add(Problem& p, const std::string& name, int64_t size, Lifespan live,
         std::vector<PoolIndex> pools = {kSram, kDram}) {
  p.buffers.push_back(
      {.name = name, .size_bytes = size, .live = live, .pool_candidates = std::move(pools)});
}

// The pools first-fit fallback gives: the greedy placement of the whole
// problem in `order`, each buffer in its first candidate that still fits
// (what every algorithm did before the assignment stage).
std::vector<Placement> FirstFit(const Problem& p, bool by_size) {
  const ConflictGraph g = ConflictGraph::Build(p);
  GreedyPlacer placer(p, g);
  std::vector<Placement> placements;
  EXPECT_TRUE(placer.Place(by_size ? OrderBySize(p, g) : OrderByConflicts(p, g), &placements));
  return placements;
}

// sram 100 bytes. At step 5, dram's peak, live: `s` (200, too large for
// sram), `q` (60, also live over steps 0-4) and `p1`, `p2` (50 each).
// First-fit places the largest first: q takes sram, p1 and p2 no longer fit
// there, and dram peaks at 300. Taking p1 and p2 instead leaves dram 260,
// the least possible: sram holds at most 100 of the 160 bytes that could go
// there at step 5.
Problem FirstFitTakesTheWrongBuffer() {
  Problem p = SramAndDram(100);
  Add(p, "s", 200, {5, 6});
  Add(p, "q", 60, {0, 6});
  Add(p, "p1", 50, {5, 6});
  Add(p, "p2", 50, {5, 6});
  return p;
}

TEST(PoolAssignment, Puts_the_earlier_pool_where_the_later_one_peaks) {
  const Problem p = FirstFitTakesTheWrongBuffer();
  for (bool by_size : {true, false}) {
    EXPECT_EQ(PoolUsedBytes(p, FirstFit(p, by_size))[kDram], 300);
  }
  const std::vector<PoolIndex> pools = AssignPools(p, ConflictGraph::Build(p));
  EXPECT_EQ(pools, (std::vector<PoolIndex>{kDram, kDram, kSram, kSram}));
  for (const std::string& algo : AlgorithmNames()) {
    StatusOr<Plan> plan = MakePlan(p, algo, FastOptions());
    ASSERT_TRUE(plan.ok()) << algo << ": " << plan.status().message();
    EXPECT_EQ(plan->pool_used_bytes[kSram], 100) << algo;
    EXPECT_EQ(plan->pool_used_bytes[kDram], 260) << algo;
  }
}

TEST(PoolAssignment, Bounds_say_what_the_earlier_pool_can_take) {
  const Problem p = FirstFitTakesTheWrongBuffer();
  StatusOr<Plan> plan = MakePlan(p, "auto", FastOptions());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const std::vector<FallbackBound> bounds = FallbackBounds(p, plan->placements);
  // dram alone: everything at step 5. Given sram: the most whole buffers
  // live at step 5 can give to 100 bytes is 100 (p1 and p2; q and p1 would
  // be 110), so 360 - 100.
  EXPECT_EQ(bounds[kDram].alone_bytes, 360);
  EXPECT_EQ(bounds[kDram].given_earlier_bytes, 260);
  // sram is first: both bounds are its lower bound.
  EXPECT_EQ(bounds[kSram].alone_bytes, 100);
  EXPECT_EQ(bounds[kSram].given_earlier_bytes, 100);
  // First-fit's plan has the same bound given sram, and misses it by 40.
  const std::vector<Placement> first_fit = FirstFit(p, true);
  EXPECT_EQ(FallbackBounds(p, first_fit)[kDram].given_earlier_bytes, 260);
  EXPECT_EQ(PoolUsedBytes(p, first_fit)[kDram], 300);

  const std::string table = FormatPlanTable(p, {*plan});
  EXPECT_NE(table.find("bound given earlier pools"), std::string::npos) << table;
  EXPECT_NE(table.find("bound alone"), std::string::npos) << table;
}

// Two pools of constants, all live through the run: first-fit puts the 60
// byte one in the 100 bytes of `itcm`, where neither 50 then fits; the
// assignment takes both 50s, and `flash` holds 60 bytes, not 100.
TEST(PoolAssignment, Fills_a_read_only_pool_with_the_largest_sum_of_constants) {
  Problem p;
  p.pools.push_back({.name = "itcm", .size_limit_bytes = 100, .read_only = true});
  p.pools.push_back({.name = "flash", .read_only = true});
  Add(p, "w60", 60, {0, 10});
  Add(p, "w50a", 50, {0, 10});
  Add(p, "w50b", 50, {0, 10});
  EXPECT_EQ(PoolUsedBytes(p, FirstFit(p, true))[1], 100);
  StatusOr<Plan> plan = MakePlan(p, "auto", FastOptions());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->pool_used_bytes[0], 100);
  EXPECT_EQ(plan->pool_used_bytes[1], 60);
  EXPECT_EQ(FallbackBounds(p, plan->placements)[1].given_earlier_bytes, 60);
}

// Three pools, fastest first: dram's peak is lowered first, each buffer
// going to the first earlier pool where it fits, then sram's, into dtcm.
TEST(PoolAssignment, Lowers_the_last_pool_first_into_any_earlier_pool) {
  Problem p;
  p.pools.push_back({.name = "dtcm", .size_limit_bytes = 40});
  p.pools.push_back({.name = "sram", .size_limit_bytes = 100});
  p.pools.push_back({.name = "dram"});
  const std::vector<PoolIndex> all = {0, 1, 2};
  Add(p, "big", 500, {0, 4}, all);
  Add(p, "a", 90, {1, 2}, all);
  Add(p, "b", 40, {1, 2}, all);
  Add(p, "c", 30, {1, 3}, all);
  Add(p, "d", 35, {3, 4}, all);
  StatusOr<Plan> plan = MakePlan(p, "auto", FastOptions());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  // At step 1 live: big, a, b and c (660 bytes). big fits in neither
  // earlier pool; of a, b and c, the most that fits in 40 + 100 bytes is a
  // and b (130; a in sram, b in dtcm), so dram holds big and c.
  EXPECT_EQ(plan->pool_used_bytes[2], 530);
  EXPECT_EQ(plan->placements[1].pool, 1);
  EXPECT_EQ(plan->placements[2].pool, 0);
  const std::vector<FallbackBound> bounds = FallbackBounds(p, plan->placements);
  EXPECT_EQ(bounds[2].given_earlier_bytes, 530);
  EXPECT_EQ(bounds[2].alone_bytes, 660);
  EXPECT_LE(plan->pool_used_bytes[0], 40);
  EXPECT_LE(plan->pool_used_bytes[1], 100);
}

TEST(PoolAssignment, Leaves_pinned_and_single_candidate_buffers_where_they_are) {
  Problem p = FirstFitTakesTheWrongBuffer();
  // p1 may only be in dram; q is pinned in sram at 40.
  p.buffers[2].pool_candidates = {kDram};
  p.buffers[1].fixed_offset_bytes = 40;
  const std::vector<PoolIndex> pools = AssignPools(p, ConflictGraph::Build(p));
  EXPECT_EQ(pools[1], kSram);
  EXPECT_EQ(pools[2], kDram);
  StatusOr<Plan> plan = MakePlan(p, "auto", FastOptions());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->placements[1].pool, kSram);
  EXPECT_EQ(plan->placements[1].offset_bytes, 40);
  EXPECT_EQ(plan->placements[2].pool, kDram);
  // q holds 60 of sram's 100 bytes at step 5: p2 (50) cannot join it, and
  // dram holds s, p1 and p2, as the bound given sram says it must.
  EXPECT_EQ(plan->pool_used_bytes[kDram], 300);
  EXPECT_EQ(FallbackBounds(p, plan->placements)[kDram].given_earlier_bytes, 300);
  EXPECT_TRUE(VerifyPlan(p, *plan).ok());
}

TEST(PoolAssignment, Problems_without_a_choice_are_left_alone) {
  Problem p = SramAndDram(100);
  Add(p, "a", 60, {0, 2}, {kSram});
  Add(p, "b", 60, {2, 4}, {kDram});
  EXPECT_FALSE(HasPoolChoice(p));
  EXPECT_EQ(AssignPools(p, ConflictGraph::Build(p)), (std::vector<PoolIndex>{kSram, kDram}));
  p.buffers[1].pool_candidates = {kSram, kDram};
  EXPECT_TRUE(HasPoolChoice(p));
}

// A bounded last pool the assignment cannot fit falls back to first-fit,
// which names the pool that is too small, as before.
TEST(PoolAssignment, rejects_pools_too_small_naming_the_pool) {
  Problem p;
  p.pools.push_back({.name = "sram", .size_limit_bytes = 100});
  p.pools.push_back({.name = "dram", .size_limit_bytes = 100});
  for (int i = 0; i < 3; ++i) Add(p, "t" + std::to_string(i), 90, {0, 2});
  for (const std::string& algo : AlgorithmNames()) {
    StatusOr<Plan> plan = MakePlan(p, algo, FastOptions());
    ASSERT_FALSE(plan.ok()) << algo;
    EXPECT_EQ(plan.status().code(), StatusCode::kResourceExhausted) << algo;
    EXPECT_NE(plan.status().message().find("pool 'dram' is too small"), std::string::npos)
        << plan.status().message();
  }
}

// Random problems with a bounded fast pool and an unbounded slow one, every
// buffer free to choose: every plan verifies, no pool is below its bound
// given the earlier pools, `auto` plans the assignment as it is, the slow
// pool's lower bound is never above what first-fit gave the same algorithm
// (step 4 of the stage; hill_climb's swaps made its own), and the same
// problem gets the same plan.
TEST(PoolAssignmentProperty, Never_worse_than_first_fit_and_never_below_the_bound) {
  std::mt19937_64 rng(36);
  int better = 0;
  for (int trial = 0; trial < 400; ++trial) {
    Problem p = RandomInstance({.num_buffers = 10 + static_cast<int32_t>(rng() % 60),
                                .seed = rng(),
                                .max_lifetime_steps = 16,
                                .min_size_bytes = 16,
                                .max_size_bytes = 4096,
                                .alignment = int64_t{1} << (rng() % 5)});
    p.pools = {{.name = "sram", .size_limit_bytes = 1024 + static_cast<int64_t>(rng() % 8192)},
               {.name = "dram"}};
    for (BufferInfo& b : p.buffers) b.pool_candidates = {kSram, kDram};
    const int64_t by_size = PoolLowerBounds(p, FirstFit(p, true))[kDram];
    const int64_t by_conflicts = PoolLowerBounds(p, FirstFit(p, false))[kDram];
    const std::vector<PoolIndex> assigned = AssignPools(p, ConflictGraph::Build(p));
    for (const std::string& algo : AlgorithmNames()) {
      StatusOr<Plan> plan = MakePlan(p, algo, FastOptions());
      ASSERT_TRUE(plan.ok()) << trial << " " << algo << ": " << plan.status().message();
      EXPECT_TRUE(VerifyPlan(p, *plan).ok()) << trial << " " << algo;
      const std::vector<FallbackBound> bounds = FallbackBounds(p, plan->placements);
      for (size_t k = 0; k < bounds.size(); ++k) {
        EXPECT_GE(plan->pool_used_bytes[k], bounds[k].given_earlier_bytes) << trial << " " << algo;
        EXPECT_LE(bounds[k].given_earlier_bytes, bounds[k].alone_bytes) << trial << " " << algo;
      }
      const int64_t dram_bound = PoolLowerBounds(p, plan->placements)[kDram];
      if (algo == "auto" || algo == "optimal") {
        EXPECT_LE(dram_bound, std::min(by_size, by_conflicts)) << trial << " " << algo;
        for (size_t i = 0; i < p.buffers.size(); ++i) {
          EXPECT_EQ(plan->placements[i].pool, assigned[i]) << trial << " " << algo;
        }
      }
      if (algo == "greedy_by_size") EXPECT_LE(dram_bound, by_size) << trial;
      if (algo == "greedy_by_conflicts") EXPECT_LE(dram_bound, by_conflicts) << trial;
      better += algo == "auto" && dram_bound < std::min(by_size, by_conflicts);
      StatusOr<Plan> again = MakePlan(p, algo, FastOptions());
      ASSERT_TRUE(again.ok());
      for (size_t i = 0; i < p.buffers.size(); ++i) {
        EXPECT_EQ(again->placements[i].pool, plan->placements[i].pool);
        EXPECT_EQ(again->placements[i].offset_bytes, plan->placements[i].offset_bytes);
      }
    }
  }
  EXPECT_GT(better, 40);  // first-fit's slow pool is often higher
}

// Thousands of buffers: the stage's time is printed, not asserted.
TEST(PoolAssignmentProperty, Plans_thousands_of_buffers) {
  Problem p = RandomInstance({.num_buffers = 3000, .seed = 3, .alignment = 64});
  p.pools = {{.name = "sram", .size_limit_bytes = int64_t{4} << 20}, {.name = "dram"}};
  for (BufferInfo& b : p.buffers) b.pool_candidates = {kSram, kDram};
  const auto start = std::chrono::steady_clock::now();
  const std::vector<PoolIndex> pools = AssignPools(p, ConflictGraph::Build(p));
  std::printf(
      "assignment of %zu buffers: %.1f ms\n", p.buffers.size(),
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  StatusOr<Plan> plan = MakePlan(p, "auto", FastOptions());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_TRUE(VerifyPlan(p, *plan).ok());
  const std::vector<FallbackBound> bounds = FallbackBounds(p, plan->placements);
  std::printf("dram: %lld bytes; bound given sram %lld, alone %lld; first-fit %lld\n",
              static_cast<long long>(plan->pool_used_bytes[kDram]),
              static_cast<long long>(bounds[kDram].given_earlier_bytes),
              static_cast<long long>(bounds[kDram].alone_bytes),
              static_cast<long long>(PoolUsedBytes(p, FirstFit(p, true))[kDram]));
  EXPECT_LT(plan->pool_used_bytes[kDram], bounds[kDram].alone_bytes);
}

}  // namespace
}  // namespace tessel::memory
