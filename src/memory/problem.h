// The memory-planning problem and its answer, independent of any graph.
//
//   Problem { buffers: BufferInfo[], pools: PoolInfo[] }
//        │   an algorithm (planner.h) gives every buffer a pool and an offset
//        ▼
//   Plan { placements: (pool, offset_bytes) per buffer, pool_used_bytes }
//
// Two buffers conflict (may not share bytes of the same pool) when their
// lifespans overlap or when either lists the other in `conflicts`. Lifespans
// are the common case (liveness over a schedule) and let the lower bound and
// the exact search reason about time; `conflicts` carries liveness that is not
// one interval. A buffer may live in any of its candidate pools, listed from
// the most wanted (the fastest) to the least, under each pool's limit (the
// RFC's fallback); where a buffer has a choice, the planner picks pools that
// lower the later pools' peaks (pool_assignment.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace tessel::memory {

using BufferIndex = int32_t;
using PoolIndex = int32_t;

// The half-open interval of schedule steps [first_use, last_use) during which
// a buffer holds data. An empty interval (first_use >= last_use) means the
// buffer has no conflicts through time, only those listed explicitly.
struct Lifespan {
  int64_t first_use = 0;
  int64_t last_use = 0;

  bool empty() const { return first_use >= last_use; }
  bool Overlaps(const Lifespan& o) const {
    return !empty() && !o.empty() && first_use < o.last_use && o.first_use < last_use;
  }
};

struct BufferInfo {
  std::string name;
  int64_t size_bytes = 0;
  // offset_bytes % alignment == 0; a power of two.
  int64_t alignment = 1;
  Lifespan live;
  // Further conflicts, by buffer index (either side may list a pair).
  std::vector<BufferIndex> conflicts;
  // Pools this buffer may live in, preferred first. Never empty.
  std::vector<PoolIndex> pool_candidates;
  // Pinned by the caller: the buffer lives in its first candidate pool at
  // this offset, and every algorithm plans around it.
  std::optional<int64_t> fixed_offset_bytes;
};

struct PoolInfo {
  std::string name;
  // No buffer may end past this many bytes; none means unbounded.
  std::optional<int64_t> size_limit_bytes;
  // Holds constants only; targets emit it as read-only data.
  bool read_only = false;
  // Targets that can reach this pool (informational: "cpu", "c", ...).
  std::vector<std::string> targets;
};

struct Problem {
  std::vector<BufferInfo> buffers;
  std::vector<PoolInfo> pools;
};

struct Placement {
  PoolIndex pool = -1;
  int64_t offset_bytes = 0;
};

struct Plan {
  std::string algorithm;
  std::vector<Placement> placements;     // by buffer index
  std::vector<int64_t> pool_used_bytes;  // by pool: the largest offset + size, 0 if empty
  // Every pool's used size is the least possible for the buffers the plan
  // assigned to it (reached the lower bound or exhausted the search).
  bool proven_optimal = false;
  double planning_ms = 0;

  int64_t total_used_bytes() const;
};

// Checks what algorithms rely on: sizes >= 0, alignments powers of two,
// candidate and conflict indices in range, at least one candidate each,
// fixed offsets aligned. Names the buffer.
Status ValidateProblem(const Problem& problem);

inline int64_t AlignUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// The lowest offset, a multiple of `alignment`, where `size` bytes overlap
// none of the byte ranges `taken` ([begin, end) each), which it sorts.
int64_t LowestFreeOffset(std::vector<std::pair<int64_t, int64_t>>& taken, int64_t size,
                         int64_t alignment);

// The used size of every pool under `placements` (largest offset + size).
std::vector<int64_t> PoolUsedBytes(const Problem& problem,
                                   const std::vector<Placement>& placements);

// "256.0 KiB (262144 bytes)"-style text for messages; exact bytes last.
std::string DescribeBytes(int64_t bytes);

}  // namespace tessel::memory
