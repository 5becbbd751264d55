// 2D images (OpenCL image2d_t, RGBA float texels) as the storage of values,
// after TVM's texture RFC (../shared/seeds/texture-memory-rfc.txt). A value
// in scope `texture` or `texture:weight` is laid out in one of the texel
// layouts of ir::Layout, and its N-d packed shape flattens to 2D by the
// RFC's conventions, the trailing 4 being the texel:
//
//   C0, texture         [A, B, C, D, 4] -> height A*B*C, width D
//       an NCHW4c activation [N, C/4, H, W, 4]: height N*C4*H, width W;
//       element (n, c, h, w) is lane c%4 of texel (w, (n*C4 + c/4)*H + h)
//   C1, texture:weight  [A, B, C, D, 4] -> height A, width B*C*D
//       OIHW4o weights [O/4, I4*4, KH, KW, 4]: height O4, width I4*4*KH*KW;
//       element (o, i, kh, kw) is lane o%4 of texel ((i*KH + kh)*KW + kw, o/4)
//       OHW4o depthwise weights [C/4, 1, KH, KW, 4]: height C4, width KH*KW
//
// Lanes past the last channel hold zeros (every kernel that writes a texel
// writes them), so a reduction over whole texels needs no tail.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace tessel::ir {

// The extent every OpenCL device with images offers at least (OpenCL 2.0
// and later: CL_DEVICE_IMAGE2D_MAX_WIDTH/HEIGHT >= 16384). Compile-time
// decisions check against it, so that they need no device; a device that
// offers less is refused when a model is prepared, naming the value.
inline constexpr int64_t kMinImage2dExtent = 16384;

struct TextureExtent {
  int64_t width = 0;   // texels
  int64_t height = 0;  // texels
  int64_t area() const { return width * height; }
  bool operator==(const TextureExtent&) const = default;
};

// Channels rounded up to whole texels.
inline int64_t Texels(int64_t channels) { return (channels + 3) / 4; }

// The 2D extent of a value of `shape` in texel layout `layout`: nullopt
// when the layout is not a texel layout or the shape is not one it takes
// (NCHW4c: rank 4; OIHW4o and OHW4o: rank 4, OHW4o with I == 1).
std::optional<TextureExtent> TextureExtentOf(const Shape& shape, Layout layout);
inline std::optional<TextureExtent> TextureExtentOf(const Value& v) {
  return TextureExtentOf(v.shape, v.layout);
}

// A tensor of `layout`'s logical (plain) shape, as texels: width * height
// * 4 floats, row by row, padded lanes zero. The tensor must be float32
// and have a texel extent in `layout`.
std::vector<float> PackTexels(const Tensor& t, Layout layout);

}  // namespace tessel::ir
