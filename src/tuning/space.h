// The search space of one launch: which local sizes are legal, the untuned
// default, and the candidate lists of the strategies that walk lists (MACE's,
// MNN's, and every legal size for the exhaustive oracle).
//
//   Problem p{.dims = 3, .global = {56, 56, 16}, .max_group = 1024, ...};
//   LocalSize d = DefaultLocal(p);                    // no launch
//   for (const LocalSize& l : ExhaustiveCandidates(p)) ...   // all legal ones
//
// Dimension 0 is the fastest-moving, contiguous one (coalesced accesses);
// sizes past `dims` are 1.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tessel::tuning {

using LocalSize = std::array<size_t, 3>;

// What the search knows of one launch and the device that runs it.
struct Problem {
  int dims = 1;                             // 1 to 3
  std::array<size_t, 3> global{1, 1, 1};    // the real extent, unrounded
  size_t max_group = 1;                     // CL_KERNEL_WORK_GROUP_SIZE
  std::array<size_t, 3> max_item{1, 1, 1};  // CL_DEVICE_MAX_WORK_ITEM_SIZES
  size_t preferred_multiple = 1;            // CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE
  int64_t compute_units = 1;                // CL_DEVICE_MAX_COMPUTE_UNITS
  int64_t global_mem_cache_bytes = 0;       // CL_DEVICE_GLOBAL_MEM_CACHE_SIZE
};

// Whether the device can launch `local`: every size at least 1 and within
// its dimension's limit (1 past dims), their product within max_group.
bool IsLegal(const Problem& p, const LocalSize& local);

// Items of the launch once the global size is rounded up to `local`, over
// the items it needs: 1 when every work-group is full.
double Waste(const Problem& p, const LocalSize& local);
// Work-groups of the launch.
size_t Groups(const Problem& p, const LocalSize& local);

// The untuned default, after MACE's Default3DLocalWS: a budget of
// max_group items (capped at 256 so that small launches still spread over
// the compute units), given first to dim 0, then to dims 1 and 2 up to
// `base` each, where base = global memory cache / 16 KiB (MACE's unit of
// cache per work-group row); each size at most its global size. A launch
// with fewer groups than compute units then gets smaller groups (the
// largest dimension halved, down to one item) until every unit has one.
LocalSize DefaultLocal(const Problem& p);

// MACE's candidates (TuningOrRun3DKernel's 30 for 3 dims, TuningOrRun2DKernel's
// 10 for 1 and 2), the legal ones, deduplicated, in the seed's order.
std::vector<LocalSize> MaceCandidates(const Problem& p);
// MNN's sweep: every dimension over the powers of two up to twice its global
// size (at least 4), every legal combination.
std::vector<LocalSize> MnnCandidates(const Problem& p);
// Every legal local size whose every dimension is a divisor of its global
// size or a power of two below twice it: the exhaustive oracle's space.
std::vector<LocalSize> ExhaustiveCandidates(const Problem& p);

// "8x8x4" (dims sizes).
std::string ToString(const LocalSize& local, int dims);

}  // namespace tessel::tuning
