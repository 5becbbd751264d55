// Domain normalization: every argument shape is right-aligned into the 6D
// scheduling domain (the broadcast of all output shapes) and given element
// strides, 0 on broadcast dimensions. Adjacent dimensions merge wherever every
// argument is either contiguous across both or broadcast across both, so
//
//   x 1x128x1024 + bias 1024    -> domain [1,1,1,1,128,1024], bias strides [..,0,1]
//   x 1x32x112x112 (same shape) -> domain [1,1,1,1,1,401408]
//   x 1x32x56x56 + s 1x32x1x1   -> domain [1,1,1,1,32,3136],  s strides [..,1,0]
//
// which keeps the innermost loop (the vector tile) as long as possible.
#pragma once

#include "core/status.h"
#include "snippets/kernel_ir.h"

namespace tessel::snippets {

// Precondition: `ir.args` hold shapes (Canonicalize). Sets output_shape,
// domain and every argument's strides. Fails, naming the argument, when an
// output does not span the whole domain, an input does not broadcast to it,
// or the rank exceeds 6.
Status NormalizeDomain(KernelIR& ir);

}  // namespace tessel::snippets
