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

#include <array>
#include <memory>
#include <vector>

#include "targets/cpu/fast_kernel.h"

namespace tessel::cpu {

// Null when oneDNN cannot or should not run `node` (see SelectFastKernel).
// Constant weights are packed by PackWeights, before the first Run.
std::unique_ptr<FastKernel> MakeOneDnnConv(const ir::Node& node, int opset,
                                           ActivationLayout layout);
// Operands of a MatMul held as the Transposes next to it lie, by their
// permutations (empty: plain): input k as the input of the Transpose that
// produced it (ir::Layout::kUnpermuted), the output as the output of the
// Transpose that reads it (ir::Layout::kPermuted).
struct TransposedOperands {
  std::array<std::vector<int64_t>, 2> inputs;
  std::vector<int64_t> output;
};
std::unique_ptr<FastKernel> MakeOneDnnMatMul(const ir::Node& node, int opset,
                                             const TransposedOperands& transposed = {});
std::unique_ptr<FastKernel> MakeOneDnnGemm(const ir::Node& node, int opset);
// tessel's FusedMatMul: the bias as oneDNN's, the residual as a sum post-op;
// its input 0 and output may be held transposed as for MatMul (its
// weights, input 1, are constants; no residual with a permuted output).
std::unique_ptr<FastKernel> MakeOneDnnFusedMatMul(const ir::Node& node,
                                                  const TransposedOperands& transposed = {});
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

// After NegotiateLayouts: a plain Transpose whose output only a MatMul
// reads, as an operand (attention's q, k and v heads, k transposed), or
// that alone reads a MatMul's output (the heads merged back), or the same
// around a FusedMatMul's input 0 and output (CaiT's talking heads, a Linear
// over the heads' axis), is made a
// view (RelayoutKernel::Mode::kUnpermuted or kPermuted; the tensor between
// them held ir::Layout::kUnpermuted or kPermuted in `layouts`) when
// oneDNN's matrix product reads or writes it through the permuted strides
// with the implementation it picks for the plain product (brgemm on
// AVX-512 and AVX2); the MatMul's kernel is rebuilt so.
void ReadTransposesStrided(const ir::Graph& graph,
                           std::vector<std::unique_ptr<FastKernel>>& kernels,
                           std::vector<ir::Layout>& layouts);

// See ChooseActivationLayout and NegotiateLayouts (fast_kernel.h).
ActivationLayout ChooseOneDnnActivationLayout(const ir::Graph& graph);
// Returns, by value id, whether the value is held in `layout` (else plain).
std::vector<bool> NegotiateOneDnnLayouts(const ir::Graph& graph,
                                         std::vector<std::unique_ptr<FastKernel>>& kernels,
                                         ActivationLayout layout);

}  // namespace tessel::cpu
