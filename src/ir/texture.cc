#include "ir/texture.h"

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

}  // namespace tessel::ir
