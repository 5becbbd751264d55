#include "tuning/space.h"

#include <algorithm>
#include <set>

namespace tessel::tuning {

namespace {

constexpr int64_t kBaseCacheBytes = 16384;
constexpr size_t kMaxDefaultItems = 256;

// The largest power of two <= x (x >= 1).
size_t FloorPow2(size_t x) {
  size_t p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

size_t Product(const LocalSize& l) { return l[0] * l[1] * l[2]; }

// Keeps the legal candidates, each once, in order.
std::vector<LocalSize> LegalUnique(const Problem& p, const std::vector<LocalSize>& candidates) {
  std::vector<LocalSize> out;
  std::set<LocalSize> seen;
  for (LocalSize l : candidates) {
    for (int d = p.dims; d < 3; ++d) l[static_cast<size_t>(d)] = 1;
    if (IsLegal(p, l) && seen.insert(l).second) out.push_back(l);
  }
  return out;
}

// Every combination of per-dimension values whose product stays legal.
std::vector<LocalSize> Combine(const Problem& p, const std::array<std::vector<size_t>, 3>& values) {
  std::vector<LocalSize> out;
  for (size_t a : values[0]) {
    for (size_t b : values[1]) {
      if (a * b > p.max_group) continue;
      for (size_t c : values[2]) {
        const LocalSize l{a, b, c};
        if (IsLegal(p, l)) out.push_back(l);
      }
    }
  }
  return out;
}

}  // namespace

bool IsLegal(const Problem& p, const LocalSize& local) {
  for (size_t d = 0; d < 3; ++d) {
    if (local[d] < 1) return false;
    if (static_cast<int>(d) >= p.dims ? local[d] != 1 : local[d] > p.max_item[d]) return false;
  }
  return Product(local) <= p.max_group;
}

double Waste(const Problem& p, const LocalSize& local) {
  double need = 1, run = 1;
  for (size_t d = 0; d < static_cast<size_t>(p.dims); ++d) {
    const size_t g = std::max<size_t>(p.global[d], 1);
    need *= static_cast<double>(g);
    run *= static_cast<double>((g + local[d] - 1) / local[d] * local[d]);
  }
  return run / need;
}

size_t Groups(const Problem& p, const LocalSize& local) {
  size_t groups = 1;
  for (size_t d = 0; d < static_cast<size_t>(p.dims); ++d) {
    groups *= (std::max<size_t>(p.global[d], 1) + local[d] - 1) / local[d];
  }
  return groups;
}

LocalSize DefaultLocal(const Problem& p) {
  LocalSize local{1, 1, 1};
  if (p.max_group == 0) return local;
  const size_t budget = FloorPow2(std::min(p.max_group, kMaxDefaultItems));
  const size_t base =
      std::max<size_t>(static_cast<size_t>(p.global_mem_cache_bytes / kBaseCacheBytes), 1);
  // Powers of two: they divide the budget, so every product stays within it.
  local[0] = std::min({budget, FloorPow2(std::max<size_t>(p.global[0], 1)),
                       FloorPow2(std::max<size_t>(p.max_item[0], 1))});
  size_t left = budget / local[0];
  for (size_t d = 1; d < static_cast<size_t>(p.dims); ++d) {
    local[d] = std::min({left, FloorPow2(std::max<size_t>(p.global[d], 1)), FloorPow2(base),
                         FloorPow2(std::max<size_t>(p.max_item[d], 1))});
    left /= local[d];
  }
  // Leftover budget goes back to dim 1 when dim 0 is short (narrow images).
  if (p.dims >= 2) {
    while (Product(local) * 2 <= budget && local[1] * 2 <= p.global[1] &&
           local[1] * 2 <= p.max_item[1]) {
      local[1] *= 2;
    }
  }
  // A launch too small to give every compute unit a group gets smaller
  // groups, down to one item: halving the largest dimension, the outer one
  // of equals, so that dim 0 stays coalesced longest. A few full groups
  // leave most of a GPU idle; one busy lane per group does not.
  while (Groups(p, local) < static_cast<size_t>(std::max<int64_t>(p.compute_units, 1)) &&
         Product(local) > 1) {
    size_t widest = 0;
    for (size_t d = 1; d < 3; ++d) {
      if (local[d] >= local[widest]) widest = d;
    }
    local[widest] /= 2;
  }
  return local;
}

std::vector<LocalSize> MaceCandidates(const Problem& p) {
  const size_t kwg = p.max_group;
  std::vector<LocalSize> c;
  if (p.dims == 3) {
    const auto& g = p.global;
    for (size_t x : {g[0], g[0] / 4, g[0] / 8, size_t{4}, size_t{1}}) {
      for (size_t z : {g[2], g[2] / 8, g[2] / 4, size_t{8}, size_t{4}, size_t{1}}) {
        c.push_back({x, g[1], z});
      }
    }
  } else {
    for (size_t k = 2; k <= 256; k *= 2) c.push_back({kwg / k, k, 1});
    c.push_back({kwg, 1, 1});
    c.push_back({1, kwg, 1});
  }
  return LegalUnique(p, c);
}

std::vector<LocalSize> MnnCandidates(const Problem& p) {
  std::array<std::vector<size_t>, 3> values{{{1}, {1}, {1}}};
  for (size_t d = 0; d < static_cast<size_t>(p.dims); ++d) {
    values[d].clear();
    for (size_t l = 1; l <= p.global[d] * 2 || l <= 4; l *= 2) values[d].push_back(l);
  }
  return Combine(p, values);
}

std::vector<LocalSize> ExhaustiveCandidates(const Problem& p) {
  std::array<std::vector<size_t>, 3> values{{{1}, {1}, {1}}};
  for (size_t d = 0; d < static_cast<size_t>(p.dims); ++d) {
    const size_t g = std::max<size_t>(p.global[d], 1);
    const size_t limit = std::min(p.max_item[d], p.max_group);
    std::set<size_t> v;
    for (size_t l = 1; l <= limit && l < 2 * g; l *= 2) v.insert(l);
    for (size_t l = 1; l <= std::min(limit, g); ++l) {
      if (g % l == 0) v.insert(l);
    }
    values[d].assign(v.begin(), v.end());
  }
  return Combine(p, values);
}

std::string ToString(const LocalSize& local, int dims) {
  std::string s;
  for (int d = 0; d < dims; ++d) {
    if (d) s += "x";
    s += std::to_string(local[static_cast<size_t>(d)]);
  }
  return s;
}

}  // namespace tessel::tuning
