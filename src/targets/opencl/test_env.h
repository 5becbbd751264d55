// For the OpenCL unit tests: whether a device can run them here, or why
// not (said by the test, and counted as skipped).
#pragma once

#include <gtest/gtest.h>

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

// A suite of device tests sharing one runtime (on the first device, its
// programs cached in the tests' folder), or skipping every test, saying
// why, where none can run.
class OpenClDeviceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    skip_reason_ = new std::string(DeviceTestSkipReason());
    if (!skip_reason_->empty()) return;
    RuntimeOptions options;
    options.cache_dir = TESSEL_TEST_CACHE_DIR;
    auto rt = Runtime::Create("", options);
    if (!rt.ok()) {
      *skip_reason_ = "OpenCL runtime unavailable: " + rt.status().message();
      return;
    }
    runtime_ = rt->release();
  }
  static void TearDownTestSuite() {
    delete runtime_;
    runtime_ = nullptr;
    delete skip_reason_;
    skip_reason_ = nullptr;
  }
  void SetUp() override {
    if (!skip_reason_->empty()) GTEST_SKIP() << *skip_reason_;
  }

  static inline Runtime* runtime_ = nullptr;
  static inline std::string* skip_reason_ = nullptr;
};

}  // namespace tessel::opencl
