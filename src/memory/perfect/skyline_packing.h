// Zero-waste packings by filling a skyline from address 0 upward.
//
// Every item's time span is fixed; only its offset is free. The search keeps
// the skyline f(s): how high each section is filled, from 0 up with no gap,
// and sets items only on a stretch where the skyline is flat under their whole
// span. A valley (a flat stretch lower than both neighbours) must be covered
// exactly by a chain of unplaced items laid end to end:
//
//      wall                   wall
//       |  [a ....... b)       |      a valley at level y: the chain
//       |  |item|item  |item|  |      a -> ... -> b of unplaced items,
//       +--+----+------+----+--+      each starting where the last ended
//
// The search works on the valley with the fewest chains and tries each item
// that can start (or end) one, longest first. It prunes when
//   - a valley has no chain left,
//   - an unplaced item no longer fits under the height over its span,
//   - a basin (a stretch walled in by higher neighbours) cannot be raised to
//     its lower wall by the unplaced items that lie wholly inside it.
// It complements the guillotine decomposition (perfect_packing.h): it needs
// no balanced bands, so it packs sets whose seams are too ambiguous to split
// by sums alone; but it searches blindly, and past a few hundred items its
// wrong early choices surface too late to undo. Use it on small sets.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "memory/perfect/perfect_packing.h"

namespace tessel::memory {

// Offsets (by item) of a packing of `items` into [0, height), or nullopt when
// none was found within `node_budget` search nodes or before `expired()`.
// Every section the items span must hold exactly `height` bytes of them (the
// caller checks); items of size 0 get offset 0. `nodes_used`, when given,
// receives the number of search nodes spent.
std::optional<std::vector<int64_t>> FindSkylinePacking(const std::vector<PackingItem>& items,
                                                       int64_t height, int64_t node_budget,
                                                       const std::function<bool()>& expired,
                                                       int64_t* nodes_used = nullptr);

}  // namespace tessel::memory
