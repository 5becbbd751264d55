// Zero-waste packings by guillotine decomposition.
//
// When the buffers live at every moment add up to the same total H (the lower
// bound, with no slack anywhere), a plan of peak H must fill every byte below
// H at every moment. Such a packing, when it is a guillotine one, splits
// recursively:
//   - in time, at a moment no buffer crosses: both sides are packings of
//     height H on their own;
//   - in address, at a level no buffer crosses: the buffers below form a
//     "balanced" subset, one whose live sizes add up to the same h at every
//     moment, and the rest is balanced with H - h.
// The bands are found from the "seams" at each moment: the items ending and
// starting there that balance each other (SeamGroups in the .cc). Joins that
// must hold are propagated; at ambiguous moments one join is guessed, looking
// one step ahead, and other guesses are tried when the stack does not pack.
// A set that no seam splits goes to a skyline search (skyline_packing.h),
// then to a sweep in time that gives every item a side, below or above, each
// side balanced at every moment (items live from the set's start get theirs
// when they end), and, when small, to enumerating balanced subsets.
// It finds packings that the canonical branch and bound (exact_solver.h)
// reaches only by luck, and proves nothing when it fails: the caller falls
// back to that search.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace tessel::memory {

struct PackingItem {
  int64_t size = 0;
  int32_t section_begin = 0;  // lives over sections [section_begin, section_end)
  int32_t section_end = 0;
};

// Offsets (by item) of a packing whose peak is the largest total live in one
// section, or nullopt when none was found before `expired()` returned true or
// `node_budget` search nodes were spent. Items of size 0 get offset 0.
// Conflicts are exactly overlaps of the section ranges.
std::optional<std::vector<int64_t>> FindPerfectPacking(const std::vector<PackingItem>& items,
                                                       int32_t num_sections,
                                                       const std::function<bool()>& expired,
                                                       int64_t node_budget);

}  // namespace tessel::memory
