// Ops that produce values rather than move them: Constant, ConstantOfShape,
// Range, EyeLike and Trilu's triangular masks.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>

#include "ops/tensor_internal.h"

namespace tessel::ops::tensor_internal {
namespace {

const ir::Value& In(const ir::Node& node, size_t i) { return *node.input(i); }

// ---------------------------------------------------------------------------
// Constant, ConstantOfShape

StatusOr<Tensor> ConstantValue(const ir::Node& node) {
  static constexpr std::array<const char*, 8> kForms = {
      "value",      "value_float",  "value_floats",  "value_int",
      "value_ints", "value_string", "value_strings", "sparse_value"};
  int given = 0;
  for (const char* f : kForms) given += node.attrs.Has(f) ? 1 : 0;
  if (given != 1) {
    return NodeError(node,
                     "needs exactly one of the attributes value, value_float, value_floats, "
                     "value_int, value_ints; got " +
                         std::to_string(given));
  }
  const AttributeMap& a = node.attrs;
  if (a.Has("value_string") || a.Has("value_strings")) {
    return NodeUnsupported(node, "string constants are not supported");
  }
  if (a.Has("sparse_value")) return NodeUnsupported(node, "sparse_value is not supported");
  if (a.Has("value")) {
    const Tensor* t = a.TensorAttr("value");
    if (!t || !t->defined()) return NodeError(node, "attribute value is not a tensor");
    return *t;
  }
  if (a.Has("value_float")) return Tensor::FromVector<float>({a.Float("value_float", 0)}, {});
  if (a.Has("value_int")) return Tensor::FromVector<int64_t>({a.Int("value_int", 0)}, {});
  if (a.Has("value_floats")) {
    std::vector<float> v = a.Floats("value_floats");
    const int64_t n = static_cast<int64_t>(v.size());
    return Tensor::FromVector(v, {n});
  }
  std::vector<int64_t> v = a.Ints("value_ints");
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromVector(v, {n});
}

Status InferConstant(ir::Node& node, int opset) {
  TESSEL_ASSIGN_OR_RETURN(Tensor t, ConstantValue(node));
  SetOutput(node, 0, t.dtype(), t.shape());
  node.output(0)->constant = std::move(t);
  return Status::Ok();
}

Status RunConstant(KernelContext& ctx) {
  TESSEL_ASSIGN_OR_RETURN(Tensor t, ConstantValue(ctx.node));
  if (t.size_bytes() > 0) std::memcpy(ctx.out(0).raw_data(), t.raw_data(), t.size_bytes());
  return Status::Ok();
}

Status InferConstantOfShape(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireRank(node, 0, 1));
  TESSEL_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ConstantInts(node, 0, "shape"));
  TESSEL_RETURN_IF_ERROR(CheckShape(node, shape, "shape"));
  DType dtype = DType::kFloat32;
  if (node.attrs.Has("value")) {
    const Tensor* v = node.attrs.TensorAttr("value");
    if (!v || !v->defined()) return NodeError(node, "attribute value is not a tensor");
    if (v->num_elements() != 1) {
      return NodeError(node, "value must have one element; got shape " + ShapeToString(v->shape()));
    }
    dtype = v->dtype();
  }
  SetOutput(node, 0, dtype, shape);
  return Status::Ok();
}

