// Canonicalization: a Subgraph body (ONNX elementwise nodes) becomes kernel
// IR in scalar notation — kParameter for every body input, compute
// instructions, kResult for every body output.
//
// Along the way, each ONNX op is rewritten into the RISC-like kernel op set:
// scalar constants become kScalar immediates, Pow with a constant integer
// exponent becomes PowerStatic, Relu/Clip/HardSigmoid/HardSwish/Softsign
// decompose into clamps and arithmetic in the exact order the reference
// kernels compute them, variadic Max/Min/Sum/Mean fold left to right, and the
// boolean ops map onto arithmetic on 0.0/1.0.
#pragma once

#include "core/status.h"
#include "ir/graph.h"
#include "snippets/kernel_ir.h"

namespace tessel::snippets {

// True when `node` (typed) can be part of a snippet: an ONNX elementwise or
// broadcasting op from the supported list, float32 data (bool for
// predicates, logic and Where's condition), an output of rank <= 6 with at
// least one element, and any input that must be known at compile time (Pow's
// exponent, Clip's bounds) a constant scalar.
bool IsFusable(const ir::Node& node, int opset);

// Precondition: `body` is typed, its nodes are all IsFusable, its inputs are
// float32 or bool, and its only constants are scalars (one element).
// Fills name-independent fields of the result: args (shapes, dtypes; no
// strides yet), body, num_values, source_ops.
StatusOr<KernelIR> Canonicalize(const ir::Graph& body);

}  // namespace tessel::snippets
