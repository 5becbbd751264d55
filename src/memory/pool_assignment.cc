#include "memory/pool_assignment.h"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
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

// Which of `sizes` to take for the largest sum at most `cap`, exactly while
// the distinct partial sums stay few (a moment holds a handful of buffers);
// past that, the best sum among those reached. On a tie, earlier items win.
std::vector<bool> LargestSubset(const std::vector<int64_t>& sizes, int64_t cap) {
  constexpr size_t kMaxSums = 4096;
  // Every sum reached, ascending, with the item that reached it first and
  // the sum before that item (item sizes.size(): the empty sum).
  struct Sum {
    int64_t sum;
    size_t item;
    int64_t before;
  };
  std::vector<Sum> sums = {{0, sizes.size(), 0}}, merged;
  for (size_t k = 0; k < sizes.size() && sums.back().sum < cap && sums.size() < kMaxSums; ++k) {
    merged.clear();
    size_t i = 0, j = 0;
    while (i < sums.size() || j < sums.size()) {
      const bool more = j < sums.size() && sums[j].sum + sizes[k] <= cap;
      if (i < sums.size() && (!more || sums[i].sum <= sums[j].sum + sizes[k])) {
        if (more && sums[i].sum == sums[j].sum + sizes[k]) ++j;
        merged.push_back(sums[i++]);
      } else if (more) {
        merged.push_back({sums[j].sum + sizes[k], k, sums[j].sum});
        ++j;
      } else {
        break;
      }
    }
    sums.swap(merged);
  }
  std::vector<bool> chosen(sizes.size(), false);
  for (int64_t sum = sums.back().sum; sum > 0;) {
    const Sum& s = *std::lower_bound(sums.begin(), sums.end(), sum,
                                     [](const Sum& x, int64_t v) { return x.sum < v; });
    chosen[s.item] = true;
    sum = s.before;
  }
  return chosen;
}

// The greedy placement (greedy.h) of the bounded pools' buffers in one
// order, kept current while buffers come and go, so that whether a pool
// still fits costs what a move disturbs, not a placement of the whole pool.
// A buffer's offset is the lowest gap its conflicting neighbours of the same
// pool that come before it in the order (and the pinned ones) leave; when a
// buffer comes or goes, only its later neighbours may move, and only theirs
// after them. No limit is applied while placing: a pool fits when no buffer
// ends past its limit, which is exactly when GreedyPlacer, giving up at the
// first buffer that does, places it all.
class IncrementalGreedy {
 public:
  IncrementalGreedy(const Problem& problem, const ConflictGraph& conflicts,
                    const std::vector<BufferIndex>& order, const std::vector<PoolIndex>& pool)
      : problem_(problem),
        conflicts_(conflicts),
        pool_(pool),
        position_(problem.buffers.size(), -1),
        offset_(problem.buffers.size(), 0),
        seen_(problem.buffers.size(), 0),
        over_(problem.pools.size(), 0) {
    for (size_t k = 0; k < order.size(); ++k) {
      position_[static_cast<size_t>(order[k])] = static_cast<int64_t>(k);
    }
    for (size_t i = 0; i < problem.buffers.size(); ++i) {
      const BufferInfo& b = problem.buffers[i];
      if (b.fixed_offset_bytes) Set(static_cast<BufferIndex>(i), *b.fixed_offset_bytes);
    }
    for (BufferIndex b : order) Set(b, LowestFit(b));
    log_.clear();
  }

  // Whether every buffer of `pool` ends under its limit.
  bool Fits(PoolIndex pool) const { return over_[static_cast<size_t>(pool)] == 0; }

  // `b` has joined pool_[b] (set by the caller).
  void Added(BufferIndex b) {
    const PoolIndex pool = pool_[static_cast<size_t>(b)];
    if (!Bounded(pool)) return;
    int64_t& offset = offset_[static_cast<size_t>(b)];
    log_.push_back({b, pool, offset, false, Change::kAdded});
    offset = LowestFit(b);
    over_[static_cast<size_t>(pool)] += OverIn(b, pool, offset);
    Settle(b, pool);
  }

