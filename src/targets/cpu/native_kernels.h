// Hand-written fast kernels (fast_kernel.h) for memory-bound ops where the
// reference kernel's generality costs: Transpose and Slice as one strided
// copy with collapsed dimensions, contiguous runs copied whole, rows spread
// over the thread pool.
#pragma once

#include <memory>

#include "targets/cpu/fast_kernel.h"

namespace tessel::cpu {

// Null unless `node` is a Transpose or a Slice with constant parameters.
std::unique_ptr<FastKernel> MakeStridedCopy(const ir::Node& node, int opset);

}  // namespace tessel::cpu
