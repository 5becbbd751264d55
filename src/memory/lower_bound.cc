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

namespace {

// The largest sum of some of `sizes` that is at most `cap`, exactly while the
// distinct partial sums stay few (a moment holds a handful of buffers);
// beyond that, min(cap, their total), which is never less.
int64_t LargestSubsetSum(const std::vector<int64_t>& sizes, int64_t cap) {
  constexpr size_t kMaxSums = 4096;
  int64_t total = 0;
  for (int64_t size : sizes) total += size;
  if (total <= cap) return total;
  std::vector<int64_t> sums = {0}, next;
  for (int64_t size : sizes) {
    next = sums;
    for (int64_t sum : sums) {
      if (sum + size <= cap) next.push_back(sum + size);
    }
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    sums.swap(next);
    if (sums.back() == cap) return cap;
    if (sums.size() > kMaxSums) return cap;
  }
  return sums.back();
}

}  // namespace

std::vector<FallbackBound> FallbackBounds(const Problem& problem,
                                          const std::vector<Placement>& placements) {
  const size_t num_pools = problem.pools.size();
  std::vector<int64_t> times;
  for (const BufferInfo& b : problem.buffers) {
    if (b.live.empty()) continue;
    times.push_back(b.live.first_use);
    times.push_back(b.live.last_use);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  auto section_of = [&](int64_t t) {
    return static_cast<size_t>(std::lower_bound(times.begin(), times.end(), t) - times.begin());
  };
  // Adds `bytes` over the lifespan of `b` to a difference array by section.
  auto add = [&](std::vector<int64_t>& diff, const BufferInfo& b, int64_t bytes) {
    if (b.live.empty()) return;
    diff[section_of(b.live.first_use)] += bytes;
    diff[section_of(b.live.last_use)] -= bytes;
  };
  // Bytes live by section of buffers that can only be in each pool.
  std::vector<std::vector<int64_t>> only(num_pools, std::vector<int64_t>(times.size() + 1, 0));
  for (const BufferInfo& b : problem.buffers) {
    if (b.fixed_offset_bytes || b.pool_candidates.size() == 1) {
      add(only[static_cast<size_t>(b.pool_candidates.front())], b, b.size_bytes);
    }
  }

  std::vector<FallbackBound> bounds(num_pools);
  std::vector<BufferIndex> taken, must, movable;
  std::vector<int64_t> sizes;
  std::vector<int64_t> must_live, movable_live;
  std::vector<bool> relieves(num_pools);
  for (size_t p = 0; p < num_pools; ++p) {
    taken.clear();
    must.clear();
    movable.clear();
    must_live.assign(times.size() + 1, 0);
    movable_live.assign(times.size() + 1, 0);
    relieves.assign(num_pools, false);
    for (size_t i = 0; i < placements.size(); ++i) {
      const BufferInfo& b = problem.buffers[i];
      const PoolIndex at = placements[i].pool;
      const auto& c = b.pool_candidates;
      const auto listed = std::find(c.begin(), c.end(), static_cast<PoolIndex>(p));
      if (static_cast<size_t>(at) != p && (b.fixed_offset_bytes || listed == c.end() ||
                                           std::find(c.begin(), listed, at) == listed)) {
        continue;
      }
      taken.push_back(static_cast<BufferIndex>(i));
      bool may_leave = false, fits_earlier = false;
      if (!b.fixed_offset_bytes) {
        for (auto q = c.begin(); q != listed; ++q) {
          const std::optional<int64_t>& limit =
              problem.pools[static_cast<size_t>(*q)].size_limit_bytes;
          may_leave = may_leave || !limit;
          fits_earlier = fits_earlier || (limit && b.size_bytes <= *limit);
        }
      }
      if (may_leave) continue;
      if (!fits_earlier) {
        must.push_back(static_cast<BufferIndex>(i));
        add(must_live, b, b.size_bytes);
        continue;
      }
      add(movable_live, b, b.size_bytes);
      movable.push_back(static_cast<BufferIndex>(i));
      for (auto q = c.begin(); q != listed; ++q) relieves[static_cast<size_t>(*q)] = true;
    }
    int64_t given = PoolLowerBound(problem, must);
    int64_t must_now = 0, movable_now = 0;
    std::vector<int64_t> only_now(num_pools, 0);
    for (size_t s = 0; s + 1 < times.size(); ++s) {
      must_now += must_live[s];
      movable_now += movable_live[s];
      int64_t room = 0;
      for (size_t q = 0; q < num_pools; ++q) {
        only_now[q] += only[q][s];
        if (relieves[q]) {
          room += std::max<int64_t>(0, *problem.pools[q].size_limit_bytes - only_now[q]);
        }
      }
      if (must_now + movable_now - std::min(room, movable_now) <= given) continue;
      // Buffers move whole: the earlier pools take at most the largest sum
      // of sizes live now that fits in their room.
      sizes.clear();
      for (BufferIndex b : movable) {
        const Lifespan& live = problem.buffers[static_cast<size_t>(b)].live;
        if (live.first_use <= times[s] && times[s] < live.last_use) {
          sizes.push_back(problem.buffers[static_cast<size_t>(b)].size_bytes);
        }
      }
      given = std::max(given, must_now + movable_now - LargestSubsetSum(sizes, room));
    }
    bounds[p] = {.alone_bytes = PoolLowerBound(problem, taken), .given_earlier_bytes = given};
  }
  return bounds;
}

}  // namespace tessel::memory
