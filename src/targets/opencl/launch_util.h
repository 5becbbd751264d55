// Helpers shared by the builders of op launches (op_launches.cc,
// index_launches.cc, spatial_launches.cc; internal to the OpenCL target):
// shapes as the kernels' int8 arguments, launch geometries, the strided
// copy and the Unsupported of a node.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "targets/opencl/op_launches.h"
#include "targets/opencl/work_size.h"

namespace tessel::opencl {

// An int8 argument of the kernels: 6 dims used (s0 outermost).
using Dims6 = std::array<int64_t, 8>;

// ROW_WG of the row kernels (kernels.cl.inc), whose reqd_work_group_size
// fixes it: the two must agree.
inline constexpr int64_t kRowGroup = 128;

// The product of s[begin, end).
int64_t Product(const Shape& s, size_t begin, size_t end);

int64_t Bytes(const ir::Value* v);

// Unsupported naming `node`: "<node>: the OpenCL target <why>".
Status Unsupported(const ir::Node& node, const std::string& why);

// `v` (dims or strides, outermost first, at most 6) right-aligned into 6
// dims, `fill` before it.
Dims6 Pad6(const std::vector<int64_t>& v, int64_t fill = 1);

// Row-major element strides of `s`, right-aligned into 6 dims.
Dims6 Strides6(const Shape& s);

// The kernel-name prefix moving elements of `dtype` as they are: b8, b16,
// b32 or b64.
StatusOr<const char*> MovePrefix(const ir::Node& node, DType dtype);

LaunchGeometry Linear(int64_t n);
LaunchGeometry Grid(int64_t x, int64_t y, int64_t z = 1);

// One work-group of kRowGroup items per row (the *_rows kernels).
LaunchGeometry Rows(int64_t rows);

// How many elements of `elem_size` bytes a 16-byte move takes at once: the
// copies of contiguous runs whose lengths, strides and offsets (`multiples`)
// are all multiples of it move uint4s (b128); else 1.
int64_t VectorFactor(size_t elem_size, std::initializer_list<int64_t> multiples);

// Input `input` of the node as int64s, which must be known at compile time
// (none: empty).
StatusOr<std::vector<int64_t>> ConstantInts(const NodeContext& c, size_t input, const char* what);

// A strided copy of `in` into `out` (kernels.cl.inc's <bN>_strided_copy):
// `dims` walks both, reading `in` at strides `xs` and writing `out` at
// `ys`, each tensor's offset moved on by `x_extra` / `y_extra` elements.
// Axes both walk as one are merged, and contiguous runs move 16 bytes at
// once where they can.
Status StridedCopy(const NodeContext& c, const ir::Value* in, const ir::Value* out, Dims6 dims,
                   Dims6 xs, Dims6 ys, int64_t x_extra, int64_t y_extra,
                   std::vector<PendingLaunch>* launches);

}  // namespace tessel::opencl
