// The C-family emitter: a lowered snippet (kernel IR after InsertMemoryOps)
// as one C-like function in scalar notation, one element per call of the
// body. OpenCL C is a dialect of it (a small table of what differs: address
// spaces, the kernel keyword, where the element index comes from); a C
// dialect for microcontrollers can reuse the same renderer.
//
//   TESSEL_ASSIGN_OR_RETURN(KernelIR ir, LowerSubgraph(*node.body));
//   std::string src = EmitOpenClKernel(ir, "f32_snippet_3__opencl");
//
// The OpenCL kernel takes, for every argument in order, a pointer and an
// element offset (`__global float* a0, int a0_off`; bool arguments are
// `uchar`), then the number of elements of the domain (`int n`). Work item
// i computes element i of the row-major domain; items past n return. Semantics
// are those of the interpreter (interpreter.cc): the reference kernels', with
// OpenCL's built-in exp/log/erf/tanh/expm1 for the transcendentals.
#pragma once

#include <string>

#include "snippets/kernel_ir.h"

namespace tessel::snippets {

struct CDialect {
  const char* function_prefix;  // "__kernel void" | "void"
  const char* global_space;     // "__global " | ""
  // The element index of this call, as an int expression.
  const char* element_index;  // "get_global_id(0)" | "i"
  bool index_is_parameter;    // C: the index is the last parameter
};

// The OpenCL C 1.2 dialect.
const CDialect& OpenClDialect();

// Renders `ir.scalar_body` as a function named `name`. Precondition: `ir`
// went through InsertMemoryOps (it has a scalar tile).
std::string EmitCFamilyKernel(const KernelIR& ir, const std::string& name, const CDialect& dialect);

inline std::string EmitOpenClKernel(const KernelIR& ir, const std::string& name) {
  return EmitCFamilyKernel(ir, name, OpenClDialect());
}

}  // namespace tessel::snippets
