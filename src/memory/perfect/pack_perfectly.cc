#include "memory/perfect/pack_perfectly.h"

#include <algorithm>
#include <optional>

#include "memory/lower_bound.h"
#include "memory/perfect/perfect_packing.h"

namespace tessel::memory {

namespace {

// Repacks the pool holding `members` when a zero-waste packing is found.
void PackPool(const PlanContext& ctx, const std::vector<BufferIndex>& members,
              std::vector<Placement>& placements, int64_t used, int64_t lower_bound,
              const std::function<bool()>& expired, int64_t node_budget) {
  const Problem& problem = ctx.problem;
  auto info = [&](BufferIndex b) -> const BufferInfo& {
    return problem.buffers[static_cast<size_t>(b)];
  };
  if (used <= lower_bound) return;
  std::vector<bool> in_pool(problem.buffers.size(), false);
  for (BufferIndex b : members) {
    if (info(b).fixed_offset_bytes) return;
    in_pool[static_cast<size_t>(b)] = true;
  }
  // Empty buffers and buffers that share no moment with another non-empty
  // one sit at offset 0, as in the exact search.
  auto occupies = [&](BufferIndex b) {
    return in_pool[static_cast<size_t>(b)] && info(b).size_bytes > 0;
  };
  std::vector<BufferIndex> packed;
  for (BufferIndex b : members) {
    const auto neighbors = ctx.conflicts.neighbors(b);
    if (!occupies(b) || std::none_of(neighbors.begin(), neighbors.end(), occupies)) continue;
    for (BufferIndex n : neighbors) {
      // Sections stand for conflicts only when every conflict is an overlap.
      if (in_pool[static_cast<size_t>(n)] && !info(b).live.Overlaps(info(n).live)) return;
    }
    packed.push_back(b);
  }
  // Time cut into sections at every lifespan end.
  std::vector<int64_t> times;
  for (BufferIndex b : packed) {
    times.push_back(info(b).live.first_use);
    times.push_back(info(b).live.last_use);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  auto section_of = [&](int64_t t) {
    return static_cast<int32_t>(std::lower_bound(times.begin(), times.end(), t) - times.begin());
  };
  std::vector<PackingItem> items;
  for (BufferIndex b : packed) {
    items.push_back({info(b).size_bytes, section_of(info(b).live.first_use),
                     section_of(info(b).live.last_use)});
  }
  const int32_t num_sections = std::max<int32_t>(0, static_cast<int32_t>(times.size()) - 1);
  const std::optional<std::vector<int64_t>> offsets =
      FindPerfectPacking(items, num_sections, expired, node_budget);
  if (!offsets) return;
  int64_t peak = 0;
  for (size_t i = 0; i < packed.size(); ++i) {
    if ((*offsets)[i] % info(packed[i]).alignment != 0) return;
    peak = std::max(peak, (*offsets)[i] + items[i].size);
  }
  for (BufferIndex b : members) {
    peak = std::max(peak, info(b).size_bytes);  // those left at offset 0
  }
  if (peak >= used) return;
  for (BufferIndex b : members) placements[static_cast<size_t>(b)].offset_bytes = 0;
  for (size_t i = 0; i < packed.size(); ++i) {
    placements[static_cast<size_t>(packed[i])].offset_bytes = (*offsets)[i];
  }
}

}  // namespace

void PackPerfectly(const PlanContext& ctx, std::vector<Placement>& placements,
                   const std::function<bool()>& expired, int64_t node_budget) {
  const std::vector<int64_t> used = PoolUsedBytes(ctx.problem, placements);
  const std::vector<int64_t> bounds = PoolLowerBounds(ctx.problem, placements);
  std::vector<std::vector<BufferIndex>> members(ctx.problem.pools.size());
  for (size_t i = 0; i < placements.size(); ++i) {
    members[static_cast<size_t>(placements[i].pool)].push_back(static_cast<BufferIndex>(i));
  }
  for (size_t p = 0; p < members.size(); ++p) {
    PackPool(ctx, members[p], placements, used[p], bounds[p], expired, node_budget);
  }
}

}  // namespace tessel::memory
