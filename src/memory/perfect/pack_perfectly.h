// The first stage of the opt-in `perfect` algorithm (planner.h): zero-waste
// packings for pools without slack.
//
// A pool whose live sizes add up to the same total at every moment has that
// total as its lower bound, and only a plan that wastes no byte at any moment
// reaches it. FindPerfectPacking (perfect_packing.h) looks for such a plan by
// guillotine decomposition; on any other pool it declines at once. Real
// models' pools have slack, so the default pipelines (`auto`, `optimal`) do
// not run this; the synthetic guillotine instances of ../shared/planning
// are what it is for.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "memory/planner.h"

namespace tessel::memory {

// `placements` must be a valid plan for ctx.problem. Each pool above its
// lower bound, with no pinned buffer and no conflict other than overlapping
// lifespans, is repacked at its bound when a zero-waste packing that respects
// every alignment is found within `node_budget` search nodes (per pool) and
// before `expired()`; other pools keep their placements. The plan never gets
// worse.
void PackPerfectly(const PlanContext& ctx, std::vector<Placement>& placements,
                   const std::function<bool()>& expired, int64_t node_budget);

}  // namespace tessel::memory
