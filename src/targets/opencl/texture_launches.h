// PLACEHOLDER until the image kernels land (branch texk): the API the
// storage decision and the launch plan use.
#pragma once

#include <optional>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "targets/opencl/op_launches.h"

namespace tessel::opencl {

struct TextureOperands {
  std::vector<int> image_inputs;  // inputs read as NCHW4c images
  int weight_input = -1;          // the input read as a texture:weight image, or -1
  ir::Layout weight_layout = ir::Layout::kPlain;
};

std::optional<TextureOperands> TextureKernelOperands(const ir::Node& node, int opset);

Status BuildTextureNodeLaunches(const NodeContext& ctx, std::vector<PendingLaunch>* out);

void AppendBufferToTexture(const TensorRef& src, const Shape& shape, const TensorRef& dst,
                           std::vector<PendingLaunch>* out);
void AppendTextureToBuffer(const TensorRef& src, const Shape& shape, const TensorRef& dst,
                           std::vector<PendingLaunch>* out);

}  // namespace tessel::opencl