Status RunConstantOfShape(KernelContext& ctx) {
  // Without a value the output stays the zeros it was allocated with.
  if (const Tensor* v = ctx.node.attrs.TensorAttr("value")) {
    FillBytes(ctx.out(0), v->raw_data(), ElemSize(*v));
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Range, EyeLike, Trilu

// Largest Range output tessel builds: a bigger one is a malformed model.
constexpr int64_t kMaxRange = std::numeric_limits<int32_t>::max();

Status InferRange(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(
      node, 0, {DType::kFloat32, DType::kFloat64, DType::kInt16, DType::kInt32, DType::kInt64}));
  TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, 1, 2}));
  static constexpr std::array<const char*, 3> kNames = {"start", "limit", "delta"};
  std::array<const Tensor*, 3> t{};
  for (size_t i = 0; i < 3; ++i) {
    TESSEL_ASSIGN_OR_RETURN(t[i], RequireConstantInput(node, i, kNames[i]));
    if (t[i]->num_elements() != 1) {
      return NodeError(node, std::string(kNames[i]) + " must be a scalar; got shape " +
                                 ShapeToString(t[i]->shape()));
    }
  }
  const DType dtype = In(node, 0).dtype;
  int64_t n = 0;
  if (IsFloat(dtype)) {
    const double start = t[0]->GetAsDouble(0), limit = t[1]->GetAsDouble(0),
                 delta = t[2]->GetAsDouble(0);
    if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta)) {
      return NodeError(node, "start " + std::to_string(start) + ", limit " + std::to_string(limit) +
                                 ", delta " + std::to_string(delta) +
                                 " do not describe a finite range");
    }
    // Divide in the input's precision, as the spec's definition does.
    const double q =
        dtype == DType::kFloat32
            ? static_cast<double>(static_cast<float>(limit - start) / static_cast<float>(delta))
            : (limit - start) / delta;
    const double count = std::max(std::ceil(q), 0.0);
    if (count > static_cast<double>(kMaxRange)) {
      return NodeError(node, "range of " + std::to_string(count) + " elements is too large");
    }
    n = static_cast<int64_t>(count);
  } else {
    const int64_t start = t[0]->GetAsInt64(0), limit = t[1]->GetAsInt64(0),
                  delta = t[2]->GetAsInt64(0);
    if (delta == 0) return NodeError(node, "delta is 0");
    // Count in unsigned 64-bit: limit - start can exceed int64.
    uint64_t count = 0;
    if (delta > 0 && limit > start) {
      const uint64_t diff = static_cast<uint64_t>(limit) - static_cast<uint64_t>(start);
      const uint64_t step = static_cast<uint64_t>(delta);
      count = diff / step + (diff % step != 0 ? 1 : 0);
    } else if (delta < 0 && limit < start) {
      const uint64_t diff = static_cast<uint64_t>(start) - static_cast<uint64_t>(limit);
      const uint64_t step = uint64_t{0} - static_cast<uint64_t>(delta);
      count = diff / step + (diff % step != 0 ? 1 : 0);
    }
    if (count > static_cast<uint64_t>(kMaxRange)) {
      return NodeError(node, "range from " + std::to_string(start) + " to " +
                                 std::to_string(limit) + " by " + std::to_string(delta) +
                                 " is too large");
    }
    n = static_cast<int64_t>(count);
  }
  SetOutput(node, 0, dtype, {n});
  return Status::Ok();
}

Status RunRange(KernelContext& ctx) {
  Tensor& out = ctx.out(0);
  DispatchDType(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      const T delta = ctx.in(2).data<T>()[0];
      T* o = out.data<T>();
      const int64_t n = out.num_elements();
      // Accumulating (not start + i * delta) follows the spec's loop.
      T v = ctx.in(0).data<T>()[0];
      for (int64_t i = 0; i < n; ++i) {
        o[i] = v;
        // Stepping past the last element could overflow an integer type.
        if (i + 1 < n) v = static_cast<T>(v + delta);
      }
    }
  });
  return Status::Ok();
}

// ONNX TensorProto.DataType codes, for EyeLike's dtype attribute. The ONNX
// mapping lives in onnx/tensor_io, which ops may not depend on.
std::optional<DType> DTypeFromOnnxCode(int64_t code) {
  switch (code) {
    case 1:
      return DType::kFloat32;
    case 2:
      return DType::kUInt8;
    case 3:
      return DType::kInt8;
    case 4:
      return DType::kUInt16;
    case 5:
      return DType::kInt16;
    case 6:
      return DType::kInt32;
    case 7:
      return DType::kInt64;
    case 9:
      return DType::kBool;
    case 10:
      return DType::kFloat16;
    case 11:
      return DType::kFloat64;
    case 12:
      return DType::kUInt32;
    case 13:
      return DType::kUInt64;
    case 16:
      return DType::kBFloat16;
    default:
      return std::nullopt;
  }
}

