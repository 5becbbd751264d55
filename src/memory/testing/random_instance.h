// Random planning instances, for property tests and the benchmark (the
// test-support library tessel_memory_testing: not in the product).
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

// A random guillotine partition of the rectangle [0, steps) x [0, capacity):
// cut in time or in address at a random multiple of the unit, recursively,
// until about `num_buffers` pieces (the construction of
// ../shared/planning/make_instances.py, with this library's random numbers).
// Each piece is a buffer live over its steps and as large as its height. The
// live sizes add up to exactly `capacity_bytes` at every step, so the lower
// bound is the capacity and only a zero-waste plan reaches it. Buffers are
// shuffled; alignment 1; one unbounded pool, "memory".
struct GuillotineInstanceOptions {
  int32_t num_buffers = 1000;
  uint64_t seed = 1;
  int64_t steps = 1024;
  int64_t capacity_bytes = int64_t{1} << 20;
  int64_t unit_bytes = 1024;
};

Problem GuillotineInstance(const GuillotineInstanceOptions& options);

}  // namespace tessel::memory
