// Data-indexed movement ops: Gather*, Scatter*, OneHot, NonZero, CumSum,
// TopK. Index values are data, so an out-of-range index is a run-time
// InvalidArgument (Gather also reports it at compile time when its indices
// are constant).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>

#include "ops/tensor_internal.h"

namespace tessel::ops::tensor_internal {
namespace {

const ir::Value& In(const ir::Node& node, size_t i) { return *node.input(i); }

constexpr std::initializer_list<DType> kIndexTypes = {DType::kInt32, DType::kInt64};

// Maps a possibly negative index into [0, dim); false when out of range.
bool ResolveIndex(int64_t& v, int64_t dim) {
  if (v < 0) v += dim;
  return v >= 0 && v < dim;
}

Status IndexOutOfRange(const ir::Node& node, int64_t position, int64_t value, int64_t dim,
                       int64_t axis, const Shape& data_shape) {
  return NodeError(node, "indices[" + std::to_string(position) + "] = " + std::to_string(value) +
                             " is out of range [" + std::to_string(-dim) + ", " +
                             std::to_string(dim - 1) + "] for axis " + std::to_string(axis) +
                             " of data shape " + ShapeToString(data_shape));
}

// Integer arithmetic in uint64 wraps instead of overflowing (signed overflow
// and uint16 * uint16 promoted to int are undefined).
template <typename T>
T Add(T a, T b) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return FromDouble<T>(static_cast<float>(ToDouble(a)) + static_cast<float>(ToDouble(b)));
  } else if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}

template <typename T>
T Mul(T a, T b) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return FromDouble<T>(static_cast<float>(ToDouble(a)) * static_cast<float>(ToDouble(b)));
  } else if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return a * b;
  }
}

// The value compared for ordering: the 16-bit floats through float.
template <typename T>
auto OrderKey(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return static_cast<float>(ToDouble(v));
  } else {
    return v;
  }
}

template <typename K>
bool IsNan(K v) {
  if constexpr (std::is_floating_point_v<K>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// a > b with NaN above every number (numpy's order), so sorting stays a
// strict weak ordering with NaNs present.
template <typename K>
bool Above(K a, K b) {
  if (IsNan(a)) return !IsNan(b);
  if (IsNan(b)) return false;
  return a > b;
}

// ---------------------------------------------------------------------------
// Gather

StatusOr<int64_t> GatherAxis(const ir::Node& node, int64_t rank) {
  return NormalizeAxis(node, node.attrs.Int("axis", 0), rank);
}

// Resolves every index against `dim` in place.
Status ResolveAll(const ir::Node& node, std::vector<int64_t>& idx, int64_t dim, int64_t axis,
                  const Shape& data_shape) {
  for (size_t j = 0; j < idx.size(); ++j) {
    const int64_t original = idx[j];
    if (!ResolveIndex(idx[j], dim)) {
      return IndexOutOfRange(node, static_cast<int64_t>(j), original, dim, axis, data_shape);
    }
  }
  return Status::Ok();
}

Status InferGather(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 1, kIndexTypes));
  const Shape& data = In(node, 0).shape;
  const Shape& indices = In(node, 1).shape;
  TESSEL_ASSIGN_OR_RETURN(int64_t axis, GatherAxis(node, data.size()));
  if (In(node, 1).is_constant()) {
    std::vector<int64_t> idx = In(node, 1).constant.ToInt64Vector();
    TESSEL_RETURN_IF_ERROR(ResolveAll(node, idx, data[axis], axis, data));
  }
  Shape out(data.begin(), data.begin() + axis);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  SetOutput(node, 0, In(node, 0).dtype, out);
  return Status::Ok();
}

