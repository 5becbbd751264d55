#include "targets/c/op_calls.h"

namespace tessel::ctarget {

const std::vector<KernelUnit>& KernelUnits() {
  // kernels/*.c, embedded by CMake (CMakeLists.txt, c_kernel_units) in
  // dependency order.
  static const std::vector<KernelUnit> units = {
#include "c_kernel_units.inc"
  };
  return units;
}

}  // namespace tessel::ctarget
