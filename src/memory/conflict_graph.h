// ConflictGraph: who conflicts with whom, as compressed adjacency lists.
//
// Built once per planning run from the lifespans (a sweep over start times,
// O(n log n + pairs)) and the explicit conflict lists. Memory is one index per
// conflicting pair and direction: it grows with the number of buffers live at
// the same time, never with the square of the buffer count.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "memory/problem.h"

namespace tessel::memory {

class ConflictGraph {
 public:
  // Symmetric, without duplicates or self-loops.
  static ConflictGraph Build(const Problem& problem);

  std::span<const BufferIndex> neighbors(BufferIndex b) const {
    const auto i = static_cast<size_t>(b);
    return {adjacency_.data() + begin_[i], static_cast<size_t>(begin_[i + 1] - begin_[i])};
  }
  int64_t degree(BufferIndex b) const {
    const auto i = static_cast<size_t>(b);
    return begin_[i + 1] - begin_[i];
  }
  int64_t num_buffers() const { return static_cast<int64_t>(begin_.size()) - 1; }
  // Each conflicting pair counts once.
  int64_t num_pairs() const { return static_cast<int64_t>(adjacency_.size()) / 2; }
  // True when some conflict is not an overlap of lifespans.
  bool has_explicit_conflicts() const { return has_explicit_; }

 private:
  std::vector<int64_t> begin_;  // num_buffers + 1 offsets into adjacency_
  std::vector<BufferIndex> adjacency_;
  bool has_explicit_ = false;
};

// Calls f(a, b) once for every pair of buffers whose lifespans overlap.
template <typename F>
void ForEachOverlappingPair(const Problem& problem, F&& f);

// Buffer indices with a non-empty lifespan, ordered by first_use (then index).
std::vector<BufferIndex> OrderByFirstUse(const Problem& problem);

template <typename F>
void ForEachOverlappingPair(const Problem& problem, F&& f) {
  std::vector<BufferIndex> active;
  for (BufferIndex b : OrderByFirstUse(problem)) {
    const Lifespan& live = problem.buffers[static_cast<size_t>(b)].live;
    // Buffers come in order of first_use, so one that ended before this one
    // starts has ended for every later one too.
    for (size_t k = 0; k < active.size();) {
      const BufferIndex a = active[k];
      if (problem.buffers[static_cast<size_t>(a)].live.last_use <= live.first_use) {
        active[k] = active.back();
        active.pop_back();
        continue;
      }
      f(a, b);
      ++k;
    }
    active.push_back(b);
  }
}

}  // namespace tessel::memory
