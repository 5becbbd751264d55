#include "memory/verifier.h"

#include <gtest/gtest.h>

namespace tessel::memory {
namespace {

// Three buffers in one 100-byte pool: a [0,4) and b [2,6) overlap in time,
// c [4,8) touches a only.
Problem ThreeBuffers() {
  Problem p;
  p.pools.push_back({.name = "sram", .size_limit_bytes = 100});
  p.pools.push_back({.name = "dram"});
  p.buffers.push_back(
      {.name = "a", .size_bytes = 40, .alignment = 8, .live = {0, 4}, .pool_candidates = {0, 1}});
  p.buffers.push_back(
      {.name = "b", .size_bytes = 30, .alignment = 8, .live = {2, 6}, .pool_candidates = {0, 1}});
  p.buffers.push_back(
      {.name = "c", .size_bytes = 30, .alignment = 8, .live = {4, 8}, .pool_candidates = {0}});
  return p;
}

Plan MakePlanOf(const Problem& problem, std::vector<Placement> placements) {
  Plan plan;
  plan.algorithm = "test";
  plan.placements = std::move(placements);
  plan.pool_used_bytes = PoolUsedBytes(problem, plan.placements);
  return plan;
}

struct Case {
  const char* name;
  std::vector<Placement> placements;
  const char* error;  // empty: the plan is valid
};

TEST(VerifyPlan, Table) {
  const Problem problem = ThreeBuffers();
  const std::vector<Case> cases = {
      {"valid: touching lifespans share bytes", {{0, 0}, {0, 40}, {0, 0}}, ""},
      {"valid: the other pool", {{1, 0}, {0, 0}, {0, 40}}, ""},
      {"overlap while both live",
       {{0, 0}, {0, 32}, {0, 64}},
       "'a' [0, 40) and 'b' [32, 62) overlap in pool 'sram'"},
      {"misaligned", {{0, 0}, {0, 44}, {0, 0}}, "offset 44, not a non-negative multiple of 8"},
      {"negative offset", {{0, -8}, {0, 40}, {0, 0}}, "offset -8"},
      {"past the limit",
       {{0, 0}, {0, 72}, {0, 0}},
       "ends at 102, past the limit 100 of pool 'sram'"},
      {"not a candidate pool",
       {{0, 0}, {0, 40}, {1, 0}},
       "buffer 'c' is in pool 1, not one of its candidates"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Status s = VerifyPlan(problem, MakePlanOf(problem, c.placements));
    if (std::string(c.error).empty()) {
      EXPECT_TRUE(s.ok()) << s.message();
    } else {
      ASSERT_FALSE(s.ok());
      EXPECT_NE(s.message().find(c.error), std::string::npos) << s.message();
    }
  }
}

TEST(VerifyPlan, rejects_wrong_used_sizes_and_counts) {
  const Problem problem = ThreeBuffers();
  Plan plan = MakePlanOf(problem, {{0, 0}, {0, 40}, {0, 0}});
  plan.pool_used_bytes[0] = 1;
  EXPECT_NE(VerifyPlan(problem, plan).message().find("reported pool sizes"), std::string::npos);
  plan.placements.pop_back();
  EXPECT_NE(VerifyPlan(problem, plan).message().find("2 placements for 3 buffers"),
            std::string::npos);
}

TEST(VerifyPlan, rejects_explicit_conflicts_and_moved_pinned_buffers) {
  Problem problem;
  problem.pools.push_back({.name = "p"});
  problem.buffers.push_back(
      {.name = "x", .size_bytes = 8, .conflicts = {1}, .pool_candidates = {0}});
  problem.buffers.push_back(
      {.name = "y", .size_bytes = 8, .pool_candidates = {0}, .fixed_offset_bytes = 8});
  EXPECT_TRUE(VerifyPlan(problem, MakePlanOf(problem, {{0, 0}, {0, 8}})).ok());
  EXPECT_NE(VerifyPlan(problem, MakePlanOf(problem, {{0, 4}, {0, 8}})).message().find("overlap"),
            std::string::npos);
  EXPECT_NE(VerifyPlan(problem, MakePlanOf(problem, {{0, 16}, {0, 0}}))
                .message()
                .find("pinned at offset 8"),
            std::string::npos);
}

TEST(VerifyPlan, Zero_size_buffers_never_overlap) {
  Problem problem;
  problem.pools.push_back({.name = "p"});
  problem.buffers.push_back({.name = "e", .size_bytes = 0, .live = {0, 9}, .pool_candidates = {0}});
  problem.buffers.push_back({.name = "f", .size_bytes = 8, .live = {0, 9}, .pool_candidates = {0}});
  EXPECT_TRUE(VerifyPlan(problem, MakePlanOf(problem, {{0, 0}, {0, 0}})).ok());
}

}  // namespace
}  // namespace tessel::memory
