// Typed elementwise kernels: one OpenCL C kernel per node, emitted at plan
// time like the snippets, for the elementwise ops that neither the snippets
// (float32 and bool) nor the op library run: every dtype a buffer holds
// (int8..uint64, float16 and bfloat16 as 16-bit storage computed in float,
// float64 where the device has cl_khr_fp64, bool as uchar), any numpy
// broadcast of the inputs, and the float ops the snippets lack (Sin, Mish,
// IsInf, ...). The kernel computes what the reference kernels (src/ops/
// elementwise.cc) compute, in the same types, with the same conversions.
//
//   PlanLaunches (launch_plan.cc), a node the snippets and BuildNodeLaunches
//   refused:
//     TESSEL_ASSIGN_OR_RETURN(std::optional<TypedElementwise> k,
//                             PlanTypedElementwise(node, opset));
//     if (k) append TypedElementwiseLaunches(*k, ctx, TypedKernelName(*k, i));
//   EmitProgram (executor.cc), into the snippets' program:
//     TypedElementwisePrelude() once, then EmitTypedElementwise(*k, name) each.
//
// The kernel's source depends on the op, its attributes, the dtypes and the
// rank alone; the shapes and strides are arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "targets/opencl/op_launches.h"
#include "targets/opencl/runtime.h"

namespace tessel::opencl {

// Axes a typed kernel walks, after merging the ones every operand walks as
// one: its strides travel as an int8 argument.
inline constexpr int kMaxTypedRank = 8;

// What a typed kernel computes for one node: typed data, from which its
// source and its launch are derived.
struct TypedElementwise {
  std::string op;  // the ONNX op_type (CastLike: Cast)
  // The node inputs the kernel reads, by position (Clip's absent bounds and
  // CastLike's second input are left out), and their dtypes.
  std::vector<int> operands;
  std::vector<DType> dtypes;
  DType output = DType::kUndefined;
  // The output's axes, outermost first, merged where every operand walks
  // them as one (at most kMaxTypedRank; none for one element), and each
  // operand's element strides along them (0: broadcast).
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides;
  // The op's float attributes (Celu's alpha; Shrink's lambd, bias; HardSigmoid's
  // alpha, beta; Clip before opset 11: min, max) and its mode (Mod's fmod;
  // BitShift: 1 left; IsInf: 1 detect_positive | 2 detect_negative; Gelu: 1
  // tanh; Clip: 1 min read, 2 max read).
  float alpha = 0, beta = 0;
  int64_t mode = 0;
  // The kernel computes in double: it needs cl_khr_fp64.
  bool needs_fp64 = false;
};

// The typed kernel of `node` when it is an elementwise op this path knows
// (nullopt for any other op); Unsupported, naming the node, for a dtype,
// attribute or shape it does not take. Shapes must be known.
StatusOr<std::optional<TypedElementwise>> PlanTypedElementwise(const ir::Node& node, int opset);

// "<output dtype>_<op>_<node index>__opencl": "f16_cast_3__opencl".
std::string TypedKernelName(const TypedElementwise& k, size_t index);

// The helper functions every typed kernel calls (16-bit float conversions,
// integer powers): once per program, before the kernels.
const std::string& TypedElementwisePrelude();

// The kernel's OpenCL C, named `name`: kernel arguments (operand buffer,
// offset)..., (output buffer, offset), int n, int8 dims, int8 strides per
// operand. A double kernel is compiled only where cl_khr_fp64 is.
std::string EmitTypedElementwise(const TypedElementwise& k, const std::string& name);

// The launch of the kernel `name` for `ctx.node` (one work item per output
// element); none when the output is empty.
std::vector<PendingLaunch> TypedElementwiseLaunches(const TypedElementwise& k,
                                                    const NodeContext& ctx,
                                                    const std::string& name);

// Unsupported, naming the first node, when a typed kernel of `typed` (by
// node index) computes in double and `dev` has no cl_khr_fp64.
Status CheckTypedKernelsRun(const std::vector<std::optional<TypedElementwise>>& typed,
                            const ir::Graph& graph, const DeviceInfo& dev);

}  // namespace tessel::opencl
