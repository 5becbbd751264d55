// What the quantization op files (quantize.cc, quantized_linear.cc) share:
// checking and reading scale / zero-point parameters and the rounding to a
// quantized integer. Not part of the ops API.
#pragma once

#include <cstdint>
#include <string>

#include "ops/op_registry.h"

namespace tessel::ops::quantize_internal {

// MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv: quantized_linear.cc.
void RegisterQuantizedLinearOps(OpRegistry& r);

// Input i, if present, holds a quantization parameter (scale or zero point):
// one value for the whole tensor (a scalar or a 1-element 1-D tensor) or,
// when per_len >= 0, a 1-D tensor of per_len values, one per slice along the
// axis `per_what` names ("rows of 'A'").
Status CheckQuantParam(const ir::Node& node, size_t i, const char* role, int64_t per_len,
                       const std::string& per_what);

// True when input i is present and holds one value for the whole tensor.
bool IsPerTensor(const ir::Node& node, size_t i);

// The parameter value of slice i: the single value or the i-th.
inline double ParamAt(const Tensor& t, int64_t i) {
  return t.GetAsDouble(t.num_elements() == 1 ? 0 : i);
}
// An optional zero point: 0 when absent.
inline int64_t ZeroPointAt(const Tensor* t, int64_t i) {
  return t ? t->GetAsInt64(t->num_elements() == 1 ? 0 : i) : 0;
}

// v rounded half to even, then clamped into the range of the 8-bit integer
// dtype t (uint8 or int8).
int64_t RoundAndSaturate(double v, DType t);

// Stores integer v (already in range) as element i of the integer tensor t.
void StoreInt(Tensor& t, int64_t i, int64_t v);

}  // namespace tessel::ops::quantize_internal
