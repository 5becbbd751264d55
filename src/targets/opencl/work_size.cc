#include "targets/opencl/work_size.h"

#include <algorithm>

namespace tessel::opencl {

std::array<size_t, 3> RoundedGlobal(const LaunchGeometry& g, const std::array<size_t, 3>& local) {
  std::array<size_t, 3> out{1, 1, 1};
  for (int d = 0; d < g.dims; ++d) {
    const size_t l = std::max<size_t>(local[static_cast<size_t>(d)], 1);
    out[static_cast<size_t>(d)] = (g.global[static_cast<size_t>(d)] + l - 1) / l * l;
  }
  return out;
}

}  // namespace tessel::opencl