  // `b` has left `pool` (pool_[b] already says where it went).
  void Removed(BufferIndex b, PoolIndex pool) {
    if (!Bounded(pool)) return;
    const int64_t offset = offset_[static_cast<size_t>(b)];
    const bool counted = OverIn(b, pool, offset);
    log_.push_back({b, pool, offset, counted, Change::kRemoved});
    over_[static_cast<size_t>(pool)] -= counted;
    Settle(b, pool);
  }

  // Undoes the changes since Mark() returned `mark`; Commit() forgets them.
  size_t Mark() const { return log_.size(); }
  void Undo(size_t mark) {
    while (log_.size() > mark) {
      const Change& c = log_.back();
      int64_t& offset = offset_[static_cast<size_t>(c.buffer)];
      int64_t& over = over_[static_cast<size_t>(c.pool)];
      switch (c.kind) {
        case Change::kAdded:
          over -= OverIn(c.buffer, c.pool, offset);
          break;
        case Change::kRemoved:
          over += c.counted_before;
          break;
        case Change::kMoved:
          over += c.counted_before - OverIn(c.buffer, c.pool, offset);
          break;
      }
      offset = c.offset_before;
      log_.pop_back();
    }
  }
  void Commit() { log_.clear(); }

 private:
  struct Change {
    BufferIndex buffer;
    PoolIndex pool;
    int64_t offset_before;
    bool counted_before;  // in over_[pool]
    enum Kind { kAdded, kRemoved, kMoved } kind;
  };

  bool Bounded(PoolIndex pool) const {
    return problem_.pools[static_cast<size_t>(pool)].size_limit_bytes.has_value();
  }
  bool OverIn(BufferIndex b, PoolIndex pool, int64_t offset) const {
    const std::optional<int64_t>& limit =
        problem_.pools[static_cast<size_t>(pool)].size_limit_bytes;
    return limit && offset + problem_.buffers[static_cast<size_t>(b)].size_bytes > *limit;
  }
  bool Over(BufferIndex b, int64_t offset) const {
    return OverIn(b, pool_[static_cast<size_t>(b)], offset);
  }

  // Places a buffer while building: no log.
  void Set(BufferIndex b, int64_t offset) {
    offset_[static_cast<size_t>(b)] = offset;
    over_[static_cast<size_t>(pool_[static_cast<size_t>(b)])] += Over(b, offset);
  }

  // Whether `other` decides where `b` goes: in the same pool, not empty,
  // pinned or before `b` in the order.
  bool Precedes(BufferIndex other, BufferIndex b, PoolIndex pool) const {
    const auto o = static_cast<size_t>(other);
    return pool_[o] == pool && problem_.buffers[o].size_bytes > 0 &&
           (position_[o] < 0 || position_[o] < position_[static_cast<size_t>(b)]);
  }

  // GreedyPlacer::LowestFit without the limit.
  int64_t LowestFit(BufferIndex b) {
    const PoolIndex pool = pool_[static_cast<size_t>(b)];
    if (!Bounded(pool)) return 0;
    const BufferInfo& info = problem_.buffers[static_cast<size_t>(b)];
    taken_.clear();
    for (BufferIndex n : conflicts_.neighbors(b)) {
      if (!Precedes(n, b, pool)) continue;
      const int64_t begin = offset_[static_cast<size_t>(n)];
      taken_.emplace_back(begin, begin + problem_.buffers[static_cast<size_t>(n)].size_bytes);
    }
    return LowestFreeOffset(taken_, info.size_bytes, info.alignment);
  }

