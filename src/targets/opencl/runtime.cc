#include "targets/opencl/runtime.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <type_traits>
#include <vector>

#include "core/hash.h"
#include "core/sealed_file.h"
#include "targets/opencl/cl_error.h"

namespace tessel::opencl {

namespace {

// A program binary larger than this in the cache is not read.
constexpr int64_t kMaxCachedProgramBytes = int64_t{1} << 31;

// OpenCL 3.0 and cl_khr_command_buffer names the 1.2 headers (and the
// older extension headers) lack.
constexpr cl_device_info kDeviceExtensionsWithVersion = 0x1060;
struct NameVersion {  // cl_name_version
  cl_uint version;
  char name[64];
};
constexpr char kCommandBufferExtension[] = "cl_khr_command_buffer";
constexpr cl_device_info kCommandBufferRequiredQueueProperties = 0x12AA;
constexpr cl_device_info kCommandBufferSupportedQueueProperties = 0x129A;  // since 0.9.6

std::string PlatformString(cl_platform_id p, cl_platform_info what) {
  size_t size = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string s(size, '\0');
  if (clGetPlatformInfo(p, what, size, s.data(), nullptr) != CL_SUCCESS) return "";
  s.resize(std::strlen(s.c_str()));
  return s;
}

std::string DeviceString(cl_device_id d, cl_device_info what) {
  size_t size = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string s(size, '\0');
  if (clGetDeviceInfo(d, what, size, s.data(), nullptr) != CL_SUCCESS) return "";
  s.resize(std::strlen(s.c_str()));
  return s;
}

template <typename T>
int64_t DeviceNumber(cl_device_id d, cl_device_info what) {
  T v{};
  if (clGetDeviceInfo(d, what, sizeof v, &v, nullptr) != CL_SUCCESS) return 0;
  return static_cast<int64_t>(v);
}

// Whether the space-separated `list` holds `name` as a whole word.
bool ListsWord(const std::string& list, const std::string& name) {
  std::istringstream words(list);
  std::string w;
  while (words >> w) {
    if (w == name) return true;
  }
  return false;
}

// The version the device gives `extension`; 0 when it cannot say (before
// OpenCL 3.0, or not listed there).
uint32_t ExtensionVersion(cl_device_id d, const char* extension) {
  size_t size = 0;
  if (clGetDeviceInfo(d, kDeviceExtensionsWithVersion, 0, nullptr, &size) != CL_SUCCESS) return 0;
  std::vector<NameVersion> list(size / sizeof(NameVersion));
  if (list.empty() ||
      clGetDeviceInfo(d, kDeviceExtensionsWithVersion, list.size() * sizeof(NameVersion),
                      list.data(), nullptr) != CL_SUCCESS) {
    return 0;
  }
  for (const NameVersion& nv : list) {
    if (std::strncmp(nv.name, extension, sizeof nv.name) == 0) return nv.version;
  }
  return 0;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string BuildLog(cl_program program, cl_device_id device) {
  size_t size = 0;
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string log(size, '\0');
  if (size) clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  log.resize(std::strlen(log.c_str()));
  if (log.size() > 4000) log = log.substr(0, 4000) + "\n...";
  return log;
}

}  // namespace

bool CommandBufferAbiMatches(uint32_t version) {
  if (version == 0) return true;
  const uint32_t major = version >> 22, minor = (version >> 12) & 0x3ff;
  return (major == 0 && minor == 9) || major == 1;
}

std::string CommandBufferVersionName(uint32_t version) {
  if (version == 0) return "unknown";
  return std::to_string(version >> 22) + "." + std::to_string((version >> 12) & 0x3ff) + "." +
         std::to_string(version & 0xfff);
}

std::string DescribeCommandBufferSupport(CommandBufferSupport support, uint32_t version) {
  const std::string ext = std::string(kCommandBufferExtension) + " " +
                          (version ? CommandBufferVersionName(version) : "(version unknown)");
  switch (support) {
    case CommandBufferSupport::kAvailable:
      return ext;
    case CommandBufferSupport::kAbsent:
      return std::string("no ") + kCommandBufferExtension;
    case CommandBufferSupport::kVersion:
      return ext + ", a version whose entry points tessel does not call";
    case CommandBufferSupport::kQueue:
      return ext + ", which does not take this queue's properties";
    case CommandBufferSupport::kEntryPoints:
      return ext + ", its entry points missing from the platform";
  }
  return ext;
}

StatusOr<std::vector<DeviceInfo>> ListDevices() {
  cl_uint num_platforms = 0;
  const cl_int rc = clGetPlatformIDs(0, nullptr, &num_platforms);
  if (rc == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (rc == CL_SUCCESS && num_platforms == 0))
    return std::vector<DeviceInfo>{};
  TESSEL_CL_RETURN_IF_ERROR(rc, "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(num_platforms);
  TESSEL_CL_RETURN_IF_ERROR(clGetPlatformIDs(num_platforms, platforms.data(), nullptr),
                            "clGetPlatformIDs");
  std::vector<DeviceInfo> devices;
  for (cl_platform_id p : platforms) {
    cl_uint n = 0;
    const cl_int drc = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
    if (drc == CL_DEVICE_NOT_FOUND || n == 0) continue;
    TESSEL_CL_RETURN_IF_ERROR(drc, "clGetDeviceIDs");
    std::vector<cl_device_id> ids(n);
    TESSEL_CL_RETURN_IF_ERROR(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr),
                              "clGetDeviceIDs");
    for (cl_device_id d : ids) {
      DeviceInfo info;
      info.index = static_cast<int>(devices.size());
      info.platform = p;
      info.device = d;
      info.platform_name = PlatformString(p, CL_PLATFORM_NAME);
      info.name = DeviceString(d, CL_DEVICE_NAME);
      info.vendor = DeviceString(d, CL_DEVICE_VENDOR);
      info.driver_version = DeviceString(d, CL_DRIVER_VERSION);
      info.device_version = DeviceString(d, CL_DEVICE_VERSION);
      info.is_gpu = (DeviceNumber<cl_device_type>(d, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_GPU) != 0;
      info.compute_units = DeviceNumber<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS);
      info.max_clock_mhz = DeviceNumber<cl_uint>(d, CL_DEVICE_MAX_CLOCK_FREQUENCY);
      info.global_mem_bytes = DeviceNumber<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_SIZE);
      info.global_mem_cache_bytes = DeviceNumber<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
      info.local_mem_bytes = DeviceNumber<cl_ulong>(d, CL_DEVICE_LOCAL_MEM_SIZE);
      info.max_alloc_bytes = DeviceNumber<cl_ulong>(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
      info.max_work_group_size = DeviceNumber<size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
      size_t sizes[3] = {0, 0, 0};
      if (clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof sizes, sizes, nullptr) ==
          CL_SUCCESS) {
        for (int k = 0; k < 3; ++k) info.max_work_item_sizes[k] = static_cast<int64_t>(sizes[k]);
      }
      info.mem_base_addr_align_bytes = DeviceNumber<cl_uint>(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8;
      info.image_support = DeviceNumber<cl_bool>(d, CL_DEVICE_IMAGE_SUPPORT) != CL_FALSE;
      if (info.image_support) {
        info.image2d_max_width = DeviceNumber<size_t>(d, CL_DEVICE_IMAGE2D_MAX_WIDTH);
        info.image2d_max_height = DeviceNumber<size_t>(d, CL_DEVICE_IMAGE2D_MAX_HEIGHT);
      }
      info.command_buffer =
          ListsWord(DeviceString(d, CL_DEVICE_EXTENSIONS), kCommandBufferExtension);
      if (info.command_buffer) {
        info.command_buffer_version = ExtensionVersion(d, kCommandBufferExtension);
      }
      devices.push_back(std::move(info));
    }
  }
  return devices;
}

std::string DescribeDevices(const std::vector<DeviceInfo>& devices) {
  std::ostringstream os;
  if (devices.empty()) os << "no OpenCL platform or device found\n";
  for (const DeviceInfo& d : devices) {
    const std::string images = d.image_support ? "2D up to " + std::to_string(d.image2d_max_width) +
                                                     "x" + std::to_string(d.image2d_max_height)
                                               : "none";
    std::string command_buffers = "none";
    if (d.command_buffer) {
      const CommandBufferSupport support = CommandBufferAbiMatches(d.command_buffer_version)
                                               ? CommandBufferSupport::kAvailable
                                               : CommandBufferSupport::kVersion;
      command_buffers = DescribeCommandBufferSupport(support, d.command_buffer_version) +
                        (support == CommandBufferSupport::kAvailable
                             ? ": a run replays its recorded launches"
                             : ": a run enqueues its launches one by one");
    }
    char line[768];
    std::snprintf(line, sizeof line,
                  "opencl:%d  %s  [%s, %s]  %s\n"
                  "    %s, driver %s, %lld compute units @ %lld MHz\n"
                  "    global memory %lld MiB (cache %lld KiB), local memory %lld KiB, "
                  "max allocation %lld MiB\n"
                  "    max work-group %lld (%lld x %lld x %lld), base address alignment %lld B\n"
                  "    images: %s\n"
                  "    command buffers: %s\n",
                  d.index, d.name.c_str(), d.platform_name.c_str(), d.vendor.c_str(),
                  d.is_gpu ? "GPU" : "non-GPU", d.device_version.c_str(), d.driver_version.c_str(),
                  static_cast<long long>(d.compute_units), static_cast<long long>(d.max_clock_mhz),
                  static_cast<long long>(d.global_mem_bytes >> 20),
                  static_cast<long long>(d.global_mem_cache_bytes >> 10),
                  static_cast<long long>(d.local_mem_bytes >> 10),
                  static_cast<long long>(d.max_alloc_bytes >> 20),
                  static_cast<long long>(d.max_work_group_size),
                  static_cast<long long>(d.max_work_item_sizes[0]),
                  static_cast<long long>(d.max_work_item_sizes[1]),
                  static_cast<long long>(d.max_work_item_sizes[2]),
                  static_cast<long long>(d.mem_base_addr_align_bytes), images.c_str(),
                  command_buffers.c_str());
    os << line;
  }
  return os.str();
}

StatusOr<DeviceInfo> SelectDevice(const std::vector<DeviceInfo>& devices, const std::string& spec) {
  std::string names;
  for (const DeviceInfo& d : devices)
    names += (names.empty() ? "" : ", ") + ("opencl:" + std::to_string(d.index)) + " " + d.name;
  if (devices.empty()) {
    return NotFound("no OpenCL device found (no platform installed or no device on it)");
  }
  if (spec.empty() || spec == "opencl") {
    for (const DeviceInfo& d : devices)
      if (d.is_gpu) return d;
    return devices.front();
  }
  if (spec.rfind("opencl:", 0) == 0) {
    const std::string index = spec.substr(7);
    const bool digits = !index.empty() && std::all_of(index.begin(), index.end(),
                                                      [](char c) { return std::isdigit(c); });
    if (digits && index.size() < 6) {
      const int i = std::stoi(index);
      if (i < static_cast<int>(devices.size())) return devices[static_cast<size_t>(i)];
    }
    return NotFound("--device '" + spec + "': no such OpenCL device (devices: " + names + ")");
  }
  const std::string needle = Lower(spec);
  for (const DeviceInfo& d : devices) {
    if (Lower(d.name).find(needle) != std::string::npos ||
        Lower(d.platform_name).find(needle) != std::string::npos)
      return d;
  }
  return NotFound("--device '" + spec + "': no OpenCL device name contains it (devices: " + names +
                  ")");
}

StatusOr<std::unique_ptr<Runtime>> Runtime::Create(const std::string& device_spec,
                                                   const RuntimeOptions& options) {
  TESSEL_ASSIGN_OR_RETURN(std::vector<DeviceInfo> devices, ListDevices());
  TESSEL_ASSIGN_OR_RETURN(DeviceInfo device, SelectDevice(devices, device_spec));
  std::unique_ptr<Runtime> rt(new Runtime());
  rt->device_ = device;
  rt->options_ = options;
  rt->cache_dir_ = options.cache_dir;
  cl_int rc = CL_SUCCESS;
  const cl_context_properties props[] = {
      CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(device.platform), 0};
  rt->context_ = clCreateContext(props, 1, &device.device, nullptr, nullptr, &rc);
  TESSEL_CL_RETURN_IF_ERROR(rc, "clCreateContext");
  const cl_command_queue_properties qprops = options.profiling ? CL_QUEUE_PROFILING_ENABLE : 0;
  rt->queue_ = clCreateCommandQueue(rt->context_, device.device, qprops, &rc);
  TESSEL_CL_RETURN_IF_ERROR(rc, "clCreateCommandQueue");
  rt->DetectCommandBuffers(qprops);
  return rt;
}

void Runtime::DetectCommandBuffers(cl_command_queue_properties queue_properties) {
  command_buffer_support_ = CommandBufferSupport::kAbsent;
  if (!device_.command_buffer) return;
  command_buffer_support_ = CommandBufferSupport::kVersion;
  if (!CommandBufferAbiMatches(device_.command_buffer_version)) return;
  // A command buffer records for one queue, which must have the properties
  // the device requires and (since 0.9.6, which can say so) no property it
  // does not support: a profiling queue may be refused. Before 0.9.6 an
  // unsuited queue shows only when recording fails, and the executor then
  // runs the launch loop.
  command_buffer_support_ = CommandBufferSupport::kQueue;
  cl_command_queue_properties required = 0, supported = 0;
  if (clGetDeviceInfo(device_.device, kCommandBufferRequiredQueueProperties, sizeof required,
                      &required, nullptr) != CL_SUCCESS ||
      (queue_properties & required) != required) {
    return;
  }
  if (clGetDeviceInfo(device_.device, kCommandBufferSupportedQueueProperties, sizeof supported,
                      &supported, nullptr) == CL_SUCCESS &&
      (queue_properties & ~supported) != 0) {
    return;
  }
  command_buffer_support_ = CommandBufferSupport::kEntryPoints;
  const auto load = [this](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        clGetExtensionFunctionAddressForPlatform(device_.platform, name));
    return fn != nullptr;
  };
  CommandBufferApi& api = command_buffer_api_;
  if (load(api.create, "clCreateCommandBufferKHR") &&
      load(api.nd_range_kernel, "clCommandNDRangeKernelKHR") &&
      load(api.finalize, "clFinalizeCommandBufferKHR") &&
      load(api.enqueue, "clEnqueueCommandBufferKHR") &&
      load(api.release, "clReleaseCommandBufferKHR")) {
    command_buffer_support_ = CommandBufferSupport::kAvailable;
  }
}

Runtime::~Runtime() {
  if (queue_) clFinish(queue_);
  for (cl_mem m : buffers_) clReleaseMemObject(m);
  for (cl_program p : programs_) clReleaseProgram(p);
  if (queue_) clReleaseCommandQueue(queue_);
  if (context_) clReleaseContext(context_);
}

// Everything a built program depends on: the device, its driver, the build
// options and the source (as a hash). It names the file, and the file holds
// it too, so a file copied under another name is a miss.
std::string Runtime::CacheKey(const std::string& source, const std::string& options) const {
  const uint64_t source_hash = Fnv1a64(source.data(), source.size());
  std::string key = device_.name + '\0' + device_.platform_name + '\0' + device_.driver_version +
                    '\0' + options + '\0';
  key.append(reinterpret_cast<const char*>(&source_hash), sizeof source_hash);
  return key;
}

std::filesystem::path Runtime::CachePath(const std::string& key, const std::string& source) const {
  char name[64];
  std::snprintf(name, sizeof name, "%016llx-%016llx.clbin",
                static_cast<unsigned long long>(Fnv1a64(key.data(), key.size())),
                static_cast<unsigned long long>(Fnv1a64(source.data(), source.size())));
  return cache_dir_ / name;
}

StatusOr<cl_program> Runtime::BuildProgram(const std::string& source, const std::string& options) {
  last_from_cache_ = false;
  const bool use_cache = !cache_dir_.empty();
  const std::string key = CacheKey(source, options);
  const std::filesystem::path path = CachePath(key, source);
  if (auto it = built_.find(path.string()); it != built_.end()) {
    last_from_cache_ = true;
    return it->second;
  }
  cl_int rc = CL_SUCCESS;
  if (use_cache) {
    // A missing, damaged or foreign file is a miss: build from source.
    StatusOr<std::string> binary = ReadSealedFile(path, key, kMaxCachedProgramBytes);
    if (binary.ok() && !binary->empty()) {
      const auto* bin = reinterpret_cast<const unsigned char*>(binary->data());
      const size_t size = binary->size();
      cl_int bin_status = CL_SUCCESS;
      cl_program p =
          clCreateProgramWithBinary(context_, 1, &device_.device, &size, &bin, &bin_status, &rc);
      if (rc == CL_SUCCESS && bin_status == CL_SUCCESS &&
          clBuildProgram(p, 1, &device_.device, options.c_str(), nullptr, nullptr) == CL_SUCCESS) {
        programs_.push_back(p);
        built_[path.string()] = p;
        last_from_cache_ = true;
        return p;
      }
      // The driver refused the binary (another driver wrote it, or it is
      // damaged in a way the checksum cannot see): build from source.
      if (p) clReleaseProgram(p);
    }
  }
  const char* src = source.c_str();
  const size_t len = source.size();
  cl_program p = clCreateProgramWithSource(context_, 1, &src, &len, &rc);
  TESSEL_CL_RETURN_IF_ERROR(rc, "clCreateProgramWithSource");
  rc = clBuildProgram(p, 1, &device_.device, options.c_str(), nullptr, nullptr);
  if (rc != CL_SUCCESS) {
    const std::string log = BuildLog(p, device_.device);
    clReleaseProgram(p);
    return Internal(ClStatus(rc, "clBuildProgram").message() + " on " + device_.name + ":\n" + log);
  }
  programs_.push_back(p);
  built_[path.string()] = p;
  if (use_cache) {
    size_t size = 0;
    if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) == CL_SUCCESS &&
        size > 0) {
      std::string binary(size, '\0');
      auto* bin = reinterpret_cast<unsigned char*>(binary.data());
      // Best effort: a cache that cannot be written only costs the next build.
      if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, nullptr) == CL_SUCCESS)
        (void)WriteSealedFile(path, key, binary);
    }
  }
  return p;
}

