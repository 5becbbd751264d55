#include <limits>

#include "ops/tensor_internal.h"

namespace tessel::ops::tensor_internal {

Status NodeError(const ir::Node& node, const std::string& msg) {
  return InvalidArgument(node.Describe() + ": " + msg);
}

Status NodeUnsupported(const ir::Node& node, const std::string& msg) {
  return Unsupported(node.Describe() + ": " + msg);
}

std::string ListToString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(v[i]);
  }
  return s + "]";
}

StatusOr<std::vector<int64_t>> ConstantInts(const ir::Node& node, size_t i, const char* what) {
  TESSEL_ASSIGN_OR_RETURN(const Tensor* t, RequireConstantInput(node, i, what));
  if (t->dtype() != DType::kInt64 && t->dtype() != DType::kInt32) {
    return NodeError(node, std::string("input ") + what + " has dtype " + DTypeName(t->dtype()) +
                               "; expected int64 or int32");
  }
  return t->ToInt64Vector();
}

StatusOr<std::optional<std::vector<int64_t>>> IntsFromInputOrAttr(const ir::Node& node, int opset,
                                                                  size_t input, const char* attr,
                                                                  int since) {
  const std::string name(attr);
  if (opset >= since) {
    if (node.attrs.Has(name)) {
      return NodeError(node, "'" + name + "' is an input since opset " + std::to_string(since) +
                                 ", not an attribute (model opset " + std::to_string(opset) + ")");
    }
    if (!node.input(input)) return std::optional<std::vector<int64_t>>();
    TESSEL_ASSIGN_OR_RETURN(std::vector<int64_t> v, ConstantInts(node, input, attr));
    return std::optional<std::vector<int64_t>>(std::move(v));
  }
  if (node.input(input)) {
    return NodeError(node, "'" + name + "' is an attribute before opset " + std::to_string(since) +
                               ", not an input (model opset " + std::to_string(opset) + ")");
  }
  if (!node.attrs.Has(name)) return std::optional<std::vector<int64_t>>();
  return std::optional<std::vector<int64_t>>(node.attrs.Ints(name));
}

std::optional<std::vector<int64_t>> KernelIntsFromInputOrAttr(const KernelContext& ctx,
                                                              size_t input, const char* attr,
                                                              int since) {
  if (ctx.opset >= since) {
    if (!ctx.has_in(input)) return std::nullopt;
    return ctx.in(input).ToInt64Vector();
  }
  if (!ctx.node.attrs.Has(attr)) return std::nullopt;
  return ctx.node.attrs.Ints(attr);
}

Status CheckShape(const ir::Node& node, const Shape& shape, const char* what) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      return NodeError(node,
                       std::string(what) + " " + ListToString(shape) + " has a negative dimension");
    }
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) {
      return NodeError(node,
                       std::string(what) + " " + ListToString(shape) + " has too many elements");
    }
    n *= d;
  }
  return Status::Ok();
}

namespace {

template <size_t kSize>
void CopyStridedImpl(const uint8_t* in, int64_t base, const Shape& walk,
                     const std::vector<int64_t>& strides, uint8_t* out) {
  const int64_t n = NumElements(walk);
  BroadcastWalker w(walk, {strides});
  for (int64_t i = 0; i < n; ++i, w.Next()) {
    std::memcpy(out + i * kSize, in + (base + w.offset(0)) * static_cast<int64_t>(kSize), kSize);
  }
}

}  // namespace

void CopyStrided(const Tensor& in, int64_t base, const Shape& walk,
                 const std::vector<int64_t>& strides, Tensor& out) {
  TESSEL_CHECK(NumElements(walk) == out.num_elements() && walk.size() == strides.size());
  if (out.num_elements() == 0) return;
  const uint8_t* src = Bytes(in);
  uint8_t* dst = Bytes(out);
  switch (ElemSize(in)) {
    case 1:
      return CopyStridedImpl<1>(src, base, walk, strides, dst);
    case 2:
      return CopyStridedImpl<2>(src, base, walk, strides, dst);
    case 4:
      return CopyStridedImpl<4>(src, base, walk, strides, dst);
    case 8:
      return CopyStridedImpl<8>(src, base, walk, strides, dst);
    default:
      TESSEL_CHECK_MSG(false, DTypeName(in.dtype()));
  }
}

void NextIndex(std::vector<int64_t>& index, const Shape& shape) {
  for (size_t d = index.size(); d-- > 0;) {
    if (++index[d] < shape[d]) return;
    index[d] = 0;
  }
}

void StoreDouble(Tensor& t, int64_t i, double v) { t.SetFromDouble(i, v); }

void FillBytes(Tensor& out, const void* value, size_t size) {
  uint8_t* dst = Bytes(out);
  const int64_t n = out.num_elements();
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * size, value, size);
}

int64_t DimProduct(const Shape& shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= shape[i];
  return n;
}

}  // namespace tessel::ops::tensor_internal
