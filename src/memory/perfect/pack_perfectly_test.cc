#include "memory/perfect/pack_perfectly.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "memory/conflict_graph.h"
#include "memory/greedy.h"
#include "memory/lower_bound.h"
#include "memory/perfect/perfect_planner.h"
#include "memory/testing/random_instance.h"
#include "memory/verifier.h"

namespace tessel::memory {
namespace {

constexpr int64_t kNodes = 20000;

PlannerOptions Deterministic() {
  PlannerOptions o;
  o.node_limit = kNodes;
  o.verify = true;
  return o;
}

// Greedy placements of `p`, then PackPerfectly on them.
std::vector<Placement> GreedyThenPack(const Problem& p, std::vector<Placement>* greedy = nullptr) {
  const ConflictGraph conflicts = ConflictGraph::Build(p);
  GreedyPlacer placer(p, conflicts);
  std::vector<Placement> placements;
  EXPECT_TRUE(placer.Place(OrderBySize(p, conflicts), &placements));
  if (greedy) *greedy = placements;
  const PlannerOptions options = Deterministic();
  PackPerfectly(
      {p, conflicts, options}, placements, [] { return false; }, kNodes);
  return placements;
}

// 300 buffers that add up to 512 KiB at every moment: greedy planners waste
// about 20%, and the exact search alone does not reach the bound in kNodes.
Problem ZeroSlackInstance() {
  return GuillotineInstance(
      {.num_buffers = 300, .seed = 11, .steps = 128, .capacity_bytes = 512 * 1024});
}

TEST(PackPerfectly, Packs_a_pool_without_slack_at_its_bound) {
  const Problem p = ZeroSlackInstance();
  std::vector<Placement> greedy;
  const std::vector<Placement> packed = GreedyThenPack(p, &greedy);
  EXPECT_GT(PoolUsedBytes(p, greedy)[0], 512 * 1024);
  EXPECT_EQ(PoolUsedBytes(p, packed)[0], 512 * 1024);
  Plan plan{.placements = packed, .pool_used_bytes = PoolUsedBytes(p, packed)};
  EXPECT_TRUE(VerifyPlan(p, plan).ok());
}

TEST(PackPerfectly, Leaves_pools_it_cannot_pack_as_they_were) {
  // Slack: one buffer fewer leaves a hole no plan fills.
  Problem slack = ZeroSlackInstance();
  slack.buffers.erase(slack.buffers.begin());
  // A conflict that is no overlap of lifespans: sections no longer say who
  // conflicts with whom.
  Problem explicit_conflict = ZeroSlackInstance();
  for (size_t j = 1; j < explicit_conflict.buffers.size(); ++j) {
    if (!explicit_conflict.buffers[0].live.Overlaps(explicit_conflict.buffers[j].live)) {
      explicit_conflict.buffers[0].conflicts.push_back(static_cast<BufferIndex>(j));
      break;
    }
  }
  ASSERT_FALSE(explicit_conflict.buffers[0].conflicts.empty());
  // A pinned buffer.
  Problem pinned = ZeroSlackInstance();
  pinned.buffers[0].fixed_offset_bytes = 0;
  for (const Problem* p : {&slack, &explicit_conflict, &pinned}) {
    std::vector<Placement> greedy;
    const std::vector<Placement> after = GreedyThenPack(*p, &greedy);
    for (size_t i = 0; i < after.size(); ++i) {
      EXPECT_EQ(after[i].offset_bytes, greedy[i].offset_bytes) << "buffer " << i;
    }
  }
}

TEST(PerfectPlanner, Registers_once_after_the_built_in_algorithms) {
  RegisterPerfectPlanner();
  RegisterPerfectPlanner();
  const std::vector<std::string> names = AlgorithmNames();
  EXPECT_EQ(std::count(names.begin(), names.end(), "perfect"), 1);
  EXPECT_EQ(names.back(), "perfect");
}

// `perfect` is opt-in: `optimal` does not run the packing, and on this
// instance the exact search alone stays above the bound within the same node
// budget (measured: 1.2002 of the bound). Should the exact search ever reach
// it, `perfect` no longer earns its place here (issue 21).
TEST(PerfectPlanner, Reaches_the_bound_where_optimal_alone_does_not) {
  RegisterPerfectPlanner();
  const Problem p = ZeroSlackInstance();
  StatusOr<Plan> perfect = MakePlan(p, "perfect", Deterministic());
  ASSERT_TRUE(perfect.ok()) << perfect.status().message();
  EXPECT_EQ(perfect->pool_used_bytes[0], 512 * 1024);
  EXPECT_TRUE(perfect->proven_optimal);
  StatusOr<Plan> optimal = MakePlan(p, "optimal", Deterministic());
  ASSERT_TRUE(optimal.ok()) << optimal.status().message();
  EXPECT_GT(optimal->pool_used_bytes[0], 512 * 1024);
}

TEST(PerfectPlanner, Plans_pools_with_slack_as_optimal_does) {
  RegisterPerfectPlanner();
  const Problem p = RandomInstance({.num_buffers = 200, .seed = 3, .alignment = 64});
  StatusOr<Plan> perfect = MakePlan(p, "perfect", Deterministic());
  StatusOr<Plan> optimal = MakePlan(p, "optimal", Deterministic());
  ASSERT_TRUE(perfect.ok() && optimal.ok());
  EXPECT_EQ(perfect->pool_used_bytes, optimal->pool_used_bytes);
  EXPECT_EQ(perfect->proven_optimal, optimal->proven_optimal);
}

}  // namespace
}  // namespace tessel::memory
