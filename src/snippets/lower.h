// Lowering: a Subgraph body to kernel IR, target independent. The table of
// contents of the snippets code generator, in the seed's order:
//
//   1. Canonicalize       ONNX ops -> kernel ops in scalar notation; scalar
//                         constants -> immediates; Pow -> PowerStatic
//   2. NormalizeDomain    6D scheduling domain, broadcast strides, dims merged
//   3. InsertMemoryOps    Load/Store, BroadcastMove -> BroadcastLoad, and the
//                         scalar tail tile
//
// Target code generation continues from here: register allocation and
// emission for x86 (x86_generator.h), or interpretation (interpreter.h).
#pragma once

#include "core/status.h"
#include "ir/graph.h"
#include "snippets/kernel_ir.h"

namespace tessel::snippets {

// Precondition: as Canonicalize (canonicalize.h). Fails naming the snippet
// when the body cannot be scheduled as one kernel.
//
// `channels_last`: the arguments hold their data channels last (nhwc for a
// 4-D NCHW shape): every argument's shape is padded with leading 1s to the
// outputs' rank (at least 3), then its axis 1 moves last. Elementwise and
// broadcasting ops do not care about axis order, so the kernel computes the
// same values on that layout.
StatusOr<KernelIR> LowerSubgraph(const ir::Graph& body, bool channels_last = false);

// An argument of `shape`, padded to `rank`, is laid out alike plain and
// channels last: it has one channel, or one pixel.
bool SameInBothLayouts(const Shape& shape, size_t rank);

}  // namespace tessel::snippets
