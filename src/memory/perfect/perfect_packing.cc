#include "memory/perfect/perfect_packing.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdint>
#include <numeric>
#include <unordered_map>
#include <utility>

#include "memory/perfect/skyline_packing.h"

namespace tessel::memory {

namespace {

// The positions (ascending) of a smallest proper subset of `v` whose sizes
// add up to zero; empty when there is none; nullopt when `v` is too crowded
// to look (the sums span too wide a range and the sparse search gives up).
// Sizes are divided by their common divisor first; when the sums then span a
// small range (planning instances use a common unit), a dense dynamic program
// over every partial sum is exact for any number of entries. Otherwise a
// sparse program keeps the fewest entries reaching each sum, within limits.
std::optional<std::vector<size_t>> SmallestBalancedSparse(
    const std::vector<std::pair<int32_t, int64_t>>& v) {
  const size_t m = v.size();
  if (m > 64) return std::nullopt;
  const uint64_t all = m == 64 ? ~uint64_t{0} : (uint64_t{1} << m) - 1;
  std::unordered_map<int64_t, uint64_t> fewest = {{0, 0}};
  uint64_t best = 0;
  for (size_t j = 0; j < m; ++j) {
    std::vector<std::pair<int64_t, uint64_t>> reached;
    for (const auto& [sum, mask] : fewest) {
      const int64_t next = sum + v[j].second;
      const uint64_t with = mask | (uint64_t{1} << j);
      if (next == 0) {
        if (with != all && (best == 0 || std::popcount(with) < std::popcount(best))) best = with;
        continue;
      }
      reached.emplace_back(next, with);
    }
    for (const auto& [sum, mask] : reached) {
      auto [slot, inserted] = fewest.try_emplace(sum, mask);
      if (!inserted && std::popcount(mask) < std::popcount(slot->second)) slot->second = mask;
    }
    if (fewest.size() > (size_t{1} << 16)) return std::nullopt;
  }
  std::vector<size_t> positions;
  for (size_t j = 0; j < m; ++j) {
    if (best >> j & 1) positions.push_back(j);
  }
  return positions;
}

std::optional<std::vector<size_t>> SmallestBalanced(
    const std::vector<std::pair<int32_t, int64_t>>& v) {
  const size_t m = v.size();
  int64_t unit = 0, positive = 0;
  for (const auto& [root, size] : v) {
    unit = std::gcd(unit, size < 0 ? -size : size);
    positive += size > 0 ? size : 0;
  }
  if (m < 2 || unit == 0) return std::vector<size_t>{};
  const int64_t span = positive / unit;  // sums lie in [-span, span]
  const auto width = static_cast<size_t>(2 * span + 1);
  constexpr size_t kMaxCells = size_t{1} << 24;
  if (width > kMaxCells / m) return SmallestBalancedSparse(v);
  // fewest[s + span]: fewest entries among the first j forming a nonempty
  // subset with sum s; took[j * width + s + span]: whether that best subset
  // uses entry j (for the walk back).
  constexpr int32_t kNone = INT32_MAX;
  std::vector<int32_t> fewest(width, kNone), next(width);
  std::vector<uint8_t> took(m * width, 0);
  for (size_t j = 0; j < m; ++j) {
    const int64_t step = v[j].second / unit;
    next = fewest;
    uint8_t* row = &took[j * width];
    const auto consider = [&](int64_t s, int32_t count) {
      const auto at = static_cast<size_t>(s + span);
      if (count < next[at]) next[at] = count, row[at] = 1;
    };
    consider(step, 1);
    for (int64_t s = -span; s <= span; ++s) {
      const int32_t count = fewest[static_cast<size_t>(s + span)];
      const int64_t to = s + step;
      if (count == kNone || to < -span || to > span) continue;
      consider(to, count + 1);
    }
    fewest.swap(next);
  }
  const int32_t smallest = fewest[static_cast<size_t>(span)];
  if (smallest == kNone || static_cast<size_t>(smallest) >= m) return std::vector<size_t>{};
  // Walk back: at layer j the best subset for sum s either used entry j or is
  // the best of layer j - 1, and the counts tell which.
  std::vector<size_t> positions;
  int64_t s = 0;
  for (size_t j = m; j-- > 0;) {
    if (!took[j * width + static_cast<size_t>(s + span)]) continue;
    positions.push_back(j);
    s -= v[j].second / unit;
    if (s == 0 && positions.size() == static_cast<size_t>(smallest)) break;
  }
  std::reverse(positions.begin(), positions.end());
  return positions;
}

// Groups of items (by local index) joined because they must share a band.
// At a moment t, every band's items ending there and starting there add up
// to the same size (the band is full on both sides). When one item ends at t
// (or one starts), the others there fill its interval, so all share its band;
// and when the groups out of balance at t have no smaller balanced subset,
// they can only balance together. Those joins are certain. Where a smaller
// balanced subset exists the moment is ambiguous, and joining one is a guess.
// When no moment is out of balance, each group is balanced at every moment.
class SeamGroups {
 public:
  // By moment: (local item, +size when it ends there, -size when it starts).
  using Moments = std::vector<std::vector<std::pair<int32_t, int64_t>>>;

