// Einsum's loops as the reference kernel walks them (ops/matmul.cc), for
// targets that run Einsum as one loop nest: the output's labels, then the
// summed ones, each a dimension of `loop_shape`, and per input its element
// strides along every loop dimension (0 where the input lacks the label or
// broadcasts it; a label repeated within one input adds its strides, so
// walking it walks that input's diagonal).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::ops {

struct EinsumLoops {
  size_t out_rank = 0;  // the first out_rank dims of loop_shape: the output's shape
  Shape loop_shape;
  std::vector<std::vector<int64_t>> strides;  // per input, per loop dim
};

// The loops of an Einsum node of inferred input shapes; InvalidArgument
// naming the node for an equation that does not fit them.
StatusOr<EinsumLoops> PlanEinsumLoops(const ir::Node& node);

}  // namespace tessel::ops