Status InferEyeLike(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireRank(node, 0, 2));
  DType dtype = In(node, 0).dtype;
  if (node.attrs.Has("dtype")) {
    const int64_t code = node.attrs.Int("dtype", 0);
    std::optional<DType> t = DTypeFromOnnxCode(code);
    if (!t) return NodeUnsupported(node, "dtype " + std::to_string(code) + " is not supported");
    dtype = *t;
  }
  SetOutput(node, 0, dtype, In(node, 0).shape);
  return Status::Ok();
}

Status RunEyeLike(KernelContext& ctx) {
  Tensor& out = ctx.out(0);
  const int64_t rows = out.dim(0), cols = out.dim(1), k = ctx.node.attrs.Int("k", 0);
  for (int64_t i = 0; i < rows; ++i) {
    // Compare before adding: k may be anything an int64 holds.
    if (k >= cols - i || k < -i) continue;
    StoreDouble(out, i * cols + i + k, 1.0);
  }
  return Status::Ok();
}

Status InferTrilu(ir::Node& node, int opset) {
  const ir::Value& x = In(node, 0);
  if (x.shape.size() < 2) {
    return NodeError(node, "input shape " + ShapeToString(x.shape) + " has rank below 2");
  }
  if (node.input(1)) {
    TESSEL_RETURN_IF_ERROR(RequireDType(node, 1, {DType::kInt64}));
    if (NumElements(In(node, 1).shape) != 1) {
      return NodeError(node, "k must be a scalar; got shape " + ShapeToString(In(node, 1).shape));
    }
  }
  SetOutput(node, 0, x.dtype, x.shape);
  return Status::Ok();
}

Status RunTrilu(KernelContext& ctx) {
  const Tensor& in = ctx.in(0);
  const int64_t k = ctx.has_in(1) ? ctx.in(1).data<int64_t>()[0] : 0;
  const bool upper = ctx.node.attrs.Int("upper", 1) != 0;
  const int64_t rows = in.dim(in.rank() - 2), cols = in.dim(in.rank() - 1);
  const int64_t batches = DimProduct(in.shape(), 0, in.shape().size() - 2);
  const size_t es = ElemSize(in);
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        // k is compared, never added, so any int64 k is safe.
        const bool keep = upper ? j - i >= k : j - i <= k;
        if (!keep) continue;
        const int64_t e = (b * rows + i) * cols + j;
        std::memcpy(Bytes(ctx.out(0)) + e * es, Bytes(in) + e * es, es);
      }
    }
  }
  return Status::Ok();
}

}  // namespace

void RegisterTensorGenerateOps(OpRegistry& r) {
  const OpClass kOpq = OpClass::kOpaque;
  r.Register({.op_type = "Constant",
              .domain = "",
              .op_class = kOpq,
              .min_inputs = 0,
              .max_inputs = 0,
              .infer = InferConstant,
              .run = RunConstant});
  r.Register({.op_type = "ConstantOfShape",
              .domain = "",
              .op_class = kOpq,
              .infer = InferConstantOfShape,
              .run = RunConstantOfShape});
  r.Register({.op_type = "Range",
              .domain = "",
              .op_class = kOpq,
              .min_inputs = 3,
              .max_inputs = 3,
              .infer = InferRange,
              .run = RunRange});
  r.Register({.op_type = "EyeLike",
              .domain = "",
              .op_class = kOpq,
              .infer = InferEyeLike,
              .run = RunEyeLike});
  r.Register({.op_type = "Trilu",
              .domain = "",
              .op_class = kOpq,
              .max_inputs = 2,
              .infer = InferTrilu,
              .run = RunTrilu});
}

}  // namespace tessel::ops::tensor_internal
