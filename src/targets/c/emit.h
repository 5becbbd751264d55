// EmitC: a model compiled for the c target as C99 sources, the RFC's
// use cases U1-U3 (docs/c-target.md):
//
//   NAME.h            the API: input, output, workspace (and constant) pool
//                     structs, a size macro per pool, tessel_NAME_run
//   NAME.c            the entry function: every node in schedule order, each
//                     tensor at its pool's base plus its planned offset; the
//                     kernel library's units it calls; the snippets
//   NAME_constants.c  the weights: one array per constant, or, with
//                     constant pools, each pool's image for the caller to
//                     place (a linker section, flash, ITCM)
//   NAME_check.c      (asked for) a main() that runs recorded inputs and
//                     compares with the expected outputs
//
// Nothing calls an allocator; the same model gives the same bytes.
#pragma once

#include "core/status.h"
#include "model/compiled_model.h"
#include "model/target.h"

namespace tessel::ctarget {

// Precondition: `model` was compiled for the c target (its nodes' kernels
// are BuildCall's). InvalidArgument for a name that is not a C identifier;
// a file that cannot be written names its path (nothing half-written stays).
StatusOr<targets::EmitReport> EmitC(const CompiledModel& model,
                                    const targets::EmitRequest& request);

// Ok when `name` is a C identifier that the generated symbols may start
// with: [a-z_][a-z0-9_]*, at most 48 characters; else InvalidArgument, one
// line naming --name and the rule.
Status CheckModelName(const std::string& name);

}  // namespace tessel::ctarget
