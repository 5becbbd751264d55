// Hand-written fast kernels (fast_kernel.h) for memory-bound ops where the
// reference kernel's generality costs: Transpose, Slice and Expand as one
// strided copy with collapsed dimensions, contiguous runs copied whole,
// matrices transposed by tiles, rows spread over the thread pool;
// ChannelShuffle as one gather, plain or channels last; Split and channel
// Slices, plain or channels last; reductions over contiguous axes and
// layer/instance norm by rows; Resize as a blend of rows and gathered columns.
#pragma once

#include <cstring>
#include <functional>
#include <memory>

#include "targets/cpu/fast_kernel.h"

namespace tessel::cpu {

// Copies `rows` rows of `row_bytes` each, from `in` (a row every
// `in_stride` bytes) to `out` (every `out_stride`): the short rows of
// channels-last splits, slices and concats (a few channels of every pixel)
// as 32-byte AVX2 moves with a masked tail, not a memcpy call per row;
// rows of more than 512 bytes, or not of 4-byte words, by memcpy.
void CopyRows(char* out, int64_t out_stride, const char* in, int64_t in_stride, int64_t row_bytes,
              int64_t rows);

// Slice: the strided copy (MakeStridedCopy); one that keeps a range of
// channels also runs channels last.
// Calls fn(first, last) over ranges covering [0, items): all on the calling
// thread when the kernel moves fewer than `bytes` worth a second thread
// (ParallelCopyBytes), else `per_thread` ranges per thread of the pool, so
// that uneven ranges balance.
void ForRanges(int64_t items, int64_t bytes, int per_thread,
               const std::function<void(int64_t, int64_t)>& fn);

std::unique_ptr<FastKernel> MakeSlice(const ir::Node& node, int opset);

// Null unless `node` is an InstanceNormalization of float32 (N, C, D...):
// the layer-norm rows kernel over each (n, c) plane.
std::unique_ptr<FastKernel> MakeInstanceNorm(const ir::Node& node);

// Null unless `node` is a ReduceSum, ReduceMean, ReduceSumSquare, ReduceL1,
// ReduceL2 or ReduceLogSum of float32 over constant axes that are contiguous
// (size-1 axes aside).
std::unique_ptr<FastKernel> MakeReduce(const ir::Node& node, int opset);

// Null unless `node` is a Transpose, a Slice with constant parameters or an
// Expand of a known output shape.
std::unique_ptr<FastKernel> MakeStridedCopy(const ir::Node& node, int opset);

// Null unless `node` is a Transpose: the strided copy, which also runs as
// a relayout (RelayoutKernel) when it moves the channels of float32
// between axis 1 and the last axis.
std::unique_ptr<FastKernel> MakeTranspose(const ir::Node& node, int opset);

// Null unless `node` is a view op (Reshape, Flatten, Squeeze, Unsqueeze) of
// known shapes: a copy skipped where input and output share a buffer; one
// that keeps axes 0 and 1 of float32 also runs channels last.
std::unique_ptr<FastKernel> MakeView(const ir::Node& node);

// Null unless `node` is a Resize or Upsample of floats with constant
// parameters that resamples only the last two axes.
std::unique_ptr<FastKernel> MakeResize(const ir::Node& node, int opset);

// Null unless `node` is a Pad in constant mode (of any dtype, negative pads
// cropping) with pads known at compile time, of an input with elements.
std::unique_ptr<FastKernel> MakePad(const ir::Node& node, int opset);

// Null unless `node` is a Gather whose indices are constants in range, or
// int32/int64 read at run time (an embedding lookup; an index out of range
// gets the reference kernel's error).
std::unique_ptr<FastKernel> MakeGather(const ir::Node& node);

// Null unless `node` is a LayerNormalization of floats (Y only) whose scale
// and bias cover the normalized axes exactly.
std::unique_ptr<FastKernel> MakeLayerNorm(const ir::Node& node);

// Null unless `node` is a Split whose outputs (all present) cover the axis;
// a split along the channels also runs channels last.
std::unique_ptr<FastKernel> MakeSplit(const ir::Node& node);

// Null unless `node` is a GlobalAveragePool of floats with pixels.
std::unique_ptr<FastKernel> MakeGlobalAverage(const ir::Node& node);
// ReduceMean over every axis after the first two (torch's x.mean([2, 3])):
// the same kernel as GlobalAveragePool, whatever keepdims says (the bytes
// are the same); nullptr for other axes.
std::unique_ptr<FastKernel> MakeSpatialMean(const ir::Node& node, int opset);

// A Subgraph node's JIT-compiled snippet (snippet_node_kernel.cc), which
// runs plain or channels last; null when the snippet compiler does not
// take the body (the reference kernel interprets it).
std::unique_ptr<FastKernel> MakeSnippetNodeKernel(const ir::Node& node);

// Null unless `node` is a tessel ChannelShuffle of typed inputs.
std::unique_ptr<FastKernel> MakeChannelShuffle(const ir::Node& node);

}  // namespace tessel::cpu
