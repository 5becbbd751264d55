// The portable fallback: runs a lowered kernel's vector tile in C++, a block
// of elements at a time, under the same KernelCall convention as the x86
// code. Used when the CPU has neither AVX2 nor AVX-512, when the isa is "generic",
// and when code generation fails. Every op computes exactly what the
// reference kernel in src/ops computes (the same expressions and the same
// std:: functions), so interpreter results equal the reference's bit for bit.
#pragma once

#include "snippets/kernel_call.h"
#include "snippets/kernel_ir.h"

namespace tessel::snippets {

// Precondition: `ir` is lowered (LowerSubgraph).
void Interpret(const KernelIR& ir, const KernelCall& call);

}  // namespace tessel::snippets
