#include "memory/perfect/skyline_packing.h"

#include <algorithm>
#include <utility>

namespace tessel::memory {

namespace {

class SkylinePacker {
 public:
  SkylinePacker(const std::vector<PackingItem>& items, int64_t height, int64_t node_budget,
                const std::function<bool()>& expired)
      : height_(height), nodes_left_(node_budget), expired_(expired), offset_(items.size(), 0) {
    // Columns are the stretches between the distinct boundaries of the items.
    std::vector<int32_t> bounds;
    for (const PackingItem& it : items) {
      if (it.size == 0) continue;
      bounds.push_back(it.section_begin);
      bounds.push_back(it.section_end);
    }
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    const auto column = [&](int32_t section) {
      return static_cast<int32_t>(std::lower_bound(bounds.begin(), bounds.end(), section) -
                                  bounds.begin());
    };
    columns_ = bounds.empty() ? 0 : static_cast<int32_t>(bounds.size()) - 1;
    starts_.resize(bounds.size());
    ends_.resize(bounds.size());
    for (size_t i = 0; i < items.size(); ++i) {
      if (items[i].size == 0) continue;
      const auto k = static_cast<int32_t>(items_.size());
      items_.push_back(
          {column(items[i].section_begin), column(items[i].section_end), items[i].size, i});
      starts_[static_cast<size_t>(items_.back().begin)].push_back(k);
      ends_[static_cast<size_t>(items_.back().end)].push_back(k);
    }
    placed_.assign(items_.size(), 0);
    unplaced_ = items_.size();
    skyline_.assign(static_cast<size_t>(columns_), 0);
    supply_.resize(bounds.size() + 1);
  }

  std::optional<std::vector<int64_t>> Run() {
    if (Search()) return offset_;
    return std::nullopt;
  }

  int64_t nodes_left() const { return nodes_left_; }

 private:
  struct Item {
    int32_t begin, end;  // columns [begin, end)
    int64_t size;
    size_t index;  // in the caller's vector
  };
  struct Valley {
    int32_t begin = 0, end = 0;
    int64_t level = 0, chains = 0;
  };
  static constexpr int64_t kManyChains = int64_t{1} << 40;

  const Item& item(int32_t k) const { return items_[static_cast<size_t>(k)]; }
  int64_t& sky(int32_t c) { return skyline_[static_cast<size_t>(c)]; }

  bool OutOfTime() {
    if (--nodes_left_ < 0) return true;
    if ((nodes_left_ & 255) == 0 && expired_()) nodes_left_ = -1;
    return nodes_left_ < 0;
  }

  // Whether item k may lie in the chain of valley [begin, end) at `level`.
  bool Fits(int32_t k, int32_t begin, int32_t end, int64_t level) const {
    const Item& it = item(k);
    return !placed_[static_cast<size_t>(k)] && it.begin >= begin && it.end <= end &&
           level + it.size <= height_;
  }

  void Place(int32_t k, int64_t level, int sign) {
    const Item& it = item(k);
    for (int32_t c = it.begin; c < it.end; ++c) sky(c) += sign * it.size;
    placed_[static_cast<size_t>(k)] = sign > 0;
    offset_[it.index] = sign > 0 ? level : 0;
    unplaced_ = sign > 0 ? unplaced_ - 1 : unplaced_ + 1;
  }

  // The number of chains covering the valley (saturating), items of equal span
  // and size counted once; ways[c - begin] receives the number of chains from
  // the valley's start to column c.
  int64_t CountChains(const Valley& v, std::vector<int64_t>& ways) {
    ways.assign(static_cast<size_t>(v.end - v.begin) + 1, 0);
    ways[0] = 1;
    std::vector<std::pair<int32_t, int64_t>> seen;
    for (int32_t c = v.begin; c < v.end; ++c) {
      const int64_t w = ways[static_cast<size_t>(c - v.begin)];
      if (w == 0) continue;
      seen.clear();
      for (int32_t k : starts_[static_cast<size_t>(c)]) {
        if (!Fits(k, v.begin, v.end, v.level)) continue;
        const std::pair<int32_t, int64_t> key = {item(k).end, item(k).size};
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
        seen.push_back(key);
        int64_t& to = ways[static_cast<size_t>(item(k).end - v.begin)];
        to = std::min(kManyChains, to + w);
      }
    }
    return ways.back();
  }

  // Columns from which a chain reaches `end` backwards.
  std::vector<char> ReachesEnd(const Valley& v) const {
    std::vector<char> reach(static_cast<size_t>(v.end - v.begin) + 1, 0);
    reach.back() = 1;
    for (int32_t c = v.end; c > v.begin; --c) {
      if (!reach[static_cast<size_t>(c - v.begin)]) continue;
      for (int32_t k : ends_[static_cast<size_t>(c)]) {
        if (Fits(k, v.begin, v.end, v.level))
          reach[static_cast<size_t>(item(k).begin - v.begin)] = 1;
      }
    }
    return reach;
  }

