// Shape and host Tensor.
//
// A Tensor is a dtype, a static shape and a pointer to densely packed,
// row-major elements. It either owns its storage (64-byte aligned, zeroed) or
// views memory owned elsewhere (an arena of the memory plan, a mapped file).
// Copies share storage; Clone() copies the elements.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/check.h"
#include "ir/dtype.h"

namespace tessel {

using Shape = std::vector<int64_t>;

int64_t NumElements(const Shape& shape);
// The bytes of a tensor of `shape` and `dtype`, in `*bytes`; false when a
// dimension is negative or when its dimensions, a 0 counted as 1, times the
// element size do not fit in int64_t. So a shape it accepts, even an empty
// one ({0, 2^62, 5} is refused), has no product of dimensions that
// overflows, whichever of them an op multiplies. Shapes from files and from
// shape inference go through this before any NumElements. `extent_bytes`,
// when given, receives that product: limits apply to it, because a kernel may
// allocate or loop along any dimension of an empty tensor.
bool CheckedByteSize(const Shape& shape, DType dtype, int64_t* bytes,
                     int64_t* extent_bytes = nullptr);
std::string ShapeToString(const Shape& shape);  // "1x3x224x224", "scalar"
// Row-major strides in elements.
std::vector<int64_t> StridesOf(const Shape& shape);

class Tensor {
 public:
  Tensor() = default;
  // Owns zero-initialized storage.
  Tensor(DType dtype, Shape shape);
  // Owns storage left as the allocator gives it, for a caller that writes
  // every byte before anyone reads (a device's output copied back).
  static Tensor Uninitialized(DType dtype, Shape shape);
  // Views `data`; `keep_alive` (optional) holds whatever owns it.
  static Tensor View(DType dtype, Shape shape, void* data,
                     std::shared_ptr<void> keep_alive = nullptr);

  bool defined() const { return dtype_ != DType::kUndefined; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[static_cast<size_t>(i)]; }
  int64_t num_elements() const { return NumElements(shape_); }
  size_t size_bytes() const { return static_cast<size_t>(num_elements()) * DTypeSize(dtype_); }

  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }

  template <typename T>
  T* data() {
    TESSEL_CHECK_MSG(DTypeOf<T>() == dtype_, DTypeName(dtype_));
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* data() const {
    TESSEL_CHECK_MSG(DTypeOf<T>() == dtype_, DTypeName(dtype_));
    return static_cast<const T*>(data_);
  }

  // A tensor of the same storage with another shape of equal element count.
  Tensor Reshaped(Shape shape) const;
  Tensor Clone() const;

  // Element i converted to double / int64 (any dtype). For constants and tests.
  double GetAsDouble(int64_t i) const;
  // Element i set to `v` converted to the dtype (static_cast semantics,
  // round-to-nearest for 16-bit floats). For reference kernels.
  void SetFromDouble(int64_t i, double v);
  int64_t GetAsInt64(int64_t i) const;
  // All elements as int64 (shape-like inputs: int32/int64 and friends).
  std::vector<int64_t> ToInt64Vector() const;
  std::vector<float> ToFloatVector() const;

  // Scalars and vectors, for tests and constant folding.
  template <typename T>
  static Tensor FromVector(const std::vector<T>& values, Shape shape);

 private:
  DType dtype_ = DType::kUndefined;
  Shape shape_;
  std::shared_ptr<void> storage_;
  void* data_ = nullptr;
};

template <typename T>
Tensor Tensor::FromVector(const std::vector<T>& values, Shape shape) {
  Tensor t(DTypeOf<T>(), std::move(shape));
  TESSEL_CHECK(static_cast<int64_t>(values.size()) == t.num_elements());
  T* out = t.data<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}
template <>
Tensor Tensor::FromVector<bool>(const std::vector<bool>& values, Shape shape);

// Value conversion between element types: static_cast semantics, with 16-bit
// floats through float, except that a value out of an integer type's range
// saturates and NaN becomes 0 (ONNX leaves those results undefined; C++
// would make the conversion itself undefined).
template <typename T>
inline double ToDouble(T v) {
  return static_cast<double>(v);
}
template <>
inline double ToDouble<Half>(Half v) {
  return HalfToFloat(v.bits);
}
template <>
inline double ToDouble<BFloat16>(BFloat16 v) {
  return BFloat16ToFloat(v.bits);
}

template <typename T>
inline T FromDouble(double v) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (std::isnan(v)) return T{0};
    // The bounds as doubles: the lowest is exact, max + 1 is a power of two.
    constexpr double kLowest = static_cast<double>(std::numeric_limits<T>::lowest());
    constexpr double kAboveMax =
        2.0 * static_cast<double>(T{1} << (std::numeric_limits<T>::digits - 1));
    if (v <= kLowest) return std::numeric_limits<T>::lowest();
    if (v >= kAboveMax) return std::numeric_limits<T>::max();
  }
  return static_cast<T>(v);
}
template <>
inline Half FromDouble<Half>(double v) {
  return Half{FloatToHalf(static_cast<float>(v))};
}
template <>
inline BFloat16 FromDouble<BFloat16>(double v) {
  return BFloat16{FloatToBFloat16(static_cast<float>(v))};
}

}  // namespace tessel
