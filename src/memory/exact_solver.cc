#include "memory/exact_solver.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <optional>
#include <random>

#include "core/check.h"
#include "memory/lower_bound.h"

namespace tessel::memory {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kUnplaced = -1;
constexpr int64_t kInfinity = std::numeric_limits<int64_t>::max();

enum class Outcome { kFound, kInfeasible, kAborted, kOutOfBudget };

// A restart's node limit is this many nodes per buffer times the Luby
// sequence (bench/planner/README.md: 1 to 4 fit the most, 16 and 64 fewer).
constexpr int64_t kRestartNodesPerBuffer = 2;

// Shared by the pools of one run: the budget (a deadline, or a number of
// search nodes that makes the run independent of the machine) and the
// progress report.
struct SearchBudget {
  Clock::time_point start;
  Clock::time_point deadline;
  Clock::time_point probe_deadline;  // the current capacity's share of the time
  double limit_s = 0;
  int64_t node_limit = 0;  // > 0: nodes, not time, bound the search
  int64_t nodes = 0;       // spent so far
  int64_t probe_node_end = 0;
  const std::function<void(const SearchProgress&)>* progress = nullptr;
  Clock::time_point last_report;
  int64_t best_total = 0;
  int64_t bound_total = 0;

  // Counts a node; whether the probe's share is spent. The clock is read at
  // every 64th node, or at every node when they are expensive.
  bool Spend(bool expensive) {
    ++nodes;
    if (node_limit > 0) {
      if ((nodes & 63) == 0) Report(Clock::now());
      return nodes >= probe_node_end;
    }
    if ((nodes & 63) != 0 && !expensive) return false;
    const Clock::time_point now = Clock::now();
    Report(now);
    return now >= deadline || now >= probe_deadline;
  }

  // Whether the whole budget is spent.
  bool Exhausted() const { return node_limit > 0 ? nodes >= node_limit : Clock::now() >= deadline; }

  // Gives the next probe `share` of what is left.
  void StartProbe(double share) {
    if (node_limit > 0) {
      probe_node_end =
          nodes + static_cast<int64_t>(static_cast<double>(node_limit - nodes) * share);
      return;
    }
    const Clock::time_point now = Clock::now();
    probe_deadline =
        deadline <= now
            ? now
            : now + std::chrono::duration_cast<Clock::duration>((deadline - now) * share);
  }

 private:
  void Report(Clock::time_point now) {
    if (progress && *progress && now - last_report > std::chrono::milliseconds(100)) {
      last_report = now;
      (*progress)({.elapsed_s = std::chrono::duration<double>(now - start).count(),
                   .limit_s = limit_s,
                   .nodes = nodes,
                   .node_limit = node_limit,
                   .best_bytes = best_total,
                   .lower_bound_bytes = bound_total});
    }
  }
};

// The buffers of one pool, renumbered 0..n-1, with time cut into sections:
// the intervals between consecutive lifespan ends. A buffer spans the
// sections [section_begin, section_end).
struct PoolInstance {
  std::vector<BufferIndex> global;  // local -> problem index
  std::vector<int64_t> size, alignment, width;
  std::vector<int32_t> section_begin, section_end;
  std::vector<int64_t> adjacency_begin;
  std::vector<int32_t> adjacency;
  int32_t num_sections = 0;
  std::vector<int64_t> members_begin;  // per section: which buffers span it
  std::vector<int32_t> members;
  std::vector<int64_t> initial_total;  // per section: sum of sizes spanning it
  // Time decomposition is sound only when every conflict is an overlap of
  // lifespans (then nothing crosses a moment no lifespan crosses).
  bool decomposable = true;

