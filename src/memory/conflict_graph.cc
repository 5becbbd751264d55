#include "memory/conflict_graph.h"

#include <algorithm>

namespace tessel::memory {

std::vector<BufferIndex> OrderByFirstUse(const Problem& problem) {
  std::vector<BufferIndex> order;
  order.reserve(problem.buffers.size());
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    if (!problem.buffers[i].live.empty()) order.push_back(static_cast<BufferIndex>(i));
  }
  std::sort(order.begin(), order.end(), [&](BufferIndex a, BufferIndex b) {
    const int64_t fa = problem.buffers[static_cast<size_t>(a)].live.first_use;
    const int64_t fb = problem.buffers[static_cast<size_t>(b)].live.first_use;
    return fa != fb ? fa < fb : a < b;
  });
  return order;
}

ConflictGraph ConflictGraph::Build(const Problem& problem) {
  const size_t n = problem.buffers.size();
  ConflictGraph g;
  // Explicit lists may repeat a pair, name it from both sides, or name a pair
  // whose lifespans overlap anyway: keep only what the sweep does not see.
  std::vector<std::pair<BufferIndex, BufferIndex>> extra;
  for (size_t i = 0; i < n; ++i) {
    const BufferInfo& b = problem.buffers[i];
    for (BufferIndex c : b.conflicts) {
      const auto j = static_cast<size_t>(c);
      if (j == i || b.live.Overlaps(problem.buffers[j].live)) continue;
      extra.emplace_back(static_cast<BufferIndex>(std::min(i, j)),
                         static_cast<BufferIndex>(std::max(i, j)));
    }
  }
  std::sort(extra.begin(), extra.end());
  extra.erase(std::unique(extra.begin(), extra.end()), extra.end());
  g.has_explicit_ = !extra.empty();

  // Two passes over the pairs (count, then fill) keep the memory at exactly
  // one entry per pair and direction.
  std::vector<int64_t> degree(n, 0);
  ForEachOverlappingPair(problem, [&](BufferIndex a, BufferIndex b) {
    ++degree[static_cast<size_t>(a)];
    ++degree[static_cast<size_t>(b)];
  });
  for (auto [a, b] : extra) {
    ++degree[static_cast<size_t>(a)];
    ++degree[static_cast<size_t>(b)];
  }
  g.begin_.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) g.begin_[i + 1] = g.begin_[i] + degree[i];
  g.adjacency_.resize(static_cast<size_t>(g.begin_[n]));
  std::vector<int64_t> fill(g.begin_.begin(), g.begin_.end() - 1);
  auto add = [&](BufferIndex a, BufferIndex b) {
    g.adjacency_[static_cast<size_t>(fill[static_cast<size_t>(a)]++)] = b;
    g.adjacency_[static_cast<size_t>(fill[static_cast<size_t>(b)]++)] = a;
  };
  ForEachOverlappingPair(problem, add);
  for (auto [a, b] : extra) add(a, b);
  return g;
}

}  // namespace tessel::memory
