#include "memory/testing/random_instance.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace tessel::memory {

Problem RandomInstance(const RandomInstanceOptions& options) {
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto log_uniform = [&](int64_t lo, int64_t hi) {
    const double l = std::log(static_cast<double>(lo)), h = std::log(static_cast<double>(hi) + 1);
    return std::min(hi, static_cast<int64_t>(std::exp(l + (h - l) * unit(rng))));
  };
  Problem problem;
  problem.pools.push_back({.name = "memory"});
  const int64_t horizon = std::max<int32_t>(options.num_buffers, 1);
  for (int32_t i = 0; i < options.num_buffers; ++i) {
    BufferInfo b;
    b.name = "b" + std::to_string(i);
    b.size_bytes = log_uniform(options.min_size_bytes, options.max_size_bytes);
    b.alignment = options.alignment;
    const int64_t start = static_cast<int64_t>(unit(rng) * static_cast<double>(horizon));
    b.live = {start, start + log_uniform(1, options.max_lifetime_steps)};
    b.pool_candidates = {0};
    problem.buffers.push_back(std::move(b));
  }
  return problem;
}

namespace {

struct Piece {
  int64_t first_step, end_step;  // [first_step, end_step)
  int64_t low_bytes, high_bytes;
};

// Splits `r` into about n pieces; cuts fall on whole steps and whole units.
void Partition(std::mt19937_64& rng, const Piece& r, int64_t n, int64_t unit,
               std::vector<Piece>& out) {
  const bool can_cut_time = r.end_step - r.first_step >= 2;
  const bool can_cut_size = r.high_bytes - r.low_bytes >= 2 * unit;
  if (n <= 1 || (!can_cut_time && !can_cut_size)) {
    out.push_back(r);
    return;
  }
  const bool cut_time = can_cut_time && (!can_cut_size || rng() % 2 == 0);
  const int64_t lo = cut_time ? r.first_step : r.low_bytes / unit;
  const int64_t hi = cut_time ? r.end_step : r.high_bytes / unit;
  const int64_t at = lo + 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo - 1));
  const int64_t k =
      std::clamp<int64_t>(std::llround(static_cast<double>(n) * static_cast<double>(at - lo) /
                                       static_cast<double>(hi - lo)),
                          1, n - 1);
  if (cut_time) {
    Partition(rng, {r.first_step, at, r.low_bytes, r.high_bytes}, k, unit, out);
    Partition(rng, {at, r.end_step, r.low_bytes, r.high_bytes}, n - k, unit, out);
  } else {
    Partition(rng, {r.first_step, r.end_step, r.low_bytes, at * unit}, k, unit, out);
    Partition(rng, {r.first_step, r.end_step, at * unit, r.high_bytes}, n - k, unit, out);
  }
}

}  // namespace

Problem GuillotineInstance(const GuillotineInstanceOptions& options) {
  std::mt19937_64 rng(options.seed);
  std::vector<Piece> pieces;
  Partition(rng, {0, options.steps, 0, options.capacity_bytes}, options.num_buffers,
            options.unit_bytes, pieces);
  std::shuffle(pieces.begin(), pieces.end(), rng);
  Problem problem;
  problem.pools.push_back({.name = "memory"});
  for (size_t i = 0; i < pieces.size(); ++i) {
    BufferInfo b;
    b.name = "b" + std::to_string(i);
    b.size_bytes = pieces[i].high_bytes - pieces[i].low_bytes;
    b.alignment = 1;
    b.live = {pieces[i].first_step, pieces[i].end_step};
    b.pool_candidates = {0};
    problem.buffers.push_back(std::move(b));
  }
  return problem;
}

}  // namespace tessel::memory