Status RunGather(KernelContext& ctx) {
  const Tensor& data = ctx.in(0);
  TESSEL_ASSIGN_OR_RETURN(int64_t axis, GatherAxis(ctx.node, data.rank()));
  const int64_t dim = data.dim(axis);
  std::vector<int64_t> idx = ctx.in(1).ToInt64Vector();
  TESSEL_RETURN_IF_ERROR(ResolveAll(ctx.node, idx, dim, axis, data.shape()));
  const int64_t outer = DimProduct(data.shape(), 0, axis);
  const size_t block = DimProduct(data.shape(), axis + 1, data.shape().size()) * ElemSize(data);
  if (block == 0) return Status::Ok();
  const int64_t n = static_cast<int64_t>(idx.size());
  uint8_t* dst = Bytes(ctx.out(0));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < n; ++j) {
      std::memcpy(dst + (o * n + j) * block, Bytes(data) + (o * dim + idx[j]) * block, block);
    }
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// GatherElements, ScatterElements (and the deprecated Scatter)

// Indices of data's rank, no larger than data off `axis` (every index
// position must address an element of data).
Status CheckElementIndices(const ir::Node& node, int64_t axis) {
  const Shape& data = In(node, 0).shape;
  const Shape& idx = In(node, 1).shape;
  bool ok = idx.size() == data.size();
  for (size_t d = 0; ok && d < idx.size(); ++d) {
    ok = static_cast<int64_t>(d) == axis || idx[d] <= data[d];
  }
  if (!ok) {
    return NodeError(node, "indices shape " + ShapeToString(idx) + " does not fit data shape " +
                               ShapeToString(data) + " off axis " + std::to_string(axis));
  }
  return Status::Ok();
}

// Element offsets in data addressed by every element of indices.
StatusOr<std::vector<int64_t>> ElementOffsets(const ir::Node& node, const Tensor& data,
                                              const Tensor& indices, int64_t axis) {
  std::vector<int64_t> idx = indices.ToInt64Vector();
  const std::vector<int64_t> strides = StridesOf(data.shape());
  const int64_t dim = data.dim(axis);
  std::vector<int64_t> pos(indices.shape().size(), 0);
  std::vector<int64_t> offsets(idx.size());
  for (size_t j = 0; j < idx.size(); ++j, NextIndex(pos, indices.shape())) {
    int64_t v = idx[j];
    if (!ResolveIndex(v, dim)) {
      return IndexOutOfRange(node, static_cast<int64_t>(j), idx[j], dim, axis, data.shape());
    }
    int64_t off = 0;
    for (size_t d = 0; d < pos.size(); ++d) {
      off += (static_cast<int64_t>(d) == axis ? v : pos[d]) * strides[d];
    }
    offsets[j] = off;
  }
  return offsets;
}

Status InferGatherElements(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 1, kIndexTypes));
  TESSEL_ASSIGN_OR_RETURN(int64_t axis, GatherAxis(node, In(node, 0).shape.size()));
  TESSEL_RETURN_IF_ERROR(CheckElementIndices(node, axis));
  SetOutput(node, 0, In(node, 0).dtype, In(node, 1).shape);
  return Status::Ok();
}

Status RunGatherElements(KernelContext& ctx) {
  const Tensor& data = ctx.in(0);
  TESSEL_ASSIGN_OR_RETURN(int64_t axis, GatherAxis(ctx.node, data.rank()));
  TESSEL_ASSIGN_OR_RETURN(std::vector<int64_t> offsets,
                          ElementOffsets(ctx.node, data, ctx.in(1), axis));
  const size_t es = ElemSize(data);
  uint8_t* dst = Bytes(ctx.out(0));
  for (size_t j = 0; j < offsets.size(); ++j) {
    std::memcpy(dst + j * es, Bytes(data) + offsets[j] * es, es);
  }
  return Status::Ok();
}

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

