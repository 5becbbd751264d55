#include "memory/testing/tight_instance.h"

#include <gtest/gtest.h>

#include <numeric>

#include "memory/lower_bound.h"
#include "memory/verifier.h"

namespace tessel::memory {
namespace {

int64_t Bound(const Problem& p) {
  std::vector<BufferIndex> all(p.buffers.size());
  std::iota(all.begin(), all.end(), 0);
  return PoolLowerBound(p, all);
}

TEST(TightInstance, The_construction_is_a_packing_at_the_capacity) {
  const TightInstanceOptions cases[] = {
      {.num_buffers = 150, .seed = 1},
      {.num_buffers = 300, .seed = 2},
      {.num_buffers = 500, .seed = 3},
      {.num_buffers = 200, .seed = 4, .unit_bytes = 64},
      {.num_buffers = 200, .seed = 5, .peaks = 30, .min_fill = 0.9, .max_fill = 0.99},
  };
  for (const TightInstanceOptions& options : cases) {
    SCOPED_TRACE("seed " + std::to_string(options.seed));
    TightInstance t = MakeTightInstance(options);
    // The known fit is the whole rectangle, and a full step proves it optimal.
    EXPECT_EQ(t.capacity_bytes, options.capacity_bytes);
    EXPECT_EQ(Bound(t.problem), t.capacity_bytes);
    t.problem.pools[0].size_limit_bytes = t.capacity_bytes;
    Plan plan{.algorithm = "construction", .placements = t.placements};
    plan.pool_used_bytes = PoolUsedBytes(t.problem, t.placements);
    const Status verified = VerifyPlan(t.problem, plan);
    EXPECT_TRUE(verified.ok()) << verified.message();
  }
}

TEST(TightInstance, Counts_sizes_and_lifetimes_are_in_range) {
  for (int32_t n : {150, 333, 500}) {
    SCOPED_TRACE(n);
    const TightInstanceOptions options{.num_buffers = n, .seed = static_cast<uint64_t>(n)};
    const TightInstance t = MakeTightInstance(options);
    ASSERT_EQ(t.problem.buffers.size(), static_cast<size_t>(n));
    ASSERT_EQ(t.placements.size(), static_cast<size_t>(n));
    int small = 0, large = 0, long_lived = 0;
    for (const BufferInfo& b : t.problem.buffers) {
      EXPECT_GE(b.size_bytes, options.min_size_bytes) << b.name;
      EXPECT_LE(b.size_bytes, options.max_size_bytes) << b.name;
      EXPECT_EQ(b.size_bytes % options.unit_bytes, 0) << b.name;
      EXPECT_EQ(b.alignment, 1) << b.name;
      EXPECT_FALSE(b.live.empty()) << b.name;
      EXPECT_LE(b.live.last_use - b.live.first_use, options.max_long_steps) << b.name;
      small += b.size_bytes < 64 * 1024;
      large += b.size_bytes >= 256 * 1024;
      long_lived += b.live.last_use - b.live.first_use > options.max_short_steps;
    }
    // Mostly small, some large; mostly short-lived, some long-lived.
    EXPECT_GT(small, n / 2);
    EXPECT_GT(large, 0);
    EXPECT_GT(long_lived, 0);
    EXPECT_LT(long_lived, n / 3);
  }
}

TEST(TightInstance, The_seed_decides_the_instance) {
  const TightInstance a = MakeTightInstance({.num_buffers = 250, .seed = 9});
  const TightInstance b = MakeTightInstance({.num_buffers = 250, .seed = 9});
  const TightInstance c = MakeTightInstance({.num_buffers = 250, .seed = 10});
  ASSERT_EQ(a.problem.buffers.size(), b.problem.buffers.size());
  bool differs = false;
  for (size_t i = 0; i < a.problem.buffers.size(); ++i) {
    const BufferInfo &x = a.problem.buffers[i], &y = b.problem.buffers[i],
                     &z = c.problem.buffers[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.size_bytes, y.size_bytes);
    EXPECT_EQ(x.live.first_use, y.live.first_use);
    EXPECT_EQ(x.live.last_use, y.live.last_use);
    EXPECT_EQ(a.placements[i].offset_bytes, b.placements[i].offset_bytes);
    differs = differs || x.size_bytes != z.size_bytes || x.live.last_use != z.live.last_use;
  }
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace tessel::memory
