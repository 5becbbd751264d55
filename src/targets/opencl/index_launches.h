// Kernel selection for the index, scatter/gather and along-axis ops
// (index_kernels.cl.inc): ArgMax/ArgMin, Hardmax, CumSum, TopK,
// LpNormalization, RMSNormalization, LRN, ReduceLogSumExp, Trilu, EyeLike,
// Tile, DepthToSpace, SpaceToDepth, Compress, ReverseSequence,
// GatherElements, ScatterElements (and Scatter), ScatterND, OneHot, Einsum.
//
// Each function appends the node's launches, or returns Unsupported naming
// the node for what its kernels do not take (a dtype, more than 6 dims,
// a shape-deciding input not known at compile time). Inputs that decide
// shapes or kernel arguments (axes, K, repeats, depth, Compress's condition)
// must be constants; index tensors (GatherElements, ScatterElements,
// ScatterND, OneHot, Trilu's k, ReverseSequence's lengths) are read by the
// kernels at run time. A negative index wraps; an index still out of range
// is clamped into its axis (OneHot: selects nothing), never read or written
// out of bounds. Registered in op_launches.cc's KernelTable().
#pragma once

#include <vector>

#include "core/status.h"
#include "targets/opencl/op_launches.h"

namespace tessel::opencl::index_ops {

// ArgMax, ArgMin: float32, int32, int64 data; int64 indices out.
Status ArgExtreme(const NodeContext& c, std::vector<PendingLaunch>* out);
// Hardmax: float32 (before opset 13 over the flattened tail from `axis`).
Status Hardmax(const NodeContext& c, std::vector<PendingLaunch>* out);
// CumSum: float32, int32, int64 (float64 where the device has cl_khr_fp64).
Status CumSum(const NodeContext& c, std::vector<PendingLaunch>* out);
// TopK: float32, int32, int64, uint64 values; outputs sorted.
Status TopK(const NodeContext& c, std::vector<PendingLaunch>* out);
// LpNormalization (p 1 or 2), RMSNormalization, LRN: float32.
Status LpNormalization(const NodeContext& c, std::vector<PendingLaunch>* out);
Status RmsNormalization(const NodeContext& c, std::vector<PendingLaunch>* out);
Status Lrn(const NodeContext& c, std::vector<PendingLaunch>* out);
// ReduceLogSumExp over any axes of at most 6 dims: float32 (float64 where
// the device has cl_khr_fp64).
Status ReduceLogSumExp(const NodeContext& c, std::vector<PendingLaunch>* out);
// Element moves of any 1- to 8-byte dtype.
Status Trilu(const NodeContext& c, std::vector<PendingLaunch>* out);
Status EyeLike(const NodeContext& c, std::vector<PendingLaunch>* out);
Status Tile(const NodeContext& c, std::vector<PendingLaunch>* out);
Status DepthToSpace(const NodeContext& c, std::vector<PendingLaunch>* out);
Status SpaceToDepth(const NodeContext& c, std::vector<PendingLaunch>* out);
Status Compress(const NodeContext& c, std::vector<PendingLaunch>* out);
Status ReverseSequence(const NodeContext& c, std::vector<PendingLaunch>* out);
Status GatherElements(const NodeContext& c, std::vector<PendingLaunch>* out);
Status OneHot(const NodeContext& c, std::vector<PendingLaunch>* out);
// ScatterElements, Scatter and ScatterND: float32, int32, int64 data, every
// reduction (none, add, mul, max, min); a copy of the data, then the updates.
Status ScatterElements(const NodeContext& c, std::vector<PendingLaunch>* out);
Status ScatterNd(const NodeContext& c, std::vector<PendingLaunch>* out);

// Einsum of one or two inputs, at most 6 output and 6 summed labels:
// float32, int32, int64, bfloat16 (summed in float32), float64 where the
// device has cl_khr_fp64.
Status Einsum(const NodeContext& c, std::vector<PendingLaunch>* out);

}  // namespace tessel::opencl::index_ops
