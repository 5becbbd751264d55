// --target, --device and --profile: which executor runs a model.
//
//   cpu     the CPU executor (oneDNN and reference kernels, JIT snippets)
//   opencl  the OpenCL executor on one device (--device opencl:N or a name
//           substring; default the first GPU, else the first device)
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "compiler/compiled_model.h"
#include "core/status.h"

namespace tessel::cli {

struct TargetOptions {
  std::string target = "cpu";
  std::string device;    // OpenCL device spec
  bool profile = false;  // per-kernel timings (OpenCL events)
};
void AddTargetOptions(CLI::App& app, TargetOptions& opts, bool profile);

class ModelRunner {
 public:
  virtual ~ModelRunner() = default;
  virtual StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& inputs) = 0;
  virtual int64_t peak_activation_bytes() const = 0;
  virtual int64_t workspace_bytes() const = 0;
  // Weights reordered into the kernels' layouts (oneDNN), beside the originals.
  virtual int64_t packed_weight_bytes() const { return 0; }
  // "cpu", "opencl:0 NVIDIA H100 80GB HBM3"
  virtual std::string Describe() const = 0;
  // With --profile: per-kernel timings of the last Run, slowest first.
  virtual std::string ProfileReport() const { return ""; }
  // With --profile: whether the next runs record timings (they cost time).
  virtual void SetProfiling(bool on) {}
};

// Fails (InvalidArgument / NotFound) naming the option when the target or
// device does not exist, or the target was built without support.
StatusOr<std::unique_ptr<ModelRunner>> MakeRunner(CompiledModel& model,
                                                  const TargetOptions& opts);

// `tessel info`: the OpenCL devices and their limits.
void AddInfoCommand(CLI::App& app, int& exit_code);

}  // namespace tessel::cli