  SeamGroups(const Moments& at, size_t num_items)
      : at_(&at),
        parent_(num_items),
        moments_(num_items),
        ambiguous_(at.size(), 0),
        queued_(at.size(), 0),
        groups_(num_items) {
    for (size_t k = 0; k < num_items; ++k) parent_[k] = static_cast<int32_t>(k);
    for (size_t t = 1; t + 1 < at.size(); ++t) {
      int32_t enders = 0, starters = 0;
      for (const auto& [k, size] : at[t]) {
        moments_[static_cast<size_t>(Find(k))].push_back(t);
        (size > 0 ? enders : starters) += 1;
      }
      if (enders == 1 || starters == 1) {
        for (const auto& [k, size] : at[t]) Join(k, at[t][0].first);
      }
    }
    for (size_t t = 1; t + 1 < at.size(); ++t) LookAgain(t);
  }

  size_t num_groups() const { return groups_; }

  // Makes the certain joins until none is left; false when `out_of_time`.
  template <typename OutOfTime>
  bool Propagate(OutOfTime out_of_time) {
    while (!queue_.empty()) {
      if (out_of_time()) return false;
      const size_t t = queue_.back();
      queue_.pop_back();
      queued_[t] = 0;
      const std::vector<std::pair<int32_t, int64_t>> rest = Unbalanced(t);
      ambiguous_[t] = 0;
      if (rest.empty()) continue;
      const std::optional<std::vector<size_t>> smaller = SmallestBalanced(rest);
      if (!smaller) {
        crowded_.push_back(t);
      } else if (smaller->empty()) {
        for (const auto& [root, sum] : rest) Join(root, rest[0].first);
      } else {
        ambiguous_[t] = rest.size();
      }
    }
    return true;
  }

  // The ambiguous moment with the fewest groups out of balance; 0 if none.
  size_t MostDecidedAmbiguousMoment() const {
    size_t best = 0;
    for (size_t t = 1; t < ambiguous_.size(); ++t) {
      if (ambiguous_[t] > 0 && (best == 0 || ambiguous_[t] < ambiguous_[best])) best = t;
    }
    return best;
  }

  // Distinct smallest balanced subsets (as group roots) at moment t, one
  // starting from each group out of balance there.
  std::vector<std::vector<int32_t>> SmallestSeams(size_t t) {
    std::vector<std::pair<int32_t, int64_t>> rest = Unbalanced(t);
    std::vector<std::vector<int32_t>> seams;
    for (size_t first = 0; first < rest.size(); ++first) {
      std::rotate(rest.begin(), rest.begin() + 1, rest.end());
      std::vector<int32_t> seam;
      for (size_t j : SmallestBalanced(rest).value_or(std::vector<size_t>{})) {
        seam.push_back(rest[j].first);
      }
      std::sort(seam.begin(), seam.end());
      if (!seam.empty() && std::find(seams.begin(), seams.end(), seam) == seams.end()) {
        seams.push_back(std::move(seam));
      }
    }
    return seams;
  }

  // Joins every group out of balance at a moment too crowded to look at
  // closely (unions of bands are still bands); false when there was none.
  bool SettleCrowded() {
    bool joined = false;
    for (size_t t : std::exchange(crowded_, {})) {
      std::vector<std::pair<int32_t, int64_t>> rest = Unbalanced(t);
      for (const auto& [root, sum] : rest) Join(root, rest[0].first);
      joined = joined || rest.size() > 1;
    }
    return joined;
  }

  void JoinAll(const std::vector<int32_t>& members) {
    for (int32_t k : members) Join(k, members[0]);
  }

  std::vector<std::vector<int32_t>> Groups() {
    std::vector<int32_t> index(parent_.size(), -1);
    std::vector<std::vector<int32_t>> groups;
    for (size_t k = 0; k < parent_.size(); ++k) {
      const auto root = static_cast<size_t>(Find(static_cast<int32_t>(k)));
      if (index[root] < 0) {
        index[root] = static_cast<int32_t>(groups.size());
        groups.emplace_back();
      }
      groups[static_cast<size_t>(index[root])].push_back(static_cast<int32_t>(k));
    }
    return groups;
  }

 private:
  int32_t Find(int32_t k) {
    while (parent_[static_cast<size_t>(k)] != k) {
      parent_[static_cast<size_t>(k)] =
          parent_[static_cast<size_t>(parent_[static_cast<size_t>(k)])];
      k = parent_[static_cast<size_t>(k)];
    }
    return k;
  }