StatusOr<Reduction> GetReduction(const ir::Node& node) {
  const std::string r = node.attrs.String("reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  return NodeUnsupported(node, "reduction '" + r + "' is not supported (none, add, mul, max, min)");
}

// out[dst[j] + i] (op)= updates[j * block + i] for every j and i < block.
void ApplyUpdates(Tensor& out, const Tensor& updates, const std::vector<int64_t>& dst,
                  int64_t block, Reduction reduction) {
  DispatchDType(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = static_cast<T*>(out.raw_data());
    const T* u = static_cast<const T*>(updates.raw_data());
    for (size_t j = 0; j < dst.size(); ++j) {
      for (int64_t i = 0; i < block; ++i) {
        T& x = o[dst[j] + i];
        const T y = u[static_cast<int64_t>(j) * block + i];
        switch (reduction) {
          case Reduction::kNone:
            x = y;
            break;
          case Reduction::kAdd:
            x = Add(x, y);
            break;
          case Reduction::kMul:
            x = Mul(x, y);
            break;
          case Reduction::kMax:
            if (Above(OrderKey(y), OrderKey(x))) x = y;
            break;
          case Reduction::kMin:
            if (Above(OrderKey(x), OrderKey(y))) x = y;
            break;
        }
      }
    }
  });
}

Status InferScatterElements(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 1, kIndexTypes));
  TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, 2}));
  TESSEL_ASSIGN_OR_RETURN(int64_t axis, GatherAxis(node, In(node, 0).shape.size()));
  TESSEL_RETURN_IF_ERROR(CheckElementIndices(node, axis));
  if (In(node, 2).shape != In(node, 1).shape) {
    return NodeError(node, "updates shape " + ShapeToString(In(node, 2).shape) +
                               " differs from indices shape " + ShapeToString(In(node, 1).shape));
  }
  TESSEL_RETURN_IF_ERROR(GetReduction(node).status());
  SetOutput(node, 0, In(node, 0).dtype, In(node, 0).shape);
  return Status::Ok();
}

Status RunScatterElements(KernelContext& ctx) {
  const Tensor& data = ctx.in(0);
  TESSEL_ASSIGN_OR_RETURN(int64_t axis, GatherAxis(ctx.node, data.rank()));
  TESSEL_ASSIGN_OR_RETURN(Reduction reduction, GetReduction(ctx.node));
  TESSEL_ASSIGN_OR_RETURN(std::vector<int64_t> offsets,
                          ElementOffsets(ctx.node, data, ctx.in(1), axis));
  std::memcpy(ctx.out(0).raw_data(), data.raw_data(), data.size_bytes());
  ApplyUpdates(ctx.out(0), ctx.in(2), offsets, 1, reduction);
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// GatherND, ScatterND

// For each index tuple (the last dim of indices, k entries) after the
// first `batch_dims`, the element offset in data of the slice it selects.
StatusOr<std::vector<int64_t>> TupleOffsets(const ir::Node& node, const Tensor& data,
                                            const Tensor& indices, int64_t batch_dims) {
  const Shape& ds = data.shape();
  const Shape& is = indices.shape();
  const int64_t k = is.back();
  const std::vector<int64_t> idx = indices.ToInt64Vector();
  const std::vector<int64_t> strides = StridesOf(ds);
  const int64_t batches = DimProduct(ds, 0, batch_dims);
  const int64_t batch_size = DimProduct(ds, batch_dims, ds.size());
  const int64_t tuples = DimProduct(is, batch_dims, is.size() - 1);
  std::vector<int64_t> offsets;
  offsets.reserve(batches * tuples);
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = b * batch_size;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t pos = (b * tuples + t) * k + j;
        int64_t v = idx[pos];
        const int64_t axis = batch_dims + j;
        if (!ResolveIndex(v, ds[axis])) {
          return IndexOutOfRange(node, pos, idx[pos], ds[axis], axis, ds);
        }
        off += v * strides[axis];
      }
      offsets.push_back(off);
    }
  }
  return offsets;
}

