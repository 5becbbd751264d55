#include "ops/op_util.h"

#include <algorithm>

namespace tessel::ops {

void SetOutput(ir::Node& node, size_t i, DType dtype, Shape shape) {
  ir::Value* v = node.output(i);
  if (!v) return;
  v->dtype = dtype;
  v->shape = std::move(shape);
  v->shape_known = true;
}

StatusOr<int64_t> NormalizeAxis(const ir::Node& node, int64_t axis, int64_t rank,
                                const char* what) {
  const int64_t lo = -rank, hi = rank - 1;
  if (axis < lo || axis > hi) {
    return InvalidArgument(node.Describe() + ": " + what + " " + std::to_string(axis) +
                           " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) +
                           "] for rank " + std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

StatusOr<Shape> BroadcastShapes(const ir::Node& node, const std::vector<Shape>& shapes) {
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape& s : shapes) {
    const size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[off + i];
      const int64_t d = s[i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::string all;
      for (const Shape& t : shapes) all += (all.empty() ? "" : ", ") + ShapeToString(t);
      return InvalidArgument(node.Describe() + ": shapes " + all + " do not broadcast");
    }
  }
  return out;
}

std::vector<int64_t> BroadcastStrides(const Shape& in, const Shape& out) {
  std::vector<int64_t> strides(out.size(), 0);
  const std::vector<int64_t> dense = StridesOf(in);
  const size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) strides[off + i] = in[i] == 1 ? 0 : dense[i];
  return strides;
}

BroadcastWalker::BroadcastWalker(const Shape& shape, std::vector<std::vector<int64_t>> strides)
    : shape_(shape),
      strides_(std::move(strides)),
      index_(shape.size(), 0),
      offsets_(strides_.size(), 0) {}

void BroadcastWalker::Next() {
  for (int64_t d = static_cast<int64_t>(shape_.size()) - 1; d >= 0; --d) {
    if (++index_[d] < shape_[d]) {
      for (size_t k = 0; k < strides_.size(); ++k) offsets_[k] += strides_[k][d];
      return;
    }
    for (size_t k = 0; k < strides_.size(); ++k) offsets_[k] -= strides_[k][d] * (shape_[d] - 1);
    index_[d] = 0;
  }
}

Status RequireDType(const ir::Node& node, size_t i, std::initializer_list<DType> allowed) {
  const ir::Value* v = node.input(i);
  if (!v) return Status::Ok();
  for (DType t : allowed) {
    if (v->dtype == t) return Status::Ok();
  }
  std::string list;
  for (DType t : allowed) list += (list.empty() ? "" : ", ") + std::string(DTypeName(t));
  return Unsupported(node.Describe() + ": input '" + v->name + "' has dtype " +
                     DTypeName(v->dtype) + "; supported: " + list);
}

Status RequireRank(const ir::Node& node, size_t i, int64_t rank) {
  const ir::Value* v = node.input(i);
  if (!v || static_cast<int64_t>(v->shape.size()) == rank) return Status::Ok();
  return InvalidArgument(node.Describe() + ": input '" + v->name + "' has shape " +
                         ShapeToString(v->shape) + "; expected rank " + std::to_string(rank));
}

Status RequireSameDType(const ir::Node& node, std::initializer_list<size_t> indices) {
  const ir::Value* first = nullptr;
  for (size_t i : indices) {
    const ir::Value* v = node.input(i);
    if (!v) continue;
    if (!first) {
      first = v;
    } else if (v->dtype != first->dtype) {
      return InvalidArgument(node.Describe() + ": inputs '" + first->name + "' (" +
                             DTypeName(first->dtype) + ") and '" + v->name + "' (" +
                             DTypeName(v->dtype) + ") must have the same dtype");
    }
  }
  return Status::Ok();
}

StatusOr<const Tensor*> RequireConstantInput(const ir::Node& node, size_t i, const char* what) {
  const ir::Value* v = node.input(i);
  if (!v) return InvalidArgument(node.Describe() + ": input " + what + " is missing");
  if (!v->is_constant()) {
    return Unsupported(node.Describe() + ": input " + what + " ('" + v->name +
                       "') must be known at compile time; tessel compiles static shapes");
  }
  return &v->constant;
}

}  // namespace tessel::ops
