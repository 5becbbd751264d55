// For the OpenCL unit tests: whether a device can run them here, or why
// not (said by the test, and counted as skipped).
#pragma once

#include <string>
#include <vector>

#include "targets/opencl/runtime.h"

namespace tessel::opencl {

inline std::string DeviceTestSkipReason() {
#ifdef TESSEL_SANITIZED_BUILD
  return "sanitizer build: PoCL JIT-compiles with LLVM in process and reports ~1.4 MB of leaks to "
         "LeakSanitizer, so the OpenCL device tests do not run under ASan/UBSan";
#else
  StatusOr<std::vector<DeviceInfo> > devices = ListDevices();
  if (!devices.ok()) return "no usable OpenCL platform: " + devices.status().message();
  if (devices->empty()) return "no OpenCL platform or device installed";
  return "";
#endif
}

}  // namespace tessel::opencl
