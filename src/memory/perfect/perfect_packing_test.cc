#include "memory/perfect/perfect_packing.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "memory/perfect/packing_test_util.h"

namespace tessel::memory {
namespace {

TEST(FindPerfectPacking, Packs_random_guillotine_partitions_without_waste) {
  const int64_t height = 256 * 1024;
  int found = 0, tried = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const std::vector<PackingItem> items =
        GuillotineItems({.num_buffers = 20 + static_cast<int32_t>(seed * 7 % 280),
                         .seed = seed,
                         .capacity_bytes = height});
    ++tried;
    const auto packed = FindPerfectPacking(
        items, 1024, [] { return false; }, int64_t{1} << 20);
    if (!packed) continue;
    ++found;
    ExpectValidPacking(items, *packed, height);
  }
  // The decomposition is a heuristic search; on these sizes it finds nearly
  // every packing (measured: all 40).
  EXPECT_GE(found, tried - 2) << found << " of " << tried;
  std::printf("packed %d of %d guillotine partitions\n", found, tried);
}

// Partitions of 1,000 pieces, where guessing which moments' seams belong to
// one band goes wrong often enough that the sweep giving every item a side
// (SplitBySides) must split what the seams leave whole. Without that sweep,
// seed 4 is not packed within this node budget.
TEST(FindPerfectPacking, Packs_thousand_piece_partitions_the_seams_alone_do_not_split) {
  const int64_t height = int64_t{1} << 20;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const std::vector<PackingItem> items =
        GuillotineItems({.num_buffers = 1000, .seed = seed, .capacity_bytes = height});
    const auto packed = FindPerfectPacking(
        items, 1024, [] { return false; }, int64_t{1} << 22);
    ASSERT_TRUE(packed.has_value()) << "seed " << seed;
    ExpectValidPacking(items, *packed, height);
  }
}

TEST(FindPerfectPacking, Declines_instances_with_slack) {
  // Two buffers live at different totals over time: no zero-waste packing.
  const std::vector<PackingItem> items = {{100, 0, 2}, {50, 1, 3}};
  EXPECT_FALSE(FindPerfectPacking(
                   items, 3, [] { return false; }, 1000)
                   .has_value());
}

TEST(FindPerfectPacking, Splits_in_time_and_stacks_full_width_items) {
  // [0,2): a over b; [2,4): c alone; d spans everything on top.
  const std::vector<PackingItem> items = {{30, 0, 2}, {70, 0, 2}, {100, 2, 4}, {8, 0, 4}};
  const auto packed = FindPerfectPacking(
      items, 4, [] { return false; }, 1000);
  ASSERT_TRUE(packed.has_value());
  ExpectValidPacking(items, *packed, 108);
}

// An instance packed within the budget, unless the budget is cut to nothing
// or `expired` says stop.
TEST(FindPerfectPacking, Stops_at_the_node_budget_or_when_expired) {
  const std::vector<PackingItem> items =
      GuillotineItems({.num_buffers = 1000, .seed = 1, .capacity_bytes = int64_t{1} << 20});
  const int64_t budget = int64_t{1} << 22;
  EXPECT_TRUE(FindPerfectPacking(
                  items, 1024, [] { return false; }, budget)
                  .has_value());
  EXPECT_FALSE(FindPerfectPacking(
                   items, 1024, [] { return false; }, 0)
                   .has_value());
  EXPECT_FALSE(FindPerfectPacking(
                   items, 1024, [] { return true; }, budget)
                   .has_value());
}

}  // namespace
}  // namespace tessel::memory
