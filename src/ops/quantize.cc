// Linear quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear
// (8-bit integers, per tensor or, from opset 13, per slice along an axis).
//
// The arithmetic is float32, as the ONNX reference does it, so that values
// exactly half-way between two integers round (half to even) the same way.
#include <algorithm>
#include <cmath>
#include <string>

#include "ops/op_registry.h"
#include "ops/op_util.h"
#include "ops/quantize_internal.h"

namespace tessel::ops {
namespace quantize_internal {

Status CheckQuantParam(const ir::Node& node, size_t i, const char* role, int64_t per_len,
                       const std::string& per_what) {
  const ir::Value* v = node.input(i);
  if (!v || IsPerTensor(node, i)) return Status::Ok();
  if (per_len >= 0 && v->shape == Shape{per_len}) return Status::Ok();
  std::string expected = "one value";
  if (per_len >= 0) expected += " or " + std::to_string(per_len) + " (one per " + per_what + ")";
  return InvalidArgument(node.Describe() + ": " + role + " '" + v->name + "' has shape " +
                         ShapeToString(v->shape) + "; expected " + expected);
}

bool IsPerTensor(const ir::Node& node, size_t i) {
  const ir::Value* v = node.input(i);
  return v && v->shape.size() <= 1 && NumElements(v->shape) == 1;
}

int64_t RoundAndSaturate(double v, DType t) {
  // NaN (a zero scale, NaN data) has no integer; 0 keeps the cast defined.
  if (std::isnan(v)) return 0;
  const double lo = t == DType::kInt8 ? -128 : 0;
  const double hi = t == DType::kInt8 ? 127 : 255;
  return static_cast<int64_t>(std::clamp(std::nearbyint(v), lo, hi));
}

void StoreInt(Tensor& t, int64_t i, int64_t v) {
  switch (t.dtype()) {
    case DType::kUInt8:
      t.data<uint8_t>()[i] = static_cast<uint8_t>(v);
      break;
    case DType::kInt8:
      t.data<int8_t>()[i] = static_cast<int8_t>(v);
      break;
    case DType::kInt32:
      t.data<int32_t>()[i] = static_cast<int32_t>(v);
      break;
    default:
      TESSEL_CHECK_MSG(false, DTypeName(t.dtype()));
  }
}

}  // namespace quantize_internal

namespace {

using namespace quantize_internal;  // NOLINT(build/namespaces)

// How the parameters of a (de)quantization map onto the input: element i
// uses slice (i / inner) % len, or slice 0 for per-tensor parameters.
struct AxisSlices {
  int64_t len = 1;
  int64_t inner = 1;
  int64_t SliceOf(int64_t i) const { return (i / inner) % len; }
};

// Scale is input 1 and zero point input 2 of both QuantizeLinear and
// DequantizeLinear. One value each, or (opset >= 13) one per slice along
// `axis` of input 0.
StatusOr<AxisSlices> PlanSlices(const ir::Node& node, int opset) {
  AxisSlices s;
  const Shape& x = node.input(0)->shape;
  if (IsPerTensor(node, 1) && (!node.input(2) || IsPerTensor(node, 2))) return s;
  if (opset < 13) {
    return InvalidArgument(node.Describe() +
                           ": scale and zero point must be single values before "
                           "opset 13; got scale shape " +
                           ShapeToString(node.input(1)->shape));
  }
  TESSEL_ASSIGN_OR_RETURN(
      int64_t axis, NormalizeAxis(node, node.attrs.Int("axis", 1), static_cast<int64_t>(x.size())));
  s.len = x[axis];
  for (size_t d = axis + 1; d < x.size(); ++d) s.inner *= x[d];
  const std::string per_what =
      "slice along axis " + std::to_string(axis) + " of input shape " + ShapeToString(x);
  TESSEL_RETURN_IF_ERROR(CheckQuantParam(node, 1, "scale", s.len, per_what));
  TESSEL_RETURN_IF_ERROR(CheckQuantParam(node, 2, "zero point", s.len, per_what));
  if (node.input(2) && NumElements(node.input(2)->shape) != NumElements(node.input(1)->shape)) {
    return InvalidArgument(node.Describe() + ": zero point shape " +
                           ShapeToString(node.input(2)->shape) + " does not match scale shape " +
                           ShapeToString(node.input(1)->shape));
  }
  return s;
}

Status InferQuantizeLinear(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, {DType::kFloat32, DType::kFloat16, DType::kInt32}));
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 1, {DType::kFloat32}));
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 2, {DType::kUInt8, DType::kInt8}));
  TESSEL_RETURN_IF_ERROR(PlanSlices(node, opset).status());
  const ir::Value* zp = node.input(2);
  SetOutput(node, 0, zp ? zp->dtype : DType::kUInt8, node.input(0)->shape);
  return Status::Ok();
}

