// Tight planning instances made by construction, with a packing known to fit
// (the test-support library tessel_memory_testing: not in the product).
//
// The family of MiniMalloc's "challenging" benchmarks: a few hundred buffers,
// sizes from 1 KiB to about 880 KiB, 1 MiB of memory with little or no slack,
// lifetimes from a model-like schedule. The instance is cut out of the
// rectangle [0, steps) x [0, capacity_bytes) by a skyline process over time:
//
//   address ^   ┌────┬──────────┐       at every step: the buffers whose
//           │   │ b3 │    b5    │       lifetime ends free their bytes; new
//           │   ├────┴──┬───┬───┤       buffers, starting at this step, go to
//           │   │  b1   │b4 │   │       either end of a free gap until the live
//           │   ├───────┴─┬─┴───┤       bytes reach the step's fill target
//           │   │   b0    │ b2  │       (the whole capacity at peak steps, a
//           └───┴─────────┴─────┴──>    random share of it between them)
//                                time
//
// Sizes are drawn log-uniform and go to a random gap that holds them, else to
// the widest gap, clipped to it; between peaks the last buffer of a step
// takes about what the target still misses. Lifetimes are mostly a few steps
// (activations), some many steps (skip connections). Every size and
// constructed offset is a multiple of `unit_bytes`, and no gap smaller than
// `min_size_bytes` is ever left, so a peak step can always be filled.
//
// The placements form a valid packing by construction, and `capacity_bytes`
// is its highest end, so the instance is known to fit there. Once a peak step
// has been filled (the first comes after num_buffers / (peaks + 1) buffers)
// the live bytes at that step equal the capacity: the lower bound
// (lower_bound.h) is the capacity, and so is the optimum. Deterministic for a
// seed; one unbounded pool, "memory"; alignment 1.
//
// More peaks, or fuller steps between them, make an instance harder to pack
// at its capacity; bench/planner/README.md says how today's planners fare on
// the defaults.
#pragma once

#include <cstdint>
#include <vector>

#include "memory/problem.h"

namespace tessel::memory {

struct TightInstanceOptions {
  // Exactly this many buffers, named "b0", "b1", ... in order of their start.
  int32_t num_buffers = 300;
  uint64_t seed = 1;
  // The height of the rectangle; the result's capacity is at most this.
  int64_t capacity_bytes = int64_t{1} << 20;
  int64_t min_size_bytes = 1024;
  int64_t max_size_bytes = 880 * 1024;
  // Sizes, and the constructed offsets, are multiples of this.
  int64_t unit_bytes = 1024;
  // Short-lived buffers live 1 .. max_short_steps steps; a share
  // long_lived_share of the buffers lives longer, log-uniform up to
  // max_long_steps.
  int64_t max_short_steps = 4;
  double long_lived_share = 0.15;
  int64_t max_long_steps = 40;
  // Steps that fill every gap, spread evenly over the buffers: peak k comes at
  // the first step once k * num_buffers / (peaks + 1) buffers exist. The other
  // steps fill up to a share of the capacity drawn uniformly from
  // [min_fill, max_fill].
  int32_t peaks = 8;
  double min_fill = 0.50;
  double max_fill = 0.85;
};

struct TightInstance {
  Problem problem;
  // The packing of the construction, by buffer index, in pool 0.
  std::vector<Placement> placements;
  // Its highest end: the instance fits in this many bytes.
  int64_t capacity_bytes = 0;
};

TightInstance MakeTightInstance(const TightInstanceOptions& options);

}  // namespace tessel::memory
