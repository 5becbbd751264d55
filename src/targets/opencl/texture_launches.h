// Kernel selection for the image kernels (texture_kernels.cl.inc): which
// nodes have one, which of their operands are images, and their launches,
// decided without a device like op_launches.h's. Activations are NCHW4c
// images, weights OIHW4o or OHW4o images (ir/texture.h); a TensorRef of an
// image names the plan's image and the corner of the tensor's region in it.
//
//   std::optional<TextureOperands> ops = TextureKernelOperands(node, opset);
//   // ... decide storage; images for ops->image_inputs and the output,
//   // a texture:weight image of ops->weight_layout for ops->weight_input ...
//   TESSEL_RETURN_IF_ERROR(BuildTextureNodeLaunches(ctx, &launches));
//
// An image kernel reads its inputs through __read_only image2d_t arguments
// and writes its output through a __write_only one: in OpenCL 1.2 one
// kernel may not read and write the same image object, so the output's
// image must be another image than every image the node reads.
#pragma once

#include <optional>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "targets/opencl/op_launches.h"

namespace tessel::opencl {

// How a node's image kernel takes its operands. The output (output 0) is
// always an NCHW4c image; inputs neither listed nor the weight (a
// convolution's bias) are buffers.
struct TextureOperands {
  std::vector<int> image_inputs;  // inputs read as NCHW4c images (present ones only)
  int weight_input = -1;          // the input read as a texture:weight image, or -1
  ir::Layout weight_layout = ir::Layout::kPlain;  // kOIHW4o or kOHW4o with a weight
};

// Whether `node` has an image kernel, and how it takes its operands;
// Unsupported, naming the node and why, when not. Device independent: every
// image operand and the output must fit ir::kMinImage2dExtent. Supported:
//   Conv, FusedConv  float32, rank 4, group 1 (weights kOIHW4o) or
//                    depthwise, group == C == OC (kOHW4o); weights and
//                    bias constant; any kernel, strides, dilations, pads
//                    and auto_pad; FusedConv's residual and activation
//   MaxPool, AveragePool  float32, rank 4, any window (ceil_mode,
//                    dilations, count_include_pad); no Indices output
//   GlobalAveragePool, GlobalMaxPool  float32, rank 4
//   Concat           float32, rank 4, along channels, every input but the
//                    last with a multiple of 4 channels
//   Add, Sub, Mul, Div  float32, rank 4, both inputs of the output's shape
//   Relu, Sigmoid, LeakyRelu, HardSigmoid, HardSwish, Clip (bounds
//                    constant)  float32, rank 4
StatusOr<TextureOperands> CheckTextureKernel(const ir::Node& node, int opset);
inline std::optional<TextureOperands> TextureKernelOperands(const ir::Node& node, int opset) {
  StatusOr<TextureOperands> ops = CheckTextureKernel(node, opset);
  if (!ops.ok()) return std::nullopt;
  return std::move(ops).value();
}
inline bool HasTextureKernel(const ir::Node& node, int opset) {
  return CheckTextureKernel(node, opset).ok();
}

// Appends the launches of a node CheckTextureKernel accepts, with its
// image operands and output in images (ctx.ref gives their image refs; the
// weight's is a texture:weight image, the bias's a buffer). Unsupported,
// naming the node, for others.
Status BuildTextureNodeLaunches(const NodeContext& ctx, std::vector<PendingLaunch>* out);

// A float32 NCHW tensor of rank-4 `shape` in buffer `src` converted into
// the NCHW4c region of image `dst`, and back; pad lanes are written zero.
// The launch belongs to node `node` (PendingLaunch::node).
void AppendBufferToTexture(const TensorRef& src, const Shape& shape, const TensorRef& dst,
                           std::vector<PendingLaunch>* out, int node = -1);
void AppendTextureToBuffer(const TensorRef& src, const Shape& shape, const TensorRef& dst,
                           std::vector<PendingLaunch>* out, int node = -1);

}  // namespace tessel::opencl