  int32_t num_buffers() const { return static_cast<int32_t>(global.size()); }
};

PoolInstance MakePoolInstance(const PlanContext& ctx, const std::vector<BufferIndex>& buffers) {
  const Problem& problem = ctx.problem;
  PoolInstance inst;
  inst.global = buffers;
  const int32_t n = inst.num_buffers();
  std::vector<int32_t> local(problem.buffers.size(), -1);
  std::vector<int64_t> times;
  for (int32_t i = 0; i < n; ++i) {
    const BufferInfo& b = problem.buffers[static_cast<size_t>(buffers[static_cast<size_t>(i)])];
    local[static_cast<size_t>(buffers[static_cast<size_t>(i)])] = i;
    inst.size.push_back(b.size_bytes);
    inst.alignment.push_back(b.alignment);
    inst.width.push_back(b.live.empty() ? 0 : b.live.last_use - b.live.first_use);
    if (!b.live.empty()) {
      times.push_back(b.live.first_use);
      times.push_back(b.live.last_use);
    }
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  inst.num_sections = times.empty() ? 0 : static_cast<int32_t>(times.size()) - 1;
  auto section_of = [&](int64_t t) {
    return static_cast<int32_t>(std::lower_bound(times.begin(), times.end(), t) - times.begin());
  };
  std::vector<int64_t> count(static_cast<size_t>(inst.num_sections) + 1, 0);
  for (int32_t i = 0; i < n; ++i) {
    const Lifespan& live =
        problem.buffers[static_cast<size_t>(buffers[static_cast<size_t>(i)])].live;
    const int32_t lo = live.empty() ? 0 : section_of(live.first_use);
    const int32_t hi = live.empty() ? 0 : section_of(live.last_use);
    inst.section_begin.push_back(lo);
    inst.section_end.push_back(hi);
    for (int32_t s = lo; s < hi; ++s) ++count[static_cast<size_t>(s)];
  }
  inst.members_begin.assign(static_cast<size_t>(inst.num_sections) + 1, 0);
  for (int32_t s = 0; s < inst.num_sections; ++s) {
    inst.members_begin[static_cast<size_t>(s) + 1] =
        inst.members_begin[static_cast<size_t>(s)] + count[static_cast<size_t>(s)];
  }
  inst.members.resize(static_cast<size_t>(inst.members_begin.back()));
  inst.initial_total.assign(static_cast<size_t>(inst.num_sections), 0);
  std::vector<int64_t> fill(inst.members_begin.begin(), inst.members_begin.end() - 1);
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t s = inst.section_begin[static_cast<size_t>(i)];
         s < inst.section_end[static_cast<size_t>(i)]; ++s) {
      inst.members[static_cast<size_t>(fill[static_cast<size_t>(s)]++)] = i;
      inst.initial_total[static_cast<size_t>(s)] += inst.size[static_cast<size_t>(i)];
    }
  }
  inst.adjacency_begin.push_back(0);
  for (int32_t i = 0; i < n; ++i) {
    const BufferIndex g = buffers[static_cast<size_t>(i)];
    const Lifespan& live = problem.buffers[static_cast<size_t>(g)].live;
    for (BufferIndex other : ctx.conflicts.neighbors(g)) {
      const int32_t j = local[static_cast<size_t>(other)];
      if (j < 0) continue;
      inst.adjacency.push_back(j);
      if (!live.Overlaps(problem.buffers[static_cast<size_t>(other)].live)) {
        inst.decomposable = false;
      }
    }
    inst.adjacency_begin.push_back(static_cast<int64_t>(inst.adjacency.size()));
  }
  return inst;
}

// A set of buffers that can be solved on its own, and the sections it covers.
struct Partition {
  std::vector<int32_t> buffers;
  int32_t section_lo = 0, section_hi = 0;
};

