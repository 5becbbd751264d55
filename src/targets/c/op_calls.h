// The C target's op table: for one node of a compiled graph, the C99 that
// computes it (a call of the kernel library, kernels/*.c, with its
// parameters as a `static const` struct; a snippet function from the
// C-family emitter; or a few statements), given where every tensor lives as
// a C expression. One function decides it for both callers:
//
//   SelectKernels (compile time): BuildCall(node, placeholders) -> supported?
//   EmitC (emission): BuildCall(node, the planned addresses) -> the code
//
// Whether a node is supported depends on the graph alone (op, dtypes,
// shapes, attributes, constant inputs), never on the plan.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::ctarget {

// The kernel library's units (kernels/NAME.c), each a C99 fragment of
// static functions and parameter types.
struct KernelUnit {
  const char* name;    // "conv2d"
  const char* source;  // the file's text
};
// Every unit, in the order they are written (a unit uses only earlier ones).
const std::vector<KernelUnit>& KernelUnits();

// A tensor's first element as a C expression of its element type's pointer
// ("(float*)(ws_sram + 1024)", "inputs->input"), or "0" for a missing one.
using TensorExpr = std::function<std::string(const ir::Value*)>;

struct CallContext {
  const ir::Node& node;
  size_t index = 0;  // in the schedule: names the node's statics
  int opset = 0;
  TensorExpr tensor;
};

struct NodeCall {
  // "conv2d", "snippet", "copy", ...: the kernel, as the compiled model
  // records it (ir::KernelChoice::implementation).
  std::string kernel;
  std::vector<std::string> units;  // library units it calls
  std::string definitions;         // file scope: parameters, a snippet function
  std::string statements;          // in the entry function; may `return` an error
  int64_t macs = 0;                // multiply-accumulates (0 for data movement)
  int64_t bytes = 0;               // bytes read and written
};

// Unsupported, in one line naming the node and why, when the C target has no
// kernel for it.
StatusOr<NodeCall> BuildCall(const CallContext& context);

// The C type of an element of `dtype` ("float", "int64_t", "unsigned char"
// for bool), or null when the C target does not take it.
const char* CType(DType dtype);

// Error codes the entry function returns besides 0 (kernels that find bad
// data at run time): an index out of range.
inline constexpr int kErrorIndex = 3;

}  // namespace tessel::ctarget
