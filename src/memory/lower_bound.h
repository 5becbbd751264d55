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

}  // namespace tessel::memory
