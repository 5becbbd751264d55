#include "ops/op_registry.h"
#include "ops/op_util.h"

namespace tessel::ops {

void RegisterElementwiseOps(OpRegistry& r) {}

}  // namespace tessel::ops
