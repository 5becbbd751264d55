// Pool assignment: the pool of every buffer that has a choice of pools,
// decided before an algorithm gives buffers offsets.
//
//   std::vector<PoolIndex> pools = AssignPools(problem, conflicts);
//   Problem fixed = WithAssignedPools(problem, pools);  // one candidate each
//   ... run any algorithm on `fixed`: each pool is planned on its own
//
// First-fit fallback (every buffer in its first candidate pool that still
// fits, in the algorithm's order) fills a small fast pool with whatever comes
// first, and the slow pool's peak stays where it was. This stage aims the
// earlier pools at the later pools' peaks instead:
//
//   1. Every buffer with a choice starts in its last candidate.
//   2. For each pool P, the last first: at the moment where P's live bytes
//      peak, a buffer live there moves to the first of its candidates before
//      P where it fits; repeat until nothing live at P's peak fits anywhere
//      earlier (P's peak cannot fall by moving buffers out of it; one that
//      did not fit is not tried again). Tried first: the buffers whose sizes
//      add up to the most the earlier pools have room for at that moment (a
//      small subset sum), largest first.
//   3. Every buffer still outside its first candidate, largest first, moves
//      to the first earlier candidate where it fits: more data in the faster
//      pools, and no later pool's peak rises.
//   4. Where first-fit fallback (greedy.h, by size or by conflicts) gives a
//      group of pools lower later peaks (the lower bounds of its pools
//      compared from the last), that group keeps first-fit's choice: the
//      steps above are greedy, and this one makes them never worse.
//
// A buffer fits in a pool when the pool's live bytes stay under its limit at
// every moment of the buffer's lifespan, and the greedy placement of the
// pool's buffers by size or by conflicts (greedy.h) ends under the limit.
// `auto` and `optimal` start from the better of those two placements, so
// they always plan the assignment; an algorithm that does not (say
// greedy_by_conflicts where only the order by size fits) gets first-fit
// fallback instead (planner.h). Pinned buffers and buffers with one
// candidate stay in their first candidate; empty buffers go there too.
// Deterministic: the same problem gets the same assignment.
#pragma once

#include <vector>

#include "memory/conflict_graph.h"
#include "memory/problem.h"

namespace tessel::memory {

// Whether some unpinned buffer has more than one candidate pool (else the
// assignment is every buffer's first candidate and this stage has no work).
bool HasPoolChoice(const Problem& problem);

// A pool for every buffer, one of its candidates. Precondition:
// ValidateProblem(problem) is ok and `conflicts` was built from it.
std::vector<PoolIndex> AssignPools(const Problem& problem, const ConflictGraph& conflicts);

// `problem` with each buffer's candidates reduced to its assigned pool.
Problem WithAssignedPools(const Problem& problem, const std::vector<PoolIndex>& pools);

}  // namespace tessel::memory
