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
//
// Command buffers: where the device offers cl_khr_command_buffer at a
// version whose entry points tessel calls correctly, and the queue suits
// it, command_buffers() gives those entry points (the executor records a
// model's launches once and replays them); otherwise it is null, and
// command_buffer_support() says why.
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
  // cl_khr_command_buffer: whether CL_DEVICE_EXTENSIONS lists it, and its
  // version (CL_DEVICE_EXTENSIONS_WITH_VERSION, packed as CL_MAKE_VERSION);
  // 0 when the device cannot say (before OpenCL 3.0).
  bool command_buffer = false;
  uint32_t command_buffer_version = 0;
};

// Whether cl_khr_command_buffer at `version` (CL_MAKE_VERSION packing; 0:
// unknown) has the entry points CommandBufferApi declares. The provisional
// extension changed signatures between versions (0.9.5 gave the copy, fill
// and barrier commands a properties parameter), but the five tessel calls
// are the same in every version from 0.9.0 to 1.0: 0.9.x and 1.x match, and
// so does an unknown version, since every published one does. Any other
// (an incompatible 2.0) does not.
bool CommandBufferAbiMatches(uint32_t version);
// "0.9.5"; "unknown" for 0.
std::string CommandBufferVersionName(uint32_t version);

// The cl_khr_command_buffer entry points the executor calls, loaded with
// clGetExtensionFunctionAddressForPlatform. Declared here rather than taken
// from CL/cl_ext.h, whose later versions hide the extension behind
// CL_ENABLE_BETA_EXTENSIONS and rename its types; the signatures are the
// ABI CommandBufferAbiMatches accepts (cl_command_properties_khr and
// cl_ndrange_kernel_command_properties_khr are both cl_properties, a
// cl_ulong; mutable handles, unused, are pointers).
struct CommandBufferObject;  // _cl_command_buffer_khr
struct CommandBufferApi {
  using Handle = CommandBufferObject*;  // cl_command_buffer_khr
  using SyncPoint = cl_uint;            // cl_sync_point_khr
  using Properties = cl_ulong;          // cl_properties
  Handle(CL_API_CALL* create)(cl_uint num_queues, const cl_command_queue* queues,
                              const Properties* properties, cl_int* errcode_ret) = nullptr;
  cl_int(CL_API_CALL* nd_range_kernel)(Handle command_buffer, cl_command_queue command_queue,
                                       const Properties* properties, cl_kernel kernel,
                                       cl_uint work_dim, const size_t* global_work_offset,
                                       const size_t* global_work_size,
                                       const size_t* local_work_size,
                                       cl_uint num_sync_points_in_wait_list,
                                       const SyncPoint* sync_point_wait_list, SyncPoint* sync_point,
                                       void** mutable_handle) = nullptr;
  cl_int(CL_API_CALL* finalize)(Handle command_buffer) = nullptr;
  cl_int(CL_API_CALL* enqueue)(cl_uint num_queues, cl_command_queue* queues, Handle command_buffer,
                               cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                               cl_event* event) = nullptr;
  cl_int(CL_API_CALL* release)(Handle command_buffer) = nullptr;
};

// Why a runtime has command buffers or not.
enum class CommandBufferSupport {
  kAvailable,
  kAbsent,       // the device does not list cl_khr_command_buffer
  kVersion,      // it does, at a version whose entry points differ (CommandBufferAbiMatches)
  kQueue,        // the queue lacks a property the extension requires, or has one it refuses
  kEntryPoints,  // the platform does not give every entry point
};
// For reports: "cl_khr_command_buffer 0.9.5", "no cl_khr_command_buffer", ...
std::string DescribeCommandBufferSupport(CommandBufferSupport support, uint32_t version);

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
  // cl_khr_command_buffer's entry points, usable with queue(); null when
  // command_buffer_support() is not kAvailable.
  const CommandBufferApi* command_buffers() const {
    return command_buffer_support_ == CommandBufferSupport::kAvailable ? &command_buffer_api_
                                                                       : nullptr;
  }
  CommandBufferSupport command_buffer_support() const { return command_buffer_support_; }

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
  // Sets command_buffer_support_ (and the entry points) for the device and
  // a queue of `queue_properties`.
  void DetectCommandBuffers(cl_command_queue_properties queue_properties);

  DeviceInfo device_;
  RuntimeOptions options_;
  std::filesystem::path cache_dir_;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  std::vector<cl_program> programs_;
  std::map<std::string, cl_program> built_;  // by cache path: built once per process
  std::vector<cl_mem> buffers_;
  bool last_from_cache_ = false;
  CommandBufferApi command_buffer_api_;
  CommandBufferSupport command_buffer_support_ = CommandBufferSupport::kAbsent;
};

}  // namespace tessel::opencl
