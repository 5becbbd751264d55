#include "memory/random_instance.h"

#include <cmath>
#include <random>

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

}  // namespace tessel::memory
