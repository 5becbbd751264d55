// MemoryLayout: where every buffer of a compiled graph lives, as the
// plan-memory stage (model/plan_memory.h) decided it.
//
//   pool 0 "workspace"  [ activations and scratch, reused over time ]
//   pool 1 "constants"  [ weights, read-only ]
//
// A target allocates one arena per pool, once, and binds every value and
// every kernel's scratch buffer at its offset. Values not in any pool belong
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

struct MemoryLayout {
  std::string algorithm;  // the planner that made it
  std::vector<MemoryPool> pools;
  std::vector<BufferPlacement> values;                // by value id
  std::vector<std::vector<BufferPlacement>> scratch;  // by node index, one per declared need
  // By node index: the input whose memory output 0 reuses, or -1.
  std::vector<int32_t> in_place;

  bool empty() const { return pools.empty(); }
};

}  // namespace tessel::ir
