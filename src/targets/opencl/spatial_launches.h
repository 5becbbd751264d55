// Kernel selection for the spatial ops beyond the 2-D images of
// op_launches.cc (kernels in spatial_kernels.cl.inc), decided without a
// device like op_launches.h's. Signals and images run as volumes whose
// leading spatial axes are 1. Every function appends a node's launches, or
// returns Unsupported naming the node and what it does not take.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "targets/opencl/op_launches.h"

namespace tessel::opencl::spatial_ops {

// MaxPool, AveragePool and LpPool of float32 signals, images and volumes
// (rank 3 to 5), with MaxPool's Indices (either storage_order): what
// op_launches.cc's f32_pool2d does not take.
Status PoolVolume(const NodeContext& c, std::vector<PendingLaunch>* out);

// MaxUnpool of 4-byte elements, rank 3 to 6: zeros, then a scatter.
Status MaxUnpool(const NodeContext& c, std::vector<PendingLaunch>* out);

// ConvTranspose of float32 signals, images and volumes: any strides, pads,
// output_padding, output_shape, dilations, group and auto_pad. One launch
// per phase of the output (its positions modulo the strides) as an
// implicit GEMM, or, with fewer than 16 output channels per group, one
// launch of an item per output.
Status ConvTranspose(const NodeContext& c, std::vector<PendingLaunch>* out);

// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss of float32 with
// int32 or int64 targets: any rank, reduction, weights, ignore_index, and
// SoftmaxCrossEntropyLoss's log_prob.
Status Loss(const NodeContext& c, std::vector<PendingLaunch>* out);

// GridSample (opset 16) of float32 images: every mode, padding_mode and
// align_corners, an item per output position over the channels.
Status GridSample(const NodeContext& c, std::vector<PendingLaunch>* out);

// Col2Im of float32 columns into images of 1 to 3 spatial axes, block_shape
// constant: an item per image element gathering the blocks over it.
Status Col2Im(const NodeContext& c, std::vector<PendingLaunch>* out);

// RoiAlign of float32 images: avg or max, either coordinate transform,
// any sampling_ratio; an item per output element.
Status RoiAlign(const NodeContext& c, std::vector<PendingLaunch>* out);

// The implicit-GEMM volume convolutions' taps (f32_conv3d_gemm_*): per
// k = (c, kd, kh, kw) of one group's weights, int32 {c * D * H * W +
// kd * DD * H * W + kh * DH * W + kw * DW, kd * DD, kh * DH, kw * DW}.
std::vector<unsigned char> VolumeConvTaps(int64_t cpg, const std::array<int64_t, 3>& in,
                                          const std::array<int64_t, 3>& kernel,
                                          const std::array<int64_t, 3>& dilations);

}  // namespace tessel::opencl::spatial_ops
