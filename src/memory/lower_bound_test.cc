#include "memory/lower_bound.h"

#include <gtest/gtest.h>

#include <numeric>

#include "memory/conflict_graph.h"

namespace tessel::memory {
namespace {

struct B {
  int64_t size, alignment, first, last;
};

Problem Make(const std::vector<B>& buffers) {
  Problem p;
  p.pools.push_back({.name = "p"});
  for (size_t i = 0; i < buffers.size(); ++i) {
    const B& b = buffers[i];
    p.buffers.push_back({.name = "b" + std::to_string(i),
                         .size_bytes = b.size,
                         .alignment = b.alignment,
                         .live = {b.first, b.last},
                         .pool_candidates = {0}});
  }
  return p;
}

int64_t Bound(const Problem& p) {
  std::vector<BufferIndex> all(p.buffers.size());
  std::iota(all.begin(), all.end(), 0);
  return PoolLowerBound(p, all);
}

TEST(PoolLowerBound, Table) {
  struct Case {
    const char* name;
    std::vector<B> buffers;
    int64_t bound;
  } cases[] = {
      {"empty", {}, 0},
      {"one buffer", {{100, 1, 0, 1}}, 100},
      {"overlapping add up", {{100, 1, 0, 2}, {50, 1, 1, 3}}, 150},
      {"touching do not", {{100, 1, 0, 2}, {50, 1, 2, 3}}, 100},
      {"the busiest moment", {{10, 1, 0, 9}, {20, 1, 0, 3}, {30, 1, 3, 6}, {5, 1, 5, 9}}, 45},
      // Below the top buffer, each takes its size rounded to 64.
      {"aligned sizes, top not rounded", {{100, 64, 0, 2}, {10, 64, 0, 2}}, 128 + 10},
      {"a larger buffer alone", {{500, 1, 0, 1}, {10, 1, 1, 2}, {20, 1, 1, 2}}, 500},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Bound(Make(c.buffers)), c.bound);
  }
}

TEST(PoolLowerBound, Counts_pinned_ends) {
  Problem p = Make({{10, 1, 0, 1}});
  p.buffers[0].fixed_offset_bytes = 90;
  EXPECT_EQ(Bound(p), 100);
}

TEST(PoolLowerBounds, Follow_the_assignment) {
  Problem p = Make({{10, 1, 0, 2}, {20, 1, 0, 2}});
  p.pools.push_back({.name = "q"});
  EXPECT_EQ(PoolLowerBounds(p, {{0, 0}, {1, 0}}), (std::vector<int64_t>{10, 20}));
  EXPECT_EQ(PoolLowerBounds(p, {{0, 0}, {0, 10}}), (std::vector<int64_t>{30, 0}));
}

TEST(ConflictGraph, Matches_brute_force_and_merges_explicit_conflicts) {
  Problem p = Make({{1, 1, 0, 4}, {1, 1, 2, 6}, {1, 1, 4, 8}, {1, 1, 0, 1}, {1, 1, 7, 9}});
  p.buffers[3].conflicts = {4, 4, 0};  // 3-0 overlap anyway; 3-4 is new
  const ConflictGraph g = ConflictGraph::Build(p);
  EXPECT_TRUE(g.has_explicit_conflicts());
  int64_t pairs = 0;
  for (BufferIndex a = 0; a < 5; ++a) {
    for (BufferIndex b = a + 1; b < 5; ++b) {
      const bool expected =
          p.buffers[static_cast<size_t>(a)].live.Overlaps(p.buffers[static_cast<size_t>(b)].live) ||
          (a == 3 && b == 4);
      const auto n = g.neighbors(a);
      EXPECT_EQ(std::count(n.begin(), n.end(), b), expected ? 1 : 0) << a << " " << b;
      pairs += expected;
    }
  }
  EXPECT_EQ(g.num_pairs(), pairs);
}

}  // namespace
}  // namespace tessel::memory