// The decision procedure for one pool: do the buffers fit in `capacity`?
class CanonicalSearch {
 public:
  CanonicalSearch(const PoolInstance& inst, SearchBudget& budget) : inst_(inst), budget_(budget) {
    const size_t n = static_cast<size_t>(inst.num_buffers());
    offset_.resize(n);
    min_offset_.resize(n);
    rank_.resize(n);
    solution_.resize(n);
    // Static preorders, tried in turn. The first fills each level from left
    // to right (earliest start first), which lets Consistent() see at once a
    // moment that can no longer be filled; the others are MiniMalloc's
    // permutations of crowded sections, long lifespans and large areas.
    std::vector<int64_t> crowd(n, 0);
    for (size_t i = 0; i < n; ++i) {
      crowd[i] = inst.size[i];
      for (int32_t s = inst.section_begin[i]; s < inst.section_end[i]; ++s) {
        crowd[i] = std::max(crowd[i], inst.initial_total[static_cast<size_t>(s)]);
      }
    }
    auto area = [&](size_t i) { return inst.size[i] * std::max<int64_t>(1, inst.width[i]); };
    using Key = std::vector<int64_t>;
    const std::vector<std::function<Key(size_t)>> keys = {
        [&](size_t i) {
          return Key{-inst.section_begin[i], inst.width[i], inst.size[i]};
        },
        [&](size_t i) {
          return Key{crowd[i], inst.width[i], area(i)};
        },
        [&](size_t i) {
          return Key{inst.width[i], area(i), crowd[i]};
        },
        [&](size_t i) {
          return Key{crowd[i], area(i), inst.width[i]};
        },
    };
    for (const auto& key : keys) {
      std::vector<int32_t> order(n);
      for (size_t i = 0; i < n; ++i) order[i] = static_cast<int32_t>(i);
      std::vector<Key> k(n);
      for (size_t i = 0; i < n; ++i) k[i] = key(i);
      std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
        return k[static_cast<size_t>(a)] > k[static_cast<size_t>(b)];
      });
      std::vector<int32_t> rank(n);
      for (size_t r = 0; r < n; ++r) rank[static_cast<size_t>(order[r])] = static_cast<int32_t>(r);
      preorders_.push_back(std::move(rank));
    }
    // Moments no lifespan crosses split the pool from the start.
    std::vector<int32_t> crossing(static_cast<size_t>(std::max(inst.num_sections, 1)), 0);
    for (size_t i = 0; i < n; ++i) {
      for (int32_t s = inst.section_begin[i]; s + 1 < inst.section_end[i]; ++s) {
        ++crossing[static_cast<size_t>(s)];
      }
    }
    initial_cuts_ = crossing;
    if (inst.decomposable && inst.num_sections > 0) {
      // Every buffer lies inside one part; find it through its first section.
      std::vector<int32_t> part_of(static_cast<size_t>(inst.num_sections));
      int32_t lo = 0;
      for (int32_t s = 0; s < inst.num_sections; ++s) {
        part_of[static_cast<size_t>(s)] = static_cast<int32_t>(initial_.size());
        if (s + 1 == inst.num_sections || crossing[static_cast<size_t>(s)] == 0) {
          initial_.push_back({.section_lo = lo, .section_hi = s + 1});
          lo = s + 1;
        }
      }
      for (int32_t i = 0; i < inst.num_buffers(); ++i) {
        const int32_t s = inst.section_begin[static_cast<size_t>(i)];
        initial_[static_cast<size_t>(part_of[static_cast<size_t>(s)])].buffers.push_back(i);
      }
      std::erase_if(initial_, [](const Partition& p) { return p.buffers.empty(); });
    } else {
      Partition all;
      for (int32_t i = 0; i < inst.num_buffers(); ++i) all.buffers.push_back(i);
      all.section_lo = 0;
      all.section_hi = inst.num_sections;
      initial_.push_back(std::move(all));
    }
  }

  // Finds a plan within `capacity` (solution()), proves there is none, or
  // runs out of time.
  Outcome Solve(int64_t capacity) {
    capacity_ = capacity;
    // Restarts: the static preorders first, then copies of MiniMalloc's with
    // random neighbours swapped, each attempt with a node limit from the Luby
    // sequence, every other one without the tight-section branching (plain
    // MiniMalloc). A preorder either packs a tight pool within a few
    // thousand nodes or wanders for millions, so many short attempts over
    // many orders find what a few long ones miss; the limits still grow
    // without bound, so an infeasible capacity is eventually proven so.
    const int64_t base = kRestartNodesPerBuffer * std::max<int64_t>(inst_.num_buffers(), 64);
    std::mt19937_64 rng(static_cast<uint64_t>(capacity));
    for (int64_t attempt = 0;; ++attempt) {
      const auto a = static_cast<size_t>(attempt);
      Reset(a < preorders_.size() ? preorders_[a]
                                  : Perturbed(preorders_[1 + a % (preorders_.size() - 1)], rng));
      nodes_left_ = base * Luby(attempt + 1);
      fill_tight_ = attempt % 2 == 0;
      Outcome outcome = Outcome::kFound;
      for (const Partition& p : initial_) {
        outcome = SolvePartition(p);
        if (outcome != Outcome::kFound) break;
      }
      if (outcome != Outcome::kAborted) return outcome;
    }
  }

  // The Luby sequence 1 1 2 1 1 2 4 1 1 2 1 1 2 4 8 ...: restart lengths
  // within a constant factor of the best fixed length for any run-time
  // distribution.
  static int64_t Luby(int64_t i) {
    for (int64_t k = 1;; ++k) {
      if (i == (int64_t{1} << k) - 1) return int64_t{1} << (k - 1);
      if (i < (int64_t{1} << k) - 1) return Luby(i - (int64_t{1} << (k - 1)) + 1);
    }
  }

  const std::vector<int64_t>& solution() const { return solution_; }

  // `rank` with n/2 random pairs of neighbours (in its order) swapped.
  static std::vector<int32_t> Perturbed(std::vector<int32_t> rank, std::mt19937_64& rng) {
    const size_t n = rank.size();
    std::vector<int32_t> order(n);
    for (size_t i = 0; i < n; ++i) order[static_cast<size_t>(rank[i])] = static_cast<int32_t>(i);
    for (size_t k = 0; n > 1 && k < n / 2; ++k) {
      const size_t i = rng() % (n - 1);
      std::swap(order[i], order[i + 1]);
    }
    for (size_t r = 0; r < n; ++r) rank[static_cast<size_t>(order[r])] = static_cast<int32_t>(r);
    return rank;
  }

 private:
  void Reset(const std::vector<int32_t>& rank) {
    rank_ = rank;
    std::fill(offset_.begin(), offset_.end(), kUnplaced);
    std::fill(min_offset_.begin(), min_offset_.end(), 0);
    floor_.assign(static_cast<size_t>(inst_.num_sections), 0);
    total_ = inst_.initial_total;
    cuts_ = initial_cuts_;
    stamp_.assign(static_cast<size_t>(inst_.num_sections), 0);
    trail_.clear();
    candidates_.clear();
  }

  Outcome SolvePartition(const Partition& p) { return Search(p, 0, -1); }

  // Undo records: which array, which index, the old value.
  enum class Field : uint8_t { kMinOffset, kFloor, kTotal, kOffset };
  struct Change {
    Field field;
    int32_t index;
    int64_t old;
  };

  int64_t& Slot(Field f, int32_t i) {
    const auto k = static_cast<size_t>(i);
    switch (f) {
      case Field::kMinOffset:
        return min_offset_[k];
      case Field::kFloor:
        return floor_[k];
      case Field::kTotal:
        return total_[k];
      case Field::kOffset:
        break;
    }
    return offset_[k];
  }

  void Set(Field f, int32_t i, int64_t value) {
    int64_t& slot = Slot(f, i);
    trail_.push_back({f, i, slot});
    slot = value;
  }

  void UndoTo(size_t mark) {
    for (; trail_.size() > mark; trail_.pop_back()) {
      const Change& c = trail_.back();
      Slot(c.field, c.index) = c.old;
    }
  }

  // Places `b` at `offset` (at least its lowest) and propagates: sections it spans rise,
  // conflicting buffers can no longer start below its end, and a section
  // cannot be filled below the lowest offset its unplaced buffers can take.
  // Returns whether some unplaced buffer conflicts with `b`.
  bool Place(int32_t b, int64_t offset) {
    const auto bi = static_cast<size_t>(b);
    const int64_t top = offset + inst_.size[bi];
    Set(Field::kOffset, b, offset);
    solution_[bi] = offset;
    for (int32_t s = inst_.section_begin[bi]; s < inst_.section_end[bi]; ++s) {
      const auto si = static_cast<size_t>(s);
      if (floor_[si] < top) Set(Field::kFloor, s, top);
      Set(Field::kTotal, s, total_[si] - inst_.size[bi]);
    }
    ++stamp_counter_;
    touched_.clear();
    bool covered = false;
    for (int64_t k = inst_.adjacency_begin[bi]; k < inst_.adjacency_begin[bi + 1]; ++k) {
      const int32_t n = inst_.adjacency[static_cast<size_t>(k)];
      const auto ni = static_cast<size_t>(n);
      if (offset_[ni] != kUnplaced) continue;
      covered = true;
      const int64_t raised = AlignUp(top, inst_.alignment[ni]);
      const int64_t old = min_offset_[ni];
      if (raised <= old) continue;
      Set(Field::kMinOffset, n, raised);
      // Floors are kept at or above the lowest offset of their unplaced
      // buffers; a buffer that already started above a floor cannot change it.
      for (int32_t s = inst_.section_begin[ni]; s < inst_.section_end[ni]; ++s) {
        const auto si = static_cast<size_t>(s);
        if (old <= floor_[si] && stamp_[si] != stamp_counter_) {
          stamp_[si] = stamp_counter_;
          touched_.push_back(s);
        }
      }
    }
    for (int32_t s : touched_) {
      const auto si = static_cast<size_t>(s);
      int64_t lowest = kInfinity;
      for (int64_t k = inst_.members_begin[si]; k < inst_.members_begin[si + 1]; ++k) {
        const auto m = static_cast<size_t>(inst_.members[static_cast<size_t>(k)]);
        if (offset_[m] != kUnplaced) continue;
        lowest = std::min(lowest, min_offset_[m]);
        if (lowest <= floor_[si]) break;
      }
      if (lowest != kInfinity && floor_[si] < lowest) Set(Field::kFloor, s, lowest);
    }
    return covered;
  }

  // Every section of the partition must still hold what remains to place
  // there, above its floor and above `offset` (later buffers go no lower).
  // A section left with no slack at `offset` ("tight") must also get a buffer
  // starting exactly there, and buffers that start together do not overlap in
  // time: the tight sections must be covered by disjoint lifespans of
  // unplaced buffers that can still start at `offset`.
  bool Consistent(const Partition& p, int64_t offset) {
    bool any_tight = false;
    for (int32_t s = p.section_lo; s < p.section_hi; ++s) {
      const auto si = static_cast<size_t>(s);
      const int64_t total = total_[si];
      if (total == 0) continue;
      if (std::max(floor_[si], offset) + total > capacity_) return false;
      any_tight = any_tight || Tight(s, offset);
    }
    if (!any_tight) return true;
    if (!inst_.decomposable) {
      // Buffers may conflict beyond their lifespans: only ask that every
      // tight section has some buffer that can start there.
      for (int32_t s = p.section_lo; s < p.section_hi; ++s) {
        if (Tight(s, offset) && CountStarters(s, offset, 1) == 0) return false;
      }
      return true;
    }
    // reach_[s - lo]: the sections before s can be handled by disjoint
    // lifespans that start at `offset`.
    spans_.clear();
    for (int32_t b : p.buffers) {
      const auto bi = static_cast<size_t>(b);
      if (CanStart(bi, offset)) spans_.emplace_back(inst_.section_begin[bi], inst_.section_end[bi]);
    }
    std::sort(spans_.begin(), spans_.end());
    reach_.assign(static_cast<size_t>(p.section_hi - p.section_lo) + 1, 0);
    reach_[0] = 1;
    size_t next = 0;
    for (int32_t s = p.section_lo; s < p.section_hi; ++s) {
      while (next < spans_.size() && spans_[next].first < s) ++next;
      if (!reach_[static_cast<size_t>(s - p.section_lo)]) continue;
      if (!Tight(s, offset)) reach_[static_cast<size_t>(s - p.section_lo) + 1] = 1;
      for (size_t k = next; k < spans_.size() && spans_[k].first == s; ++k) {
        reach_[static_cast<size_t>(std::min(spans_[k].second, p.section_hi) - p.section_lo)] = 1;
      }
    }
    return reach_.back() != 0;
  }

  // No slack left at `level`: every byte from `level` up must be filled.
  bool Tight(int32_t s, int64_t level) const {
    const auto si = static_cast<size_t>(s);
    return total_[si] > 0 && floor_[si] <= level && level + total_[si] == capacity_;
  }

  // An unplaced buffer can start at `level` when nothing placed is in its way
  // there (its sections' floors are then at most `level` too).
  bool CanStart(size_t b, int64_t level) const {
    return offset_[b] == kUnplaced && min_offset_[b] <= level;
  }

  // How many unplaced buffers in section s can start at `level`, counting no
  // further than `enough`.
  int64_t CountStarters(int32_t s, int64_t level, int64_t enough) const {
    int64_t count = 0;
    const auto si = static_cast<size_t>(s);
    for (int64_t k = inst_.members_begin[si]; k < inst_.members_begin[si + 1] && count < enough;
         ++k) {
      count += CanStart(static_cast<size_t>(inst_.members[static_cast<size_t>(k)]), level);
    }
    return count;
  }

  // The highest offset the next buffer may take: every section must keep
  // room for what remains to place there above it.
  int64_t HighestStart(const Partition& p) const {
    int64_t highest = kInfinity;
    for (int32_t s = p.section_lo; s < p.section_hi; ++s) {
      const auto si = static_cast<size_t>(s);
      if (total_[si] > 0) highest = std::min(highest, capacity_ - total_[si]);
    }
    return highest;
  }

  // Places the partition's remaining buffers at `offset` or above. `rank` is
  // the rank of the last buffer the canonical branching put at `offset`.
  Outcome Search(const Partition& p, int64_t offset, int32_t rank) {
    if (--nodes_left_ < 0) return Outcome::kAborted;
    // Nodes of a large partition cost milliseconds.
    if (budget_.Spend(p.buffers.size() > 1024)) return Outcome::kOutOfBudget;
    // The lowest top any unplaced buffer could have: placing anything at or
    // above it would leave a gap that buffer fills.
    int64_t lowest_top = kInfinity;
    bool done = true;
    for (int32_t b : p.buffers) {
      const auto bi = static_cast<size_t>(b);
      if (offset_[bi] != kUnplaced) continue;
      done = false;
      const int64_t top = min_offset_[bi] + inst_.size[bi];
      if (top > capacity_) return Outcome::kInfeasible;
      lowest_top = std::min(lowest_top, top);
    }
    if (done) return Outcome::kFound;

    // Where the next buffer can go lowest, and the first tight section there:
    // filling levels from left to right meets a section that cannot be filled
    // soonest (choosing the most constrained section instead does worse on
    // perfect packings).
    int64_t level = kInfinity;
    for (int32_t s = p.section_lo; s < p.section_hi; ++s) {
      if (total_[static_cast<size_t>(s)] > 0)
        level = std::min(level, floor_[static_cast<size_t>(s)]);
    }
    level = std::max(level == kInfinity ? offset : level, offset);
    if (fill_tight_) {
      for (int32_t s = p.section_lo; s < p.section_hi; ++s) {
        if (Tight(s, level)) return FillTight(p, s, level, level > offset ? -1 : rank);
      }
    }
    return PlaceNext(p, offset, rank, lowest_top);
  }

  // Every completion puts a buffer at (section s, level): branch on which.
  // The order of the buffers in the plan is fixed by the section, so no rank
  // order is needed among them.
  Outcome FillTight(const Partition& p, int32_t s, int64_t level, int32_t rank) {
    const size_t first = candidates_.size();
    const auto si = static_cast<size_t>(s);
    for (int64_t k = inst_.members_begin[si]; k < inst_.members_begin[si + 1]; ++k) {
      const int32_t b = inst_.members[static_cast<size_t>(k)];
      if (CanStart(static_cast<size_t>(b), level)) candidates_.push_back(b);
    }
    const size_t last = candidates_.size();
    std::sort(candidates_.begin() + static_cast<std::ptrdiff_t>(first),
              candidates_.begin() + static_cast<std::ptrdiff_t>(last), [&](int32_t a, int32_t b) {
                return rank_[static_cast<size_t>(a)] < rank_[static_cast<size_t>(b)];
              });
    const Outcome outcome = TryEach(
        p, first, last, [&](int32_t) { return level; }, rank);
    candidates_.resize(first);
    return outcome;
  }

  // MiniMalloc's canonical branching: the next buffer in (offset, rank) order,
  // each at its lowest offset.
  Outcome PlaceNext(const Partition& p, int64_t offset, int32_t rank, int64_t lowest_top) {
    const size_t first = candidates_.size();
    for (int32_t b : p.buffers) {
      const auto bi = static_cast<size_t>(b);
      if (offset_[bi] != kUnplaced) continue;
      const int64_t at = min_offset_[bi];
      if (at < offset || (at == offset && rank_[bi] < rank)) continue;
      // A zero-size buffer fits anywhere: it never needs a gap of its own.
      if (at >= lowest_top && inst_.size[bi] > 0) continue;
      candidates_.push_back(b);
    }
    const size_t last = candidates_.size();
    std::sort(candidates_.begin() + static_cast<std::ptrdiff_t>(first),
              candidates_.begin() + static_cast<std::ptrdiff_t>(last), [&](int32_t a, int32_t b) {
                const auto ai = static_cast<size_t>(a), bi = static_cast<size_t>(b);
                return min_offset_[ai] != min_offset_[bi] ? min_offset_[ai] < min_offset_[bi]
                                                          : rank_[ai] < rank_[bi];
              });
    // Candidates come by offset: past `highest`, all start too high.
    const int64_t highest = HighestStart(p);
    size_t end = first;
    while (end < last && min_offset_[static_cast<size_t>(candidates_[end])] <= highest) ++end;
    const Outcome outcome = TryEach(
        p, first, end, [&](int32_t b) { return min_offset_[static_cast<size_t>(b)]; }, -2);
    candidates_.resize(first);
    return outcome;
  }

  // Tries candidates_[first, last) in turn, each at at(b). `rank` is what the
  // child inherits (-2: the candidate's own rank).
  template <typename At>
  Outcome TryEach(const Partition& p, size_t first, size_t last, At at, int32_t rank) {
    for (size_t c = first; c < last; ++c) {
      const int32_t b = candidates_[c];
      const int64_t offset = at(b);
      const int32_t child_rank = rank == -2 ? rank_[static_cast<size_t>(b)] : rank;
      const size_t mark = trail_.size();
      const bool covered = Place(b, offset);
      Outcome child = Outcome::kInfeasible;
      if (Consistent(p, offset)) {
        child = inst_.decomposable ? Decompose(p, b, offset, child_rank)
                                   : Search(p, offset, child_rank);
      }
      UndoTo(mark);
      if (child != Outcome::kInfeasible) return child;
      // Nothing conflicts with `b` any more, so its placement constrained
      // nothing: the rest failed without it, and will with any other choice.
      if (!covered) break;
    }
    return Outcome::kInfeasible;
  }

  // After placing `b`: if no unplaced buffer crosses some moment inside b's
  // lifespan any more, the two sides are independent problems.
  Outcome Decompose(const Partition& p, int32_t b, int64_t offset, int32_t rank) {
    const auto bi = static_cast<size_t>(b);
    std::vector<int32_t> cuts;
    for (int32_t s = inst_.section_begin[bi]; s + 1 < inst_.section_end[bi]; ++s) {
      if (--cuts_[static_cast<size_t>(s)] == 0 && s + 1 > p.section_lo && s + 1 < p.section_hi) {
        cuts.push_back(s + 1);
      }
    }
    Outcome outcome = Outcome::kFound;
    if (cuts.empty()) {
      outcome = Search(p, offset, rank);
    } else {
      cuts.insert(cuts.begin(), p.section_lo);
      cuts.push_back(p.section_hi);
      for (size_t c = 0; c + 1 < cuts.size() && outcome == Outcome::kFound; ++c) {
        Partition sub;
        sub.section_lo = cuts[c];
        sub.section_hi = cuts[c + 1];
        for (int32_t x : p.buffers) {
          const auto xi = static_cast<size_t>(x);
          if (offset_[xi] == kUnplaced && inst_.section_begin[xi] < sub.section_hi &&
              sub.section_lo < inst_.section_end[xi]) {
            sub.buffers.push_back(x);
          }
        }
        if (!sub.buffers.empty()) outcome = SolvePartition(sub);
      }
    }
    for (int32_t s = inst_.section_begin[bi]; s + 1 < inst_.section_end[bi]; ++s) {
      ++cuts_[static_cast<size_t>(s)];
    }
    return outcome;
  }

  const PoolInstance& inst_;
  SearchBudget& budget_;
  int64_t capacity_ = 0;
  std::vector<std::vector<int32_t>> preorders_;
  std::vector<Partition> initial_;
  std::vector<int32_t> initial_cuts_;

  std::vector<int32_t> rank_;
  std::vector<int64_t> offset_, min_offset_, solution_;
  std::vector<int64_t> floor_, total_;
  std::vector<int32_t> cuts_;
  std::vector<int64_t> stamp_;
  int64_t stamp_counter_ = 0;
  std::vector<int32_t> touched_;
  std::vector<Change> trail_;
  std::vector<int32_t> candidates_;  // a stack: each search level owns a suffix
  std::vector<std::pair<int32_t, int32_t>> spans_;
  std::vector<char> reach_;
  int64_t nodes_left_ = 0;
  bool fill_tight_ = true;  // branch on tight sections (FillTight) this attempt
};

