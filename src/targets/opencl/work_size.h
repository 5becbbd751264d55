// Launch geometry: every kernel launch has a global size (1 to 3 dims, dim 0
// the fastest-moving, contiguous one) and a local size, either one the kernel
// requires (tiled kernels) or the default below.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace tessel::opencl {

struct LaunchGeometry {
  int dims = 1;
  std::array<size_t, 3> global{1, 1, 1};  // the real extent (items past it return)
  std::array<size_t, 3> local{0, 0, 0};   // all 0: choose with DefaultLocalSize
  bool fixed_local() const { return local[0] != 0; }
};

// The default local size, after MACE's Default3DLocalWS: a budget of
// `kernel_max_work_group_size` items (CL_KERNEL_WORK_GROUP_SIZE, capped at
// 256 so that small launches still spread over the compute units), given
// first to dim 0 (contiguous memory: coalesced accesses), then to dim 1 and
// dim 2 up to `base` each, where base = global memory cache / 16 KiB (MACE's
// unit of cache per work-group row), at least 1. Each local size is at most
// its global size.
std::array<size_t, 3> DefaultLocalSize(const LaunchGeometry& g, int64_t kernel_max_work_group_size,
                                       int64_t global_mem_cache_bytes);

// The global size rounded up to a multiple of the local size (OpenCL 1.2
// requires uniform work-groups).
std::array<size_t, 3> RoundedGlobal(const LaunchGeometry& g, const std::array<size_t, 3>& local);

}  // namespace tessel::opencl
