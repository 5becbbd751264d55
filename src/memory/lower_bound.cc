#include "memory/lower_bound.h"

#include <algorithm>
#include <map>

namespace tessel::memory {

int64_t PoolLowerBound(const Problem& problem, std::span<const BufferIndex> members) {
  int64_t bound = 0;
  int64_t min_alignment = INT64_MAX;
  for (BufferIndex b : members) {
    const BufferInfo& info = problem.buffers[static_cast<size_t>(b)];
    bound = std::max(bound, info.size_bytes);
    if (info.fixed_offset_bytes)
      bound = std::max(bound, *info.fixed_offset_bytes + info.size_bytes);
    min_alignment = std::min(min_alignment, info.alignment);
  }
  if (members.empty()) return 0;

  // +1 at first_use, -1 at last_use; at equal times ends come first, since
  // half-open lifespans that only touch do not conflict.
  struct Event {
    int64_t time;
    int kind;  // 0 = end, 1 = start
    BufferIndex buffer;
  };
  std::vector<Event> events;
  events.reserve(members.size() * 2);
  for (BufferIndex b : members) {
    const Lifespan& live = problem.buffers[static_cast<size_t>(b)].live;
    if (live.empty()) continue;
    events.push_back({live.first_use, 1, b});
    events.push_back({live.last_use, 0, b});
  }
  std::sort(events.begin(), events.end(), [](const Event& x, const Event& y) {
    return x.time != y.time ? x.time < y.time : x.kind < y.kind;
  });
  int64_t rounded_total = 0;
  std::map<int64_t, int64_t> slack_count;  // rounding slack -> live buffers with it
  for (size_t i = 0; i < events.size();) {
    const int64_t time = events[i].time;
    for (; i < events.size() && events[i].time == time; ++i) {
      const int64_t size = problem.buffers[static_cast<size_t>(events[i].buffer)].size_bytes;
      const int64_t rounded = AlignUp(size, min_alignment);
      if (events[i].kind == 1) {
        rounded_total += rounded;
        ++slack_count[rounded - size];
      } else {
        rounded_total -= rounded;
        auto it = slack_count.find(rounded - size);
        if (--it->second == 0) slack_count.erase(it);
      }
    }
    if (!slack_count.empty()) {
      bound = std::max(bound, rounded_total - slack_count.rbegin()->first);
    }
  }
  return bound;
}

std::vector<int64_t> PoolLowerBounds(const Problem& problem,
                                     const std::vector<Placement>& placements) {
  std::vector<std::vector<BufferIndex>> members(problem.pools.size());
  for (size_t i = 0; i < placements.size(); ++i) {
    if (placements[i].pool >= 0) {
      members[static_cast<size_t>(placements[i].pool)].push_back(static_cast<BufferIndex>(i));
    }
  }
  std::vector<int64_t> bounds;
  for (const auto& m : members) bounds.push_back(PoolLowerBound(problem, m));
  return bounds;
}

}  // namespace tessel::memory
