// A compiled model: what `tessel compile` saves and `tessel run` loads.
//
// The graph's node order is the schedule (one kernel launch per node), each
// node holds the kernel its target chose (ir::Node::kernel) and each value
// its layout and storage scope; its constants
// are the weights; `memory` places every buffer in a pool; `target` is what
// it was compiled for, with the options that decided the kernels and the
// plan (model/target.h).
#pragma once

#include <memory>
#include <string>

#include "ir/graph.h"
#include "ir/memory_layout.h"
#include "model/target.h"

namespace tessel {

struct CompiledModel {
  std::unique_ptr<ir::Graph> graph;
  std::string source;  // the file it was compiled from, for messages
  ir::MemoryLayout memory;
  targets::TargetSpec target;
  // Compiled in this process for `target` (not saved): its plan was made for
  // the very kernels Prepare builds, so they need not be checked again.
  bool planned_here = false;
  // The kernels the target built while it selected them (not saved): its
  // Prepare takes them instead of building them again. Null once taken.
  std::shared_ptr<targets::BuiltKernels> built_kernels;
};

}  // namespace tessel