  void LookAgain(size_t t) {
    if (!queued_[t]) queued_[t] = 1, queue_.push_back(t);
  }

  // Joins two groups; the moments where both have items must be looked at
  // again (the smaller group's moments are a superset of those).
  void Join(int32_t a, int32_t b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return;
    if (moments_[static_cast<size_t>(a)].size() > moments_[static_cast<size_t>(b)].size()) {
      std::swap(a, b);
    }
    std::vector<size_t>& small = moments_[static_cast<size_t>(a)];
    std::vector<size_t>& large = moments_[static_cast<size_t>(b)];
    for (size_t t : small) LookAgain(t);
    large.insert(large.end(), small.begin(), small.end());
    small = {};
    parent_[static_cast<size_t>(a)] = b;
    --groups_;
  }

  // The groups out of balance at moment t, with their imbalance.
  std::vector<std::pair<int32_t, int64_t>> Unbalanced(size_t t) {
    std::vector<std::pair<int32_t, int64_t>> rest;
    for (const auto& [k, size] : (*at_)[t]) {
      const int32_t root = Find(k);
      auto it =
          std::find_if(rest.begin(), rest.end(), [&](const auto& r) { return r.first == root; });
      if (it == rest.end()) {
        rest.emplace_back(root, size);
      } else {
        it->second += size;
      }
    }
    std::erase_if(rest, [](const auto& r) { return r.second == 0; });
    std::sort(rest.begin(), rest.end());
    return rest;
  }

  const Moments* at_;
  std::vector<int32_t> parent_;
  std::vector<std::vector<size_t>> moments_;  // by root: a superset of its moments
  std::vector<size_t> ambiguous_;             // by moment: groups out of balance
  std::vector<char> queued_;
  std::vector<size_t> queue_;
  std::vector<size_t> crowded_;  // moments too crowded for SmallestBalanced
  size_t groups_;
};

class GuillotinePacker {
 public:
  GuillotinePacker(const std::vector<PackingItem>& items, const std::function<bool()>& expired,
                   int64_t node_budget)
      : items_(items), expired_(expired), nodes_left_(node_budget), offset_(items.size(), 0) {}

  std::optional<std::vector<int64_t>> Run(int32_t num_sections) {
    std::vector<int32_t> all;
    for (size_t i = 0; i < items_.size(); ++i) {
      if (items_[i].size > 0) all.push_back(static_cast<int32_t>(i));
    }
    if (all.empty()) return offset_;
    // Parts split at moments nothing crosses may differ in height; each must
    // be full on its own.
    const std::vector<std::vector<int32_t>> parts = SplitInTime(all, 0, num_sections);
    for (const std::vector<int32_t>& part : parts) {
      int32_t lo = num_sections, hi = 0;
      for (int32_t i : part) {
        lo = std::min(lo, item(i).section_begin);
        hi = std::max(hi, item(i).section_end);
      }
      std::vector<int64_t> total(static_cast<size_t>(hi - lo) + 1, 0);
      for (int32_t i : part) {
        total[static_cast<size_t>(item(i).section_begin - lo)] += item(i).size;
        total[static_cast<size_t>(item(i).section_end - lo)] -= item(i).size;
      }
      int64_t live = 0, height = -1;
      for (int32_t s = 0; s < hi - lo; ++s) {
        live += total[static_cast<size_t>(s)];
        if (height >= 0 && live != height) return std::nullopt;  // slack somewhere
        height = live;
      }
      if (!Solve(part, lo, hi, 0, height)) return std::nullopt;
    }
    return offset_;
  }

 private:
  const PackingItem& item(int32_t i) const { return items_[static_cast<size_t>(i)]; }

  bool OutOfTime() {
    if (--nodes_left_ < 0) return true;
    if ((nodes_left_ & 255) == 0 && expired_()) nodes_left_ = -1;
    return nodes_left_ < 0;
  }

  // The groups of `s` between moments in (lo, hi) that no item crosses, in
  // time order; one group when there is no such moment.
  std::vector<std::vector<int32_t>> SplitInTime(const std::vector<int32_t>& s, int32_t lo,
                                                int32_t hi) const {
    std::vector<int32_t> crossing(static_cast<size_t>(hi - lo) + 1, 0);
    for (int32_t i : s) {
      // Moments strictly inside the item's lifespan: begin+1 .. end-1.
      if (item(i).section_end - item(i).section_begin < 2) continue;
      ++crossing[static_cast<size_t>(item(i).section_begin + 1 - lo)];
      --crossing[static_cast<size_t>(item(i).section_end - lo)];
    }
    std::vector<int32_t> part_of(static_cast<size_t>(hi - lo), 0);
    int32_t parts = 0, running = 0;
    for (int32_t t = 0; t < hi - lo; ++t) {
      running += crossing[static_cast<size_t>(t)];
      if (t > 0 && running == 0) ++parts;
      part_of[static_cast<size_t>(t)] = parts;
    }
    std::vector<std::vector<int32_t>> groups(static_cast<size_t>(parts) + 1);
    for (int32_t i : s) {
      groups[static_cast<size_t>(part_of[static_cast<size_t>(item(i).section_begin - lo)])]
          .push_back(i);
    }
    std::erase_if(groups, [](const std::vector<int32_t>& g) { return g.empty(); });
    return groups;
  }

