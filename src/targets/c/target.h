// The `c` target: a model as C99 sources for microcontrollers, with
// statically planned pools the caller provides and no allocator
// (docs/c-target.md). It decides every node's kernel at compile time, like
// any target, and then writes sources (Emit) rather than running in this
// process (Prepare refuses, naming `tessel compile --target c -o DIR`).
//
//   TESSEL_ASSIGN_OR_RETURN(auto target, CTarget::Create({"c", {}}));
//   TESSEL_ASSIGN_OR_RETURN(CompiledModel m, Compile("model.onnx", *target, options));
//   TESSEL_ASSIGN_OR_RETURN(targets::EmitReport r,
//                           target->Emit(m, {.directory = "out", .name = "model"}));
#pragma once

#include <memory>

#include "model/target.h"

namespace tessel::ctarget {

class CTarget : public targets::Target {
 public:
  // The c target has no options.
  static StatusOr<std::unique_ptr<CTarget>> Create(const targets::TargetSpec& spec);

  const targets::TargetSpec& spec() const override { return spec_; }
  StatusOr<targets::KernelDecisions> SelectKernels(const ir::Graph& graph) const override;
  StatusOr<std::unique_ptr<targets::Executable>> Prepare(CompiledModel& model) const override;
  bool emits_sources() const override { return true; }
  StatusOr<targets::EmitReport> Emit(const CompiledModel& model,
                                     const targets::EmitRequest& request) const override;
  // What a 32-bit microcontroller addresses, not this machine's memory.
  int64_t memory_limit_bytes() const override { return int64_t{2} << 30; }

 private:
  targets::TargetSpec spec_{"c", {}};
};

}  // namespace tessel::ctarget