// Offsets of buffers that all conflict with each other (a clique: the
// constants pool, live for the whole run), stacked one after the other, or
// nullopt when they are not a clique. Each but the last occupies its size
// rounded up to its alignment, so the buffer that rounding would waste the
// most on goes last, and the others by decreasing alignment (less padding
// between them). With one alignment for all, this is optimal and meets the
// lower bound's last-buffer slack exactly; the canonical search finds it
// only by luck among n! orders.
std::optional<std::vector<int64_t>> StackClique(const PoolInstance& inst) {
  const int32_t n = inst.num_buffers();
  if (n == 0) return std::nullopt;
  for (int32_t i = 0; i < n; ++i) {
    const auto ii = static_cast<size_t>(i);
    if (inst.adjacency_begin[ii + 1] - inst.adjacency_begin[ii] != n - 1) return std::nullopt;
  }
  const int64_t min_alignment = *std::min_element(inst.alignment.begin(), inst.alignment.end());
  auto slack = [&](int32_t i) {
    const int64_t size = inst.size[static_cast<size_t>(i)];
    return AlignUp(size, min_alignment) - size;
  };
  std::vector<int32_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  const auto last = std::max_element(order.begin(), order.end(),
                                     [&](int32_t a, int32_t b) { return slack(a) < slack(b); });
  std::iter_swap(last, order.end() - 1);
  std::stable_sort(order.begin(), order.end() - 1, [&](int32_t a, int32_t b) {
    return inst.alignment[static_cast<size_t>(a)] > inst.alignment[static_cast<size_t>(b)];
  });
  std::vector<int64_t> offsets(static_cast<size_t>(n));
  int64_t end = 0;
  for (int32_t i : order) {
    const auto ii = static_cast<size_t>(i);
    offsets[ii] = AlignUp(end, inst.alignment[ii]);
    end = offsets[ii] + inst.size[ii];
  }
  return offsets;
}

