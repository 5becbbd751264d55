// Between the public API (include/tessel/tessel.h) and tessel's internals:
// Status to exceptions, arrays to tensors, the state behind Model. Included
// by src/api only; no public header includes it.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/tensor.h"
#include "model/compiled_model.h"
#include "tessel/tessel.h"

namespace tessel::api {

// The Status as a tessel::Error of the matching code; never returns.
[[noreturn]] void Throw(const Status& status);
inline void ThrowIfError(const Status& status) {
  if (!status.ok()) Throw(status);
}
template <typename T>
T Unwrap(StatusOr<T>&& result) {
  if (!result.ok()) Throw(result.status());
  return std::move(*result);
}

ElementType ToElementType(DType dtype);
DType ToDType(ElementType type);
TensorInfo InfoOf(const ir::Value& value);

// Views an array as a tensor (no copy; the tensor keeps the array alive).
Tensor ViewOf(const Array& array);
// The tensor as an array (no copy; the array keeps the tensor alive).
Array ArrayOf(Tensor tensor);

// What a Model holds: the compiled model, never prepared itself (each
// session prepares a copy that shares its weights), and how to make its
// target here.
struct ModelState {
  CompiledModel model;
  // Compiled in this process: the model as compiled, with the kernels its
  // target built, which the first session that asks for the same target
  // takes (then null).
  std::unique_ptr<CompiledModel> handoff;
  OpenClOptions opencl;  // the run-time options the model was compiled with
  std::vector<TensorInfo> inputs, outputs;
  std::mutex mu;                   // guards handoff and plan
  std::optional<MemoryPlan> plan;  // described on first use
};

// A copy of `model` for a Model or a Session to own: its own graph (which
// preparing may strip of weights), sharing the constants' storage.
CompiledModel CopyForSession(const CompiledModel& model);

// Makes a Model of `model` (compiled here when `handoff` holds it).
Model MakeModel(CompiledModel model, const OpenClOptions& opencl, bool compiled_here);

// Where tessel caches what it compiles for devices: $TESSEL_CACHE_DIR, else
// $XDG_CACHE_HOME/tessel, else ~/.cache/tessel (as the CLI).
std::string DefaultCacheDir();

}  // namespace tessel::api

namespace tessel {

struct Model::Impl : api::ModelState {};

// The one door through Model's pimpl, for src/api.
struct ModelAccess {
  static Model Make(std::shared_ptr<Model::Impl> impl) { return Model(std::move(impl)); }
  static std::shared_ptr<Model::Impl> New() { return std::make_shared<Model::Impl>(); }
  static api::ModelState& State(const Model& m) { return *m.impl_; }
};

}  // namespace tessel