// Checks ranks and the tuple length of GatherND/ScatterND indices.
Status CheckTupleIndices(const ir::Node& node, int64_t batch_dims) {
  const Shape& ds = In(node, 0).shape;
  const Shape& is = In(node, 1).shape;
  const int64_t r = static_cast<int64_t>(ds.size()), q = static_cast<int64_t>(is.size());
  if (r < 1 || q < 1) {
    return NodeError(node, "data " + ShapeToString(ds) + " and indices " + ShapeToString(is) +
                               " must have rank 1 or more");
  }
  if (batch_dims < 0 || batch_dims >= std::min(r, q)) {
    return NodeError(node, "batch_dims " + std::to_string(batch_dims) + " must be in [0, " +
                               std::to_string(std::min(r, q) - 1) + "]");
  }
  for (int64_t d = 0; d < batch_dims; ++d) {
    if (ds[d] != is[d]) {
      return NodeError(node, "batch dimensions of data " + ShapeToString(ds) + " and indices " +
                                 ShapeToString(is) + " differ");
    }
  }
  const int64_t k = is.back();
  if (k < 1 || k > r - batch_dims) {
    return NodeError(node, "indices shape " + ShapeToString(is) + " has tuples of " +
                               std::to_string(k) + " entries; data " + ShapeToString(ds) +
                               " takes 1 to " + std::to_string(r - batch_dims));
  }
  return Status::Ok();
}

Status InferGatherND(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 1, {DType::kInt64}));
  const int64_t b = node.attrs.Int("batch_dims", 0);
  TESSEL_RETURN_IF_ERROR(CheckTupleIndices(node, b));
  const Shape& ds = In(node, 0).shape;
  const Shape& is = In(node, 1).shape;
  Shape out(is.begin(), is.end() - 1);
  out.insert(out.end(), ds.begin() + b + is.back(), ds.end());
  SetOutput(node, 0, In(node, 0).dtype, out);
  return Status::Ok();
}

Status RunGatherND(KernelContext& ctx) {
  const Tensor& data = ctx.in(0);
  const int64_t b = ctx.node.attrs.Int("batch_dims", 0);
  TESSEL_ASSIGN_OR_RETURN(std::vector<int64_t> offsets, TupleOffsets(ctx.node, data, ctx.in(1), b));
  const int64_t k = ctx.in(1).shape().back();
  const size_t block = DimProduct(data.shape(), b + k, data.shape().size()) * ElemSize(data);
  if (block == 0) return Status::Ok();
  uint8_t* dst = Bytes(ctx.out(0));
  for (size_t t = 0; t < offsets.size(); ++t) {
    std::memcpy(dst + t * block, Bytes(data) + offsets[t] * ElemSize(data), block);
  }
  return Status::Ok();
}

Status InferScatterND(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 1, {DType::kInt64}));
  TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, 2}));
  TESSEL_RETURN_IF_ERROR(CheckTupleIndices(node, 0));
  const Shape& ds = In(node, 0).shape;
  const Shape& is = In(node, 1).shape;
  Shape expected(is.begin(), is.end() - 1);
  expected.insert(expected.end(), ds.begin() + is.back(), ds.end());
  if (In(node, 2).shape != expected) {
    return NodeError(node, "updates shape " + ShapeToString(In(node, 2).shape) + " must be " +
                               ShapeToString(expected) + " for data " + ShapeToString(ds) +
                               " and indices " + ShapeToString(is));
  }
  TESSEL_RETURN_IF_ERROR(GetReduction(node).status());
  SetOutput(node, 0, In(node, 0).dtype, ds);
  return Status::Ok();
}

