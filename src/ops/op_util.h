// Helpers shared by the op families: axis normalization, numpy broadcasting,
// dtype checks. Messages follow STYLE.md: name the node and the values.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::ops {

// Arithmetic on attribute and constant values (pads, strides, kernel sizes,
// repeats: any int64 a model may hold) is done in 128 bits, where sums and
// products of two int64 cannot overflow, and checked once with FitsInt64.
using WideInt = __int128;
inline bool FitsInt64(WideInt v) {
  return v >= std::numeric_limits<int64_t>::min() && v <= std::numeric_limits<int64_t>::max();
}
// floor(a / b) and ceil(a / b) for b > 0.
inline WideInt FloorDiv(WideInt a, WideInt b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline WideInt CeilDiv(WideInt a, WideInt b) { return -FloorDiv(-a, b); }

// Sets dtype, shape and shape_known of output i (if present).
void SetOutput(ir::Node& node, size_t i, DType dtype, Shape shape);

// axis in [-rank, rank) -> [0, rank); otherwise InvalidArgument naming `what`.
StatusOr<int64_t> NormalizeAxis(const ir::Node& node, int64_t axis, int64_t rank,
                                const char* what = "axis");

// Numpy (multidirectional) broadcasting of all `shapes`.
StatusOr<Shape> BroadcastShapes(const ir::Node& node, const std::vector<Shape>& shapes);

// Strides (in elements) to read an input of shape `in` while walking an output
// of shape `out` it broadcasts to: right-aligned, 0 on broadcast dimensions.
// The result has out.size() entries.
std::vector<int64_t> BroadcastStrides(const Shape& in, const Shape& out);

// Walks every index of `shape` in row-major order, keeping one running offset
// per stride set. Call fn(out_index, offsets) for each element.
//   BroadcastWalker w(out_shape, {StridesA, StridesB});
//   for (int64_t i = 0; i < n; ++i, w.Next()) out[i] = a[w.offset(0)] + b[w.offset(1)];
class BroadcastWalker {
 public:
  BroadcastWalker(const Shape& shape, std::vector<std::vector<int64_t>> strides);
  int64_t offset(size_t k) const { return offsets_[k]; }
  void Next();

 private:
  Shape shape_;
  std::vector<std::vector<int64_t>> strides_;
  std::vector<int64_t> index_;
  std::vector<int64_t> offsets_;
};

// Input i's dtype must be one of `allowed`.
// The shape a binary op reads B (PRelu: its slope) with against A: B itself
// from opset 7 on; before, B broadcast alone towards A (broadcast=1, axis)
// or PRelu's slope per channel. InvalidArgument naming the node when B does
// not fit. The elementwise kernels of every target read B so.
StatusOr<Shape> BinaryShapeOfB(const ir::Node& node, int opset, const Shape& a, const Shape& b);

Status RequireDType(const ir::Node& node, size_t i, std::initializer_list<DType> allowed);
// Input i's rank must be `rank`.
Status RequireRank(const ir::Node& node, size_t i, int64_t rank);
// All present inputs in `indices` must have the dtype of input `first`.
Status RequireSameDType(const ir::Node& node, std::initializer_list<size_t> indices);
// The constant payload of input i, or an Unsupported Status saying tessel needs
// it at compile time (static shapes).
StatusOr<const Tensor*> RequireConstantInput(const ir::Node& node, size_t i, const char* what);

// The float dtypes, for RequireDType.
inline constexpr std::initializer_list<DType> kFloatTypes = {DType::kFloat32, DType::kFloat16,
                                                             DType::kBFloat16, DType::kFloat64};

}  // namespace tessel::ops
