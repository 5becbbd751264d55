// What the nn op files (nn.cc, nn_conv.cc, nn_pool.cc, nn_norm.cc) share:
// reading and resolving sliding-window attributes, and running float kernels
// on the 16-bit float types. Defined in nn.cc unless said otherwise.
#pragma once

#include <string>
#include <vector>

#include "ops/op_registry.h"

namespace tessel::ops {

void RegisterConvOps(OpRegistry& r);  // nn_conv.cc
void RegisterPoolOps(OpRegistry& r);  // nn_pool.cc
void RegisterNormOps(OpRegistry& r);  // nn_norm.cc

// "[1,2,3]"
std::string IntsToString(const std::vector<int64_t>& v);
// An ints attribute with one value per spatial axis (n of them), each >= min_value.
Status ReadSpatialInts(const ir::Node& node, const char* name, size_t n, int64_t fallback,
                       int64_t min_value, std::vector<int64_t>* out);
Status ReadAutoPad(const ir::Node& node, std::string* auto_pad);
Status ReadPads(const ir::Node& node, size_t n, const std::string& auto_pad,
                std::vector<int64_t>* pads);
// Strides, dilations and pads (auto_pad resolved) and the output spatial shape
// of a sliding window of `kernel` over `in_spatial`.
Status ResolveWindow(const ir::Node& node, const Shape& in_spatial,
                     const std::vector<int64_t>& kernel, bool ceil_mode,
                     std::vector<int64_t>* strides, std::vector<int64_t>* dilations,
                     std::vector<int64_t>* pads, Shape* out_spatial);

// The resolved geometry of a Conv or ConvTranspose. `pads` holds the begin
// pads and then the end pads, one per spatial axis.
struct ConvGeometry {
  int64_t batch = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t group = 1;
  Shape in_spatial, out_spatial, kernel;
  std::vector<int64_t> strides, dilations, pads;
};
// The geometry of a ConvTranspose of input shape `x`, weights `w` and bias
// `b` (none: null), auto_pad, output_shape and output_padding resolved into
// pads and the output's spatial shape (nn_conv.cc).
Status ResolveConvTranspose(const ir::Node& node, const Shape& x, const Shape& w, const Shape* b,
                            ConvGeometry* g);
// Runs f32 on float32 (and on float16/bfloat16, widened and narrowed back), f64 on float64.
Status RunFloatKernel(KernelContext& ctx, KernelFn f32, KernelFn f64);

}  // namespace tessel::ops
