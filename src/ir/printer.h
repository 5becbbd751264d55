// A readable text form of a graph, for `tessel show` and --dump-after:
//
//   graph 'torch_jit' opset 13: 52 nodes, 3504872 parameters (13.4 MiB)
//   input  %input: float32 1x3x224x224
//   %120 = Conv(%input, @w0, @b0) {group=1, pads=[1,1,1,1], ...} : float32 1x32x112x112
//   output %output: float32 1x1000
//
// %name is a value computed at run time, @name a constant.
#pragma once

#include <ostream>

#include "ir/graph.h"

namespace tessel::ir {

void PrintGraph(const Graph& graph, std::ostream& os);

// The header line, inputs, outputs and how many nodes of each op type:
//   ops    Conv x52, BatchNormalization x52, Clip x35, ...
void PrintSummary(const Graph& graph, std::ostream& os);

// Totals used by the printer and the CLI.
struct GraphStats {
  int64_t num_nodes = 0;
  int64_t num_parameters = 0;  // elements in constants
  int64_t parameter_bytes = 0;
};
GraphStats ComputeStats(const Graph& graph);

}  // namespace tessel::ir
