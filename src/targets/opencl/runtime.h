// The OpenCL device runtime: devices, one context and one in-order queue,
// programs built from source or from an on-disk binary cache.
//
//   TESSEL_ASSIGN_OR_RETURN(auto devices, ListDevices());      // tessel info
//   TESSEL_ASSIGN_OR_RETURN(auto rt, Runtime::Create("opencl:0", {.profiling = true}));
//   TESSEL_ASSIGN_OR_RETURN(cl_program p, rt->BuildProgram(source, "-cl-std=CL1.2"));
//
// Device specs: "" or "opencl" (the first GPU, else the first device),
// "opencl:N" (the N-th device of ListDevices), or a substring of a device's
// or platform's name ("pthread", "H100"), case-insensitive.
//
// The program cache (RuntimeOptions::cache_dir; `tessel` uses
// $TESSEL_CACHE_DIR, else $XDG_CACHE_HOME/tessel, else ~/.cache/tessel, with
// "opencl/" below it) holds one file per key: device
// name, driver version, source hash and build options. A file that is short,
// of another format or whose checksum does not match is ignored and rebuilt;
// a binary the driver refuses is rebuilt from source too.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "targets/opencl/cl_include.h"

namespace tessel::opencl {

struct DeviceInfo {
  int index = 0;  // as "opencl:N"
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  std::string platform_name;
  std::string name;
  std::string vendor;
  std::string driver_version;
  std::string device_version;  // "OpenCL 3.0 CUDA"
  bool is_gpu = false;
  int64_t compute_units = 0;
  int64_t max_clock_mhz = 0;
  int64_t global_mem_bytes = 0;
  int64_t global_mem_cache_bytes = 0;
  int64_t local_mem_bytes = 0;
  int64_t max_alloc_bytes = 0;
  int64_t max_work_group_size = 0;
  int64_t max_work_item_sizes[3] = {0, 0, 0};
  int64_t mem_base_addr_align_bytes = 0;  // CL_DEVICE_MEM_BASE_ADDR_ALIGN / 8
  bool image_support = false;             // CL_DEVICE_IMAGE_SUPPORT
  int64_t image2d_max_width = 0;          // texels
  int64_t image2d_max_height = 0;
};

// Every device of every platform; an empty list when no platform is installed
// (an ICD loader without drivers reports CL_PLATFORM_NOT_FOUND_KHR).
StatusOr<std::vector<DeviceInfo>> ListDevices();

// One line per device and its limits, for `tessel info`.
std::string DescribeDevices(const std::vector<DeviceInfo>& devices);

// Picks a device by spec (see above). Fails naming the spec and the devices.
StatusOr<DeviceInfo> SelectDevice(const std::vector<DeviceInfo>& devices, const std::string& spec);

struct RuntimeOptions {
  bool profiling = false;  // the queue records event timings (--profile)
  // Where built programs are cached; empty: nowhere.
  std::filesystem::path cache_dir;
};

class Runtime {
 public:
  static StatusOr<std::unique_ptr<Runtime>> Create(const std::string& device_spec,
                                                   const RuntimeOptions& options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const DeviceInfo& device() const { return device_; }
  cl_context context() const { return context_; }
  cl_command_queue queue() const { return queue_; }
  bool profiling() const { return options_.profiling; }
  const std::filesystem::path& cache_dir() const { return cache_dir_; }

  // Builds `source` with `options` for the device, through the binary cache
  // (and once per runtime: a second call returns the same program). The
  // runtime owns the program. A build failure returns the build log.
  StatusOr<cl_program> BuildProgram(const std::string& source, const std::string& options);
  // Whether the last BuildProgram loaded its binary from the cache.
  bool last_build_from_cache() const { return last_from_cache_; }

  // A buffer of `size_bytes` (at least 1); the runtime owns it.
  StatusOr<cl_mem> Allocate(int64_t size_bytes, cl_mem_flags flags = CL_MEM_READ_WRITE);
  // An RGBA float image2d of width x height texels (uninitialized); the
  // runtime owns it. Unsupported without image support; ResourceExhausted,
  // naming the extents and the device's, when it does not fit.
  StatusOr<cl_mem> AllocateImage(int64_t width, int64_t height,
                                 cl_mem_flags flags = CL_MEM_READ_WRITE);

 private:
  Runtime() = default;
  std::string CacheKey(const std::string& source, const std::string& options) const;
  std::filesystem::path CachePath(const std::string& key, const std::string& source) const;

  DeviceInfo device_;
  RuntimeOptions options_;
  std::filesystem::path cache_dir_;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  std::vector<cl_program> programs_;
  std::map<std::string, cl_program> built_;  // by cache path: built once per process
  std::vector<cl_mem> buffers_;
  bool last_from_cache_ = false;
};

}  // namespace tessel::opencl