  // Packs `s`, whose live sizes add up to `height` at every moment of
  // [lo, hi), into [base, base + height).
  bool Solve(const std::vector<int32_t>& s, int32_t lo, int32_t hi, int64_t base, int64_t height) {
    if (OutOfTime()) return false;
    if (s.size() == 1) {
      const PackingItem& only = item(s[0]);
      offset_[static_cast<size_t>(s[0])] = base;
      return only.size == height && only.section_begin == lo && only.section_end == hi;
    }
    const std::vector<std::vector<int32_t>> parts = SplitInTime(s, lo, hi);
    if (parts.size() > 1) {
      for (const std::vector<int32_t>& part : parts) {
        int32_t part_lo = hi, part_hi = lo;
        for (int32_t i : part) {
          part_lo = std::min(part_lo, item(i).section_begin);
          part_hi = std::max(part_hi, item(i).section_end);
        }
        if (!Solve(part, part_lo, part_hi, base, height)) return false;
      }
      return true;
    }
    // Stack the bands that the moments' seams reveal, if there are several;
    // when they do not pack, guess the ambiguous seams differently.
    for (uint64_t attempt = 0; attempt < kBandAttempts; ++attempt) {
      std::vector<std::vector<int32_t>> bands = Bands(s, lo, hi, attempt);
      if (bands.size() <= 1) {
        if (guessed_ && nodes_left_ >= 0) continue;  // the guesses joined everything
        break;
      }
      if (StackBands(bands, lo, hi, base)) return true;
      if (nodes_left_ < 0) return false;
      if (!guessed_) break;
    }
    // A set the seams do not split may still pack: fill it as a skyline
    // (skyline_packing.h), which needs no bands. Then enumerate balanced
    // subsets, which is exponential: only for small sets. A large set that
    // neither packs is usually a wrong guess of the caller's, which it retries.
    if (s.size() <= kMaxSkyline && PackSkyline(s, base, height)) return true;
    if (nodes_left_ < 0) return false;
    if (SplitBySides(s, lo, hi, base, height)) return true;
    if (nodes_left_ < 0) return false;
    return s.size() <= kMaxEnumerated && SplitInAddress(s, lo, hi, base, height);
  }

  // A set of items to pack into [base, base + height) over [lo, hi).
  struct Region {
    const std::vector<int32_t>* s = nullptr;
    int32_t lo = 0, hi = 0;
    int64_t base = 0, height = 0;
  };

  // The state of one sweep that gives every item of `s` a side: 0 (below) or
  // 1 (above). Each side must be balanced at every moment: what of it ends
  // there adds up to what of it starts there. Items live from `lo` get their
  // side only when they end (any side is balanced before that), so which of
  // them share a band is found, not guessed up front; the others get theirs
  // when they start, as a subset of the starters matching what ends below.
  struct Sides : Region {
    // By moment (ascending, inside (lo, hi)): local items ending there; the
    // starters in classes of equal size and end (interchangeable until they
    // end), in SmallerThenLonger order; and the size of the classes from
    // each one on (so a subset that cannot reach its sum stops early).
    std::vector<std::vector<int32_t>> ends;
    std::vector<std::vector<std::vector<int32_t>>> starter_classes;
    std::vector<std::vector<int64_t>> size_from;
    std::vector<int8_t> side;  // by local item; -1 while undecided
    int64_t nodes_left = 0;
  };

  static bool SmallerThenLonger(const PackingItem& a, const PackingItem& b) {
    return a.size != b.size ? a.size < b.size : a.section_end > b.section_end;
  }
  static bool Interchangeable(const PackingItem& a, const PackingItem& b) {
    return a.size == b.size && a.section_begin == b.section_begin && a.section_end == b.section_end;
  }

