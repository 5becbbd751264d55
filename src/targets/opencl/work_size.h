// Launch geometry: every kernel launch has a global size (1 to 3 dims, dim 0
// the fastest-moving, contiguous one) and a local size, either one the kernel
// requires (tiled kernels) or a free one: the default of tuning/space.h or
// one the tuner found.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace tessel::opencl {

struct LaunchGeometry {
  int dims = 1;
  std::array<size_t, 3> global{1, 1, 1};  // the real extent (items past it return)
  std::array<size_t, 3> local{0, 0, 0};   // all 0: free (tuning::DefaultLocal, the tuner)
  bool fixed_local() const { return local[0] != 0; }
};

// The global size rounded up to a multiple of the local size (OpenCL 1.2
// requires uniform work-groups).
std::array<size_t, 3> RoundedGlobal(const LaunchGeometry& g, const std::array<size_t, 3>& local);

}  // namespace tessel::opencl