  // Re-places, in order, the buffers of `pool` after `from` that a change
  // of `from` may move: its later neighbours, and theirs when they move.
  void Settle(BufferIndex from, PoolIndex pool) {
    ++stamp_;
    auto later = [&](BufferIndex x) {
      for (BufferIndex n : conflicts_.neighbors(x)) {
        const auto i = static_cast<size_t>(n);
        if (pool_[i] != pool || position_[i] < 0 ||
            position_[i] <= position_[static_cast<size_t>(x)] || seen_[i] == stamp_) {
          continue;
        }
        seen_[i] = stamp_;
        queue_.push({position_[i], n});
      }
    };
    later(from);
    while (!queue_.empty()) {
      const BufferIndex x = queue_.top().second;
      queue_.pop();
      const int64_t before = offset_[static_cast<size_t>(x)];
      const int64_t offset = LowestFit(x);
      if (offset == before) continue;
      const bool counted = Over(x, before);
      log_.push_back({x, pool, before, counted, Change::kMoved});
      offset_[static_cast<size_t>(x)] = offset;
      over_[static_cast<size_t>(pool)] += Over(x, offset) - counted;
      if (problem_.buffers[static_cast<size_t>(x)].size_bytes > 0) later(x);
    }
  }

  const Problem& problem_;
  const ConflictGraph& conflicts_;
  const std::vector<PoolIndex>& pool_;
  std::vector<int64_t> position_;  // by buffer: in the order; -1 when pinned
  std::vector<int64_t> offset_;    // by buffer, in its pool when bounded
  std::vector<int64_t> seen_;
  int64_t stamp_ = 0;
  std::vector<int64_t> over_;  // by pool: buffers ending past the limit
  std::vector<Change> log_;
  std::vector<std::pair<int64_t, int64_t>> taken_;
  std::priority_queue<std::pair<int64_t, BufferIndex>, std::vector<std::pair<int64_t, BufferIndex>>,
                      std::greater<>>
      queue_;
};

