// Where the OpenCL target keeps each value: in a buffer (global memory) or
// in a 2D image (texture), decided at select-kernels together with each
// node's kernel, like the RFC's CollectStorageInfo
// (../shared/seeds/texture-memory-rfc.txt).
//
//   TESSEL_ASSIGN_OR_RETURN(Storage s, ParseStorage(spec.Option("storage", "buffer")));
//   StorageDecisions d = CollectStorageInfo(graph, s);
//
// With Storage::kTexture, an activation lives in a texture (NCHW4c) when
// the node that writes it and every node that reads it have image kernels
// (texture_launches.h), and it fits the 2D extents every device offers
// (ir::kMinImage2dExtent); a constant that image kernels read as weights
// lives in a texture:weight image (OIHW4o / OHW4o). Graph inputs and
// outputs stay buffers (the caller's memory). So no buffer-only kernel ever
// reads an image: what crosses from buffers to images is converted by the
// image node itself, into a scratch texture recycled between launches
// (A0: an input a convolution reads many times staged into a texture), and
// an image node whose output stays a buffer writes a scratch texture and
// converts it. An image node is one with an image kernel and at least one
// activation operand (an input or its output) in a texture; the others run
// their buffer kernels.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "model/target.h"
#include "targets/opencl/texture_launches.h"

namespace tessel::opencl {

// kAuto is the target's option only: it resolves per graph and device to
// one of the others (storage_calibration.h) before anything is decided.
enum class Storage { kBuffer, kTexture, kAuto };
// "buffer", "texture" or "auto"; InvalidArgument naming the choices
// otherwise.
StatusOr<Storage> ParseStorage(const std::string& text);
const char* StorageName(Storage s);

struct StorageDecisions {
  std::vector<bool> image_node;                 // by node index: runs its image kernel
  std::vector<targets::ValuePlacement> values;  // by value id
  // Activations that stay buffers because their image would be too large
  // for an OpenCL device, one line each: for --verbose.
  std::vector<std::string> notes;
};

StorageDecisions CollectStorageInfo(const ir::Graph& graph, Storage storage);

// How `node` runs on images, when it can (without a device): its op's image
// kernel (TextureKernelOperands), or, for a snippet, the snippet emitted
// over images (snippets::EmitOpenClImageKernel), which reads its float
// rank-4 activations as images and the rest (constants, bools, lower
// ranks) from buffers.
std::optional<TextureOperands> ImageKernelOperands(const ir::Node& node, int opset);
// Whether a snippet reads `v` as an image.
bool IsSnippetImageArg(const ir::Value& v);

}  // namespace tessel::opencl
