// The `opencl` target: the OpenCL executor (executor.h) on one device.
//
//   TargetSpec{"opencl", {{"device", "opencl:1"}}}   // or a name substring;
//                                                   // empty: the first GPU
//   TargetSpec{"opencl", {{"storage", "texture"}}}   // activations and weights
//                                                   // in 2D images where image
//                                                   // kernels run (storage.h)
//
// Create opens the device (NotFound naming the spec when there is none),
// unless HostOptions::compile_only: then the first Prepare does.
// The device is not part of what a model was compiled for: a model compiled
// for opencl runs on any OpenCL device.
//
// Prepare takes local sizes from OpenClHostOptions::tune_cache (entries
// tuned under another driver are dropped, with a note), and with
// tune_online tunes the launches the cache lacks (race), saving the cache.
// The prepared model's Tune (`tessel tune`, through the seam) searches every
// launch with the strategy asked for and saves that same cache.
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "model/target.h"
#include "targets/opencl/host_options.h"
#include "targets/opencl/runtime.h"
#include "targets/opencl/storage.h"

namespace tessel::opencl {

class OpenClTarget : public targets::Target {
 public:
  static StatusOr<std::unique_ptr<OpenClTarget>> Create(const targets::TargetSpec& spec,
                                                        const targets::HostOptions& host,
                                                        const OpenClHostOptions& opencl = {});

  const targets::TargetSpec& spec() const override { return spec_; }
  bool Accepts(const targets::TargetSpec& compiled_for) const override {
    return compiled_for.name == spec_.name;
  }
  // Every node on its OpenCL kernel, which needs no scratch, decided without
  // a device by PlanLaunches (launch_plan.h), the function Prepare decides
  // with: Unsupported, naming the node and why, when one has no kernel here.
  // A node's kernel is a snippet (its own emitted program) or the op
  // program's; the kernel names of its launches are the detail, since a
  // device's compute units pick among variants (the GEMM tile). With
  // storage=texture, nodes with image kernels run them ("image") and values
  // between them live in textures (CollectStorageInfo, storage.h).
  StatusOr<targets::KernelDecisions> SelectKernels(const ir::Graph& graph) const override;
  StatusOr<std::unique_ptr<targets::Executable>> Prepare(CompiledModel& model) const override;

  // The storage this graph runs with: the spec's, or with storage=auto the
  // faster on this device (measured once and cached; buffer, with a note,
  // without a device).
  StatusOr<Storage> ResolveStorage(const ir::Graph& graph) const;

  // The device's runtime, opened on first use.
  StatusOr<std::shared_ptr<Runtime>> runtime() const;

 private:
  OpenClTarget(targets::TargetSpec spec, RuntimeOptions options, targets::HostOptions host,
               OpenClHostOptions opencl)
      : spec_(std::move(spec)),
        options_(std::move(options)),
        host_(std::move(host)),
        opencl_(std::move(opencl)) {}
  targets::TargetSpec spec_;
  RuntimeOptions options_;
  targets::HostOptions host_;
  OpenClHostOptions opencl_;
  Storage storage_ = Storage::kBuffer;
  mutable std::mutex mu_;
  mutable std::shared_ptr<Runtime> runtime_;
  // storage=auto: whether each graph (StorageGraphHash) resolved to
  // textures. (Of std types only: a std template instantiated on a tessel
  // type would be exported from libtessel.so.)
  mutable std::map<std::string, bool> resolved_texture_;
};

}  // namespace tessel::opencl
