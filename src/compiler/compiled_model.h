// A compiled model: what `tessel compile` saves and `tessel run` loads.
//
// The graph's node order is the schedule (one kernel launch per node); its
// constants are the weights. Later stages add the memory plan and storage
// scopes here.
#pragma once

#include <memory>
#include <string>

#include "ir/graph.h"

namespace tessel {

struct CompiledModel {
  std::unique_ptr<ir::Graph> graph;
  std::string source;  // the file it was compiled from, for messages
};

}  // namespace tessel
