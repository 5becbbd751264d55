// Random planning instances, for property tests and the benchmark.
//
// Buffers start at uniformly random steps of a schedule as long as the buffer
// count, live for a log-uniform number of steps and have log-uniform sizes,
// which gives the mix of short-lived large and long-lived small buffers that
// models have. One unbounded pool, "memory". Deterministic for a seed.
#pragma once

#include <cstdint>

#include "memory/problem.h"

namespace tessel::memory {

struct RandomInstanceOptions {
  int32_t num_buffers = 1000;
  uint64_t seed = 1;
  int64_t max_lifetime_steps = 64;
  int64_t min_size_bytes = 64;
  int64_t max_size_bytes = int64_t{1} << 20;
  int64_t alignment = 1;
};

Problem RandomInstance(const RandomInstanceOptions& options);

}  // namespace tessel::memory
