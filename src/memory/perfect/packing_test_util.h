// Helpers shared by the zero-waste packing tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "memory/perfect/perfect_packing.h"
#include "memory/problem.h"
#include "memory/testing/random_instance.h"

namespace tessel::memory {

// The buffers of a generated guillotine instance as packing items.
inline std::vector<PackingItem> GuillotineItems(const GuillotineInstanceOptions& options) {
  std::vector<PackingItem> items;
  for (const BufferInfo& b : GuillotineInstance(options).buffers) {
    items.push_back({b.size_bytes, static_cast<int32_t>(b.live.first_use),
                     static_cast<int32_t>(b.live.last_use)});
  }
  return items;
}

// Checks a packing: inside [0, height), and no two items that share a
// section overlap in address.
inline void ExpectValidPacking(const std::vector<PackingItem>& items,
                               const std::vector<int64_t>& offsets, int64_t height) {
  ASSERT_EQ(offsets.size(), items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    EXPECT_GE(offsets[i], 0);
    EXPECT_LE(offsets[i] + items[i].size, height) << "item " << i;
    for (size_t j = i + 1; j < items.size(); ++j) {
      const bool live_together = items[i].section_begin < items[j].section_end &&
                                 items[j].section_begin < items[i].section_end;
      const bool overlap =
          offsets[i] < offsets[j] + items[j].size && offsets[j] < offsets[i] + items[i].size;
      EXPECT_FALSE(live_together && overlap) << "items " << i << " and " << j;
    }
  }
}

}  // namespace tessel::memory
