#include "targets/opencl/texture_launches.h"

namespace tessel::opencl {

std::optional<TextureOperands> TextureKernelOperands(const ir::Node&, int) { return std::nullopt; }

Status BuildTextureNodeLaunches(const NodeContext& ctx, std::vector<PendingLaunch>*) {
  return Unsupported(ctx.node.Describe() + ": no image kernel yet");
}

void AppendBufferToTexture(const TensorRef&, const Shape&, const TensorRef&,
                           std::vector<PendingLaunch>*) {}
void AppendTextureToBuffer(const TensorRef&, const Shape&, const TensorRef&,
                           std::vector<PendingLaunch>*) {}

}  // namespace tessel::opencl
