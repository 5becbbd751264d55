// MemoryLayout: where every buffer of a compiled graph lives, as the
// plan-memory stage (model/plan_memory.h) decided it.
//
//   pool 0 "workspace"  [ activations and scratch, reused over time ]
//   pool 1 "constants"  [ weights, read-only ]
//
// A target allocates one arena per pool, once, and binds every value and
// every kernel's scratch buffer at its offset; values in a texture scope lie
// in 2D images instead (`textures`), planned in the same run. Values not in any pool belong
// to the caller (graph inputs and outputs, unless they were planned too).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::ir {

struct MemoryPool {
  std::string name;
  int64_t size_bytes = 0;  // what the plan uses
  bool read_only = false;  // holds constants only
};

struct BufferPlacement {
  int32_t pool = -1;  // -1: in no pool (the caller's memory)
  int64_t offset_bytes = 0;

  bool planned() const { return pool >= 0; }
};

// A 2D image of RGBA float texels that values in a texture scope share
// over time (ir/texture.h): planned in 2D beside the byte pools.
struct TexturePool {
  std::string name;        // "texture0", "weight3"
  int64_t width = 0;       // texels
  int64_t height = 0;      // texels
  bool read_only = false;  // holds constants (texture:weight) only
};

// Where a texture value lives: a region of a texture pool whose corner is
// (x, y), of the value's extent (ir::TextureExtentOf).
struct TexturePlacement {
  int32_t pool = -1;  // index in MemoryLayout::textures; -1: not a texture
  int64_t x = 0, y = 0;

  bool planned() const { return pool >= 0; }
};

struct MemoryLayout {
  std::string algorithm;  // the planner that made it
  std::vector<MemoryPool> pools;
  std::vector<BufferPlacement> values;  // by value id
  // Values in scope texture or texture:weight live in images, not pools:
  // `textures` are the images, `texture_values` (by value id, or empty when
  // no value is a texture) where each such value lies.
  std::vector<TexturePool> textures;
  std::vector<TexturePlacement> texture_values;
  std::vector<std::vector<BufferPlacement>> scratch;  // by node index, one per declared need
  // By node index: the input whose memory output 0 reuses, or -1.
  std::vector<int32_t> in_place;

  bool empty() const { return pools.empty(); }
};

}  // namespace tessel::ir