  // Packs `s` as two balanced sides, below and above, each solved on its
  // own. Tries a few pivots (an item live from `lo` put below), each with its
  // own share of nodes; a pair of sides that does not pack is passed over
  // for the next one the sweep finds.
  bool SplitBySides(const std::vector<int32_t>& s, int32_t lo, int32_t hi, int64_t base,
                    int64_t height) {
    Sides sd{{&s, lo, hi, base, height}};
    // The moments inside (lo, hi) where something starts or ends, numbered.
    std::vector<int32_t> moment(static_cast<size_t>(hi - lo) + 1, -1);
    for (int32_t i : s) {
      for (int32_t at : {item(i).section_begin, item(i).section_end}) {
        if (at > lo && at < hi) moment[static_cast<size_t>(at - lo)] = 0;
      }
    }
    int32_t num_moments = 0;
    for (int32_t& m : moment) {
      if (m == 0) m = num_moments++;
    }
    const auto moment_of = [&](int32_t at) {
      return static_cast<size_t>(moment[static_cast<size_t>(at - lo)]);
    };
    sd.ends.resize(static_cast<size_t>(num_moments));
    sd.starter_classes.resize(static_cast<size_t>(num_moments));
    std::vector<int32_t> pivots;
    for (size_t k = 0; k < s.size(); ++k) {
      const PackingItem& it = item(s[k]);
      const auto local = static_cast<int32_t>(k);
      if (it.section_end < hi) sd.ends[moment_of(it.section_end)].push_back(local);
      if (it.section_begin == lo) {
        pivots.push_back(local);
        continue;
      }
      auto& classes = sd.starter_classes[moment_of(it.section_begin)];
      auto same = std::find_if(classes.begin(), classes.end(), [&](const std::vector<int32_t>& c) {
        return Interchangeable(item(s[static_cast<size_t>(c[0])]), it);
      });
      if (same == classes.end()) {
        classes.push_back({local});
      } else {
        same->push_back(local);
      }
    }
    const auto local_order = [&](int32_t a, int32_t b) {
      return SmallerThenLonger(item(s[static_cast<size_t>(a)]), item(s[static_cast<size_t>(b)]));
    };
    for (auto& classes : sd.starter_classes) {
      std::sort(classes.begin(), classes.end(),
                [&](const auto& a, const auto& b) { return local_order(a[0], b[0]); });
      std::vector<int64_t>& from = sd.size_from.emplace_back(classes.size() + 1, 0);
      for (size_t c = classes.size(); c-- > 0;) {
        from[c] = from[c + 1] + static_cast<int64_t>(classes[c].size()) *
                                    item(s[static_cast<size_t>(classes[c][0])]).size;
      }
    }
    // Pivots: the smaller first (small bands split off cheaply), one per
    // class of interchangeable items.
    std::sort(pivots.begin(), pivots.end(), local_order);
    pivots.erase(std::unique(pivots.begin(), pivots.end(),
                             [&](int32_t a, int32_t b) {
                               return Interchangeable(item(s[static_cast<size_t>(a)]),
                                                      item(s[static_cast<size_t>(b)]));
                             }),
                 pivots.end());
    if (pivots.size() > kSidePivots) pivots.resize(kSidePivots);
    for (int32_t pivot : pivots) {
      sd.side.assign(s.size(), -1);
      sd.side[static_cast<size_t>(pivot)] = 0;
      sd.nodes_left = kSideNodesPerItem * static_cast<int64_t>(s.size());
      if (SweepMoment(sd, 0)) return true;
      if (nodes_left_ < 0) return false;
    }
    return false;
  }

  // Decides the sides at moment m and later; true once both sides packed.
  bool SweepMoment(Sides& sd, size_t m) {
    if (OutOfTime() || --sd.nodes_left < 0) return false;
    if (m == sd.ends.size()) return PackSides(sd);
    int64_t below = 0;
    std::vector<int32_t> open;  // live from lo, side still open
    for (int32_t k : sd.ends[m]) {
      const int8_t side = sd.side[static_cast<size_t>(k)];
      if (side == 0) below += item((*sd.s)[static_cast<size_t>(k)]).size;
      if (side < 0) open.push_back(k);
    }
    return ChooseOpen(sd, m, open, 0, below);
  }

  // Puts each of `open` (from `next` on) below or above, then the starters.
  bool ChooseOpen(Sides& sd, size_t m, const std::vector<int32_t>& open, size_t next,
                  int64_t below) {
    if (OutOfTime() || --sd.nodes_left < 0) return false;
    if (next == open.size()) return ChooseStarters(sd, m, 0, below);
    const auto k = static_cast<size_t>(open[next]);
    for (const int8_t side : {int8_t{1}, int8_t{0}}) {  // fewer below first
      sd.side[k] = side;
      const int64_t more = side == 0 ? item((*sd.s)[k]).size : 0;
      if (ChooseOpen(sd, m, open, next + 1, below + more)) return true;
      if (sd.nodes_left < 0 || nodes_left_ < 0) break;
    }
    sd.side[k] = -1;
    return false;
  }

