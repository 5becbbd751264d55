#include "memory/perfect/skyline_packing.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "memory/perfect/packing_test_util.h"

namespace tessel::memory {
namespace {

// A pinwheel: five items around a centre, no line in time or address splits
// it, so only a non-guillotine packing exists (height 3, sections 0..3):
//
//   address 2 | D | C   C |
//           1 | D | E | B |
//           0 | A   A | B |
//               0   1   2   section
const std::vector<PackingItem> kPinwheel = {
    {1, 0, 2},  // A
    {2, 2, 3},  // B
    {1, 1, 3},  // C
    {2, 0, 1},  // D
    {1, 1, 2},  // E
};

TEST(FindSkylinePacking, Packs_a_pinwheel_that_no_guillotine_cut_splits) {
  const auto packed = FindSkylinePacking(kPinwheel, 3, 100, [] { return false; });
  ASSERT_TRUE(packed.has_value());
  ExpectValidPacking(kPinwheel, *packed, 3);
}

TEST(FindPerfectPacking, Falls_back_to_the_skyline_on_a_pinwheel) {
  const auto packed = FindPerfectPacking(
      kPinwheel, 3, [] { return false; }, 1000);
  ASSERT_TRUE(packed.has_value());
  ExpectValidPacking(kPinwheel, *packed, 3);
}

TEST(FindSkylinePacking, Packs_random_guillotine_partitions_in_about_a_node_per_item) {
  const int64_t height = 256 * 1024;
  int found = 0, tried = 0;
  int64_t nodes = 0, items_packed = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const std::vector<PackingItem> items =
        GuillotineItems({.num_buffers = 20 + static_cast<int32_t>(seed * 13 % 280),
                         .seed = seed,
                         .capacity_bytes = height});
    ++tried;
    int64_t used = 0;
    const auto packed = FindSkylinePacking(
        items, height, 8 * static_cast<int64_t>(items.size()), [] { return false; }, &used);
    if (!packed) continue;
    ++found;
    nodes += used;
    items_packed += static_cast<int64_t>(items.size());
    ExpectValidPacking(items, *packed, height);
  }
  // A heuristic search, used on the sets the decomposition cannot split:
  // measured 24 of 30, at 1.1 nodes per item (the same with 50 per item: the
  // misses are early wrong choices, not a short budget).
  EXPECT_GE(found, 22) << found << " of " << tried;
  std::printf("packed %d of %d guillotine partitions, %.2f nodes per item\n", found, tried,
              static_cast<double>(nodes) / static_cast<double>(items_packed));
}

TEST(FindSkylinePacking, Rejects_an_item_taller_than_the_height) {
  EXPECT_FALSE(FindSkylinePacking({{4, 0, 1}}, 3, 100, [] { return false; }).has_value());
}

TEST(FindSkylinePacking, Declines_a_set_with_slack) {
  // 3 bytes live in section 0, 2 in section 1: no packing of height 3 is full.
  const std::vector<PackingItem> items = {{1, 0, 2}, {2, 0, 1}};
  EXPECT_FALSE(FindSkylinePacking(items, 3, 100, [] { return false; }).has_value());
}

TEST(FindSkylinePacking, Stops_at_the_node_budget) {
  const std::vector<PackingItem> items =
      GuillotineItems({.num_buffers = 200, .seed = 3, .capacity_bytes = 64 * 1024});
  int64_t used = -1;
  EXPECT_FALSE(FindSkylinePacking(
                   items, 64 * 1024, 5, [] { return false; }, &used)
                   .has_value());
  EXPECT_EQ(used, 5);
  EXPECT_FALSE(FindSkylinePacking(
                   items, 64 * 1024, 1000000, [] { return true; }, &used)
                   .has_value());
}

}  // namespace
}  // namespace tessel::memory
