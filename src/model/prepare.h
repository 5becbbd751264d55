// The runtime's entry: a compiled model (read from a .tsl, or compiled in
// this process) bound to a target, ready to run. Links no importer.
//
//   TESSEL_ASSIGN_OR_RETURN(CompiledModel m, ReadCompiledModel("model.tsl"));
//   TESSEL_ASSIGN_OR_RETURN(auto target, targets::MakeTarget(m.target));
//   TESSEL_ASSIGN_OR_RETURN(auto exe, Prepare(m, *target));
//   TESSEL_ASSIGN_OR_RETURN(auto outputs, exe->Run(inputs));
#pragma once

#include <memory>

#include "core/status.h"
#include "model/compiled_model.h"
#include "model/target.h"

namespace tessel {

// Binds `model` to `target`, which must accept what it was compiled for
// (target.Accepts(model.target); else InvalidArgument saying both). A model
// read from a file, or run with other run-time options, is checked first
// against the kernels `target` builds on this machine: the same kernels as
// planned (else InvalidArgument: recompile it here); a sound plan that
// these kernels' scratch does not fit (another thread count) is made again
// for them, with the same planner and pools.
StatusOr<std::unique_ptr<targets::Executable>> Prepare(CompiledModel& model,
                                                       const targets::Target& target);

}  // namespace tessel
