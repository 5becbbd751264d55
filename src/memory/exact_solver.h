// The exact search behind `optimal`: branch and bound over canonical
// placements, in the spirit of MiniMalloc (Moffitt, ASPLOS 2023).
//
// For one pool and a capacity C, a depth-first search decides whether the
// pool's buffers fit in C bytes. It only builds canonical plans: buffers are
// placed in non-decreasing offset order, each at the lowest offset its placed
// conflicting buffers leave (ties in a fixed preorder), which loses no
// solution and removes most symmetric ones. It prunes a partial plan when
//   - a buffer can no longer fit under C,
//   - some moment's floor (the top of what is placed there, raised to the
//     current offset and to the lowest offset any unplaced buffer there can
//     take) plus the sizes still to place there exceeds C,
//   - the next buffer would sit above a gap another unplaced buffer could
//     fill (that plan is found through the other buffer first),
// and splits the problem in time when no unplaced buffer crosses a moment.
// Attempts restart under node limits from the Luby sequence, over the static
// preorders and then randomly perturbed copies of them (deterministic for a
// capacity), every other attempt without the tight-section branching, so one
// unlucky order does not stall the search: on tight pools a good order packs
// within thousands of nodes and a bad one wanders for millions.
//
// The optimization around it starts from a valid plan (the best greedy one):
// it asks for the pool's target first when the plan is above it (a size
// limit, or PlannerOptions::target_bytes: 70% of the budget), else for the
// lower bound (30%; 70% when that is the target), then bisects between what
// is proven impossible and the best plan found, until the two meet (proven
// optimal) or the budget is spent (best plan so far, not proven). Pools are independent:
// each keeps the buffers the starting plan gave it. A pool with pinned buffers
// is left as the starting plan placed it.
#pragma once

#include <cstdint>
#include <vector>

#include "memory/planner.h"

namespace tessel::memory {

// `start` must be a valid plan for ctx.problem; the result is never worse.
// The search stops after `node_limit` search nodes when it is positive (the
// same plan on every machine), otherwise after `time_limit_s` seconds.
StatusOr<AlgorithmResult> ImproveExactly(const PlanContext& ctx, std::vector<Placement> start,
                                         double time_limit_s, int64_t node_limit);

}  // namespace tessel::memory
