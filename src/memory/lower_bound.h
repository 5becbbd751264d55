// Lower bounds: no plan can use fewer bytes in a pool.
//
// The buffers live at one moment conflict pairwise, so they are stacked
// without sharing bytes and the pool needs at least their total. Offsets are
// multiples of the smallest alignment `a` among the pool's buffers (all are
// powers of two), so every buffer but the topmost one occupies its size rounded
// up to `a`: the bound at a moment is the sum of rounded sizes minus the
// largest rounding slack among them. The pool's bound is the largest over
// time, and at least every single buffer's size and every pinned buffer's end.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "memory/problem.h"

namespace tessel::memory {

// The bound for the pool that holds exactly `members`.
int64_t PoolLowerBound(const Problem& problem, std::span<const BufferIndex> members);

// One bound per pool, for the buffers `placements` put in it.
std::vector<int64_t> PoolLowerBounds(const Problem& problem,
                                     const std::vector<Placement>& placements);

// How far earlier pools can relieve a pool. For pool p, let X be the buffers
// the plan put in p, and those it put in a candidate of theirs listed before
// p (what the earlier pools took from p); pinned buffers count only in their
// own pool.
//
//   alone_bytes          PoolLowerBound(X): what p needs if the earlier pools
//                        take none of X.
//   given_earlier_bytes  what p needs however X is shared out between p and
//                        the earlier pools under their limits, whatever the
//                        assignment: at each moment, the bytes of X live then
//                        less the most the earlier pools can take of them:
//                        the largest sum of whole buffers' sizes within their
//                        room then (the sum, over the bounded pools listed
//                        before p by some buffer of X, of the pool's limit
//                        less the bytes live then of buffers that can only be
//                        in that pool). A buffer too large for every earlier
//                        pool stays in p; one with an unbounded earlier pool
//                        may leave p entirely. At least PoolLowerBound of the
//                        buffers that must stay in p. Raw sizes: alignment
//                        and fragmentation are not counted, so an assignment
//                        may miss the bound where it can only be met by
//                        packing an earlier pool without a byte to spare.
//
// A pool that no buffer lists after another pool has both equal to its lower
// bound. The plan's used size of p is never below given_earlier_bytes; the
// gap says how much a better assignment could still win.
struct FallbackBound {
  int64_t alone_bytes = 0;
  int64_t given_earlier_bytes = 0;
};

// One per pool, for the plan's placements.
std::vector<FallbackBound> FallbackBounds(const Problem& problem,
                                          const std::vector<Placement>& placements);

}  // namespace tessel::memory
