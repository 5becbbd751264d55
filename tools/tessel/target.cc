#include "target.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "common.h"
#include "model/model_file.h"
#include "snippets/x86_generator.h"
#include "targets/cpu/options.h"
#include "targets/registry.h"
#ifdef TESSEL_WITH_OPENCL
#include "targets/opencl/runtime.h"
#endif

namespace tessel::cli {

namespace {

// The environment's defaults for the cpu target (ApplyEnvironment).
struct EnvironmentDefaults {
  std::string isa, winograd, parallel_min_mflop, parallel_min_kib;
  std::filesystem::path cache_dir;
  std::filesystem::path dump_dir;
};
EnvironmentDefaults env_defaults;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::filesystem::path DefaultCacheDir() {
  if (std::string dir = Env("TESSEL_CACHE_DIR"); !dir.empty()) return dir;
  if (std::string dir = Env("XDG_CACHE_HOME"); !dir.empty())
    return std::filesystem::path(dir) / "tessel";
  if (std::string home = Env("HOME"); !home.empty())
    return std::filesystem::path(home) / ".cache" / "tessel";
  return std::filesystem::temp_directory_path() / "tessel-cache";
}

// Whether a progress line is drawn on stderr (so the next output clears it).
bool progress_drawn = false;

targets::HostOptions HostOptionsOf(const TargetOptions& opts) {
  targets::HostOptions host{.profile = opts.profile,
                            .cache_dir = env_defaults.cache_dir / "opencl",
                            .dump_dir = env_defaults.dump_dir,
                            .verbose = opts.verbose};
  host.note = [](const std::string& line) {
    if (progress_drawn) std::fprintf(stderr, "\r%100s\r", "");
    progress_drawn = false;
    std::fprintf(stderr, "tessel: note: %s\n", line.c_str());
  };
  if (isatty(STDERR_FILENO)) {
    host.progress = [](const std::string& line) {
      std::fprintf(stderr, "\r%-100.100s%s", line.c_str(), line.empty() ? "\r" : "");
      std::fflush(stderr);
      progress_drawn = !line.empty();
    };
  }
  return host;
}

// What one target alone reads: OpenCL's tuning cache, online tuning, queue
// window and replay.
targets::TargetHostOptions PerTargetOf(const TargetOptions& opts) {
  targets::TargetHostOptions per_target;
  per_target.opencl = {.tune_cache = TuneCachePath(opts),
                       .tune_online = opts.tune == "online",
                       .queue_window = opts.queue_window,
                       .replay = !opts.no_replay};
  return per_target;
}

// --tune online, --queue-window and --no-replay are options of the OpenCL
// target.
Status CheckTuningOptions(const TargetOptions& opts, const std::string& target) {
  if (target == "opencl") return Status::Ok();
  const char* option = opts.tune == "online"   ? "--tune online"
                       : opts.queue_window > 0 ? "--queue-window"
                       : opts.no_replay        ? "--no-replay"
                                               : nullptr;
  if (!option) return Status::Ok();
  return InvalidArgument(std::string(option) + " needs --target opencl");
}

// The cpu target's run-time options: the command line's, else the
// environment's.
void AddRunOptions(const TargetOptions& opts, targets::TargetSpec& spec) {
  if (spec.name != "cpu") return;
  if (opts.threads > 0) spec.options["threads"] = std::to_string(opts.threads);
  if (!env_defaults.parallel_min_mflop.empty())
    spec.options["parallel_min_mflop"] = env_defaults.parallel_min_mflop;
  if (!env_defaults.parallel_min_kib.empty())
    spec.options["parallel_min_kib"] = env_defaults.parallel_min_kib;
}

}  // namespace

void ApplyEnvironment() {
  const std::string jit = Env("TESSEL_JIT");
  if (jit == "off" || Env("TESSEL_FAST_KERNELS") == "off") {
    env_defaults.isa = "generic";
  } else if (jit == "avx2") {
    env_defaults.isa = "avx2";
  }
  env_defaults.winograd = Env("TESSEL_WINOGRAD");
  if (env_defaults.winograd == "on") env_defaults.winograd = "auto";
  env_defaults.parallel_min_mflop = Env("TESSEL_PARALLEL_MIN_MFLOP");
  env_defaults.parallel_min_kib = Env("TESSEL_PARALLEL_MIN_KIB");
  for (const char* name : {"DNNL_MAX_CPU_ISA", "ONEDNN_MAX_CPU_ISA"}) {
    std::string cap = Env(name);
    for (char& c : cap) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (cap.empty() || cap == "ALL" || cap.rfind("AVX512", 0) == 0 || cap.rfind("AVX10", 0) == 0 ||
        cap.rfind("AMX", 0) == 0) {
      continue;
    }
    cpu::LimitHostIsa(cap.rfind("AVX2", 0) == 0 ? snippets::Isa::kAvx2
                                                : snippets::Isa::kInterpreter);
  }
  env_defaults.dump_dir = Env("TESSEL_SNIPPETS_DUMP");
  env_defaults.cache_dir = DefaultCacheDir();
}

void AddTargetOptions(CLI::App& app, TargetOptions& opts, bool profile) {
  app.add_option("--target", opts.target,
                 "Where to run: cpu (default), opencl, reference (the ops' own kernels, one "
                 "thread: the oracle), or c (compile only: C99 sources for microcontrollers)")
      ->check(CLI::IsMember(targets::TargetNames()));
  app.add_option("--device", opts.device,
                 "OpenCL device: opencl:N or a substring of its name (see tessel info)");
  app.add_option("--isa", opts.isa,
                 "CPU instructions the kernels may use: auto (this CPU's best, default), avx512, "
                 "avx2, generic (no JIT); a model compiled for one runs only on CPUs that have it")
      ->check(CLI::IsMember({"auto", "avx512", "avx2", "generic"}));
  app.add_option("--winograd", opts.winograd,
                 "Winograd convolutions on cpu: auto (default), 4x3, off")
      ->check(CLI::IsMember({"auto", "4x3", "off"}));
  app.add_option("--storage", opts.storage,
                 "Where OpenCL keeps activations and weights: buffer (default), texture (2D "
                 "images where image kernels run, converted at the borders), or auto (the faster "
                 "of the two for this model on this device, measured once and cached)")
      ->check(CLI::IsMember({"buffer", "texture", "auto"}));
  app.add_option("--threads", opts.threads,
                 "Threads the cpu kernels use (default: one per physical core)")
      ->check(CLI::Range(1, 1024));
  app.add_flag("-v,--verbose", opts.verbose,
               "Notes in detail: each value that stays in a buffer under --storage texture (its "
               "image too large for the device), rather than a count");
  if (profile) {
    app.add_flag("--profile", opts.profile,
                 "Print where the time goes: per op and kernel on cpu, per kernel (OpenCL "
                 "events) on opencl");
  }
}

void AddTuningOptions(CLI::App& app, TargetOptions& opts) {
  app.add_option("--tune-cache", opts.tune_cache,
                 "OpenCL tuning cache (tessel tune writes one): local sizes tuned for this "
                 "device and driver; default <cache dir>/opencl/tuning.json");
  app.add_option("--tune", opts.tune,
                 "online: tune the OpenCL launches the cache lacks before the first run, and save "
                 "the cache; off (default): use what the cache has")
      ->check(CLI::IsMember({"online", "off"}));
  app.add_option("--queue-window", opts.queue_window,
                 "OpenCL: wait for the device after every N kernel launches, so that a display "
                 "sharing the GPU stays responsive (0, default: never)")
      ->check(CLI::Range(0, 1000000));
  app.add_flag("--no-replay", opts.no_replay,
               "OpenCL: enqueue the kernel launches one by one on every run, even where the "
               "device has cl_khr_command_buffer (by default a prepared model records its "
               "launches once and each run enqueues that one command buffer)");
}

std::filesystem::path TuneCachePath(const TargetOptions& opts) {
  if (!opts.tune_cache.empty()) return opts.tune_cache;
  return env_defaults.cache_dir / "opencl" / "tuning.json";
}

StatusOr<targets::TargetSpec> RequestedSpec(const TargetOptions& opts) {
  targets::TargetSpec spec{opts.target.empty() ? "cpu" : opts.target, {}};
  if (!opts.device.empty()) {
    if (spec.name != "opencl") {
      return InvalidArgument("--device '" + opts.device + "' needs --target opencl");
    }
    spec.options["device"] = opts.device;
  }
  TESSEL_RETURN_IF_ERROR(CheckTuningOptions(opts, spec.name));
  if (!opts.storage.empty()) {
    if (spec.name != "opencl") {
      return InvalidArgument("--storage is an option of --target opencl, not " + spec.name);
    }
    spec.options["storage"] = opts.storage;
  }
  if (spec.name != "cpu") {
    if (!opts.isa.empty() || !opts.winograd.empty()) {
      return InvalidArgument(std::string(!opts.isa.empty() ? "--isa" : "--winograd") +
                             " is an option of --target cpu, not " + spec.name);
    }
    return spec;
  }
  const std::string isa = !opts.isa.empty() ? opts.isa : env_defaults.isa;
  if (!isa.empty()) spec.options["isa"] = isa;
  const std::string winograd = !opts.winograd.empty() ? opts.winograd : env_defaults.winograd;
  if (!winograd.empty()) spec.options["winograd"] = winograd;
  AddRunOptions(opts, spec);
  return spec;
}

StatusOr<std::unique_ptr<targets::Target>> MakeRequestedTarget(const TargetOptions& opts,
                                                               bool compile_only) {
  TESSEL_ASSIGN_OR_RETURN(targets::TargetSpec spec, RequestedSpec(opts));
  targets::HostOptions host = HostOptionsOf(opts);
  host.compile_only = compile_only;
  return targets::MakeTarget(spec, host, PerTargetOf(opts));
}

StatusOr<LoadedModel> LoadModel(const std::string& path, const TargetOptions& opts,
                                const CompilerOptions& copts) {
  LoadedModel loaded;
  TESSEL_ASSIGN_OR_RETURN(const bool compiled, IsCompiledModelFile(path));
  if (!compiled) {
    TESSEL_ASSIGN_OR_RETURN(loaded.target, MakeRequestedTarget(opts));
    TESSEL_ASSIGN_OR_RETURN(loaded.model, Compile(path, *loaded.target, copts));
    return loaded;
  }
  TESSEL_ASSIGN_OR_RETURN(loaded.model, ReadCompiledModel(path));
  targets::TargetSpec spec = loaded.model.target;
  const std::string where = "'" + path + "' was compiled for target '" + spec.ToString() + "'";
  if (!opts.target.empty() && opts.target != spec.name) {
    return InvalidArgument(where + "; it cannot run on --target " + opts.target +
                           " (compile it for that target)");
  }
  if (!opts.isa.empty() && opts.isa != spec.Option("isa")) {
    return InvalidArgument(where + "; it cannot run with --isa " + opts.isa +
                           " (compile it with that isa)");
  }
  if (!opts.winograd.empty() && opts.winograd != spec.Option("winograd")) {
    return InvalidArgument(where + "; it cannot run with --winograd " + opts.winograd +
                           " (compile it so)");
  }
  if (!opts.storage.empty() && opts.storage != "auto" &&
      opts.storage != spec.Option("storage", "buffer")) {
    return InvalidArgument(where + "; it cannot run with --storage " + opts.storage +
                           " (compile it so)");
  }
  if (!opts.device.empty()) {
    if (spec.name != "opencl") {
      return InvalidArgument("--device '" + opts.device + "' needs --target opencl");
    }
    spec.options["device"] = opts.device;
  }
  TESSEL_RETURN_IF_ERROR(CheckTuningOptions(opts, spec.name));
  AddRunOptions(opts, spec);
  StatusOr<std::unique_ptr<targets::Target>> target =
      targets::MakeTarget(spec, HostOptionsOf(opts), PerTargetOf(opts));
  if (!target.ok()) return Status(target.status().code(), where + ": " + target.status().message());
  loaded.target = std::move(*target);
  return loaded;
}

void AddInfoCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("info", "List the OpenCL devices and their limits");
  cmd->callback([&exit_code] {
#ifdef TESSEL_WITH_OPENCL
    StatusOr<std::vector<opencl::DeviceInfo>> devices = opencl::ListDevices();
    if (!devices.ok()) {
      exit_code = ReportError(devices.status());
      return;
    }
    std::printf("%s", opencl::DescribeDevices(*devices).c_str());
    exit_code = 0;
#else
    std::printf("built without OpenCL (TESSEL_WITH_OPENCL=OFF)\n");
    exit_code = 0;
#endif
  });
}

}  // namespace tessel::cli