Status RunScatterND(KernelContext& ctx) {
  const Tensor& data = ctx.in(0);
  TESSEL_ASSIGN_OR_RETURN(Reduction reduction, GetReduction(ctx.node));
  TESSEL_ASSIGN_OR_RETURN(std::vector<int64_t> offsets, TupleOffsets(ctx.node, data, ctx.in(1), 0));
  const int64_t k = ctx.in(1).shape().back();
  const int64_t block = DimProduct(data.shape(), k, data.shape().size());
  std::memcpy(ctx.out(0).raw_data(), data.raw_data(), data.size_bytes());
  ApplyUpdates(ctx.out(0), ctx.in(2), offsets, block, reduction);
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// OneHot

StatusOr<int64_t> OneHotDepth(const ir::Node& node, const Tensor& depth) {
  if (depth.num_elements() != 1) {
    return NodeError(node,
                     "depth must have one element; got shape " + ShapeToString(depth.shape()));
  }
  const double d = depth.GetAsDouble(0);
  if (!(d >= 1 && d <= static_cast<double>(std::numeric_limits<int32_t>::max()))) {
    return NodeError(node, "depth " + std::to_string(d) + " must be a positive count");
  }
  return static_cast<int64_t>(d);
}

Status InferOneHot(ir::Node& node, int opset) {
  const Shape& is = In(node, 0).shape;
  if (In(node, 0).dtype == DType::kBool) {
    return NodeError(node, "indices must be numeric; got bool");
  }
  TESSEL_ASSIGN_OR_RETURN(const Tensor* depth_t, RequireConstantInput(node, 1, "depth"));
  TESSEL_ASSIGN_OR_RETURN(int64_t depth, OneHotDepth(node, *depth_t));
  if (NumElements(In(node, 2).shape) != 2) {
    return NodeError(node, "values must hold [off_value, on_value]; got shape " +
                               ShapeToString(In(node, 2).shape));
  }
  const int64_t out_rank = static_cast<int64_t>(is.size()) + 1;
  TESSEL_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, node.attrs.Int("axis", -1), out_rank));
  Shape out = is;
  out.insert(out.begin() + axis, depth);
  TESSEL_RETURN_IF_ERROR(CheckShape(node, out, "output shape"));
  SetOutput(node, 0, In(node, 2).dtype, out);
  return Status::Ok();
}