// Lowers the used size of one pool, keeping its buffers. Returns whether the
// result is proven minimal.
bool ImprovePool(const PlanContext& ctx, const std::vector<BufferIndex>& buffers,
                 std::vector<Placement>& placements, int64_t lower_bound, int64_t target,
                 SearchBudget& budget, int64_t& used) {
  if (used <= lower_bound) return true;
  for (BufferIndex b : buffers) {
    if (ctx.problem.buffers[static_cast<size_t>(b)].fixed_offset_bytes) return false;
  }
  // Empty buffers, and buffers that conflict with nothing in the pool, sit at
  // offset 0 and are covered by the bound (it counts every single buffer); the
  // search skips them.
  std::vector<BufferIndex> searched;
  std::vector<bool> in_pool(ctx.problem.buffers.size(), false);
  for (BufferIndex b : buffers) in_pool[static_cast<size_t>(b)] = true;
  auto occupies = [&](BufferIndex b) {
    return in_pool[static_cast<size_t>(b)] &&
           ctx.problem.buffers[static_cast<size_t>(b)].size_bytes > 0;
  };
  for (BufferIndex b : buffers) {
    const auto nb = ctx.conflicts.neighbors(b);
    if (occupies(b) && std::any_of(nb.begin(), nb.end(), occupies)) searched.push_back(b);
  }
  const PoolInstance inst = MakePoolInstance(ctx, searched);
  // Writes a solution of the pool's searched buffers into `placements`.
  auto adopt = [&](const std::vector<int64_t>& offsets) {
    for (BufferIndex b : buffers) placements[static_cast<size_t>(b)].offset_bytes = 0;
    for (int32_t i = 0; i < inst.num_buffers(); ++i) {
      const BufferIndex g = inst.global[static_cast<size_t>(i)];
      placements[static_cast<size_t>(g)].offset_bytes = offsets[static_cast<size_t>(i)];
    }
    int64_t found = 0;
    for (BufferIndex b : buffers) {
      found = std::max(found, placements[static_cast<size_t>(b)].offset_bytes +
                                  ctx.problem.buffers[static_cast<size_t>(b)].size_bytes);
    }
    budget.best_total -= used - found;
    used = found;
  };
  // Adopts a complete solution when it lowers the peak; whether the pool
  // now meets its bound.
  auto offer = [&](const std::vector<int64_t>& offsets) {
    int64_t peak = 0;
    for (int32_t i = 0; i < inst.num_buffers(); ++i) {
      const auto ii = static_cast<size_t>(i);
      peak = std::max(peak, offsets[ii] + inst.size[ii]);
    }
    if (peak < used) adopt(offsets);
    return used <= lower_bound;
  };
  const std::optional<std::vector<int64_t>> stacked = StackClique(inst);
  if (stacked && offer(*stacked)) return true;
  CanonicalSearch search(inst, budget);
  // Capacities below `proven` are impossible; the search looks in [lo, hi].
  // A probe that runs out of its share of the budget proves nothing, and the
  // search moves on to easier (larger) capacities. The first probe asks for
  // the target when the plan is above it (fitting is what the caller needs),
  // else for the bound.
  int64_t proven = lower_bound, lo = lower_bound, hi = used - 1;
  const bool aim = target > lower_bound && target < used;
  bool first = true;
  while (lo <= hi && !budget.Exhausted()) {
    const int64_t capacity = first ? (aim ? target : lo) : lo + (hi - lo) / 2;
    budget.StartProbe(first ? (aim || target == lower_bound ? 0.7 : 0.3) : 0.5);
    first = false;
    const Outcome outcome = search.Solve(capacity);
    if (outcome == Outcome::kOutOfBudget) {
      lo = capacity + 1;
      continue;
    }
    if (outcome == Outcome::kInfeasible) {
      lo = capacity + 1;
      proven = std::max(proven, capacity + 1);  // a smaller capacity fails too
      continue;
    }
    TESSEL_CHECK(outcome == Outcome::kFound);
    adopt(search.solution());
    TESSEL_CHECK(used <= capacity);
    hi = used - 1;
  }
  return proven >= used;
}