  // Puts below a subset of the starters at moment m (classes from `c` on)
  // whose sizes add up to `need`, the rest above; then the next moment.
  // Every call counts as a node: a sum no subset reaches can take many.
  bool ChooseStarters(Sides& sd, size_t m, size_t c, int64_t need) {
    if (OutOfTime() || --sd.nodes_left < 0) return false;
    const std::vector<std::vector<int32_t>>& classes = sd.starter_classes[m];
    if (need == 0) {
      for (size_t j = c; j < classes.size(); ++j) {
        for (int32_t k : classes[j]) sd.side[static_cast<size_t>(k)] = 1;
      }
      if (SweepMoment(sd, m + 1)) return true;
      for (size_t j = c; j < classes.size(); ++j) {
        for (int32_t k : classes[j]) sd.side[static_cast<size_t>(k)] = -1;
      }
      return false;
    }
    if (need > sd.size_from[m][c]) return false;
    const std::vector<int32_t>& cls = classes[c];
    const int64_t size = item((*sd.s)[static_cast<size_t>(cls[0])]).size;
    const auto most =
        static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(cls.size()), need / size));
    for (size_t taken = most + 1; taken-- > 0;) {
      for (size_t j = 0; j < cls.size(); ++j) {
        sd.side[static_cast<size_t>(cls[j])] = j < taken ? 0 : 1;
      }
      if (ChooseStarters(sd, m, c + 1, need - static_cast<int64_t>(taken) * size)) return true;
      if (sd.nodes_left < 0 || nodes_left_ < 0) break;
    }
    for (int32_t k : cls) sd.side[static_cast<size_t>(k)] = -1;
    return false;
  }

  // Both sides decided: pack the one with the pivot below, the rest (with
  // any item still undecided, which lives over all of [lo, hi)) above.
  bool PackSides(const Sides& sd) {
    return StackTwo(sd, [&](size_t k) { return sd.side[k] == 0; });
  }

  // Packs the items of `r` that `below` picks (by local index) under the
  // others; both must be balanced, and neither empty.
  template <typename Below>
  bool StackTwo(const Region& r, Below below) {
    std::vector<int32_t> under, over;
    int64_t h = 0;
    for (size_t k = 0; k < r.s->size(); ++k) {
      const int32_t i = (*r.s)[k];
      if (below(k)) {
        under.push_back(i);
        if (item(i).section_begin == r.lo) h += item(i).size;
      } else {
        over.push_back(i);
      }
    }
    return h > 0 && h < r.height && Solve(under, r.lo, r.hi, r.base, h) &&
           Solve(over, r.lo, r.hi, r.base + h, r.height - h);
  }

  // Packs `s` by skyline search within a share of the node budget.
  bool PackSkyline(const std::vector<int32_t>& s, int64_t base, int64_t height) {
    std::vector<PackingItem> part;
    part.reserve(s.size());
    for (int32_t i : s) part.push_back(item(i));
    const int64_t budget =
        std::min(nodes_left_, kSkylineNodesPerItem * static_cast<int64_t>(s.size()));
    int64_t used = 0;
    const std::optional<std::vector<int64_t>> packed =
        FindSkylinePacking(part, height, budget, expired_, &used);
    nodes_left_ -= used;
    if (!packed) return false;
    for (size_t k = 0; k < s.size(); ++k) offset_[static_cast<size_t>(s[k])] = base + (*packed)[k];
    return true;
  }

  // Packs the bands one above the other. A band that does not pack may be
  // part of a true band whose other parts are in other groups: it is joined
  // with the band that shares the most moments with it, and the stack is
  // tried again, until one band is left.
  bool StackBands(std::vector<std::vector<int32_t>>& bands, int32_t lo, int32_t hi, int64_t base) {
    while (bands.size() > 1) {
      int64_t level = base;
      size_t failed = bands.size();
      for (size_t j = 0; j < bands.size() && failed == bands.size(); ++j) {
        int64_t h = 0;
        for (int32_t i : bands[j]) h += item(i).section_begin == lo ? item(i).size : 0;
        if (Solve(bands[j], lo, hi, level, h)) {
          level += h;
        } else {
          failed = j;
        }
      }
      if (failed == bands.size()) return true;
      if (nodes_left_ < 0) return false;
      std::vector<int32_t> live(static_cast<size_t>(hi - lo), 0);
      for (int32_t i : bands[failed]) {
        for (int32_t t = item(i).section_begin; t < item(i).section_end; ++t) {
          live[static_cast<size_t>(t - lo)] = 1;
        }
      }
      size_t partner = failed == 0 ? 1 : 0;
      int64_t most = -1;
      for (size_t j = 0; j < bands.size(); ++j) {
        if (j == failed) continue;
        int64_t shared = 0;
        for (int32_t i : bands[j]) {
          shared += live[static_cast<size_t>(item(i).section_begin - lo)] +
                    live[static_cast<size_t>(item(i).section_end - 1 - lo)];
        }
        if (shared > most) most = shared, partner = j;
      }
      bands[partner].insert(bands[partner].end(), bands[failed].begin(), bands[failed].end());
      bands.erase(bands.begin() + static_cast<std::ptrdiff_t>(failed));
    }
    return false;
  }