Status RunOneHot(KernelContext& ctx) {
  const Tensor& indices = ctx.in(0);
  const Tensor& values = ctx.in(2);
  Tensor& out = ctx.out(0);
  TESSEL_ASSIGN_OR_RETURN(int64_t depth, OneHotDepth(ctx.node, ctx.in(1)));
  int64_t axis = ctx.node.attrs.Int("axis", -1);
  if (axis < 0) axis += out.rank();
  const size_t es = ElemSize(values);
  FillBytes(out, Bytes(values), es);
  const int64_t inner = DimProduct(indices.shape(), axis, indices.shape().size());
  const bool float_indices = IsFloat(indices.dtype());
  for (int64_t j = 0; j < indices.num_elements(); ++j) {
    int64_t v;
    if (float_indices) {
      // Out-of-range (and NaN) indices select nothing; check before the cast.
      const double d = indices.GetAsDouble(j);
      if (!(d > static_cast<double>(-depth) - 1 && d < static_cast<double>(depth))) continue;
      v = static_cast<int64_t>(d);
    } else {
      v = indices.GetAsInt64(j);
    }
    if (!ResolveIndex(v, depth)) continue;
    const int64_t o = j / inner, i = j % inner;
    std::memcpy(Bytes(out) + ((o * depth + v) * inner + i) * es, Bytes(values) + es, es);
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// NonZero

int64_t CountNonZero(const Tensor& t) {
  int64_t n = 0;
  for (int64_t i = 0; i < t.num_elements(); ++i) n += t.GetAsDouble(i) != 0 ? 1 : 0;
  return n;
}

Status InferNonZero(ir::Node& node, int opset) {
  const ir::Value& x = In(node, 0);
  if (!x.is_constant()) {
    return NodeUnsupported(node, "the output shape depends on the values of input '" + x.name +
                                     "', which are not known at compile time; tessel compiles "
                                     "static shapes");
  }
  // A scalar counts as a one-element vector (numpy's nonzero does the same).
  const int64_t rows = std::max<int64_t>(static_cast<int64_t>(x.shape.size()), 1);
  SetOutput(node, 0, DType::kInt64, {rows, CountNonZero(x.constant)});
  return Status::Ok();
}

Status RunNonZero(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& out = ctx.out(0);
  const int64_t nnz = out.dim(1);
  const Shape shape = x.shape().empty() ? Shape{1} : x.shape();
  std::vector<int64_t> pos(shape.size(), 0);
  int64_t col = 0;
  int64_t* o = out.data<int64_t>();
  for (int64_t i = 0; i < x.num_elements(); ++i, NextIndex(pos, shape)) {
    if (x.GetAsDouble(i) == 0) continue;
    for (size_t d = 0; d < pos.size(); ++d) o[d * nnz + col] = pos[d];
    ++col;
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// CumSum

Status InferCumSum(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(
      RequireDType(node, 0,
                   {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                    DType::kInt32, DType::kInt64, DType::kUInt32, DType::kUInt64}));
  TESSEL_ASSIGN_OR_RETURN(std::vector<int64_t> axis, ConstantInts(node, 1, "axis"));
  if (axis.size() != 1) {
    return NodeError(node, "axis must be a scalar; got " + ListToString(axis));
  }
  TESSEL_RETURN_IF_ERROR(NormalizeAxis(node, axis[0], In(node, 0).shape.size()).status());
  SetOutput(node, 0, In(node, 0).dtype, In(node, 0).shape);
  return Status::Ok();
}

Status RunCumSum(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& out = ctx.out(0);
  int64_t axis = ctx.in(1).GetAsInt64(0);
  if (axis < 0) axis += x.rank();
  const bool exclusive = ctx.node.attrs.Int("exclusive", 0) != 0;
  const bool reverse = ctx.node.attrs.Int("reverse", 0) != 0;
  const int64_t outer = DimProduct(x.shape(), 0, axis), dim = x.dim(axis);
  const int64_t inner = DimProduct(x.shape(), axis + 1, x.shape().size());
  DispatchDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(x.raw_data());
    T* o = static_cast<T*>(out.raw_data());
    for (int64_t b = 0; b < outer; ++b) {
      for (int64_t i = 0; i < inner; ++i) {
        T acc = FromDouble<T>(0);
        for (int64_t s = 0; s < dim; ++s) {
          const int64_t k = reverse ? dim - 1 - s : s;
          const int64_t e = (b * dim + k) * inner + i;
          if (exclusive) {
            o[e] = acc;
            acc = Add(acc, in[e]);
          } else {
            acc = Add(acc, in[e]);
            o[e] = acc;
          }
        }
      }
    }
  });
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// TopK

StatusOr<int64_t> TopKCount(const ir::Node& node, int opset, const Tensor* k_input) {
  if (opset >= 10) {
    if (k_input->num_elements() != 1) {
      return NodeError(node,
                       "K must have one element; got shape " + ShapeToString(k_input->shape()));
    }
    return k_input->GetAsInt64(0);
  }
  if (!node.attrs.Has("k")) return NodeError(node, "attribute k is required before opset 10");
  return node.attrs.Int("k", 0);
}

Status InferTopK(ir::Node& node, int opset) {
  const ir::Value& x = In(node, 0);
  const Tensor* k_input = nullptr;
  if (opset >= 10) {
    if (!node.input(1)) return NodeError(node, "input K is required since opset 10");
    TESSEL_RETURN_IF_ERROR(RequireDType(node, 1, {DType::kInt64}));
    TESSEL_ASSIGN_OR_RETURN(k_input, RequireConstantInput(node, 1, "K"));
  } else if (node.input(1)) {
    return NodeError(node, "K is an attribute before opset 10");
  }
  TESSEL_ASSIGN_OR_RETURN(int64_t k, TopKCount(node, opset, k_input));
  TESSEL_ASSIGN_OR_RETURN(int64_t axis,
                          NormalizeAxis(node, node.attrs.Int("axis", -1), x.shape.size()));
  if (k < 0 || k > x.shape[axis]) {
    return NodeError(node, "K = " + std::to_string(k) + " is out of range [0, " +
                               std::to_string(x.shape[axis]) + "] for axis " +
                               std::to_string(axis) + " of input shape " + ShapeToString(x.shape));
  }
  Shape out = x.shape;
  out[axis] = k;
  SetOutput(node, 0, x.dtype, out);
  SetOutput(node, 1, DType::kInt64, out);
  return Status::Ok();
}

Status RunTopK(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  int64_t axis = ctx.node.attrs.Int("axis", -1);
  if (axis < 0) axis += x.rank();
  const int64_t k = ctx.out(0).dim(axis);
  const bool largest = ctx.node.attrs.Int("largest", 1) != 0;
  const int64_t outer = DimProduct(x.shape(), 0, axis), dim = x.dim(axis);
  const int64_t inner = DimProduct(x.shape(), axis + 1, x.shape().size());
  const size_t es = ElemSize(x);
  int64_t* indices = ctx.out(1).data<int64_t>();
  DispatchDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(x.raw_data());
    std::vector<int64_t> order(dim);
    for (int64_t b = 0; b < outer; ++b) {
      for (int64_t i = 0; i < inner; ++i) {
        auto at = [&](int64_t p) { return OrderKey(in[(b * dim + p) * inner + i]); };
        // Ties go to the lower index, as the spec asks.
        auto before = [&](int64_t p, int64_t q) {
          const auto a = at(p), c = at(q);
          const bool ahead = largest ? Above(a, c) : Above(c, a);
          const bool behind = largest ? Above(c, a) : Above(a, c);
          return ahead || (!behind && p < q);
        };
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
        for (int64_t t = 0; t < k; ++t) {
          const int64_t dst = (b * k + t) * inner + i;
          std::memcpy(Bytes(ctx.out(0)) + dst * es,
                      Bytes(x) + ((b * dim + order[t]) * inner + i) * es, es);
          indices[dst] = order[t];
        }
      }
    }
  });
  return Status::Ok();
}

}  // namespace