StatusOr<cl_mem> Runtime::Allocate(int64_t size_bytes, cl_mem_flags flags) {
  cl_int rc = CL_SUCCESS;
  cl_mem m = clCreateBuffer(context_, flags, static_cast<size_t>(std::max<int64_t>(size_bytes, 1)),
                            nullptr, &rc);
  if (rc != CL_SUCCESS) {
    return ResourceExhausted(ClStatus(rc, "clCreateBuffer").message() + " for " +
                             std::to_string(size_bytes) + " bytes on " + device_.name);
  }
  buffers_.push_back(m);
  return m;
}

StatusOr<cl_mem> Runtime::AllocateImage(int64_t width, int64_t height, cl_mem_flags flags) {
  if (!device_.image_support) {
    return Unsupported(device_.name +
                       " has no image support: texture storage needs images (use "
                       "--storage buffer)");
  }
  if (width < 1 || height < 1 || width > device_.image2d_max_width ||
      height > device_.image2d_max_height) {
    return ResourceExhausted("an image of " + std::to_string(width) + "x" + std::to_string(height) +
                             " texels does not fit " + device_.name + " (at most " +
                             std::to_string(device_.image2d_max_width) + "x" +
                             std::to_string(device_.image2d_max_height) + ")");
  }
  const cl_image_format format{CL_RGBA, CL_FLOAT};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = static_cast<size_t>(width);
  desc.image_height = static_cast<size_t>(height);
  cl_int rc = CL_SUCCESS;
  cl_mem m = clCreateImage(context_, flags, &format, &desc, nullptr, &rc);
  if (rc != CL_SUCCESS) {
    return ResourceExhausted(ClStatus(rc, "clCreateImage").message() + " for " +
                             std::to_string(width) + "x" + std::to_string(height) +
                             " RGBA float texels on " + device_.name);
  }
  buffers_.push_back(m);
  return m;
}

}  // namespace tessel::opencl
