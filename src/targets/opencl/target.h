// The `opencl` target: the OpenCL executor (executor.h) on one device.
//
//   TargetSpec{"opencl", {{"device", "opencl:1"}}}   // or a name substring;
//                                                   // empty: the first GPU
//
// Create opens the device (NotFound naming the spec when there is none).
// The device is not part of what a model was compiled for: a model compiled
// for opencl runs on any OpenCL device.
#pragma once

#include <memory>

#include "targets/opencl/runtime.h"
#include "targets/target.h"

namespace tessel::opencl {

class OpenClTarget : public targets::Target {
 public:
  static StatusOr<std::unique_ptr<OpenClTarget>> Create(const targets::TargetSpec& spec,
                                                        const targets::HostOptions& host);

  const targets::TargetSpec& spec() const override { return spec_; }
  bool Accepts(const targets::TargetSpec& compiled_for) const override {
    return compiled_for.name == spec_.name;
  }
  // Every node on its OpenCL kernel, which needs no scratch. Whether the op
  // has one is known once the device is (Prepare says, naming the node).
  StatusOr<std::vector<targets::NodeKernel>> SelectKernels(const ir::Graph& graph) const override;
  StatusOr<std::unique_ptr<targets::Executable>> Prepare(CompiledModel& model) const override;

  Runtime& runtime() const { return *runtime_; }

 private:
  OpenClTarget(targets::TargetSpec spec, std::shared_ptr<Runtime> runtime)
      : spec_(std::move(spec)), runtime_(std::move(runtime)) {}
  targets::TargetSpec spec_;
  std::shared_ptr<Runtime> runtime_;
};

}  // namespace tessel::opencl
