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
StatusOr<KernelIR> LowerSubgraph(const ir::Graph& body);

}  // namespace tessel::snippets
