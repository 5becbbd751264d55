// --target, --device, --isa, --winograd, --storage, --threads and --profile: which
// target compiles and runs a model, filled in here and only here (with the
// environment variables users know, ApplyEnvironment).
//
//   reference  the ops' own kernels, one thread: the oracle
//   cpu        oneDNN, the snippets JIT, threads (default)
//   opencl     the OpenCL executor on one device (--device opencl:N or a name
//              substring; default the first GPU, else the first device)
//
// A compiled model (.tsl) runs on the target it was compiled for: the
// command line may change only what tunes the run there (--threads,
// --device); asking for another target or ISA is an error naming both.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "core/status.h"
#include "model/target.h"

namespace tessel::cli {

struct TargetOptions {
  std::string target;    // empty: cpu, or a compiled model's own
  std::string device;    // OpenCL device spec
  std::string isa;       // empty: auto (cpu)
  std::string winograd;  // empty: auto (cpu)
  std::string storage;   // empty: buffer (opencl)
  int threads = 0;       // 0: one per physical core
  bool profile = false;  // where the time goes (per node on cpu, OpenCL events)
  bool verbose = false;  // notes in detail (HostOptions::verbose)
  // OpenCL work-group tuning (AddTuningOptions).
  std::string tune_cache;  // empty: <cache dir>/opencl/tuning.json
  std::string tune = "off";
  int queue_window = 0;
  bool no_replay = false;  // OpenCL: the launch loop even with command buffers
};
// `profile`: whether the command takes --profile.
void AddTargetOptions(CLI::App& app, TargetOptions& opts, bool profile);
// --tune-cache FILE, --tune online|off, --queue-window N and --no-replay, for
// the commands that run models on a device.
void AddTuningOptions(CLI::App& app, TargetOptions& opts);
// The tuning cache the options name: --tune-cache, else the default file in
// tessel's cache folder.
std::filesystem::path TuneCachePath(const TargetOptions& opts);

// Reads the environment variables tessel honours, once, before any target
// is made (main does): TESSEL_JIT=off|avx2 and TESSEL_FAST_KERNELS=off (the
// default isa: generic, avx2), TESSEL_WINOGRAD, TESSEL_PARALLEL_MIN_MFLOP,
// TESSEL_PARALLEL_MIN_KIB (the cpu target's options, unless given on the
// command line), DNNL_MAX_CPU_ISA / ONEDNN_MAX_CPU_ISA (this CPU is treated
// as offering at most that), TESSEL_SNIPPETS_DUMP (where the JIT writes its
// machine code), TESSEL_CACHE_DIR, XDG_CACHE_HOME, HOME (the OpenCL program
// cache).
void ApplyEnvironment();

// The target the command line asks for, for compiling an ONNX model.
StatusOr<targets::TargetSpec> RequestedSpec(const TargetOptions& opts);

// The target the command line asks for, made (with this machine's cache);
// `compile_only`: for `tessel compile`, which needs no device.
StatusOr<std::unique_ptr<targets::Target>> MakeRequestedTarget(const TargetOptions& opts,
                                                               bool compile_only = false);

// A model ready to run: compiled (or read), and bound to its target.
struct LoadedModel {
  CompiledModel model;
  std::unique_ptr<targets::Target> target;
};

// Reads a compiled model, making the target it records (with the command
// line's run-time options), or compiles an ONNX file for the requested
// target. Errors name the option or the file.
StatusOr<LoadedModel> LoadModel(const std::string& path, const TargetOptions& opts,
                                const CompilerOptions& copts);

// `tessel info`: the OpenCL devices and their limits.
void AddInfoCommand(CLI::App& app, int& exit_code);

}  // namespace tessel::cli