  // Bands: subsets of `s` whose live sizes add up to the same total at every
  // moment (see SeamGroups), or one set when none splits off.
  // `attempt` > 0 varies the guesses; guessed_ says whether any was made.
  std::vector<std::vector<int32_t>> Bands(const std::vector<int32_t>& s, int32_t lo, int32_t hi,
                                          uint64_t attempt) {
    guessed_ = false;
    uint64_t random = attempt * 0x9E3779B97F4A7C15ull;
    SeamGroups::Moments at(static_cast<size_t>(hi - lo) + 1);
    for (size_t k = 0; k < s.size(); ++k) {
      const PackingItem& it = item(s[k]);
      if (it.section_begin > lo) {
        at[static_cast<size_t>(it.section_begin - lo)].emplace_back(k, -it.size);
      }
      if (it.section_end < hi) {
        at[static_cast<size_t>(it.section_end - lo)].emplace_back(k, it.size);
      }
    }
    SeamGroups groups(at, s.size());
    for (;;) {
      if (!groups.Propagate([this] { return OutOfTime(); })) return {};
      const size_t t = groups.MostDecidedAmbiguousMoment();
      if (t == 0) {
        if (groups.SettleCrowded()) continue;
        break;
      }
      guessed_ = true;
      // Look one guess ahead: of the smallest balanced subsets there, take the
      // one whose consequences join the fewest groups.
      std::vector<std::vector<int32_t>> seams = groups.SmallestSeams(t);
      if (seams.empty()) return {};  // too crowded to look at: no split
      if (attempt > 0) {
        for (size_t j = seams.size(); j > 1; --j) {
          random = random * 6364136223846793005ull + 1442695040888963407ull;
          std::swap(seams[j - 1], seams[(random >> 33) % j]);
        }
      }
      size_t best = 0, most_groups = 0;
      for (size_t j = 0; j < seams.size() && seams.size() > 1; ++j) {
        SeamGroups trial = groups;
        trial.JoinAll(seams[j]);
        if (!trial.Propagate([this] { return OutOfTime(); })) return {};
        if (trial.num_groups() > most_groups) most_groups = trial.num_groups(), best = j;
      }
      groups.JoinAll(seams[best]);
    }
    std::vector<std::vector<int32_t>> bands = groups.Groups();
    for (std::vector<int32_t>& band : bands) {
      for (int32_t& k : band) k = s[static_cast<size_t>(k)];
    }
    return bands;
  }

  // The state of one enumeration of balanced subsets of `s`.
  struct Split : Region {
    // By moment t - lo: local items starting / ending there.
    std::vector<std::vector<int32_t>> starts, ends;
    // By moment: sizes of chosen items ending there minus those starting.
    std::vector<int64_t> imbalance;
    int32_t imbalanced = 0;  // moments with imbalance != 0
    std::vector<char> chosen, banned;
    int32_t num_chosen = 0;
    int32_t max_chosen = 0;  // the subsets enumerated have at most this many items
    bool truncated = false;  // some subset was cut off by max_chosen
  };

  bool SplitInAddress(const std::vector<int32_t>& s, int32_t lo, int32_t hi, int64_t base,
                      int64_t height) {
    Split sp{{&s, lo, hi, base, height}};
    const size_t width = static_cast<size_t>(hi - lo);
    sp.starts.resize(width + 1);
    sp.ends.resize(width + 1);
    sp.imbalance.assign(width + 1, 0);
    sp.chosen.assign(s.size(), 0);
    sp.banned.assign(s.size(), 0);
    int32_t pivot = -1;
    for (size_t k = 0; k < s.size(); ++k) {
      const PackingItem& it = item(s[k]);
      sp.starts[static_cast<size_t>(it.section_begin - lo)].push_back(static_cast<int32_t>(k));
      sp.ends[static_cast<size_t>(it.section_end - lo)].push_back(static_cast<int32_t>(k));
      // The pivot: the longest item that starts first (its part goes below).
      if (it.section_begin == lo &&
          (pivot < 0 || it.section_end > item(s[static_cast<size_t>(pivot)]).section_end)) {
        pivot = static_cast<int32_t>(k);
      }
    }
    // Try the larger candidates first: they tend to settle a moment alone.
    for (size_t t = 0; t <= width; ++t) {
      auto by_size = [&](int32_t a, int32_t b) {
        return item(s[static_cast<size_t>(a)]).size > item(s[static_cast<size_t>(b)]).size;
      };
      std::sort(sp.starts[t].begin(), sp.starts[t].end(), by_size);
      std::sort(sp.ends[t].begin(), sp.ends[t].end(), by_size);
    }
    if (pivot < 0) return false;
    Choose(sp, pivot, +1);
    // Small balanced subsets first (iterative deepening on their size): the
    // true bands are usually small, and a large subset that is balanced by
    // coincidence may not pack, which costs a futile search inside it.
    const auto n = static_cast<int32_t>(s.size());
    for (sp.max_chosen = std::min(n - 1, 4);; sp.max_chosen = std::min(n - 1, sp.max_chosen * 4)) {
      sp.truncated = false;
      if (Enumerate(sp)) return true;
      if (nodes_left_ < 0 || !sp.truncated || sp.max_chosen == n - 1) return false;
    }
  }

