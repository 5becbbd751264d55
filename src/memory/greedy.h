// Greedy placement: buffers one at a time, in a given order, each at the
// lowest aligned offset of its first candidate pool where it overlaps no
// conflicting buffer placed before it and ends under the pool's limit.
//
//   GreedyPlacer placer(problem, conflicts);
//   std::vector<Placement> out;
//   if (!placer.Place(OrderBySize(problem, conflicts), &out)) ... placer.failed_buffer()
//
// greedy_by_size and greedy_by_conflicts are this placement after TVM's two
// sorts (size, then conflict count; conflict count, then size). Unlike TVM's
// PostSortAllocation, which stacks a buffer above the highest conflicting one,
// the placement fills the lowest gap that fits, as TVM's hill_climb does; it is
// never worse and on models usually much better. Pinned buffers are placed
// first, where they were pinned.
#pragma once

#include <span>
#include <vector>

#include "memory/conflict_graph.h"
#include "memory/problem.h"

namespace tessel::memory {

class GreedyPlacer {
 public:
  GreedyPlacer(const Problem& problem, const ConflictGraph& conflicts);

  // Fills `placements` (one per buffer). Returns false when some buffer fits
  // in none of its candidate pools (failed_buffer() names it) or when two
  // pinned buffers overlap (failed_buffer() and pinned_clash()).
  bool Place(std::span<const BufferIndex> order, std::vector<Placement>* placements);

  BufferIndex failed_buffer() const { return failed_; }
  // The other pinned buffer when two pinned ones overlap, else -1.
  BufferIndex pinned_clash() const { return clash_; }

 private:
  int64_t LowestFit(BufferIndex b, PoolIndex pool, const std::vector<Placement>& placements);

  const Problem& problem_;
  const ConflictGraph& conflicts_;
  std::vector<std::pair<int64_t, int64_t>> taken_;  // [offset, end) of placed neighbors
  BufferIndex failed_ = -1;
  BufferIndex clash_ = -1;
};

// Unpinned buffers by size (largest first), then conflict count, then index.
std::vector<BufferIndex> OrderBySize(const Problem& problem, const ConflictGraph& conflicts);
// Unpinned buffers by conflict count (most first), then size, then index.
std::vector<BufferIndex> OrderByConflicts(const Problem& problem, const ConflictGraph& conflicts);

// The message for a placement that failed after `order`: which pool is too
// small, its limit, and what a plan with that pool unbounded needs there.
Status PlacementFailure(const Problem& problem, const ConflictGraph& conflicts,
                        std::span<const BufferIndex> order, const GreedyPlacer& failed);

}  // namespace tessel::memory
