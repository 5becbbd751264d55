// Texture planning instances (memory/texture_plan.h) for property tests and
// the benchmark (the test-support library tessel_memory_testing: not in the
// product). Deterministic for a seed.
#pragma once

#include <cstdint>

#include "memory/texture_plan.h"

namespace tessel::memory {

// Tokens start at uniformly random steps of a schedule as long as the token
// count and live for a log-uniform number of steps. Their area is
// log-uniform in [min_area, max_area] and their aspect ratio (width over
// height) log-uniform in [1 / max_aspect, max_aspect], clipped to the
// limits. With num_kinds > 1, the last kind is "weight": read-only, every
// token of it live for the whole schedule.
struct RandomTextureOptions {
  int32_t num_tokens = 100;
  uint64_t seed = 1;
  int32_t num_kinds = 1;
  int64_t max_lifetime_steps = 16;
  int64_t min_area = 1;
  int64_t max_area = 1 << 16;
  double max_aspect = 8;
  int64_t max_width = TextureProblem::kMaxExtent;
  int64_t max_height = TextureProblem::kMaxExtent;
};

TextureProblem RandomTextureProblem(const RandomTextureOptions& options);

// The activations and weights of a convolutional network as the OpenCL
// target lays them out (ir/texture.h): a stem then `stages` stages, each
// halving the spatial size and multiplying the channels by 1.5 to 2, of
// `blocks` inverted-residual blocks (expand 1x1, depthwise 3x3, project
// 1x1, the block's input kept for the residual add). An NCHW4c activation
// [1, C, H, W] is W wide and ceil(C/4)*H tall, live from its producer to its
// last reader; OIHW4o weights [O, I, 3, 3] are ceil(I/4)*4*9 wide and
// ceil(O/4) tall, kind "weight". Sizes jitter with the seed.
struct CnnTextureOptions {
  uint64_t seed = 1;
  int64_t input_size = 224;
  int32_t stages = 4;
  int32_t blocks = 3;
};

TextureProblem CnnTextureProblem(const CnnTextureOptions& options);

// A problem whose optimum is known: `phases` phases in turn, each a random
// guillotine tiling of one width x height rectangle into about
// `tiles_per_phase` tokens, all live at the phase's middle step (from a
// random earlier step of the phase, to a random later one). The tiles of a
// phase fill the rectangle at that step, so the lower bound is width x
// height, and `witness` (every tile where the tiling cut it, in one image)
// reaches it: the optimum is width x height.
struct TiledTextureOptions {
  uint64_t seed = 1;
  int32_t phases = 4;
  int32_t tiles_per_phase = 8;
  int64_t width = 64;
  int64_t height = 64;
};

struct TiledTextureInstance {
  TextureProblem problem;
  TexturePlan witness;
};

TiledTextureInstance TiledTextureProblem(const TiledTextureOptions& options);

}  // namespace tessel::memory