  void Shift(Split& sp, int32_t t, int64_t delta) {
    if (t <= 0 || t >= sp.hi - sp.lo) return;  // the ends of [lo, hi) are free
    int64_t& d = sp.imbalance[static_cast<size_t>(t)];
    sp.imbalanced -= d != 0;
    d += delta;
    sp.imbalanced += d != 0;
  }

  // Adds (sign +1) or removes (-1) local item k from the subset.
  void Choose(Split& sp, int32_t k, int sign) {
    const PackingItem& it = item((*sp.s)[static_cast<size_t>(k)]);
    sp.chosen[static_cast<size_t>(k)] = sign > 0;
    sp.num_chosen += sign;
    Shift(sp, it.section_begin - sp.lo, -sign * it.size);
    Shift(sp, it.section_end - sp.lo, sign * it.size);
  }

  bool Enumerate(Split& sp) {
    if (OutOfTime()) return false;
    if (sp.imbalanced == 0) {
      return sp.num_chosen < static_cast<int32_t>(sp.s->size()) && Recurse(sp);
    }
    if (sp.num_chosen >= sp.max_chosen) {
      sp.truncated = true;
      return false;
    }
    // The first moment out of balance: when more chosen size ends there than
    // starts, some item starting there must join (and the other way round).
    int32_t t = 1;
    while (sp.imbalance[static_cast<size_t>(t)] == 0) ++t;
    const std::vector<int32_t>& pool = sp.imbalance[static_cast<size_t>(t)] > 0
                                           ? sp.starts[static_cast<size_t>(t)]
                                           : sp.ends[static_cast<size_t>(t)];
    // What joins from `pool` must add up to at least the imbalance (more when
    // items on the other side join too).
    const int64_t need = sp.imbalance[static_cast<size_t>(t)];
    int64_t available = 0;
    for (int32_t k : pool) {
      const auto ki = static_cast<size_t>(k);
      if (!sp.chosen[ki] && !sp.banned[ki]) available += item((*sp.s)[ki]).size;
    }
    if (available < (need > 0 ? need : -need)) return false;
    std::vector<int32_t> banned_here;
    bool found = false;
    for (int32_t k : pool) {
      const auto ki = static_cast<size_t>(k);
      if (sp.chosen[ki] || sp.banned[ki]) continue;
      Choose(sp, k, +1);
      found = Enumerate(sp);
      Choose(sp, k, -1);
      if (found || nodes_left_ < 0) break;
      // Subsets with k were all tried: the siblings' subtrees leave it out.
      sp.banned[ki] = 1;
      banned_here.push_back(k);
    }
    for (int32_t k : banned_here) sp.banned[static_cast<size_t>(k)] = 0;
    return found;
  }

  // A balanced proper subset: pack it below, the rest above.
  bool Recurse(const Split& sp) {
    return StackTwo(sp, [&](size_t k) { return sp.chosen[k] != 0; });
  }

  static constexpr uint64_t kBandAttempts = 8;
  // A sweep node costs tens of nanoseconds (2,000 items at 1,000 nodes each
  // take about 60 ms a pivot). On generated sets of 1,000-1,500 items, 16
  // pivots at 1,000 nodes pack 14 of 16 where 8 at 64 packed 10
  // (docs/benchmarks.md, "Generated guillotine instances").
  static constexpr size_t kSidePivots = 16;
  static constexpr int64_t kSideNodesPerItem = 1000;
  static constexpr size_t kMaxEnumerated = 200;
  // The skyline search packs guillotine sets of a few hundred items in about
  // one node per item when it packs them at all.
  static constexpr size_t kMaxSkyline = 600;
  static constexpr int64_t kSkylineNodesPerItem = 8;

  const std::vector<PackingItem>& items_;
  const std::function<bool()>& expired_;
  bool guessed_ = false;
  int64_t nodes_left_;
  std::vector<int64_t> offset_;
};

}  // namespace

std::optional<std::vector<int64_t>> FindPerfectPacking(const std::vector<PackingItem>& items,
                                                       int32_t num_sections,
                                                       const std::function<bool()>& expired,
                                                       int64_t node_budget) {
  for (const PackingItem& it : items) {
    if (it.size < 0 || it.section_begin < 0 || it.section_end > num_sections ||
        (it.size > 0 && it.section_begin >= it.section_end)) {
      return std::nullopt;
    }
  }
  return GuillotinePacker(items, expired, node_budget).Run(num_sections);
}

}  // namespace tessel::memory
