#include "tuning/space.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace tessel::tuning {
namespace {

Problem Gpu(int dims, std::array<size_t, 3> global, size_t max_group = 1024) {
  return {.dims = dims,
          .global = global,
          .max_group = max_group,
          .max_item = {1024, 1024, 64},
          .preferred_multiple = 32,
          .compute_units = 132,
          .global_mem_cache_bytes = 4 << 20};
}

TEST(TuningSpace, Default_local_size_stays_within_limits) {
  const Problem cases[] = {
      Gpu(1, {1000, 1, 1}),     Gpu(3, {7, 7, 960}),  Gpu(3, {112, 112, 32}, 256),
      Gpu(2, {1, 4096, 1}, 64), Gpu(3, {3, 5, 2}, 1), Gpu(3, {4096, 1, 4096}),
  };
  for (const Problem& p : cases) {
    const LocalSize local = DefaultLocal(p);
    EXPECT_TRUE(IsLegal(p, local)) << ToString(local, 3);
    for (int d = 0; d < p.dims; ++d) {
      EXPECT_LE(local[static_cast<size_t>(d)],
                std::max<size_t>(p.global[static_cast<size_t>(d)], 1));
    }
    EXPECT_LE(local[0] * local[1] * local[2], std::min<size_t>(p.max_group, 256));
  }
  // Contiguous dim first: a wide row gets a wide work-group along dim 0.
  EXPECT_GE(DefaultLocal(Gpu(2, {4096, 64, 1}))[0], 64u);
  // Dim 2 stays within the device's item limit (64 on this one).
  EXPECT_LE(DefaultLocal(Gpu(3, {1, 1, 4096}))[2], 64u);
}

TEST(TuningSpace, Default_gives_every_compute_unit_a_group_when_it_can) {
  // 512 channels of a global pooling: 2 groups of 256 would leave 130 of
  // the 132 units idle.
  const Problem pool = Gpu(2, {1, 512, 1});
  EXPECT_GE(Groups(pool, DefaultLocal(pool)), 132u);
  EXPECT_EQ(DefaultLocal(pool)[0], 1u);
  // A small 3D launch shrinks its outer dimension first.
  const Problem conv = Gpu(3, {7, 7, 128});
  const LocalSize small = DefaultLocal(conv);
  EXPECT_GE(Groups(conv, small), 132u);
  EXPECT_EQ(small[0], 4u) << ToString(small, 3);
  // Fewer items than units: one item a group.
  EXPECT_EQ(DefaultLocal(Gpu(1, {36, 1, 1})), (LocalSize{1, 1, 1}));
  // A launch with groups to spare keeps its full groups.
  const Problem big = Gpu(3, {112, 112, 32});
  const LocalSize full = DefaultLocal(big);
  EXPECT_EQ(full[0] * full[1] * full[2], 256u);
}

TEST(TuningSpace, Legality_follows_the_device_limits) {
  const Problem p = Gpu(2, {100, 100, 1}, 256);
  EXPECT_TRUE(IsLegal(p, {16, 16, 1}));
  EXPECT_FALSE(IsLegal(p, {32, 16, 1}));  // 512 > 256 items
  EXPECT_FALSE(IsLegal(p, {16, 16, 2}));  // a size past dims
  EXPECT_FALSE(IsLegal(p, {0, 16, 1}));
  Problem narrow = p;
  narrow.max_item = {8, 1024, 64};
  EXPECT_FALSE(IsLegal(narrow, {16, 1, 1}));
  EXPECT_DOUBLE_EQ(Waste(p, {10, 10, 1}), 1.0);
  EXPECT_DOUBLE_EQ(Waste(p, {64, 1, 1}), 128.0 / 100.0);
  EXPECT_EQ(Groups(p, {64, 4, 1}), 2u * 25u);
}

TEST(TuningSpace, Exhaustive_space_holds_every_divisor_and_power_of_two) {
  const Problem p = Gpu(2, {56, 12, 1}, 256);
  const std::vector<LocalSize> all = ExhaustiveCandidates(p);
  const std::set<LocalSize> set(all.begin(), all.end());
  EXPECT_EQ(set.size(), all.size());  // no duplicates
  for (size_t a : {1, 2, 4, 7, 8, 14, 16, 28, 32, 56, 64}) {
    for (size_t b : {1, 2, 3, 4, 6, 8, 12, 16}) {
      EXPECT_EQ(set.count({a, b, 1}), a * b <= 256 ? 1u : 0u) << a << "x" << b;
    }
  }
  EXPECT_EQ(set.count({128, 1, 1}), 0u);  // a power of two past twice the extent
  EXPECT_EQ(set.count({5, 1, 1}), 0u);    // neither a divisor nor a power of two
  for (const LocalSize& l : all) EXPECT_TRUE(IsLegal(p, l));
}

TEST(TuningSpace, Mace_and_mnn_lists_are_the_seeds) {
  // 3 dims: 30 candidates {x, gws[1], z}, less the illegal ones.
  const Problem p3 = Gpu(3, {64, 8, 32});
  const std::vector<LocalSize> mace3 = MaceCandidates(p3);
  EXPECT_FALSE(mace3.empty());
  for (const LocalSize& l : mace3) {
    EXPECT_EQ(l[1], 8u);
    EXPECT_TRUE(IsLegal(p3, l));
  }
  EXPECT_NE(std::find(mace3.begin(), mace3.end(), LocalSize{16, 8, 8}), mace3.end());
  // 2 dims: {kwg / 2^k, 2^k}, {kwg, 1}, {1, kwg}: with kwg = 256, {0, 512} is
  // illegal and {1, 256} comes twice.
  const std::vector<LocalSize> mace2 = MaceCandidates(Gpu(2, {100, 100, 1}, 256));
  EXPECT_EQ(mace2.size(), 9u);
  EXPECT_EQ(mace2.front(), (LocalSize{128, 2, 1}));
  // MNN: powers of two up to twice the extent in every dim.
  const std::vector<LocalSize> mnn = MnnCandidates(Gpu(2, {3, 40, 1}, 1024));
  const std::set<LocalSize> mset(mnn.begin(), mnn.end());
  EXPECT_EQ(mset.count({4, 64, 1}), 1u);
  EXPECT_EQ(mset.count({8, 1, 1}), 0u);  // 8 > 2 * 3
  EXPECT_EQ(mnn.size(), 3u * 7u);        // {1, 2, 4} x {1 .. 64}
}

}  // namespace
}  // namespace tessel::tuning