Status RunQuantizeLinear(KernelContext& ctx) {
  TESSEL_ASSIGN_OR_RETURN(AxisSlices s, PlanSlices(ctx.node, ctx.opset));
  const Tensor& x = ctx.in(0);
  const float* scale = ctx.in(1).data<float>();
  const Tensor* zp = ctx.has_in(2) ? &ctx.in(2) : nullptr;
  Tensor& y = ctx.out(0);
  const bool float_input = x.dtype() != DType::kInt32;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const int64_t c = s.SliceOf(i);
    const float sc = scale[ctx.in(1).num_elements() == 1 ? 0 : c];
    // float32 / float32 for float inputs; an int32 input divides in double.
    const double q = float_input ? static_cast<double>(static_cast<float>(x.GetAsDouble(i)) / sc)
                                 : x.GetAsDouble(i) / sc;
    StoreInt(y, i, RoundAndSaturate(std::nearbyint(q) + ZeroPointAt(zp, c), y.dtype()));
  }
  return Status::Ok();
}

Status InferDequantizeLinear(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, {DType::kUInt8, DType::kInt8, DType::kInt32}));
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 1, {DType::kFloat32}));
  TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, 2}));
  TESSEL_RETURN_IF_ERROR(PlanSlices(node, opset).status());
  SetOutput(node, 0, DType::kFloat32, node.input(0)->shape);
  return Status::Ok();
}

Status RunDequantizeLinear(KernelContext& ctx) {
  TESSEL_ASSIGN_OR_RETURN(AxisSlices s, PlanSlices(ctx.node, ctx.opset));
  const Tensor& x = ctx.in(0);
  const float* scale = ctx.in(1).data<float>();
  const Tensor* zp = ctx.has_in(2) ? &ctx.in(2) : nullptr;
  float* y = ctx.out(0).data<float>();
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const int64_t c = s.SliceOf(i);
    const float sc = scale[ctx.in(1).num_elements() == 1 ? 0 : c];
    y[i] = (static_cast<float>(x.GetAsInt64(i)) - static_cast<float>(ZeroPointAt(zp, c))) * sc;
  }
  return Status::Ok();
}

// Outputs y (uint8, the shape of x), y_scale and y_zero_point (scalars).
Status InferDynamicQuantizeLinear(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, {DType::kFloat32}));
  SetOutput(node, 0, DType::kUInt8, node.input(0)->shape);
  SetOutput(node, 1, DType::kFloat32, {});
  SetOutput(node, 2, DType::kUInt8, {});
  return Status::Ok();
}

Status RunDynamicQuantizeLinear(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const float* in = x.data<float>();
  // The range always includes 0, so that 0 is exactly representable.
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    lo = std::min(lo, in[i]);
    hi = std::max(hi, in[i]);
  }
  const float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
  const float zp = static_cast<float>(RoundAndSaturate(0.0f - lo / scale, DType::kUInt8));
  uint8_t* y = ctx.out(0).data<uint8_t>();
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    y[i] =
        static_cast<uint8_t>(RoundAndSaturate(std::nearbyint(in[i] / scale) + zp, DType::kUInt8));
  }
  if (ctx.has_out(1)) ctx.out(1).data<float>()[0] = scale;
  if (ctx.has_out(2)) ctx.out(2).data<uint8_t>()[0] = static_cast<uint8_t>(zp);
  return Status::Ok();
}

}  // namespace

void RegisterQuantizeOps(OpRegistry& r) {
  r.Register({.op_type = "QuantizeLinear",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 2,
              .max_inputs = 3,
              .infer = InferQuantizeLinear,
              .run = RunQuantizeLinear});
  r.Register({.op_type = "DequantizeLinear",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 2,
              .max_inputs = 3,
              .infer = InferDequantizeLinear,
              .run = RunDequantizeLinear});
  r.Register({.op_type = "DynamicQuantizeLinear",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_outputs = 3,
              .max_outputs = 3,
              .infer = InferDynamicQuantizeLinear,
              .run = RunDynamicQuantizeLinear});
  RegisterQuantizedLinearOps(r);
}

}  // namespace tessel::ops
