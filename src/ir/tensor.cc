#include "ir/tensor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#ifdef __linux__
#include <sys/mman.h>
#endif

namespace tessel {

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool CheckedByteSize(const Shape& shape, DType dtype, int64_t* bytes, int64_t* extent_bytes) {
  const int64_t element = static_cast<int64_t>(DTypeSize(dtype));
  int64_t extent = std::max<int64_t>(element, 1);
  bool empty = element == 0;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(extent, std::max<int64_t>(d, 1), &extent)) return false;
    empty = empty || d == 0;
  }
  *bytes = empty ? 0 : extent;
  if (extent_bytes) *extent_bytes = extent;
  return true;
}

std::string ShapeToString(const Shape& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += 'x';
    s += std::to_string(shape[i]);
  }
  return s;
}

std::vector<int64_t> StridesOf(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * shape[i + 1];
  }
  return strides;
}

namespace {

// Tensors of 4 MiB and more start on a 2 MiB boundary and ask Linux for
// transparent huge pages (madvise: many systems enable THP only on request).
// With 4 KiB pages a kernel streaming tens of MiB takes a TLB miss every
// 4 KiB of every stream, and in a VM each miss is a two-level page walk: the
// fused GeLU of bench/snippets streamed from DRAM about 1.35x slower for it
// on a 2-vCPU AMD EPYC VM (docs/benchmarks.md). The advice is best effort.
constexpr size_t kHugePageBytes = size_t{2} << 20;
constexpr size_t kHugePageMinBytes = size_t{4} << 20;

void* Allocate(size_t bytes) {
  void* p = nullptr;
  if (bytes >= kHugePageMinBytes) {
    if (::posix_memalign(&p, kHugePageBytes, bytes) != 0) p = nullptr;
#ifdef __linux__
    if (p != nullptr) ::madvise(p, bytes, MADV_HUGEPAGE);
#endif
  } else {
    p = std::aligned_alloc(64, bytes);
  }
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

// Storage of a tensor of `size_bytes`, rounded up so that zero-sized tensors
// still get a valid, unique pointer.
std::shared_ptr<void> Storage(size_t size_bytes, bool zeroed) {
  const size_t bytes = (size_bytes + 63) / 64 * 64 + 64;
  void* p = Allocate(bytes);
  if (zeroed) std::memset(p, 0, bytes);
  return std::shared_ptr<void>(p, std::free);
}

}  // namespace

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  for (int64_t d : shape_) TESSEL_CHECK_MSG(d >= 0, "negative dimension");
  storage_ = Storage(size_bytes(), /*zeroed=*/true);
  data_ = storage_.get();
}

Tensor Tensor::Uninitialized(DType dtype, Shape shape) {
  for (int64_t d : shape) TESSEL_CHECK_MSG(d >= 0, "negative dimension");
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.storage_ = Storage(t.size_bytes(), /*zeroed=*/false);
  t.data_ = t.storage_.get();
  return t;
}

Tensor Tensor::View(DType dtype, Shape shape, void* data, std::shared_ptr<void> keep_alive) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.storage_ = std::move(keep_alive);
  t.data_ = data;
  return t;
}

Tensor Tensor::Reshaped(Shape shape) const {
  TESSEL_CHECK(NumElements(shape) == num_elements());
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::Clone() const {
  Tensor t(dtype_, shape_);
  if (size_bytes() > 0) std::memcpy(t.data_, data_, size_bytes());
  return t;
}

double Tensor::GetAsDouble(int64_t i) const {
  return DispatchDType(dtype_, [&](auto tag) -> double {
    using T = decltype(tag);
    return ToDouble(static_cast<const T*>(data_)[i]);
  });
}

void Tensor::SetFromDouble(int64_t i, double v) {
  DispatchDType(dtype_, [&](auto tag) {
    using T = decltype(tag);
    static_cast<T*>(data_)[i] = FromDouble<T>(v);
  });
}

int64_t Tensor::GetAsInt64(int64_t i) const {
  return DispatchDType(dtype_, [&](auto tag) -> int64_t {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      return static_cast<int64_t>(static_cast<const T*>(data_)[i]);
    } else {
      return FromDouble<int64_t>(ToDouble(static_cast<const T*>(data_)[i]));
    }
  });
}

std::vector<int64_t> Tensor::ToInt64Vector() const {
  std::vector<int64_t> v(static_cast<size_t>(num_elements()));
  for (int64_t i = 0; i < num_elements(); ++i) v[i] = GetAsInt64(i);
  return v;
}

std::vector<float> Tensor::ToFloatVector() const {
  std::vector<float> v(static_cast<size_t>(num_elements()));
  for (int64_t i = 0; i < num_elements(); ++i) v[i] = static_cast<float>(GetAsDouble(i));
  return v;
}

template <>
Tensor Tensor::FromVector<bool>(const std::vector<bool>& values, Shape shape) {
  Tensor t(DType::kBool, std::move(shape));
  TESSEL_CHECK(static_cast<int64_t>(values.size()) == t.num_elements());
  bool* out = t.data<bool>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

}  // namespace tessel