  // The items that can start a chain of the valley, or end one, whichever
  // side has fewer; twins (same span and size) once; longest first.
  std::vector<int32_t> Candidates(const Valley& v) {
    std::vector<int64_t> from_begin;
    CountChains(v, from_begin);
    const std::vector<char> to_end = ReachesEnd(v);
    const auto collect = [&](const std::vector<int32_t>& pool, bool left) {
      std::vector<int32_t> out;
      for (int32_t k : pool) {
        if (!Fits(k, v.begin, v.end, v.level)) continue;
        const Item& it = item(k);
        if (left ? !to_end[static_cast<size_t>(it.end - v.begin)]
                 : from_begin[static_cast<size_t>(it.begin - v.begin)] == 0) {
          continue;
        }
        const bool twin = std::any_of(out.begin(), out.end(), [&](int32_t j) {
          return item(j).begin == it.begin && item(j).end == it.end && item(j).size == it.size;
        });
        if (!twin) out.push_back(k);
      }
      return out;
    };
    std::vector<int32_t> left = collect(starts_[static_cast<size_t>(v.begin)], true);
    std::vector<int32_t> right = collect(ends_[static_cast<size_t>(v.end)], false);
    std::vector<int32_t>& pick = left.size() <= right.size() ? left : right;
    std::stable_sort(pick.begin(), pick.end(), [&](int32_t a, int32_t b) {
      return item(a).end - item(a).begin > item(b).end - item(b).begin;
    });
    return std::move(pick);
  }

  // Every unplaced item still fits under the height somewhere above the
  // highest point of the skyline over its span.
  bool ItemsFit() {
    for (size_t k = 0; k < items_.size(); ++k) {
      if (placed_[k]) continue;
      const Item& it = items_[k];
      int64_t top = 0;
      for (int32_t c = it.begin; c < it.end; ++c) top = std::max(top, sky(c));
      if (top + it.size > height_) return false;
    }
    return true;
  }

  // A basin: a stretch whose skyline is below both walls around it (the ends
  // of the span count as walls of full height). Until it reaches its lower
  // wall, only items wholly inside it can raise it, so at every column those
  // must add up to at least the depth there.
  bool BasinsFillable() {
    struct Stretch {
      int32_t begin, end;
      int64_t left_wall, right_wall;
    };
    std::vector<Stretch> stretches = {{0, columns_, height_, height_}};
    while (!stretches.empty()) {
      const Stretch st = stretches.back();
      stretches.pop_back();
      if (st.begin >= st.end) continue;
      const int64_t wall = std::min(st.left_wall, st.right_wall);
      int64_t peak = 0;
      for (int32_t c = st.begin; c < st.end; ++c) peak = std::max(peak, sky(c));
      if (peak < wall && !Fillable(st.begin, st.end, wall)) return false;
      // Inner basins lie between the peaks.
      int32_t from = st.begin;
      int64_t left = st.left_wall;
      for (int32_t c = st.begin; c < st.end; ++c) {
        if (sky(c) != peak) continue;
        stretches.push_back({from, c, left, peak});
        from = c + 1;
        left = peak;
      }
      stretches.push_back({from, st.end, left, st.right_wall});
    }
    return true;
  }

  bool Fillable(int32_t begin, int32_t end, int64_t wall) {
    std::fill(supply_.begin() + begin, supply_.begin() + end + 1, 0);
    for (size_t k = 0; k < items_.size(); ++k) {
      const Item& it = items_[k];
      if (placed_[k] || it.begin < begin || it.end > end) continue;
      supply_[static_cast<size_t>(it.begin)] += it.size;
      supply_[static_cast<size_t>(it.end)] -= it.size;
    }
    int64_t live = 0;
    for (int32_t c = begin; c < end; ++c) {
      live += supply_[static_cast<size_t>(c)];
      if (live < wall - sky(c)) return false;
    }
    return true;
  }

  bool Search() {
    if (unplaced_ == 0) return true;
    if (OutOfTime() || !ItemsFit() || !BasinsFillable()) return false;
    Valley best;
    std::vector<int64_t> ways;
    for (int32_t begin = 0; begin < columns_;) {
      int32_t end = begin;
      while (end < columns_ && sky(end) == sky(begin)) ++end;
      const bool walled =
          (begin == 0 || sky(begin - 1) > sky(begin)) && (end == columns_ || sky(end) > sky(begin));
      if (walled && sky(begin) < height_) {
        Valley v{begin, end, sky(begin), 0};
        v.chains = CountChains(v, ways);
        if (v.chains == 0) return false;
        if (best.chains == 0 || v.chains < best.chains) best = v;
      }
      begin = end;
    }
    if (best.chains == 0) return false;
    for (int32_t k : Candidates(best)) {
      Place(k, best.level, +1);
      if (Search()) return true;
      Place(k, best.level, -1);
      if (nodes_left_ < 0) return false;
    }
    return false;
  }

  const int64_t height_;
  int64_t nodes_left_;
  const std::function<bool()>& expired_;
  std::vector<int64_t> offset_;
  std::vector<Item> items_;
  int32_t columns_ = 0;
  std::vector<std::vector<int32_t>> starts_, ends_;  // by column boundary
  std::vector<char> placed_;
  size_t unplaced_ = 0;
  std::vector<int64_t> skyline_;
  std::vector<int64_t> supply_;  // scratch for Fillable
};

}  // namespace

std::optional<std::vector<int64_t>> FindSkylinePacking(const std::vector<PackingItem>& items,
                                                       int64_t height, int64_t node_budget,
                                                       const std::function<bool()>& expired,
                                                       int64_t* nodes_used) {
  for (const PackingItem& it : items) {
    if (it.size < 0 || it.size > height || (it.size > 0 && it.section_begin >= it.section_end)) {
      return std::nullopt;
    }
  }
  SkylinePacker packer(items, height, node_budget, expired);
  std::optional<std::vector<int64_t>> offsets = packer.Run();
  if (nodes_used != nullptr) *nodes_used = node_budget - std::max<int64_t>(packer.nodes_left(), 0);
  return offsets;
}

}  // namespace tessel::memory
