// Whether the OpenCL target can run here, for the end-to-end suites: a
// reason to skip (said, and counted as skipped), or empty.
#pragma once

#include <filesystem>
#include <string>

#ifdef TESSEL_WITH_OPENCL
#include "targets/opencl/runtime.h"
#endif

namespace tessel::testing {

inline std::string OpenClSkipReason() {
#ifndef TESSEL_WITH_OPENCL
  return "built without OpenCL (TESSEL_WITH_OPENCL=OFF)";
#elif defined(TESSEL_SANITIZED_BUILD)
  return "sanitizer build: PoCL JIT-compiles with LLVM in process and reports ~1.4 MB of leaks to "
         "LeakSanitizer, so the OpenCL device tests do not run under ASan/UBSan";
#else
  auto devices = opencl::ListDevices();
  if (!devices.ok()) return "no usable OpenCL platform: " + devices.status().message();
  if (devices->empty()) return "no OpenCL platform or device installed";
  return "";
#endif
}

// The program cache of these tests lives in the build tree.
inline std::string CacheEnv() {
  return "TESSEL_CACHE_DIR=" +
         (std::filesystem::path(TESSEL_BINARY).parent_path() / "opencl-cache").string() + " ";
}

}  // namespace tessel::testing