void RegisterTensorIndexOps(OpRegistry& r) {
  const OpClass kInj = OpClass::kInjective;
  const OpClass kOpq = OpClass::kOpaque;
  r.Register({.op_type = "Gather",
              .domain = "",
              .op_class = kInj,
              .min_inputs = 2,
              .max_inputs = 2,
              .infer = InferGather,
              .run = RunGather});
  r.Register({.op_type = "GatherElements",
              .domain = "",
              .op_class = kInj,
              .min_inputs = 2,
              .max_inputs = 2,
              .infer = InferGatherElements,
              .run = RunGatherElements});
  r.Register({.op_type = "GatherND",
              .domain = "",
              .op_class = kInj,
              .min_inputs = 2,
              .max_inputs = 2,
              .infer = InferGatherND,
              .run = RunGatherND});
  r.Register({.op_type = "ScatterElements",
              .domain = "",
              .op_class = kOpq,
              .min_inputs = 3,
              .max_inputs = 3,
              .infer = InferScatterElements,
              .run = RunScatterElements});
  // Scatter (opsets 9-10) is ScatterElements under its old name.
  r.Register({.op_type = "Scatter",
              .domain = "",
              .op_class = kOpq,
              .min_inputs = 3,
              .max_inputs = 3,
              .infer = InferScatterElements,
              .run = RunScatterElements});
  r.Register({.op_type = "ScatterND",
              .domain = "",
              .op_class = kOpq,
              .min_inputs = 3,
              .max_inputs = 3,
              .infer = InferScatterND,
              .run = RunScatterND});
  r.Register({.op_type = "OneHot",
              .domain = "",
              .op_class = kOpq,
              .min_inputs = 3,
              .max_inputs = 3,
              .infer = InferOneHot,
              .run = RunOneHot});
  r.Register({.op_type = "NonZero",
              .domain = "",
              .op_class = kOpq,
              .infer = InferNonZero,
              .run = RunNonZero});
  r.Register({.op_type = "CumSum",
              .domain = "",
              .op_class = kOpq,
              .min_inputs = 2,
              .max_inputs = 2,
              .infer = InferCumSum,
              .run = RunCumSum});
  r.Register({.op_type = "TopK",
              .domain = "",
              .op_class = kOpq,
              .max_inputs = 2,
              .min_outputs = 2,
              .max_outputs = 2,
              .infer = InferTopK,
              .run = RunTopK});
}

}  // namespace tessel::ops::tensor_internal
