#include "ir/texture.h"

#include "core/check.h"

namespace tessel::ir {

std::optional<TextureExtent> TextureExtentOf(const Shape& shape, Layout layout) {
  if (shape.size() != 4) return std::nullopt;
  for (int64_t d : shape) {
    if (d < 1) return std::nullopt;
  }
  const int64_t a = shape[0], b = shape[1], c = shape[2], d = shape[3];
  switch (layout) {
    case Layout::kNCHW4c:
      return TextureExtent{.width = d, .height = a * Texels(b) * c};
    case Layout::kOIHW4o:
      return TextureExtent{.width = Texels(b) * 4 * c * d, .height = Texels(a)};
    case Layout::kOHW4o:
      if (b != 1) return std::nullopt;
      return TextureExtent{.width = c * d, .height = Texels(a)};
    default:
      return std::nullopt;
  }
}

std::vector<float> PackTexels(const Tensor& t, Layout layout) {
  const std::optional<TextureExtent> e = TextureExtentOf(t.shape(), layout);
  TESSEL_CHECK(e && t.dtype() == DType::kFloat32);
  std::vector<float> texels(static_cast<size_t>(e->area() * 4), 0.0f);
  const float* src = t.data<float>();
  const int64_t a = t.shape()[0], b = t.shape()[1], c = t.shape()[2], d = t.shape()[3];
  for (int64_t i0 = 0; i0 < a; ++i0) {
    for (int64_t i1 = 0; i1 < b; ++i1) {
      for (int64_t i2 = 0; i2 < c; ++i2) {
        for (int64_t i3 = 0; i3 < d; ++i3) {
          int64_t x = 0, y = 0, lane = 0;
          if (layout == Layout::kNCHW4c) {  // (n, c, h, w)
            x = i3, y = (i0 * Texels(b) + i1 / 4) * c + i2, lane = i1 % 4;
          } else if (layout == Layout::kOIHW4o) {  // (o, i, kh, kw)
            x = (i1 * c + i2) * d + i3, y = i0 / 4, lane = i0 % 4;
          } else {  // OHW4o: (c, 0, kh, kw)
            x = i2 * d + i3, y = i0 / 4, lane = i0 % 4;
          }
          texels[static_cast<size_t>((y * e->width + x) * 4 + lane)] =
              src[((i0 * b + i1) * c + i2) * d + i3];
        }
      }
    }
  }
  return texels;
}

}  // namespace tessel::ir
