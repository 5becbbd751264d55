#include "ops/op_registry.h"
#include "ops/op_util.h"

namespace tessel::ops {

void RegisterTensorOps(OpRegistry& r) {}

}  // namespace tessel::ops
