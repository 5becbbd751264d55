#include "memory/pool_assignment.h"

#include <algorithm>
#include <span>

#include "memory/greedy.h"
#include "memory/lower_bound.h"

namespace tessel::memory {

namespace {

bool HasChoice(const BufferInfo& b) {
  return !b.fixed_offset_bytes && b.pool_candidates.size() > 1 && b.size_bytes > 0;
}

// The candidates of `b` listed before `pool`.
std::span<const PoolIndex> EarlierCandidates(const BufferInfo& b, PoolIndex pool) {
  const auto it = std::find(b.pool_candidates.begin(), b.pool_candidates.end(), pool);
  return {b.pool_candidates.data(), static_cast<size_t>(it - b.pool_candidates.begin())};
}

class PoolAssigner {
 public:
  PoolAssigner(const Problem& problem, const ConflictGraph& conflicts)
      : problem_(problem),
        conflicts_(conflicts),
        fixed_(problem),
        placer_(fixed_, conflicts),
        by_size_(OrderBySize(problem, conflicts)),
        by_conflicts_(OrderByConflicts(problem, conflicts)) {}

  std::vector<PoolIndex> Run() {
    const size_t n = problem_.buffers.size();
    std::vector<int64_t> times;
    for (const BufferInfo& b : problem_.buffers) {
      if (b.live.empty()) continue;
      times.push_back(b.live.first_use);
      times.push_back(b.live.last_use);
    }
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    const size_t num_sections = times.empty() ? 0 : times.size() - 1;
    auto section_of = [&](int64_t t) {
      return static_cast<int32_t>(std::lower_bound(times.begin(), times.end(), t) - times.begin());
    };
    live_bytes_.assign(problem_.pools.size(), std::vector<int64_t>(num_sections, 0));
    pool_.resize(n);
    section_begin_.resize(n);
    section_end_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const BufferInfo& b = problem_.buffers[i];
      section_begin_[i] = b.live.empty() ? 0 : section_of(b.live.first_use);
      section_end_[i] = b.live.empty() ? 0 : section_of(b.live.last_use);
      pool_[i] = HasChoice(b) ? b.pool_candidates.back() : b.pool_candidates.front();
      fixed_.buffers[i].pool_candidates = {pool_[i]};
      AddLive(static_cast<BufferIndex>(i), pool_[i], 1);
    }
    for (auto p = static_cast<PoolIndex>(problem_.pools.size()) - 1; p >= 0; --p) LowerPeak(p);
    FillEarlierPools();
    // The stage is a heuristic: where first-fit fallback leaves a later pool
    // a lower peak, it keeps first-fit's choice for those pools.
    for (const std::vector<BufferIndex>* order : {&by_size_, &by_conflicts_}) {
      std::vector<Placement> first_fit;
      GreedyPlacer placer(problem_, conflicts_);
      if (placer.Place(*order, &first_fit)) KeepBetter(first_fit);
    }
    return pool_;
  }

 private:
  const BufferInfo& buffer(BufferIndex b) const { return problem_.buffers[static_cast<size_t>(b)]; }

  void AddLive(BufferIndex b, PoolIndex pool, int64_t sign) {
    std::vector<int64_t>& live = live_bytes_[static_cast<size_t>(pool)];
    const auto i = static_cast<size_t>(b);
    for (int32_t s = section_begin_[i]; s < section_end_[i]; ++s) {
      live[static_cast<size_t>(s)] += sign * problem_.buffers[i].size_bytes;
    }
  }

  void Move(BufferIndex b, PoolIndex pool) {
    AddLive(b, pool_[static_cast<size_t>(b)], -1);
    pool_[static_cast<size_t>(b)] = pool;
    AddLive(b, pool, 1);
    fixed_.buffers[static_cast<size_t>(b)].pool_candidates = {pool};
  }

  // Whether the greedy placement in `order` of the buffers assigned to
  // `pool`, with `b` added to them, ends under the pool's limit.
  bool PlacesWith(BufferIndex b, PoolIndex pool, const std::vector<BufferIndex>& order) {
    members_.clear();
    for (BufferIndex x : order) {
      if (x == b || pool_[static_cast<size_t>(x)] == pool) members_.push_back(x);
    }
    return placer_.Place(members_, &placements_);
  }

  bool Fits(BufferIndex b, PoolIndex pool) {
    const std::optional<int64_t>& limit =
        problem_.pools[static_cast<size_t>(pool)].size_limit_bytes;
    if (!limit) return true;
    const BufferInfo& info = buffer(b);
    if (info.size_bytes > *limit) return false;
    // Buffers live at one moment share no byte: the quick test, before any
    // placement.
    const std::vector<int64_t>& live = live_bytes_[static_cast<size_t>(pool)];
    const auto i = static_cast<size_t>(b);
    for (int32_t s = section_begin_[i]; s < section_end_[i]; ++s) {
      if (live[static_cast<size_t>(s)] + info.size_bytes > *limit) return false;
    }
    fixed_.buffers[i].pool_candidates = {pool};
    const bool fits = PlacesWith(b, pool, by_size_) || PlacesWith(b, pool, by_conflicts_);
    fixed_.buffers[i].pool_candidates = {pool_[i]};
    return fits;
  }

