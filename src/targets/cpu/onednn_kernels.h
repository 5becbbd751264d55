// oneDNN-backed fast kernels (fast_kernel.h): Conv and tessel's FusedConv
// (any group count, stride, dilation, padding; bias, residual sum and
// ReLU/Clip as post-ops), Gemm and MatMul (batched, numpy broadcast),
// Softmax, MaxPool and AveragePool, LayerNormalization.
//
// Activations stay in tessel's plain layouts between nodes. A convolution
// lets oneDNN pick the layouts it runs fastest on (channels last for direct
// convolutions on AVX-512), or, in a graph whose layout is kBlocked16
// (ChooseActivationLayout), asks for nChw16c where the channels allow and
// runs 3x3 convolutions by Winograd. When the kernel's layout differs from
// the plain one, the input and output are reordered through planned scratch
// buffers around the primitive, unless NegotiateOneDnnLayouts found that the
// tensor only flows between kernels that can all take it in the graph's
// layout (of the size of the plain one): convolutions that picked that
// layout, and pooling and Concat, which run in any layout. Then it is stored
// so and nobody reorders it. Weights are reordered once, before the first
// run (PackWeights).
//
// Defined by primitive family: onednn_conv.cc (with the layout choice and
// negotiation), onednn_matmul.cc, onednn_norm.cc, onednn_pool.cc,
// onednn_reduce.cc, onednn_concat.cc; what they share is in
// onednn_internal.h.
#pragma once

#include <memory>

#include "targets/cpu/fast_kernel.h"

namespace tessel::cpu {

// Null when oneDNN cannot or should not run `node` (see SelectFastKernel).
// Constant weights are packed by PackWeights, before the first Run.
std::unique_ptr<FastKernel> MakeOneDnnConv(const ir::Node& node, int opset,
                                           ActivationLayout layout);
std::unique_ptr<FastKernel> MakeOneDnnMatMul(const ir::Node& node, int opset);
std::unique_ptr<FastKernel> MakeOneDnnGemm(const ir::Node& node, int opset);
// tessel's FusedMatMul: the bias as oneDNN's, the residual as a sum post-op.
std::unique_ptr<FastKernel> MakeOneDnnFusedMatMul(const ir::Node& node);
// Softmax over one axis (opset >= 13) or the flattened trailing axes (before).
std::unique_ptr<FastKernel> MakeOneDnnSoftmax(const ir::Node& node, int opset);
// MaxPool (without Indices, dilation 1) and AveragePool (ceil_mode 0), on
// the plain layout.
std::unique_ptr<FastKernel> MakeOneDnnPool(const ir::Node& node, int opset);
// ReduceMean and ReduceSum with axes known at compile time (null for
// ReduceMax and GlobalMaxPool: oneDNN drops NaN).
std::unique_ptr<FastKernel> MakeOneDnnReduce(const ir::Node& node, int opset);
// Concat of float32 tensors of rank 3-5 computed at run time.
std::unique_ptr<FastKernel> MakeOneDnnConcat(const ir::Node& node, int opset);

// See ChooseActivationLayout and NegotiateLayouts (fast_kernel.h).
ActivationLayout ChooseOneDnnActivationLayout(const ir::Graph& graph);
// Returns, by value id, whether the value is held in `layout` (else plain).
std::vector<bool> NegotiateOneDnnLayouts(const ir::Graph& graph,
                                         std::vector<std::unique_ptr<FastKernel>>& kernels,
                                         ActivationLayout layout);

}  // namespace tessel::cpu
