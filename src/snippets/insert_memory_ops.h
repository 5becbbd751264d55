// Explicit memory operations, in the seed's three steps:
//
//   1. InsertLoad/InsertStore: every kParameter becomes a kLoad, every
//      kResult a kStore.
//   2. Broadcast: an input that is broadcast along the innermost domain
//      dimension (stride 0 there) gets a kBroadcastMove after its load.
//   3. A kLoad followed by a kBroadcastMove of it fuses into one
//      kBroadcastLoad (load one element, fill every lane).
//
// Then the scalar tail tile is derived from the vector tile by replacing its
// loads and stores with kScalarLoad/kScalarStore.
#pragma once

#include "core/status.h"
#include "snippets/kernel_ir.h"

namespace tessel::snippets {

// Precondition: `ir` is canonical (Canonicalize) with a normalized domain
// (NormalizeDomain). Rewrites `ir.body` into the vector tile and fills
// `ir.scalar_body`.
Status InsertMemoryOps(KernelIR& ir);

}  // namespace tessel::snippets
