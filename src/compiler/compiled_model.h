// A compiled model: what `tessel compile` saves and `tessel run` loads.
//
// The graph's node order is the schedule (one kernel launch per node); its
// constants are the weights; `memory` places every buffer in a pool (empty
// when the model was compiled without a plan).
#pragma once

#include <memory>
#include <string>

#include "ir/graph.h"
#include "ir/memory_layout.h"

namespace tessel {

struct CompiledModel {
  std::unique_ptr<ir::Graph> graph;
  std::string source;  // the file it was compiled from, for messages
  ir::MemoryLayout memory;
};

}  // namespace tessel
