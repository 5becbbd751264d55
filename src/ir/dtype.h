// Element types. The numbering is tessel's own (the compiled-model format
// stores it); the ONNX mapping lives in onnx/tensor_io.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace tessel {

enum class DType : uint8_t {
  kUndefined = 0,
  kFloat32,
  kFloat16,
  kBFloat16,
  kFloat64,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kBool,
};
inline constexpr int kNumDTypes = 14;

const char* DTypeName(DType t);  // "float32", "int64", ...
size_t DTypeSize(DType t);       // bytes per element; 0 for kUndefined
bool IsFloat(DType t);           // float32/16, bfloat16, float64

// IEEE half and bfloat16 conversions (round to nearest even).
float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);
inline float BFloat16ToFloat(uint16_t b) {
  uint32_t u = uint32_t{b} << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t FloatToBFloat16(float f);

// Storage types for the 16-bit floats, distinct from uint16_t so templates can
// dispatch on them.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

template <typename T>
constexpr DType DTypeOf();
template <>
constexpr DType DTypeOf<float>() {
  return DType::kFloat32;
}
template <>
constexpr DType DTypeOf<double>() {
  return DType::kFloat64;
}
template <>
constexpr DType DTypeOf<Half>() {
  return DType::kFloat16;
}
template <>
constexpr DType DTypeOf<BFloat16>() {
  return DType::kBFloat16;
}
template <>
constexpr DType DTypeOf<int8_t>() {
  return DType::kInt8;
}
template <>
constexpr DType DTypeOf<int16_t>() {
  return DType::kInt16;
}
template <>
constexpr DType DTypeOf<int32_t>() {
  return DType::kInt32;
}
template <>
constexpr DType DTypeOf<int64_t>() {
  return DType::kInt64;
}
template <>
constexpr DType DTypeOf<uint8_t>() {
  return DType::kUInt8;
}
template <>
constexpr DType DTypeOf<uint16_t>() {
  return DType::kUInt16;
}
template <>
constexpr DType DTypeOf<uint32_t>() {
  return DType::kUInt32;
}
template <>
constexpr DType DTypeOf<uint64_t>() {
  return DType::kUInt64;
}
template <>
constexpr DType DTypeOf<bool>() {
  return DType::kBool;
}

// Calls f(T{}) with T the C++ storage type of `t` (Half/BFloat16 for the
// 16-bit floats). `t` must not be kUndefined.
template <typename F>
decltype(auto) DispatchDType(DType t, F&& f) {
  switch (t) {
    case DType::kFloat32:
      return f(float{});
    case DType::kFloat16:
      return f(Half{});
    case DType::kBFloat16:
      return f(BFloat16{});
    case DType::kFloat64:
      return f(double{});
    case DType::kInt8:
      return f(int8_t{});
    case DType::kInt16:
      return f(int16_t{});
    case DType::kInt32:
      return f(int32_t{});
    case DType::kInt64:
      return f(int64_t{});
    case DType::kUInt8:
      return f(uint8_t{});
    case DType::kUInt16:
      return f(uint16_t{});
    case DType::kUInt32:
      return f(uint32_t{});
    case DType::kUInt64:
      return f(uint64_t{});
    case DType::kBool:
      return f(bool{});
    case DType::kUndefined:
      break;
  }
  return f(float{});  // unreachable for valid input; keeps the return type
}

}  // namespace tessel