  // Moves buffers out of `pool` at its peak until nothing there fits in an
  // earlier candidate.
  void LowerPeak(PoolIndex pool) {
    const std::vector<int64_t>& live = live_bytes_[static_cast<size_t>(pool)];
    if (live.empty()) return;
    std::vector<bool> stuck(problem_.buffers.size(), false);
    std::vector<BufferIndex> at_peak;
    while (true) {
      const auto peak = static_cast<int32_t>(std::max_element(live.begin(), live.end()) -
                                             live.begin());  // the first on a tie
      if (live[static_cast<size_t>(peak)] == 0) return;
      at_peak.clear();
      for (size_t i = 0; i < problem_.buffers.size(); ++i) {
        if (pool_[i] == pool && !stuck[i] && HasChoice(problem_.buffers[i]) &&
            section_begin_[i] <= peak && peak < section_end_[i] &&
            !EarlierCandidates(problem_.buffers[i], pool).empty()) {
          at_peak.push_back(static_cast<BufferIndex>(i));
        }
      }
      std::sort(at_peak.begin(), at_peak.end(), [&](BufferIndex a, BufferIndex b) {
        const int64_t sa = buffer(a).size_bytes, sb = buffer(b).size_bytes;
        return sa != sb ? sa > sb : a < b;
      });
      bool moved = false;
      for (BufferIndex b : at_peak) {
        for (PoolIndex q : EarlierCandidates(buffer(b), pool)) {
          if (Fits(b, q)) {
            Move(b, q);
            moved = true;
            break;
          }
        }
        if (moved) break;
        // Pools only gain buffers here, so one that fits nowhere now never will.
        stuck[static_cast<size_t>(b)] = true;
      }
      if (!moved) return;
    }
  }

  void FillEarlierPools() {
    for (BufferIndex b : by_size_) {
      if (!HasChoice(buffer(b))) continue;
      for (PoolIndex q : EarlierCandidates(buffer(b), pool_[static_cast<size_t>(b)])) {
        if (Fits(b, q)) {
          Move(b, q);
          break;
        }
      }
    }
  }

  // For every group of pools that buffers choose among (pools that share no
  // buffer's candidate list are planned apart), adopts the pools `other`
  // gives the group's buffers when its later pools peak lower: the lower
  // bounds of the group's pools compared from the last one to the second, the
  // first that differs deciding; on a tie the assignment stays.
  void KeepBetter(const std::vector<Placement>& other) {
    const size_t num_pools = problem_.pools.size();
    std::vector<size_t> group(num_pools);
    for (size_t p = 0; p < num_pools; ++p) group[p] = p;
    auto find = [&](size_t p) {
      while (group[p] != p) p = group[p] = group[group[p]];
      return p;
    };
    for (const BufferInfo& b : problem_.buffers) {
      for (PoolIndex q : b.pool_candidates) {
        group[find(static_cast<size_t>(q))] = find(static_cast<size_t>(b.pool_candidates.front()));
      }
    }
    std::vector<Placement> current(problem_.buffers.size());
    for (size_t i = 0; i < current.size(); ++i) current[i].pool = pool_[i];
    const std::vector<int64_t> mine = PoolLowerBounds(problem_, current);
    const std::vector<int64_t> theirs = PoolLowerBounds(problem_, other);
    std::vector<bool> adopt(num_pools, false), decided(num_pools, false);
    std::vector<size_t> first_pool(num_pools, num_pools);
    for (size_t p = 0; p < num_pools; ++p) {
      if (first_pool[find(p)] == num_pools) first_pool[find(p)] = p;
    }
    for (size_t p = num_pools; p-- > 0;) {
      const size_t g = find(p);
      if (decided[g] || p == first_pool[g] || mine[p] == theirs[p]) continue;
      decided[g] = true;
      adopt[g] = theirs[p] < mine[p];
    }
    for (size_t i = 0; i < problem_.buffers.size(); ++i) {
      const PoolIndex theirs_pool = other[i].pool;
      if (!adopt[find(static_cast<size_t>(theirs_pool))] || theirs_pool == pool_[i]) continue;
      Move(static_cast<BufferIndex>(i), theirs_pool);
    }
  }

  const Problem& problem_;
  const ConflictGraph& conflicts_;
  Problem fixed_;  // each buffer's candidates: its current pool only
  GreedyPlacer placer_;
  const std::vector<BufferIndex> by_size_, by_conflicts_;
  std::vector<PoolIndex> pool_;                       // by buffer
  std::vector<int32_t> section_begin_, section_end_;  // by buffer: [begin, end) of sections
  std::vector<std::vector<int64_t>> live_bytes_;      // by pool, by section
  std::vector<BufferIndex> members_;
  std::vector<Placement> placements_;
};

}  // namespace

bool HasPoolChoice(const Problem& problem) {
  return std::any_of(problem.buffers.begin(), problem.buffers.end(), [](const BufferInfo& b) {
    return !b.fixed_offset_bytes && b.pool_candidates.size() > 1;
  });
}

std::vector<PoolIndex> AssignPools(const Problem& problem, const ConflictGraph& conflicts) {
  return PoolAssigner(problem, conflicts).Run();
}

Problem WithAssignedPools(const Problem& problem, const std::vector<PoolIndex>& pools) {
  Problem fixed = problem;
  for (size_t i = 0; i < fixed.buffers.size(); ++i) fixed.buffers[i].pool_candidates = {pools[i]};
  return fixed;
}

}  // namespace tessel::memory
