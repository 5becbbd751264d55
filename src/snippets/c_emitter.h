// The C-family emitter: a lowered snippet (kernel IR after InsertMemoryOps)
// as one C-like function in scalar notation. Two dialects share the renderer
// of the instructions; a small table says what differs:
//
//   OpenCL C 1.2   one element per work item (get_global_id), every argument
//                  a __global pointer and an element offset, overloaded math
//                  (exp), bool arguments as uchar;
//   C99            one static function that loops over the whole domain,
//                  innermost axis last with constant strides (unit stride
//                  where the argument is contiguous, so a C compiler
//                  vectorises it), arguments as plain pointers already at
//                  their element, float math (expf), bool as unsigned char.
//
//   TESSEL_ASSIGN_OR_RETURN(KernelIR ir, LowerSubgraph(*node.body));
//   std::string cl = EmitOpenClKernel(ir, "f32_snippet_3__opencl");
//   std::string c = EmitC99Kernel(ir, "snippet_3");
//
// The OpenCL kernel takes, for every argument in order, a pointer and an
// element offset (`__global float* a0, int a0_off`), then the number of
// elements of the domain (`int n`); items past n return. The C function
// takes one pointer per argument (`const float* a0, float* a2`) and no
// count: the domain is compiled in. No pointer is `restrict`: a snippet may
// write its output over an input (planned in place). Semantics are those of
// the interpreter (interpreter.cc): the reference kernels', with the
// dialect's libm for the transcendentals.
#pragma once

#include <string>
#include <vector>

#include "snippets/kernel_ir.h"

namespace tessel::snippets {

struct CDialect {
  const char* function_prefix;  // "__kernel void" | "static void"
  const char* global_space;     // "__global " | ""
  const char* bool_type;        // "uchar" | "unsigned char"
  // Appended to a math function's name: "" (OpenCL's overloads), "f" (C99's
  // float functions: expf).
  const char* math_suffix;
  // Whether one call computes one element (OpenCL: the work item's) rather
  // than loop over the domain (C99).
  bool one_element_per_call;
};

// The OpenCL C 1.2 dialect, and C99's.
const CDialect& OpenClDialect();
const CDialect& C99Dialect();

// `f` as a C float literal that reads back to the same bits: a hex float
// ("0x1.99999ap-4f"), NAN, INFINITY or (-INFINITY) (C99's math.h macros).
std::string CFloatLiteral(float f);

// `text` made safe inside a C block comment: "*/" and trigraph-like "??"
// broken apart (names from a model may hold anything).
std::string CCommentText(std::string text);

// Renders `ir.scalar_body` as a function named `name`. Precondition: `ir`
// went through InsertMemoryOps (it has a scalar tile).
std::string EmitCFamilyKernel(const KernelIR& ir, const std::string& name, const CDialect& dialect);

// Whether `ir` can run on NCHW4c images (EmitOpenClImageKernel): one
// float output of rank 4 with the domain's shape, every argument of rank
// at most 4 and broadcasting to it.
bool ImageSnippetShapes(const KernelIR& ir);

// The snippet as an OpenCL kernel over NCHW4c images (ir/texture.h): one
// work item per texel of the output (global size W x N*C4*H), its four
// lanes computed by the scalar body. Argument k is an image when
// `image_args[k]` (float, rank 4; passed as image, x, y: the corner of its
// region), else a buffer and an element offset as in the buffer kernel;
// the output must be an image. An input broadcast over channels reads lane
// 0 of its texel; lanes past the last channel are written as zeros.
// Shapes are compiled in. Precondition: ImageSnippetShapes(ir).
std::string EmitOpenClImageKernel(const KernelIR& ir, const std::string& name,
                                  const std::vector<bool>& image_args);

inline std::string EmitOpenClKernel(const KernelIR& ir, const std::string& name) {
  return EmitCFamilyKernel(ir, name, OpenClDialect());
}
inline std::string EmitC99Kernel(const KernelIR& ir, const std::string& name) {
  return EmitCFamilyKernel(ir, name, C99Dialect());
}

}  // namespace tessel::snippets
