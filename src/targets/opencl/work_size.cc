#include "targets/opencl/work_size.h"

#include <algorithm>

namespace tessel::opencl {

namespace {

constexpr int64_t kBaseCacheBytes = 16384;
constexpr size_t kMaxDefaultItems = 256;

// The largest power of two <= x (x >= 1).
size_t FloorPow2(size_t x) {
  size_t p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

}  // namespace

std::array<size_t, 3> DefaultLocalSize(const LaunchGeometry& g, int64_t kernel_max_work_group_size,
                                       int64_t global_mem_cache_bytes) {
  if (g.fixed_local()) return g.local;
  std::array<size_t, 3> local{1, 1, 1};
  if (kernel_max_work_group_size <= 0) return local;
  const size_t budget = FloorPow2(
      std::min<size_t>(static_cast<size_t>(kernel_max_work_group_size), kMaxDefaultItems));
  const size_t base =
      std::max<size_t>(static_cast<size_t>(global_mem_cache_bytes / kBaseCacheBytes), 1);
  // Powers of two: they divide the budget, so every product stays within it.
  local[0] = std::min(budget, FloorPow2(std::max<size_t>(g.global[0], 1)));
  size_t left = budget / local[0];
  if (g.dims >= 2) {
    local[1] = std::min({left, FloorPow2(std::max<size_t>(g.global[1], 1)), FloorPow2(base)});
    left /= local[1];
    if (g.dims >= 3) {
      local[2] = std::min({left, FloorPow2(std::max<size_t>(g.global[2], 1)), FloorPow2(base)});
    }
  }
  // Leftover budget goes back to dim 1 when dim 0 is short (narrow images).
  if (g.dims >= 2) {
    while (local[0] * local[1] * local[2] * 2 <= budget && local[1] * 2 <= g.global[1])
      local[1] *= 2;
  }
  return local;
}

std::array<size_t, 3> RoundedGlobal(const LaunchGeometry& g, const std::array<size_t, 3>& local) {
  std::array<size_t, 3> out{1, 1, 1};
  for (int d = 0; d < g.dims; ++d) {
    const size_t l = std::max<size_t>(local[static_cast<size_t>(d)], 1);
    out[static_cast<size_t>(d)] = (g.global[static_cast<size_t>(d)] + l - 1) / l * l;
  }
  return out;
}

}  // namespace tessel::opencl
