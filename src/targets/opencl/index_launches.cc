#include "targets/opencl/index_launches.h"

#include <algorithm>
#include <array>
#include <limits>
#include <string>

#include "core/check.h"
#include "ops/einsum_plan.h"
#include "ops/op_util.h"
#include "targets/opencl/launch_util.h"

namespace tessel::opencl::index_ops {

namespace {

// The kernels index with OpenCL's 32-bit int: every tensor of the node must
// hold fewer than 2^31 elements, and at most 6 dims where they walk dims.
Status CheckSizes(const ir::Node& node, size_t max_rank = 6) {
  for (const std::vector<ir::Value*>* side : {&node.inputs, &node.outputs}) {
    for (const ir::Value* v : *side) {
      if (!v) continue;
      if (NumElements(v->shape) > std::numeric_limits<int32_t>::max()) {
        return Unsupported(node, "indexes tensors of fewer than 2^31 elements only; '" + v->name +
                                     "' has shape " + ShapeToString(v->shape));
      }
      if (v->shape.size() > max_rank) {
        return Unsupported(node, "takes tensors of at most " + std::to_string(max_rank) +
                                     " dims; '" + v->name + "' has shape " +
                                     ShapeToString(v->shape));
      }
    }
  }
  return Status::Ok();
}

// The kernel-name prefix of a typed kernel taking `dtype`, one of `allowed`.
StatusOr<std::string> TypedPrefix(const ir::Node& node, DType dtype,
                                  std::initializer_list<DType> allowed) {
  std::string names;
  for (DType t : allowed) {
    if (t == dtype) {
      switch (t) {
        case DType::kFloat32:
          return std::string("f32");
        case DType::kFloat64:
          return std::string("f64");
        case DType::kInt32:
          return std::string("i32");
        case DType::kInt64:
          return std::string("i64");
        case DType::kUInt64:
          return std::string("u64");
        case DType::kBFloat16:
          return std::string("bf16");
        default:
          break;
      }
    }
    names += std::string(names.empty() ? "" : ", ") + DTypeName(t);
  }
  return Unsupported(node, "takes " + names + " only, not " + DTypeName(dtype));
}

// `axis` in [-rank, rank) made non-negative; Unsupported past it.
StatusOr<int64_t> Axis(const ir::Node& node, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return Unsupported(
        node, "needs axis " + std::to_string(axis) + " within rank " + std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

// A tensor viewed around `axis` (ops/axis-wise kernels' outer, len, inner).
struct AxisSplit {
  int64_t outer, len, inner;
};

AxisSplit SplitAt(const Shape& s, int64_t axis) {
  const auto a = static_cast<size_t>(axis);
  return {Product(s, 0, a), s[a], Product(s, a + 1, s.size())};
}

// y = x, unless the plan gives both one buffer.
Status CopyWhole(const NodeContext& c, const ir::Value* x, const ir::Value* y,
                 std::vector<PendingLaunch>* launches) {
  if (c.ref(x) == c.ref(y)) return Status::Ok();
  const int64_t n = NumElements(y->shape);
  if (n == 0) return Status::Ok();
  TESSEL_ASSIGN_OR_RETURN(const std::string prefix, MovePrefix(c.node, y->dtype));
  PendingLaunch l;
  l.kernel_name = prefix + "_strided_copy";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(y)).Int(n);
  l.args.Ints(Pad6({n}, 1)).Ints(Pad6({1}, 0)).Ints(Pad6({1}, 0));
  l.geometry = Linear(n);
  l.bytes = Bytes(x) + Bytes(y);
  launches->push_back(std::move(l));
  return Status::Ok();
}

// `x` copied into `y` (StridedCopy): `dims` walks y in order, reading x at
// `x_strides`.
Status PermutedCopy(const NodeContext& c, const ir::Value* x, const ir::Value* y,
                    const std::vector<int64_t>& dims, const std::vector<int64_t>& x_strides,
                    std::vector<PendingLaunch>* launches) {
  return StridedCopy(c, x, y, Pad6(dims), Pad6(x_strides, 0), Strides6(dims), 0, 0, launches);
}

// The reductions' codes in tessel_scatter_* (index_kernels.cl.inc).
StatusOr<int> ScatterReduction(const ir::Node& node) {
  const std::string r = node.attrs.String("reduction", "none");
  if (r == "none") return 0;
  if (r == "add") return 1;
  if (r == "mul") return 2;
  if (r == "max") return 3;
  if (r == "min") return 4;
  return Unsupported(node, "has no scatter reduction '" + r + "' (none, add, mul, max, min)");
}

}  // namespace

Status ArgExtreme(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  TESSEL_RETURN_IF_ERROR(CheckSizes(c.node, 8));
  const ir::Value* x = c.node.input(0);
  const ir::Value* y = c.node.output(0);
  TESSEL_ASSIGN_OR_RETURN(
      const std::string prefix,
      TypedPrefix(c.node, x->dtype, {DType::kFloat32, DType::kInt32, DType::kInt64}));
  TESSEL_ASSIGN_OR_RETURN(const int64_t axis,
                          Axis(c.node, c.node.attrs.Int("axis", 0), x->shape.size()));
  const AxisSplit s = SplitAt(x->shape, axis);
  if (NumElements(y->shape) == 0) return Status::Ok();
  PendingLaunch l;
  l.kernel_name = prefix + "_arg_extreme";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(y)).Int(s.outer).Int(s.len).Int(s.inner);
  l.args.Int(c.node.op_type == "ArgMax" ? 1 : 0).Int(c.node.attrs.Int("select_last_index", 0));
  l.geometry = Grid(s.inner, s.outer);
  l.bytes = Bytes(x) + Bytes(y);
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status Hardmax(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  TESSEL_RETURN_IF_ERROR(CheckSizes(c.node, 8));
  const ir::Value* x = c.node.input(0);
  const ir::Value* y = c.node.output(0);
  TESSEL_RETURN_IF_ERROR(TypedPrefix(c.node, x->dtype, {DType::kFloat32}).status());
  const bool flattened = c.opset < 13;  // the tail from `axis` as one row
  TESSEL_ASSIGN_OR_RETURN(
      const int64_t axis,
      Axis(c.node, c.node.attrs.Int("axis", flattened ? 1 : -1), x->shape.size()));
  AxisSplit s = SplitAt(x->shape, axis);
  if (flattened) s = {s.outer, s.len * s.inner, 1};
  if (NumElements(x->shape) == 0) return Status::Ok();
  PendingLaunch l;
  l.kernel_name = "f32_hardmax";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(y)).Int(s.outer).Int(s.len).Int(s.inner);
  l.geometry = Grid(s.inner, s.outer);
  l.bytes = Bytes(x) + Bytes(y);
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status CumSum(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  TESSEL_RETURN_IF_ERROR(CheckSizes(c.node, 8));
  const ir::Value* x = c.node.input(0);
  const ir::Value* y = c.node.output(0);
  TESSEL_ASSIGN_OR_RETURN(const std::string prefix, TypedPrefix(c.node, x->dtype,
                                                                {DType::kFloat32, DType::kInt32,
                                                                 DType::kInt64, DType::kFloat64}));
  TESSEL_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, ConstantInts(c, 1, "axis"));
  if (axes.size() != 1) return Unsupported(c.node, "needs a scalar axis");
  TESSEL_ASSIGN_OR_RETURN(const int64_t axis, Axis(c.node, axes[0], x->shape.size()));
  const AxisSplit s = SplitAt(x->shape, axis);
  if (NumElements(x->shape) == 0) return Status::Ok();
  PendingLaunch l;
  l.kernel_name = prefix + "_cumsum";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(y)).Int(s.outer).Int(s.len).Int(s.inner);
  l.args.Int(c.node.attrs.Int("exclusive", 0) != 0).Int(c.node.attrs.Int("reverse", 0) != 0);
  l.geometry = Grid(s.inner, s.outer);
  l.bytes = Bytes(x) + Bytes(y);
  l.flops = NumElements(x->shape);
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status TopK(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  TESSEL_RETURN_IF_ERROR(CheckSizes(c.node, 8));
  const ir::Value* x = c.node.input(0);
  const ir::Value* values = c.node.output(0);
  const ir::Value* indices = c.node.output(1);
  if (!values || !indices) return Unsupported(c.node, "produces both Values and Indices only");
  TESSEL_ASSIGN_OR_RETURN(const std::string prefix, TypedPrefix(c.node, x->dtype,
                                                                {DType::kFloat32, DType::kInt32,
                                                                 DType::kInt64, DType::kUInt64}));
  TESSEL_ASSIGN_OR_RETURN(const int64_t axis,
                          Axis(c.node, c.node.attrs.Int("axis", -1), x->shape.size()));
  const AxisSplit s = SplitAt(x->shape, axis);
  const int64_t k = values->shape[static_cast<size_t>(axis)];
  if (k == 0 || NumElements(x->shape) == 0) return Status::Ok();
  PendingLaunch l;
  l.kernel_name = prefix + "_top_k";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(values)).Tensor(c.ref(indices));
  l.args.Int(s.outer * s.inner).Int(s.len).Int(s.inner).Int(k);
  l.args.Int(c.node.attrs.Int("largest", 1) != 0);
  l.geometry = Grid(s.len, s.outer * s.inner);
  l.bytes = Bytes(x) + Bytes(values) + Bytes(indices);
  l.flops = NumElements(x->shape) * s.len;
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status LpNormalization(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  TESSEL_RETURN_IF_ERROR(CheckSizes(c.node, 8));
  const ir::Value* x = c.node.input(0);
  const ir::Value* y = c.node.output(0);
  TESSEL_RETURN_IF_ERROR(TypedPrefix(c.node, x->dtype, {DType::kFloat32}).status());
  const int64_t p = c.node.attrs.Int("p", 2);
  if (p != 1 && p != 2) return Unsupported(c.node, "takes p 1 or 2 only, not " + std::to_string(p));
  TESSEL_ASSIGN_OR_RETURN(const int64_t axis,
                          Axis(c.node, c.node.attrs.Int("axis", -1), x->shape.size()));
  const AxisSplit s = SplitAt(x->shape, axis);
  if (NumElements(x->shape) == 0) return Status::Ok();
  PendingLaunch l;
  l.kernel_name = "f32_lp_norm";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(y)).Int(s.outer).Int(s.len).Int(s.inner).Int(p);
  l.geometry = Grid(s.inner, s.outer);
  l.bytes = Bytes(x) + Bytes(y);
  l.flops = 3 * NumElements(x->shape);
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status RmsNormalization(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  TESSEL_RETURN_IF_ERROR(CheckSizes(c.node, 8));
  const ir::Value* x = c.node.input(0);
  const ir::Value* scale = c.node.input(1);
  const ir::Value* y = c.node.output(0);
  TESSEL_RETURN_IF_ERROR(TypedPrefix(c.node, x->dtype, {DType::kFloat32}).status());
  TESSEL_RETURN_IF_ERROR(TypedPrefix(c.node, scale->dtype, {DType::kFloat32}).status());
  const int64_t stash_type = c.node.attrs.Int("stash_type", 1);
  if (stash_type != 1) {
    return Unsupported(c.node,
                       "takes stash_type 1 (float32) only, not " + std::to_string(stash_type));
  }
  TESSEL_ASSIGN_OR_RETURN(const int64_t axis,
                          Axis(c.node, c.node.attrs.Int("axis", -1), x->shape.size()));
  const Shape normalized(x->shape.begin() + axis, x->shape.end());
  const int64_t rows = Product(x->shape, 0, static_cast<size_t>(axis));
  const int64_t len = NumElements(normalized);
  if (rows * len == 0) return Status::Ok();
  if (scale->shape.size() > normalized.size()) {
    return Unsupported(c.node, "takes a scale that broadcasts to the normalized shape only");
  }
  // Where each element of a row reads the scale, which broadcasts to the
  // normalized shape.
  const std::vector<int64_t> strides = ops::BroadcastStrides(scale->shape, normalized);
  std::vector<int32_t> at(static_cast<size_t>(len));
  for (int64_t i = 0; i < len; ++i) {
    int64_t rest = i, offset = 0;
    for (size_t d = normalized.size(); d-- > 0;) {
      offset += rest % normalized[d] * strides[d];
      rest /= normalized[d];
    }
    at[static_cast<size_t>(i)] = static_cast<int32_t>(offset);
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(at.data());
  PendingLaunch l;
  l.kernel_name = "f32_rms_norm_rows";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(scale));
  l.args.Table(std::vector<unsigned char>(bytes, bytes + at.size() * sizeof(int32_t)));
  l.args.Tensor(c.ref(y)).Int(len).Float(c.node.attrs.Float("epsilon", 1e-5f));
  l.geometry = Rows(rows);
  l.bytes = 2 * Bytes(x) + Bytes(scale);
  l.flops = 4 * rows * len;
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status Lrn(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  TESSEL_RETURN_IF_ERROR(CheckSizes(c.node, 8));
  const ir::Value* x = c.node.input(0);
  const ir::Value* y = c.node.output(0);
  TESSEL_RETURN_IF_ERROR(TypedPrefix(c.node, x->dtype, {DType::kFloat32}).status());
  if (x->shape.size() < 3) return Unsupported(c.node, "takes (N, C, D...) inputs only");
  const int64_t size = c.node.attrs.Int("size", 1);
  if (size < 1) return Unsupported(c.node, "takes a positive size only");
  const int64_t n = NumElements(x->shape);
  if (n == 0) return Status::Ok();
  const int64_t below = (size - 1) / 2;
  PendingLaunch l;
  l.kernel_name = "f32_lrn";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(y)).Int(n).Int(x->shape[1]);
  l.args.Int(Product(x->shape, 2, x->shape.size())).Int(below).Int(size - 1 - below);
  l.args.Float(c.node.attrs.Float("alpha", 1e-4f) / static_cast<float>(size));
  l.args.Float(c.node.attrs.Float("beta", 0.75f)).Float(c.node.attrs.Float("bias", 1.0f));
  l.geometry = Linear(n);
  l.bytes = Bytes(x) + Bytes(y);
  l.flops = (2 * size + 4) * n;
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status ReduceLogSumExp(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  TESSEL_RETURN_IF_ERROR(CheckSizes(c.node));
  const ir::Value* x = c.node.input(0);
  const ir::Value* y = c.node.output(0);
  TESSEL_ASSIGN_OR_RETURN(const std::string prefix,
                          TypedPrefix(c.node, x->dtype, {DType::kFloat32, DType::kFloat64}));
  std::vector<int64_t> axes;
  if (c.opset >= 18) {
    TESSEL_ASSIGN_OR_RETURN(axes, ConstantInts(c, 1, "axes"));
  } else {
    axes = c.node.attrs.Ints("axes");
  }
  const auto r = static_cast<int64_t>(x->shape.size());
  const bool noop = axes.empty() && c.node.attrs.Int("noop_with_empty_axes", 0) != 0;
  std::vector<bool> reduced(static_cast<size_t>(r), axes.empty() && !noop);
  for (int64_t a : axes) {
    TESSEL_ASSIGN_OR_RETURN(const int64_t axis, Axis(c.node, a, r));
    reduced[static_cast<size_t>(axis)] = true;
  }
  // The output walks the kept axes in order; each item the reduced ones.
  const std::vector<int64_t> strides = StridesOf(x->shape);
  std::vector<int64_t> kd, ks, rd, rs;
  for (size_t d = 0; d < x->shape.size(); ++d) {
    (reduced[d] ? rd : kd).push_back(x->shape[d]);
    (reduced[d] ? rs : ks).push_back(strides[d]);
  }
  const int64_t n_out = NumElements(y->shape);
  if (n_out == 0) return Status::Ok();
  PendingLaunch l;
  l.kernel_name = prefix + "_reduce_log_sum_exp";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(y)).Int(n_out).Int(NumElements(rd));
  l.args.Ints(Pad6(kd, 1)).Ints(Pad6(ks, 0)).Ints(Pad6(rd, 1)).Ints(Pad6(rs, 0));
  l.geometry = Linear(n_out);
  l.bytes = 2 * Bytes(x) + Bytes(y);
  l.flops = 4 * NumElements(x->shape);
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status Trilu(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  TESSEL_RETURN_IF_ERROR(CheckSizes(c.node, 8));
  const ir::Value* x = c.node.input(0);
  const ir::Value* k = c.node.input(1);
  const ir::Value* y = c.node.output(0);
  TESSEL_ASSIGN_OR_RETURN(const std::string prefix, MovePrefix(c.node, x->dtype));
  if (x->shape.size() < 2) return Unsupported(c.node, "takes inputs of rank 2 or more only");
  if (k && (k->dtype != DType::kInt64 || NumElements(k->shape) != 1)) {
    return Unsupported(c.node, "takes an int64 scalar k only");
  }
  const int64_t n = NumElements(x->shape);
  if (n == 0) return Status::Ok();
  const size_t r = x->shape.size();
  PendingLaunch l;
  l.kernel_name = prefix + "_trilu";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(k ? k : x)).Int(k ? 1 : 0).Tensor(c.ref(y)).Int(n);
  l.args.Int(x->shape[r - 2]).Int(x->shape[r - 1]).Int(c.node.attrs.Int("upper", 1) != 0);
  l.geometry = Linear(n);
  l.bytes = Bytes(x) + Bytes(y);
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status EyeLike(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  TESSEL_RETURN_IF_ERROR(CheckSizes(c.node));
  const ir::Value* y = c.node.output(0);
  TESSEL_ASSIGN_OR_RETURN(const std::string prefix, MovePrefix(c.node, y->dtype));
  if (y->shape.size() != 2) return Unsupported(c.node, "takes 2-D inputs only");
  const int64_t n = NumElements(y->shape);
  if (n == 0) return Status::Ok();
  Tensor one(y->dtype, {1});
  one.SetFromDouble(0, 1.0);
  const int64_t k = c.node.attrs.Int("k", 0);
  const cl_long diagonal = static_cast<cl_long>(k);
  PendingLaunch l;
  l.kernel_name = prefix + "_eye_like";
  l.args.Tensor(c.ref(y)).Int(n).Int(y->shape[1]).Raw(&diagonal, sizeof diagonal);
  l.args.Raw(one.raw_data(), one.size_bytes());
  l.geometry = Linear(n);
  l.bytes = Bytes(y);
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status Tile(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  TESSEL_RETURN_IF_ERROR(CheckSizes(c.node));
  const ir::Value* x = c.node.input(0);
  const ir::Value* y = c.node.output(0);
  TESSEL_ASSIGN_OR_RETURN(const std::string prefix, MovePrefix(c.node, x->dtype));
  if (c.opset < 6) return Unsupported(c.node, "tiles from opset 6 (repeats as one input) only");
  const int64_t n = NumElements(y->shape);
  if (n == 0) return Status::Ok();
  PendingLaunch l;
  l.kernel_name = prefix + "_tile";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(y)).Int(n);
  l.args.Ints(Pad6(y->shape, 1)).Ints(Pad6(x->shape, 1)).Ints(Pad6(StridesOf(x->shape), 0));
  l.geometry = Linear(n);
  l.bytes = Bytes(x) + Bytes(y);
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status DepthToSpace(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  TESSEL_RETURN_IF_ERROR(CheckSizes(c.node));
  const ir::Value* x = c.node.input(0);
  if (x->shape.size() != 4) return Unsupported(c.node, "takes 4-D inputs only");
  // The output as N x C' x H x b x W x b reads the input viewed as
  // N x b x b x C' x H x W (DCR) or N x C' x b x b x H x W (CRD).
  const int64_t b = c.node.attrs.Int("blocksize", 1);
  const int64_t n = x->shape[0], ch = x->shape[1] / (b * b), h = x->shape[2], w = x->shape[3];
  const bool crd = c.node.attrs.String("mode", "DCR") == "CRD";
  const std::vector<int64_t> s =
      StridesOf(crd ? Shape{n, ch, b, b, h, w} : Shape{n, b, b, ch, h, w});
  const std::vector<int64_t> xs = crd ? std::vector<int64_t>{s[0], s[1], s[4], s[2], s[5], s[3]}
                                      : std::vector<int64_t>{s[0], s[3], s[4], s[1], s[5], s[2]};
  return PermutedCopy(c, x, c.node.output(0), {n, ch, h, b, w, b}, xs, launches);
}

Status SpaceToDepth(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  TESSEL_RETURN_IF_ERROR(CheckSizes(c.node));
  const ir::Value* x = c.node.input(0);
  if (x->shape.size() != 4) return Unsupported(c.node, "takes 4-D inputs only");
  // DCR: the output as N x b x b x C x H' x W' reads the input viewed as
  // N x C x H' x b x W' x b; CRD: as N x C x b x b x H' x W'.
  const int64_t b = c.node.attrs.Int("blocksize", 1);
  const int64_t n = x->shape[0], ch = x->shape[1], h = x->shape[2] / b, w = x->shape[3] / b;
  const std::vector<int64_t> s = StridesOf({n, ch, h, b, w, b});
  if (c.node.attrs.String("mode", "DCR") == "CRD") {
    return PermutedCopy(c, x, c.node.output(0), {n, ch, b, b, h, w},
                        {s[0], s[1], s[3], s[5], s[2], s[4]}, launches);
  }
  return PermutedCopy(c, x, c.node.output(0), {n, b, b, ch, h, w},
                      {s[0], s[3], s[5], s[1], s[2], s[4]}, launches);
}

Status Compress(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  TESSEL_RETURN_IF_ERROR(CheckSizes(c.node, 8));
  const ir::Value* x = c.node.input(0);
  const ir::Value* condition = c.node.input(1);
  const ir::Value* y = c.node.output(0);
  TESSEL_ASSIGN_OR_RETURN(const std::string prefix, MovePrefix(c.node, x->dtype));
  if (!condition->is_constant()) {
    return Unsupported(c.node, "needs the condition known at compile time");
  }
  AxisSplit s{1, NumElements(x->shape), 1};  // no axis: the flattened input
  if (c.node.attrs.Has("axis")) {
    TESSEL_ASSIGN_OR_RETURN(const int64_t axis,
                            Axis(c.node, c.node.attrs.Int("axis", 0), x->shape.size()));
    s = SplitAt(x->shape, axis);
  }
  // The picked slices as a table of int32 indices for the Gather kernel.
  std::vector<int32_t> picks;
  const int64_t conditions = std::min(condition->constant.num_elements(), s.len);
  for (int64_t i = 0; i < conditions; ++i) {
    if (condition->constant.GetAsDouble(i) != 0) picks.push_back(static_cast<int32_t>(i));
  }
  const int64_t n = s.outer * static_cast<int64_t>(picks.size()) * s.inner;
  if (n != NumElements(y->shape)) {
    return Unsupported(c.node, "found a condition that does not give the output's shape");
  }
  if (n == 0) return Status::Ok();
  const auto* bytes = reinterpret_cast<const unsigned char*>(picks.data());
  PendingLaunch l;
  l.kernel_name = prefix + "_gather_i32";
  l.args.Tensor(c.ref(x));
  l.args.Table(std::vector<unsigned char>(bytes, bytes + picks.size() * sizeof(int32_t)));
  l.args.Tensor(c.ref(y)).Int(n).Int(static_cast<int64_t>(picks.size())).Int(s.inner).Int(s.len);
  l.geometry = Linear(n);
  l.bytes = 2 * Bytes(y);
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status ReverseSequence(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  TESSEL_RETURN_IF_ERROR(CheckSizes(c.node, 8));
  const ir::Value* x = c.node.input(0);
  const ir::Value* lens = c.node.input(1);
  const ir::Value* y = c.node.output(0);
  TESSEL_ASSIGN_OR_RETURN(const std::string prefix, MovePrefix(c.node, x->dtype));
  const int64_t batch_axis = c.node.attrs.Int("batch_axis", 1);
  const int64_t time_axis = c.node.attrs.Int("time_axis", 0);
  if (x->shape.size() < 2 || batch_axis + time_axis != 1 || batch_axis * time_axis != 0 ||
      lens->dtype != DType::kInt64) {
    return Unsupported(c.node, "takes batch and time axes 0 and 1 and int64 lengths only");
  }
  const int64_t n = NumElements(x->shape);
  if (n == 0) return Status::Ok();
  const int64_t steps = x->shape[static_cast<size_t>(time_axis)];
  const int64_t batches = x->shape[static_cast<size_t>(batch_axis)];
  PendingLaunch l;
  l.kernel_name = prefix + "_reverse_sequence";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(lens)).Tensor(c.ref(y)).Int(n).Int(steps).Int(batches);
  l.args.Int(n / (steps * batches)).Int(batch_axis);
  l.geometry = Linear(n);
  l.bytes = Bytes(x) + Bytes(y) + Bytes(lens);
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status GatherElements(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  TESSEL_RETURN_IF_ERROR(CheckSizes(c.node));
  const ir::Value* x = c.node.input(0);
  const ir::Value* idx = c.node.input(1);
  const ir::Value* y = c.node.output(0);
  TESSEL_ASSIGN_OR_RETURN(const std::string prefix, MovePrefix(c.node, x->dtype));
  TESSEL_ASSIGN_OR_RETURN(const std::string index,
                          TypedPrefix(c.node, idx->dtype, {DType::kInt64, DType::kInt32}));
  TESSEL_ASSIGN_OR_RETURN(const int64_t axis,
                          Axis(c.node, c.node.attrs.Int("axis", 0), x->shape.size()));
  if (idx->shape.size() != x->shape.size()) {
    return Unsupported(c.node, "takes indices of the data's rank only");
  }
  const int64_t n = NumElements(y->shape);
  if (n == 0) return Status::Ok();
  if (x->shape[static_cast<size_t>(axis)] == 0) return Unsupported(c.node, "indexes an empty axis");
  std::vector<int64_t> xs = StridesOf(x->shape);
  const int64_t axis_stride = xs[static_cast<size_t>(axis)];
  xs[static_cast<size_t>(axis)] = 0;  // the index gives that coordinate
  PendingLaunch l;
  l.kernel_name = prefix + "_gather_elements_" + index;
  l.args.Tensor(c.ref(x)).Tensor(c.ref(idx)).Tensor(c.ref(y)).Int(n);
  l.args.Ints(Pad6(idx->shape, 1)).Ints(Pad6(xs, 0)).Int(axis_stride);
  l.args.Int(x->shape[static_cast<size_t>(axis)]);
  l.geometry = Linear(n);
  l.bytes = 2 * Bytes(y) + Bytes(idx);
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status OneHot(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  TESSEL_RETURN_IF_ERROR(CheckSizes(c.node, 8));
  const ir::Value* idx = c.node.input(0);
  const ir::Value* depth = c.node.input(1);
  const ir::Value* values = c.node.input(2);
  const ir::Value* y = c.node.output(0);
  TESSEL_ASSIGN_OR_RETURN(const std::string prefix, MovePrefix(c.node, y->dtype));
  TESSEL_ASSIGN_OR_RETURN(
      const std::string index,
      TypedPrefix(c.node, idx->dtype, {DType::kInt64, DType::kInt32, DType::kFloat32}));
  if (!depth->is_constant() || depth->constant.num_elements() != 1) {
    return Unsupported(c.node, "needs a scalar depth known at compile time");
  }
  const int64_t out_rank = static_cast<int64_t>(y->shape.size());
  TESSEL_ASSIGN_OR_RETURN(const int64_t axis, Axis(c.node, c.node.attrs.Int("axis", -1), out_rank));
  const int64_t d = y->shape[static_cast<size_t>(axis)];
  const int64_t n = NumElements(y->shape);
  if (n == 0) return Status::Ok();
  PendingLaunch l;
  l.kernel_name = prefix + "_one_hot_" + index;
  l.args.Tensor(c.ref(idx)).Tensor(c.ref(values)).Tensor(c.ref(y)).Int(n).Int(d);
  l.args.Int(Product(idx->shape, static_cast<size_t>(axis), idx->shape.size()));
  l.geometry = Linear(n);
  l.bytes = Bytes(y) + Bytes(idx);
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status ScatterElements(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  TESSEL_RETURN_IF_ERROR(CheckSizes(c.node));
  const ir::Value* x = c.node.input(0);
  const ir::Value* idx = c.node.input(1);
  const ir::Value* updates = c.node.input(2);
  const ir::Value* y = c.node.output(0);
  TESSEL_ASSIGN_OR_RETURN(
      const std::string prefix,
      TypedPrefix(c.node, x->dtype, {DType::kFloat32, DType::kInt32, DType::kInt64}));
  TESSEL_ASSIGN_OR_RETURN(const std::string index,
                          TypedPrefix(c.node, idx->dtype, {DType::kInt64, DType::kInt32}));
  TESSEL_ASSIGN_OR_RETURN(const int reduction, ScatterReduction(c.node));
  TESSEL_ASSIGN_OR_RETURN(const int64_t axis,
                          Axis(c.node, c.node.attrs.Int("axis", 0), x->shape.size()));
  if (idx->shape.size() != x->shape.size() || updates->shape != idx->shape) {
    return Unsupported(c.node, "takes indices of the data's rank and updates of their shape only");
  }
  const int64_t n = NumElements(idx->shape);
  const auto a = static_cast<size_t>(axis);
  if (n > 0 && x->shape[a] == 0) return Unsupported(c.node, "indexes an empty axis");
  TESSEL_RETURN_IF_ERROR(CopyWhole(c, x, y, launches));
  if (n == 0) return Status::Ok();
  Shape lines = idx->shape;
  lines[a] = 1;
  const std::vector<int64_t> is = StridesOf(idx->shape), ys = StridesOf(y->shape);
  PendingLaunch l;
  l.kernel_name = prefix + "_scatter_elements_" + index;
  l.args.Tensor(c.ref(idx)).Tensor(c.ref(updates)).Tensor(c.ref(y)).Int(NumElements(lines));
  l.args.Ints(Pad6(lines, 1)).Ints(Pad6(is, 0)).Ints(Pad6(ys, 0)).Int(idx->shape[a]);
  l.args.Int(is[a]).Int(ys[a]).Int(x->shape[a]).Int(reduction);
  l.geometry = Linear(NumElements(lines));
  l.bytes = Bytes(idx) + 3 * Bytes(updates);
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status ScatterNd(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  TESSEL_RETURN_IF_ERROR(CheckSizes(c.node, 16));
  const ir::Value* x = c.node.input(0);
  const ir::Value* idx = c.node.input(1);
  const ir::Value* updates = c.node.input(2);
  const ir::Value* y = c.node.output(0);
  TESSEL_ASSIGN_OR_RETURN(
      const std::string prefix,
      TypedPrefix(c.node, x->dtype, {DType::kFloat32, DType::kInt32, DType::kInt64}));
  TESSEL_RETURN_IF_ERROR(TypedPrefix(c.node, idx->dtype, {DType::kInt64}).status());
  TESSEL_ASSIGN_OR_RETURN(const int reduction, ScatterReduction(c.node));
  if (idx->shape.empty()) return Unsupported(c.node, "takes indices of rank 1 or more only");
  const auto k = static_cast<size_t>(idx->shape.back());
  if (k < 1 || k > 8 || k > x->shape.size()) {
    return Unsupported(c.node, "takes index tuples of 1 to 8 entries within the data's rank only");
  }
  const int64_t block = Product(x->shape, k, x->shape.size());
  const int64_t tuples = NumElements(idx->shape) / static_cast<int64_t>(k);
  if (tuples > 0 && std::find(x->shape.begin(), x->shape.begin() + k, 0) != x->shape.begin() + k) {
    return Unsupported(c.node, "indexes an empty axis");
  }
  TESSEL_RETURN_IF_ERROR(CopyWhole(c, x, y, launches));
  if (block == 0 || tuples == 0) return Status::Ok();
  const std::vector<int64_t> strides = StridesOf(x->shape);
  Dims6 dims{1, 1, 1, 1, 1, 1, 1, 1}, st{0, 0, 0, 0, 0, 0, 0, 0};
  for (size_t t = 0; t < k; ++t) {
    dims[t] = x->shape[t];
    st[t] = strides[t];
  }
  PendingLaunch l;
  l.kernel_name = prefix + "_scatter_nd";
  l.args.Tensor(c.ref(idx)).Tensor(c.ref(updates)).Tensor(c.ref(y)).Int(block).Int(tuples);
  l.args.Int(static_cast<int64_t>(k)).Ints(dims).Ints(st).Int(reduction);
  l.geometry = Linear(block);
  l.bytes = Bytes(idx) + 3 * Bytes(updates);
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status Einsum(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  TESSEL_RETURN_IF_ERROR(CheckSizes(c.node, 8));
  const ir::Value* a = c.node.input(0);
  const ir::Value* b = c.node.inputs.size() > 1 ? c.node.input(1) : nullptr;
  const ir::Value* y = c.node.output(0);
  if (c.node.inputs.size() > 2) return Unsupported(c.node, "runs Einsum of one or two inputs only");
  TESSEL_ASSIGN_OR_RETURN(const std::string prefix,
                          TypedPrefix(c.node, a->dtype,
                                      {DType::kFloat32, DType::kInt32, DType::kInt64,
                                       DType::kBFloat16, DType::kFloat64}));
  TESSEL_ASSIGN_OR_RETURN(const ops::EinsumLoops p, ops::PlanEinsumLoops(c.node));
  const size_t loops = p.loop_shape.size();
  if (p.out_rank > 6 || loops - p.out_rank > 6) {
    return Unsupported(c.node, "runs Einsum of at most 6 output and 6 summed labels only");
  }
  // The loop dims [begin, end) of input k's strides.
  const auto part = [&](size_t k, size_t begin, size_t end) {
    if (k >= p.strides.size()) return std::vector<int64_t>(end - begin, 0);
    return std::vector<int64_t>(p.strides[k].begin() + begin, p.strides[k].begin() + end);
  };
  const Shape out_dims(p.loop_shape.begin(), p.loop_shape.begin() + p.out_rank);
  const Shape sum_dims(p.loop_shape.begin() + p.out_rank, p.loop_shape.end());
  const int64_t n_out = NumElements(y->shape);
  if (n_out == 0) return Status::Ok();
  if (NumElements(out_dims) != n_out)
    return Unsupported(c.node, "found loops that miss the output");
  const int64_t n_sum = NumElements(sum_dims);
  constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
  if (n_out > kIntMax || n_sum > kIntMax) {
    return Unsupported(c.node, "runs Einsum of fewer than 2^31 outputs and summed terms only");
  }
  PendingLaunch l;
  l.kernel_name = prefix + "_einsum";
  l.args.Tensor(c.ref(a)).Tensor(c.ref(b ? b : a)).Int(b ? 1 : 0).Tensor(c.ref(y));
  l.args.Int(n_out).Int(n_sum).Ints(Pad6(out_dims, 1));
  l.args.Ints(Pad6(part(0, 0, p.out_rank), 0)).Ints(Pad6(part(1, 0, p.out_rank), 0));
  l.args.Ints(Pad6(sum_dims, 1)).Ints(Pad6(part(0, p.out_rank, loops), 0));
  l.args.Ints(Pad6(part(1, p.out_rank, loops), 0));
  l.geometry = Linear(n_out);
  l.bytes = Bytes(a) + Bytes(b) + Bytes(y);
  l.flops = 2 * n_out * n_sum;
  launches->push_back(std::move(l));
  return Status::Ok();
}

}  // namespace tessel::opencl::index_ops