class PoolAssigner {
 public:
  PoolAssigner(const Problem& problem, const ConflictGraph& conflicts)
      : problem_(problem),
        conflicts_(conflicts),
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
      AddLive(static_cast<BufferIndex>(i), pool_[i], 1);
    }
    // The buffers with a choice live in each section, by index.
    choosers_begin_.assign(num_sections + 1, 0);
    for (size_t i = 0; i < n; ++i) {
      if (!HasChoice(problem_.buffers[i])) continue;
      for (int32_t s = section_begin_[i]; s < section_end_[i]; ++s) {
        ++choosers_begin_[static_cast<size_t>(s) + 1];
      }
    }
    for (size_t s = 0; s < num_sections; ++s) choosers_begin_[s + 1] += choosers_begin_[s];
    choosers_.resize(static_cast<size_t>(choosers_begin_.back()));
    std::vector<int64_t> fill(choosers_begin_.begin(), choosers_begin_.end() - 1);
    for (size_t i = 0; i < n; ++i) {
      if (!HasChoice(problem_.buffers[i])) continue;
      for (int32_t s = section_begin_[i]; s < section_end_[i]; ++s) {
        choosers_[static_cast<size_t>(fill[static_cast<size_t>(s)]++)] =
            static_cast<BufferIndex>(i);
      }
    }
    greedy_.emplace_back(problem_, conflicts_, by_size_, pool_);
    greedy_.emplace_back(problem_, conflicts_, by_conflicts_, pool_);
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

  bool Fits(PoolIndex pool) const {
    return std::any_of(greedy_.begin(), greedy_.end(),
                       [&](const IncrementalGreedy& g) { return g.Fits(pool); });
  }

  // Moves `b` to `pool` if it fits there (and the pool it leaves still
  // fits, if it did); whether it moved.
  bool TryMove(BufferIndex b, PoolIndex pool) {
    const auto i = static_cast<size_t>(b);
    const BufferInfo& info = buffer(b);
    const std::optional<int64_t>& limit =
        problem_.pools[static_cast<size_t>(pool)].size_limit_bytes;
    if (limit) {
      if (info.size_bytes > *limit) return false;
      // Buffers live at one moment share no byte: the quick test.
      const std::vector<int64_t>& live = live_bytes_[static_cast<size_t>(pool)];
      for (int32_t s = section_begin_[i]; s < section_end_[i]; ++s) {
        if (live[static_cast<size_t>(s)] + info.size_bytes > *limit) return false;
      }
    }
    const PoolIndex from = pool_[i];
    const bool from_fit = Fits(from);
    std::vector<size_t> marks;
    for (const IncrementalGreedy& g : greedy_) marks.push_back(g.Mark());
    pool_[i] = pool;
    for (IncrementalGreedy& g : greedy_) {
      g.Added(b);
      g.Removed(b, from);
    }
    if (!Fits(pool) || (from_fit && !Fits(from))) {
      for (size_t k = 0; k < greedy_.size(); ++k) greedy_[k].Undo(marks[k]);
      pool_[i] = from;
      return false;
    }
    for (IncrementalGreedy& g : greedy_) g.Commit();
    AddLive(b, from, -1);
    AddLive(b, pool, 1);
    return true;
  }

  // Puts first, keeping their order, the buffers of `at_peak` whose sizes
  // add up to the most that the earlier pools have room for at `section`:
  // the largest buffer that fits alone may leave no room for two that
  // would take more.
  void PreferLargestSubset(PoolIndex pool, int32_t section, std::vector<BufferIndex>& at_peak) {
    std::vector<bool> earlier(problem_.pools.size(), false);
    for (BufferIndex b : at_peak) {
      for (PoolIndex q : EarlierCandidates(buffer(b), pool)) earlier[static_cast<size_t>(q)] = true;
    }
    int64_t room = 0;
    for (size_t q = 0; q < earlier.size(); ++q) {
      if (!earlier[q]) continue;
      const std::optional<int64_t>& limit = problem_.pools[q].size_limit_bytes;
      if (!limit) return;  // room for all
      room += std::max<int64_t>(0, *limit - live_bytes_[q][static_cast<size_t>(section)]);
    }
    std::vector<int64_t> sizes;
    for (BufferIndex b : at_peak) sizes.push_back(buffer(b).size_bytes);
    const std::vector<bool> chosen = LargestSubset(sizes, room);
    std::vector<BufferIndex> first, rest;
    for (size_t k = 0; k < at_peak.size(); ++k) (chosen[k] ? first : rest).push_back(at_peak[k]);
    at_peak = std::move(first);
    at_peak.insert(at_peak.end(), rest.begin(), rest.end());
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
      for (int64_t k = choosers_begin_[static_cast<size_t>(peak)];
           k < choosers_begin_[static_cast<size_t>(peak) + 1]; ++k) {
        const BufferIndex b = choosers_[static_cast<size_t>(k)];
        if (pool_[static_cast<size_t>(b)] == pool && !stuck[static_cast<size_t>(b)] &&
            !EarlierCandidates(buffer(b), pool).empty()) {
          at_peak.push_back(b);
        }
      }
      std::sort(at_peak.begin(), at_peak.end(), [&](BufferIndex a, BufferIndex b) {
        const int64_t sa = buffer(a).size_bytes, sb = buffer(b).size_bytes;
        return sa != sb ? sa > sb : a < b;
      });
      PreferLargestSubset(pool, peak, at_peak);
      bool moved = false;
      for (BufferIndex b : at_peak) {
        for (PoolIndex q : EarlierCandidates(buffer(b), pool)) {
          if (TryMove(b, q)) {
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
        if (TryMove(b, q)) break;
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
      pool_[i] = theirs_pool;  // the last step: no more live bytes or placements
    }
  }

  const Problem& problem_;
  const ConflictGraph& conflicts_;
  const std::vector<BufferIndex> by_size_, by_conflicts_;
  std::vector<PoolIndex> pool_;                       // by buffer
  std::vector<int32_t> section_begin_, section_end_;  // by buffer: [begin, end) of sections
  std::vector<std::vector<int64_t>> live_bytes_;      // by pool, by section
  std::vector<int64_t> choosers_begin_;               // by section, into choosers_
  std::vector<BufferIndex> choosers_;
  std::vector<IncrementalGreedy> greedy_;  // by size, by conflicts
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