// Runs `fn` on a thread with a stack of `bytes` (reserved, touched only as
// deep as the recursion goes), or on this one if no such thread starts.
void RunOnStackOf(size_t bytes, const std::function<void()>& fn) {
  auto trampoline = [](void* f) -> void* {
    (*static_cast<const std::function<void()>*>(f))();
    return nullptr;
  };
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) {
    fn();
    return;
  }
  pthread_t thread;
  const bool started =
      pthread_attr_setstacksize(&attr, bytes) == 0 &&
      pthread_create(&thread, &attr, trampoline, const_cast<std::function<void()>*>(&fn)) == 0;
  pthread_attr_destroy(&attr);
  if (started) {
    pthread_join(thread, nullptr);
  } else {
    fn();
  }
}

}  // namespace

StatusOr<AlgorithmResult> ImproveExactly(const PlanContext& ctx, std::vector<Placement> start,
                                         double time_limit_s, int64_t node_limit) {
  SearchBudget budget;
  budget.start = budget.last_report = Clock::now();
  budget.limit_s = time_limit_s;
  budget.deadline = budget.start + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(std::max(0.0, time_limit_s)));
  budget.probe_deadline = budget.deadline;
  budget.node_limit = std::max<int64_t>(0, node_limit);
  budget.probe_node_end = budget.node_limit;
  budget.progress = &ctx.options.progress;
  std::vector<int64_t> used = PoolUsedBytes(ctx.problem, start);
  std::vector<int64_t> bounds = PoolLowerBounds(ctx.problem, start);
  for (size_t p = 0; p < used.size(); ++p) {
    budget.best_total += used[p];
    budget.bound_total += bounds[p];
  }
  std::vector<std::vector<BufferIndex>> members(ctx.problem.pools.size());
  for (size_t i = 0; i < start.size(); ++i) {
    members[static_cast<size_t>(start[i].pool)].push_back(static_cast<BufferIndex>(i));
  }
  AlgorithmResult result;
  result.proven_optimal = true;
  // The search recurses once per placed buffer (and per split in time).
  const size_t stack_bytes =
      std::clamp<size_t>(ctx.problem.buffers.size() * 8192, size_t{16} << 20, size_t{1} << 30);
  RunOnStackOf(stack_bytes, [&] {
    for (size_t p = 0; p < members.size(); ++p) {
      if (members[p].empty()) continue;
      const std::optional<int64_t>& limit = ctx.problem.pools[p].size_limit_bytes;
      const int64_t target = limit ? *limit : ctx.options.target_bytes;
      const bool proven = ImprovePool(ctx, members[p], start, bounds[p], target, budget, used[p]);
      result.proven_optimal = result.proven_optimal && proven;
    }
  });
  result.placements = std::move(start);
  return result;
}

}  // namespace tessel::memory
