// Targets by name: what drives the compiler (the CLI, the APIs, tests) makes
// its target here, from a TargetSpec given by the user or recorded in a
// compiled model.
//
//   TESSEL_ASSIGN_OR_RETURN(auto target, targets::MakeTarget({"cpu", {{"isa", "avx2"}}}));
//
// Fails with one line naming the target or option: an unknown target, an
// unknown or bad option, a target this build lacks (opencl without OpenCL),
// or one this machine cannot run (an ISA this CPU lacks, no OpenCL device).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/target.h"
#include "targets/opencl/host_options.h"

namespace tessel::targets {

// Host options that one target alone reads, each typed by its target and
// read by it only: the generic HostOptions stays free of them, and a new
// target with host settings of its own adds a member here.
struct TargetHostOptions {
  opencl::OpenClHostOptions opencl;
};

StatusOr<std::unique_ptr<Target>> MakeTarget(const TargetSpec& spec, const HostOptions& host = {},
                                             const TargetHostOptions& per_target = {});

// The targets this build has: "reference", "cpu", with OpenCL "opencl", and "c".
std::vector<std::string> TargetNames();

}  // namespace tessel::targets
