// Which dimensions a Reduce* node folds, planned from a typed node whose
// axes are known at compile time (an attribute, or a constant input from
// opset 13 for ReduceSum and 18 for the others): the reference kernel runs
// this plan, and a target's own kernels take the same one.
#pragma once

#include <vector>

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::ops {

struct ReducedAxes {
  bool identity = false;      // noop_with_empty_axes and no axes: a copy
  std::vector<bool> reduced;  // per input dimension
};

// Unsupported when the axes are an input that is not a constant.
StatusOr<ReducedAxes> PlanReducedAxes(const ir::Node& node, int opset);

}  // namespace tessel::ops
