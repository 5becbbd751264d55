// Shape and data movement ops: reshapes, layout changes, concatenation and
// slicing. Kernels copy bytes, so they serve every dtype.
// Gather/Scatter and friends live in tensor_index.cc; Pad, Resize and the
// depth/space shuffles in tensor_spatial.cc.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>

#include "ops/strided_view.h"
#include "ops/tensor_internal.h"

namespace tessel::ops {
namespace tensor_internal {
namespace {

constexpr int kUnbounded = std::numeric_limits<int>::max();

const ir::Value& In(const ir::Node& node, size_t i) { return *node.input(i); }

void CopyAll(const Tensor& in, Tensor& out) {
  // The memory plan may give a Reshape-like op its input's bytes: nothing to do.
  if (out.size_bytes() > 0 && out.raw_data() != in.raw_data()) {
    std::memcpy(out.raw_data(), in.raw_data(), out.size_bytes());
  }
}

// Identity, Reshape, Flatten, Squeeze, Unsqueeze: the output holds the
// input's bytes unchanged.
Status RunCopy(KernelContext& ctx) {
  CopyAll(ctx.in(0), ctx.out(0));
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Identity, Dropout

Status InferIdentity(ir::Node& node, int opset) {
  SetOutput(node, 0, In(node, 0).dtype, In(node, 0).shape);
  return Status::Ok();
}

Status InferDropout(ir::Node& node, int opset) {
  // Before opset 7, is_test (default 0) picked the mode; 0 drops at random.
  if (opset < 7 && node.attrs.Int("is_test", 0) == 0) {
    return NodeUnsupported(node,
                           "is_test=0 (training mode, the default before opset 7) is not "
                           "supported; tessel runs inference and needs is_test=1");
  }
  if (node.input(2)) {
    TESSEL_ASSIGN_OR_RETURN(const Tensor* mode, RequireConstantInput(node, 2, "training_mode"));
    if (mode->num_elements() != 1) {
      return NodeError(
          node, "training_mode must have one element; got shape " + ShapeToString(mode->shape()));
    }
    if (mode->GetAsInt64(0) != 0) {
      return NodeUnsupported(node, "training_mode=true is not supported; tessel runs inference");
    }
  }
  const ir::Value& x = In(node, 0);
  SetOutput(node, 0, x.dtype, x.shape);
  // The mask became bool in opset 10; before, it had the data's type.
  SetOutput(node, 1, opset >= 10 ? DType::kBool : x.dtype, x.shape);
  return Status::Ok();
}

Status RunDropout(KernelContext& ctx) {
  CopyAll(ctx.in(0), ctx.out(0));
  if (ctx.has_out(1)) {
    Tensor& mask = ctx.out(1);
    for (int64_t i = 0; i < mask.num_elements(); ++i) StoreDouble(mask, i, 1.0);
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Shape, Size

// The dims Shape returns: opset 15's start/end clamp like Python slicing.
std::vector<int64_t> ShapeDims(const ir::Node& node, const Shape& shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  auto clamp = [rank](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  const int64_t start = clamp(node.attrs.Int("start", 0));
  const int64_t end = clamp(node.attrs.Int("end", rank));
  if (end <= start) return {};
  return std::vector<int64_t>(shape.begin() + start, shape.begin() + end);
}

Status InferShapeOp(ir::Node& node, int opset) {
  std::vector<int64_t> dims = ShapeDims(node, In(node, 0).shape);
  const int64_t n = static_cast<int64_t>(dims.size());
  SetOutput(node, 0, DType::kInt64, {n});
  node.output(0)->constant = Tensor::FromVector(dims, {n});
  return Status::Ok();
}

Status RunShapeOp(KernelContext& ctx) {
  std::vector<int64_t> dims = ShapeDims(ctx.node, ctx.in(0).shape());
  std::copy(dims.begin(), dims.end(), ctx.out(0).data<int64_t>());
  return Status::Ok();
}

Status InferSize(ir::Node& node, int opset) {
  SetOutput(node, 0, DType::kInt64, {});
  node.output(0)->constant = Tensor::FromVector<int64_t>({NumElements(In(node, 0).shape)}, {});
  return Status::Ok();
}

Status RunSize(KernelContext& ctx) {
  ctx.out(0).data<int64_t>()[0] = ctx.in(0).num_elements();
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Reshape, Flatten, Squeeze, Unsqueeze

// Reshape-1 (opsets 1-4) takes the shape as an attribute, later opsets as
// input 1.
Status InferReshape(ir::Node& node, int opset) {
  if (opset >= 5 && node.input(1)) TESSEL_RETURN_IF_ERROR(RequireRank(node, 1, 1));
  TESSEL_ASSIGN_OR_RETURN(auto given, IntsFromInputOrAttr(node, opset, 1, "shape", 5));
  if (!given) {
    return NodeError(node, opset >= 5 ? "input shape is required since opset 5"
                                      : "attribute shape is required before opset 5");
  }
  const std::vector<int64_t>& spec = *given;
  const Shape& in = In(node, 0).shape;
  const int64_t count = NumElements(in);
  const bool allow_zero = node.attrs.Int("allowzero", 0) != 0;
  auto fail = [&](const std::string& why) {
    return NodeError(node, "cannot reshape " + ShapeToString(in) + " (" + std::to_string(count) +
                               " elements) to " + ShapeToString(spec) + why);
  };
  Shape out(spec.size());
  int64_t infer_at = -1;
  bool has_zero = false;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == -1) {
      if (infer_at >= 0) return fail(": more than one -1");
      infer_at = static_cast<int64_t>(i);
      continue;
    }
    if (d < -1) return fail(": dimension " + std::to_string(d) + " is invalid");
    if (d == 0) {
      has_zero = true;
      if (!allow_zero) {
        if (i >= in.size()) {
          return fail(": 0 at position " + std::to_string(i) +
                      " copies a dimension the input does not have");
        }
        d = in[i];
      }
    }
    out[i] = d;
  }
  if (allow_zero && has_zero && infer_at >= 0) return fail(": allowzero=1 forbids 0 with -1");
  Shape known = out;
  if (infer_at >= 0) known[infer_at] = 1;
  TESSEL_RETURN_IF_ERROR(CheckShape(node, known, "shape"));
  const int64_t product = NumElements(known);
  if (infer_at >= 0) {
    if (product == 0 || count % product != 0) return fail("");
    out[infer_at] = count / product;
  } else if (product != count) {
    return fail("");
  }
  SetOutput(node, 0, In(node, 0).dtype, out);
  return Status::Ok();
}

Status InferFlatten(ir::Node& node, int opset) {
  const Shape& in = In(node, 0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  int64_t axis = node.attrs.Int("axis", 1);
  // Flatten's axis may equal the rank (everything goes to the first dim).
  if (axis < -rank || axis > rank) {
    return NodeError(node, "axis " + std::to_string(axis) + " is out of range [" +
                               std::to_string(-rank) + ", " + std::to_string(rank) + "] for rank " +
                               std::to_string(rank));
  }
  if (axis < 0) axis += rank;
  SetOutput(node, 0, In(node, 0).dtype, {DimProduct(in, 0, axis), DimProduct(in, axis, in.size())});
  return Status::Ok();
}

// Normalizes `axes` against `rank` and rejects repeats.
StatusOr<std::vector<int64_t>> NormalizeAxes(const ir::Node& node, const std::vector<int64_t>& axes,
                                             int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    TESSEL_ASSIGN_OR_RETURN(int64_t n, NormalizeAxis(node, a, rank));
    if (std::find(out.begin(), out.end(), n) != out.end()) {
      return NodeError(node, "axes " + ListToString(axes) + " repeat axis " + std::to_string(n));
    }
    out.push_back(n);
  }
  return out;
}

Status InferSqueeze(ir::Node& node, int opset) {
  const Shape& in = In(node, 0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  TESSEL_ASSIGN_OR_RETURN(auto axes, IntsFromInputOrAttr(node, opset, 1, "axes", 13));
  std::vector<bool> drop(in.size(), false);
  if (!axes || axes->empty()) {
    for (size_t d = 0; d < in.size(); ++d) drop[d] = in[d] == 1;
  } else {
    TESSEL_ASSIGN_OR_RETURN(std::vector<int64_t> norm, NormalizeAxes(node, *axes, rank));
    for (int64_t d : norm) {
      if (in[d] != 1) {
        return NodeError(node, "cannot squeeze axis " + std::to_string(d) + " of size " +
                                   std::to_string(in[d]) + " (input shape " + ShapeToString(in) +
                                   ")");
      }
      drop[d] = true;
    }
  }
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!drop[d]) out.push_back(in[d]);
  }
  SetOutput(node, 0, In(node, 0).dtype, out);
  return Status::Ok();
}

Status InferUnsqueeze(ir::Node& node, int opset) {
  const Shape& in = In(node, 0).shape;
  TESSEL_ASSIGN_OR_RETURN(auto axes, IntsFromInputOrAttr(node, opset, 1, "axes", 13));
  if (!axes) return NodeError(node, "axes are required");
  const int64_t out_rank = static_cast<int64_t>(in.size() + axes->size());
  TESSEL_ASSIGN_OR_RETURN(std::vector<int64_t> norm, NormalizeAxes(node, *axes, out_rank));
  Shape out(out_rank, 1);
  std::vector<bool> inserted(out_rank, false);
  for (int64_t d : norm) inserted[d] = true;
  size_t next = 0;
  for (int64_t d = 0; d < out_rank; ++d) {
    if (!inserted[d]) out[d] = in[next++];
  }
  SetOutput(node, 0, In(node, 0).dtype, out);
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Transpose, Expand, Tile

std::vector<int64_t> TransposePerm(const ir::Node& node, size_t rank) {
  std::vector<int64_t> reversed(rank);
  for (size_t i = 0; i < rank; ++i) reversed[i] = static_cast<int64_t>(rank - 1 - i);
  return node.attrs.Ints("perm", reversed);
}

Status InferTranspose(ir::Node& node, int opset) {
  const Shape& in = In(node, 0).shape;
  const std::vector<int64_t> perm = TransposePerm(node, in.size());
  std::vector<bool> seen(in.size(), false);
  bool ok = perm.size() == in.size();
  for (size_t i = 0; ok && i < perm.size(); ++i) {
    const int64_t p = perm[i];
    ok = p >= 0 && p < static_cast<int64_t>(in.size()) && !seen[p];
    if (ok) seen[p] = true;
  }
  if (!ok) {
    return NodeError(node, "perm " + ListToString(perm) + " is not a permutation of 0.." +
                               std::to_string(static_cast<int64_t>(in.size()) - 1) +
                               " (input shape " + ShapeToString(in) + ")");
  }
  Shape out(in.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = in[perm[i]];
  SetOutput(node, 0, In(node, 0).dtype, out);
  return Status::Ok();
}

Status RunTranspose(KernelContext& ctx) {
  const Tensor& in = ctx.in(0);
  const std::vector<int64_t> perm = TransposePerm(ctx.node, in.shape().size());
  const std::vector<int64_t> in_strides = StridesOf(in.shape());
  std::vector<int64_t> strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) strides[i] = in_strides[perm[i]];
  CopyStrided(in, 0, ctx.out(0).shape(), strides, ctx.out(0));
  return Status::Ok();
}

Status InferExpand(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireRank(node, 1, 1));
  TESSEL_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ConstantInts(node, 1, "shape"));
  TESSEL_RETURN_IF_ERROR(CheckShape(node, shape, "shape"));
  TESSEL_ASSIGN_OR_RETURN(Shape out, BroadcastShapes(node, {In(node, 0).shape, shape}));
  TESSEL_RETURN_IF_ERROR(CheckShape(node, out, "output shape"));
  SetOutput(node, 0, In(node, 0).dtype, out);
  return Status::Ok();
}

Status RunExpand(KernelContext& ctx) {
  Tensor& out = ctx.out(0);
  CopyStrided(ctx.in(0), 0, out.shape(), BroadcastStrides(ctx.in(0).shape(), out.shape()), out);
  return Status::Ok();
}

// Tile-1 (opsets 1-5) repeats along one dim: input 1 holds the count and
// input 2 the axis, one element each.
StatusOr<std::vector<int64_t>> LegacyTileRepeats(const ir::Node& node, int64_t rank) {
  if (!node.input(2)) return NodeError(node, "input axis is required before opset 6");
  TESSEL_ASSIGN_OR_RETURN(std::vector<int64_t> tiles, ConstantInts(node, 1, "tiles"));
  TESSEL_ASSIGN_OR_RETURN(std::vector<int64_t> axis, ConstantInts(node, 2, "axis"));
  if (tiles.size() != 1 || axis.size() != 1) {
    return NodeError(node, "tiles " + ListToString(tiles) + " and axis " + ListToString(axis) +
                               " must have one element each (opset < 6)");
  }
  TESSEL_ASSIGN_OR_RETURN(const int64_t a, NormalizeAxis(node, axis[0], rank));
  std::vector<int64_t> repeats(static_cast<size_t>(rank), 1);
  repeats[a] = tiles[0];
  return repeats;
}

// The repeats of each dim, in the kernel; infer validated them.
std::vector<int64_t> KernelTileRepeats(const KernelContext& ctx) {
  if (ctx.opset >= 6) return ctx.in(1).ToInt64Vector();
  const int64_t rank = ctx.in(0).rank();
  int64_t axis = ctx.in(2).GetAsInt64(0);
  if (axis < 0) axis += rank;
  std::vector<int64_t> repeats(static_cast<size_t>(rank), 1);
  repeats[axis] = ctx.in(1).GetAsInt64(0);
  return repeats;
}

Status InferTile(ir::Node& node, int opset) {
  const Shape& in = In(node, 0).shape;
  std::vector<int64_t> repeats;
  if (opset >= 6) {
    if (node.input(2)) return NodeError(node, "takes inputs input and repeats since opset 6");
    TESSEL_RETURN_IF_ERROR(RequireRank(node, 1, 1));
    TESSEL_ASSIGN_OR_RETURN(repeats, ConstantInts(node, 1, "repeats"));
  } else {
    TESSEL_ASSIGN_OR_RETURN(repeats, LegacyTileRepeats(node, static_cast<int64_t>(in.size())));
  }
  if (repeats.size() != in.size()) {
    return NodeError(node, "repeats " + ListToString(repeats) + " has " +
                               std::to_string(repeats.size()) + " entries; the input " +
                               ShapeToString(in) + " has rank " + std::to_string(in.size()));
  }
  TESSEL_RETURN_IF_ERROR(CheckShape(node, repeats, "repeats"));
  Shape out(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] != 0 && repeats[d] > std::numeric_limits<int64_t>::max() / in[d]) {
      return NodeError(node, "repeats " + ListToString(repeats) + " overflow the output size");
    }
    out[d] = in[d] * repeats[d];
  }
  TESSEL_RETURN_IF_ERROR(CheckShape(node, out, "output shape"));
  SetOutput(node, 0, In(node, 0).dtype, out);
  return Status::Ok();
}

Status RunTile(KernelContext& ctx) {
  // Output dim d, split into (repeat, dim) in row-major order: the repeat
  // index contributes nothing to the input offset.
  const Tensor& in = ctx.in(0);
  const std::vector<int64_t> in_strides = StridesOf(in.shape());
  const std::vector<int64_t> repeats = KernelTileRepeats(ctx);
  Shape walk;
  std::vector<int64_t> strides;
  for (size_t d = 0; d < in.shape().size(); ++d) {
    walk.push_back(repeats[d]);
    strides.push_back(0);
    walk.push_back(in.dim(d));
    strides.push_back(in_strides[d]);
  }
  CopyStrided(in, 0, walk, strides, ctx.out(0));
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Concat, Split

// Concat-1 (opsets 1-3) concatenates along axis 1 unless told otherwise; from
// opset 4 the axis is required.
int64_t ConcatAxis(const ir::Node& node, int opset) {
  return node.attrs.Int("axis", opset < 4 ? 1 : 0);
}

Status InferConcat(ir::Node& node, int opset) {
  if (opset >= 4 && !node.attrs.Has("axis")) return NodeError(node, "attribute axis is required");
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!node.inputs[i]) return NodeError(node, "input " + std::to_string(i) + " is missing");
  }
  const ir::Value& first = In(node, 0);
  const int64_t rank = static_cast<int64_t>(first.shape.size());
  TESSEL_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, ConcatAxis(node, opset), rank));
  Shape out = first.shape;
  out[axis] = 0;
  for (const ir::Value* v : node.inputs) {
    if (v->dtype != first.dtype) {
      return NodeError(node, "inputs '" + first.name + "' (" + DTypeName(first.dtype) + ") and '" +
                                 v->name + "' (" + DTypeName(v->dtype) +
                                 ") must have the same dtype");
    }
    bool agree = static_cast<int64_t>(v->shape.size()) == rank;
    for (int64_t d = 0; agree && d < rank; ++d) agree = d == axis || v->shape[d] == first.shape[d];
    if (!agree) {
      return NodeError(node, "input '" + v->name + "' has shape " + ShapeToString(v->shape) +
                                 " but input '" + first.name + "' has shape " +
                                 ShapeToString(first.shape) + "; they must agree except on axis " +
                                 std::to_string(axis));
    }
    out[axis] += v->shape[axis];
  }
  SetOutput(node, 0, first.dtype, out);
  return Status::Ok();
}

Status RunConcat(KernelContext& ctx) {
  Tensor& out = ctx.out(0);
  const int64_t rank = out.rank();
  int64_t axis = ConcatAxis(ctx.node, ctx.opset);
  if (axis < 0) axis += rank;
  const int64_t outer = DimProduct(out.shape(), 0, axis);
  const size_t inner_bytes = DimProduct(out.shape(), axis + 1, rank) * ElemSize(out);
  uint8_t* dst = Bytes(out);
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor* in : ctx.inputs) {
      const size_t block = in->dim(axis) * inner_bytes;
      if (block == 0) continue;
      std::memcpy(dst, Bytes(*in) + o * block, block);
      dst += block;
    }
  }
  return Status::Ok();
}

// ChannelShuffle (domain "tessel", made by passes/fuse_channel_shuffle):
// ShuffleNet's channel shuffle of its inputs' concatenation, split into
// equal parts. With G inputs of one shape [N, C, ...] and K outputs:
//   Y  = Concat(X_0 .. X_{G-1}, axis 1)                       [N, G*C, ...]
//   Y' = Y viewed [N, G, C, ...], axes 1 and 2 swapped, viewed [N, C*G, ...]
//   output k = channels [k*G*C/K, (k+1)*G*C/K) of Y'.
// Channel j of Y' is channel j / G of input j % G.
Status InferChannelShuffle(ir::Node& node, int opset) {
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!node.inputs[i]) return NodeError(node, "input " + std::to_string(i) + " is missing");
  }
  const ir::Value& first = In(node, 0);
  if (first.shape.size() < 3) {
    return NodeError(node, "input '" + first.name + "' has shape " + ShapeToString(first.shape) +
                               "; expected [N, C, spatial...]");
  }
  for (const ir::Value* v : node.inputs) {
    if (v->dtype != first.dtype || v->shape != first.shape) {
      return NodeError(node, "input '" + v->name + "' must have the dtype and shape of '" +
                                 first.name + "' (" + ShapeToString(first.shape) + ")");
    }
  }
  const int64_t channels = first.shape[1] * static_cast<int64_t>(node.inputs.size());
  const auto parts = static_cast<int64_t>(node.outputs.size());
  if (channels % parts != 0) {
    return NodeError(node, std::to_string(channels) + " channels do not split into " +
                               std::to_string(parts) + " equal outputs");
  }
  Shape out = first.shape;
  out[1] = channels / parts;
  for (size_t k = 0; k < node.outputs.size(); ++k) SetOutput(node, k, first.dtype, out);
  return Status::Ok();
}

Status RunChannelShuffle(KernelContext& ctx) {
  const auto groups = static_cast<int64_t>(ctx.inputs.size());
  const Shape& shape = ctx.in(0).shape();
  const int64_t channels = shape[1], out_channels = ctx.out(0).dim(1);
  const size_t plane = DimProduct(shape, 2, shape.size()) * ElemSize(ctx.in(0));
  for (int64_t n = 0; n < shape[0]; ++n) {
    for (int64_t j = 0; j < channels * groups; ++j) {
      const Tensor& in = ctx.in(static_cast<size_t>(j % groups));
      Tensor& out = ctx.out(static_cast<size_t>(j / out_channels));
      std::memcpy(Bytes(out) + (n * out_channels + j % out_channels) * plane,
                  Bytes(in) + (n * channels + j / groups) * plane, plane);
    }
  }
  return Status::Ok();
}

// Part sizes of Split along a dimension of size `dim` into `parts` outputs.
// `split` is the explicit list (input or attribute), if any.
StatusOr<std::vector<int64_t>> SplitSizes(const ir::Node& node, int64_t dim, size_t parts,
                                          const std::optional<std::vector<int64_t>>& split) {
  const int64_t n = static_cast<int64_t>(parts);
  if (split && !split->empty()) {
    int64_t sum = 0;
    for (int64_t s : *split) {
      if (s < 0) return NodeError(node, "split " + ListToString(*split) + " has a negative size");
      if (__builtin_add_overflow(sum, s, &sum))
        return NodeError(node, "split " + ListToString(*split) + " sums past 64 bits");
    }
    if (static_cast<int64_t>(split->size()) != n || sum != dim) {
      return NodeError(node, "split " + ListToString(*split) + " does not divide dimension " +
                                 std::to_string(dim) + " into " + std::to_string(n) + " outputs");
    }
    return *split;
  }
  if (node.attrs.Has("num_outputs") && node.attrs.Int("num_outputs", 0) != n) {
    return NodeError(node, "num_outputs=" + std::to_string(node.attrs.Int("num_outputs", 0)) +
                               " but the node has " + std::to_string(n) + " outputs");
  }
  // Uneven: every part gets ceil(dim / n) and the last one what is left.
  const int64_t chunk = (dim + n - 1) / n;
  std::vector<int64_t> sizes(parts, chunk);
  sizes.back() = dim - chunk * (n - 1);
  if (sizes.back() < 0) {
    return NodeError(node, "cannot split dimension " + std::to_string(dim) + " into " +
                               std::to_string(n) + " parts of " + std::to_string(chunk));
  }
  return sizes;
}

// The explicit part sizes: attribute `split` (opsets 2-12) or input 1 (from
// 13). Split-1 took either, its input of the data's (float) dtype.
StatusOr<std::optional<std::vector<int64_t>>> SplitList(const ir::Node& node, int opset) {
  if (opset >= 2 || !node.input(1)) return IntsFromInputOrAttr(node, opset, 1, "split", 13);
  if (node.attrs.Has("split")) {
    return NodeError(node, "gives split both as input and as attribute");
  }
  TESSEL_ASSIGN_OR_RETURN(const Tensor* t, RequireConstantInput(node, 1, "split"));
  for (int64_t i = 0; i < t->num_elements(); ++i) {
    // Whole numbers up to 2^53 convert to int64 exactly; SplitSizes checks
    // that they add up to the split dim.
    const double v = t->GetAsDouble(i);
    if (!(v >= 0 && v <= 9007199254740992.0) || v != std::floor(v)) {
      return NodeError(
          node, "input split holds " + std::to_string(v) + "; expected non-negative whole numbers");
    }
  }
  return std::optional<std::vector<int64_t>>(t->ToInt64Vector());
}

Status InferSplit(ir::Node& node, int opset) {
  const ir::Value& x = In(node, 0);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  // Split-1 has no default axis (Split-2 made it 0).
  if (opset < 2 && !node.attrs.Has("axis")) {
    return NodeUnsupported(node,
                           "attribute axis is missing; before opset 2 Split has no defined "
                           "default axis, and tessel does not guess one");
  }
  TESSEL_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, node.attrs.Int("axis", 0), rank));
  TESSEL_ASSIGN_OR_RETURN(auto split, SplitList(node, opset));
  TESSEL_ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                          SplitSizes(node, x.shape[axis], node.outputs.size(), split));
  for (size_t i = 0; i < sizes.size(); ++i) {
    Shape s = x.shape;
    s[axis] = sizes[i];
    SetOutput(node, i, x.dtype, s);
  }
  return Status::Ok();
}

Status RunSplit(KernelContext& ctx) {
  const Tensor& in = ctx.in(0);
  const int64_t rank = in.rank();
  int64_t axis = ctx.node.attrs.Int("axis", 0);
  if (axis < 0) axis += rank;
  const std::optional<std::vector<int64_t>> split =
      ctx.opset < 2 && ctx.has_in(1) ? std::optional(ctx.in(1).ToInt64Vector())
                                     : KernelIntsFromInputOrAttr(ctx, 1, "split", 13);
  TESSEL_ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                          SplitSizes(ctx.node, in.dim(axis), ctx.outputs.size(), split));
  const int64_t outer = DimProduct(in.shape(), 0, axis);
  const size_t inner_bytes = DimProduct(in.shape(), axis + 1, rank) * ElemSize(in);
  const size_t row = in.dim(axis) * inner_bytes;
  size_t offset = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const size_t block = sizes[i] * inner_bytes;
    if (ctx.has_out(i) && block > 0) {
      uint8_t* dst = Bytes(ctx.out(i));
      for (int64_t o = 0; o < outer; ++o) {
        std::memcpy(dst + o * block, Bytes(in) + o * row + offset, block);
      }
    }
    offset += block;
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Slice

struct SlicePlan {
  Shape out;
  int64_t base = 0;              // element offset of the first copied element
  std::vector<int64_t> strides;  // input element stride per output dim
};

// starts/ends/axes/steps come from inputs 1-4 (opset >= 10, `args`, nullptr
// when absent) or from attributes (opset < 10, no steps).
StatusOr<SlicePlan> PlanSlice(const ir::Node& node, int opset, const Shape& in,
                              const std::array<const Tensor*, 5>& args) {
  std::vector<int64_t> starts, ends, axes, steps;
  bool has_axes = false;
  if (opset >= 10) {
    starts = args[1]->ToInt64Vector();
    ends = args[2]->ToInt64Vector();
    has_axes = args[3] != nullptr;
    if (has_axes) axes = args[3]->ToInt64Vector();
    if (args[4]) steps = args[4]->ToInt64Vector();
  } else {
    starts = node.attrs.Ints("starts");
    ends = node.attrs.Ints("ends");
    has_axes = node.attrs.Has("axes");
    axes = node.attrs.Ints("axes");
  }
  const size_t n = starts.size();
  if (ends.size() != n || (has_axes && axes.size() != n) || (!steps.empty() && steps.size() != n)) {
    return NodeError(node, "starts " + ListToString(starts) + ", ends " + ListToString(ends) +
                               (has_axes ? ", axes " + ListToString(axes) : std::string()) +
                               (steps.empty() ? std::string() : ", steps " + ListToString(steps)) +
                               " must have the same length");
  }
  if (!has_axes) {
    axes.resize(n);
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(n, 1);
  const int64_t rank = static_cast<int64_t>(in.size());
  TESSEL_ASSIGN_OR_RETURN(std::vector<int64_t> norm, NormalizeAxes(node, axes, rank));

  SlicePlan plan;
  plan.out = in;
  plan.strides = StridesOf(in);
  const std::vector<int64_t> in_strides = plan.strides;
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = norm[i], dim = in[a], step = steps[i];
    if (step == 0) return NodeError(node, "steps " + ListToString(steps) + " contain 0");
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    int64_t len;
    if (dim == 0) {
      len = 0;
    } else if (step > 0) {
      start = std::clamp(start, int64_t{0}, dim);
      end = std::clamp(end, int64_t{0}, dim);
      // In 128 bits: a step near 2^63 must not wrap; len itself is <= dim.
      len = end > start ? static_cast<int64_t>((WideInt{end} - start + step - 1) / step) : 0;
    } else {
      // A negative step walks down from start (at most dim - 1) to end
      // (exclusive; -1 means "through index 0").
      start = std::clamp(start, int64_t{0}, dim - 1);
      end = std::clamp(end, int64_t{-1}, dim - 1);
      len = start > end ? static_cast<int64_t>((WideInt{start} - end - step - 1) / -WideInt{step})
                        : 0;
    }
    plan.out[a] = len;
    // With two or more elements |step| < dim, so the product fits; with one
    // or none the stride is never used.
    plan.strides[a] = len > 1 ? in_strides[a] * step : in_strides[a];
    if (len > 0) plan.base += start * in_strides[a];
  }
  return plan;
}

constexpr std::array<const char*, 5> kSliceInputs = {"data", "starts", "ends", "axes", "steps"};

Status InferSlice(ir::Node& node, int opset) {
  std::array<const Tensor*, 5> args{};
  if (opset >= 10) {
    if (!node.input(1) || !node.input(2)) {
      return NodeError(node, "inputs starts and ends are required since opset 10");
    }
    for (size_t i = 1; i < 5; ++i) {
      if (!node.input(i)) continue;
      TESSEL_RETURN_IF_ERROR(RequireDType(node, i, {DType::kInt32, DType::kInt64}));
      TESSEL_RETURN_IF_ERROR(RequireRank(node, i, 1));
      TESSEL_ASSIGN_OR_RETURN(args[i], RequireConstantInput(node, i, kSliceInputs[i]));
    }
  } else {
    if (node.input(1)) return NodeError(node, "takes one input before opset 10");
    if (!node.attrs.Has("starts") || !node.attrs.Has("ends")) {
      return NodeError(node, "attributes starts and ends are required before opset 10");
    }
  }
  TESSEL_ASSIGN_OR_RETURN(SlicePlan plan, PlanSlice(node, opset, In(node, 0).shape, args));
  SetOutput(node, 0, In(node, 0).dtype, plan.out);
  return Status::Ok();
}

Status RunSlice(KernelContext& ctx) {
  std::array<const Tensor*, 5> args{};
  for (size_t i = 1; i < 5; ++i) args[i] = ctx.has_in(i) ? &ctx.in(i) : nullptr;
  TESSEL_ASSIGN_OR_RETURN(SlicePlan plan, PlanSlice(ctx.node, ctx.opset, ctx.in(0).shape(), args));
  CopyStrided(ctx.in(0), plan.base, plan.out, plan.strides, ctx.out(0));
  return Status::Ok();
}

void RegisterShapeOps(OpRegistry& r) {
  const OpClass kInj = OpClass::kInjective;
  const OpClass kOpq = OpClass::kOpaque;
  r.Register({.op_type = "Identity",
              .domain = "",
              .op_class = kInj,
              .infer = InferIdentity,
              .run = RunCopy,
              .view = true});
  r.Register({.op_type = "Dropout",
              .domain = "",
              .op_class = kInj,
              .max_inputs = 3,
              .max_outputs = 2,
              .infer = InferDropout,
              .run = RunDropout});
  r.Register({.op_type = "Shape",
              .domain = "",
              .op_class = kOpq,
              .infer = InferShapeOp,
              .run = RunShapeOp});
  r.Register(
      {.op_type = "Size", .domain = "", .op_class = kOpq, .infer = InferSize, .run = RunSize});
  r.Register({.op_type = "Reshape",
              .domain = "",
              .op_class = kInj,
              .max_inputs = 2,
              .infer = InferReshape,
              .run = RunCopy,
              .view = true});
  r.Register({.op_type = "Flatten",
              .domain = "",
              .op_class = kInj,
              .infer = InferFlatten,
              .run = RunCopy,
              .view = true});
  r.Register({.op_type = "Squeeze",
              .domain = "",
              .op_class = kInj,
              .max_inputs = 2,
              .infer = InferSqueeze,
              .run = RunCopy,
              .view = true});
  r.Register({.op_type = "Unsqueeze",
              .domain = "",
              .op_class = kInj,
              .max_inputs = 2,
              .infer = InferUnsqueeze,
              .run = RunCopy,
              .view = true});
  r.Register({.op_type = "Transpose",
              .domain = "",
              .op_class = kInj,
              .infer = InferTranspose,
              .run = RunTranspose});
  r.Register({.op_type = "Expand",
              .domain = "",
              .op_class = kInj,
              .min_inputs = 2,
              .max_inputs = 2,
              .infer = InferExpand,
              .run = RunExpand});
  r.Register({.op_type = "Tile",
              .domain = "",
              .op_class = kInj,
              .min_inputs = 2,
              .max_inputs = 3,
              .infer = InferTile,
              .run = RunTile});
  r.Register({.op_type = "Concat",
              .domain = "",
              .op_class = kInj,
              .max_inputs = kUnbounded,
              .infer = InferConcat,
              .run = RunConcat});
  r.Register({.op_type = "ChannelShuffle",
              .domain = "tessel",
              .op_class = kInj,
              .min_inputs = 2,
              .max_inputs = kUnbounded,
              .max_outputs = kUnbounded,
              .infer = InferChannelShuffle,
              .run = RunChannelShuffle,
              .foldable = false});
  r.Register({.op_type = "Split",
              .domain = "",
              .op_class = kInj,
              .max_inputs = 2,
              .max_outputs = kUnbounded,
              .infer = InferSplit,
              .run = RunSplit});
  r.Register({.op_type = "Slice",
              .domain = "",
              .op_class = kInj,
              .max_inputs = 5,
              .infer = InferSlice,
              .run = RunSlice});
}

}  // namespace
}  // namespace tensor_internal

void RegisterTensorOps(OpRegistry& r) {
  tensor_internal::RegisterShapeOps(r);
  tensor_internal::RegisterTensorGenerateOps(r);
  tensor_internal::RegisterTensorIndexOps(r);
  tensor_internal::RegisterTensorSpatialOps(r);
}

std::optional<StridedView> StridedViewOf(const ir::Node& node, int opset) {
  using namespace tensor_internal;
  const ir::Value* x = node.input(0);
  if (!node.domain.empty() || !x || !x->shape_known) return std::nullopt;
  if (node.op_type == "Transpose") {
    const std::vector<int64_t> perm = TransposePerm(node, x->shape.size());
    const std::vector<int64_t> in_strides = StridesOf(x->shape);
    StridedView v;
    for (int64_t p : perm) {
      v.out.push_back(x->shape[static_cast<size_t>(p)]);
      v.strides.push_back(in_strides[static_cast<size_t>(p)]);
    }
    return v;
  }
  if (node.op_type == "Slice") {
    std::array<const Tensor*, 5> args{};
    for (size_t i = 1; i < 5; ++i) {
      const ir::Value* a = node.input(i);
      if (a && !a->is_constant()) return std::nullopt;
      args[i] = a ? &a->constant : nullptr;
    }
    StatusOr<SlicePlan> plan = PlanSlice(node, opset, x->shape, args);
    if (!plan.ok()) return std::nullopt;
    return StridedView{.out = plan->out, .base = plan->base, .strides = plan->strides};
  }
  if (node.op_type == "Expand") {
    // The output's axes, right-aligned with the input's: an axis the input
    // lacks or has once is read again (stride 0).
    const ir::Value* y = node.output(0);
    if (!y || !y->shape_known || y->shape.size() < x->shape.size()) return std::nullopt;
    const std::vector<int64_t> in_strides = StridesOf(x->shape);
    const size_t lead = y->shape.size() - x->shape.size();
    StridedView v{.out = y->shape, .strides = std::vector<int64_t>(y->shape.size(), 0)};
    for (size_t k = 0; k < x->shape.size(); ++k) {
      if (x->shape[k] != 1) v.strides[lead + k] = in_strides[k];
    }
    return v;
  }
  return std::nullopt;
}

std::optional<ChannelRange> ChannelRangeOf(const ir::Node& node, int opset) {
  if (node.op_type != "Slice") return std::nullopt;
  const std::optional<StridedView> view = StridedViewOf(node, opset);
  if (!view) return std::nullopt;
  const Shape& in = node.input(0)->shape;
  if (in.size() < 2 || view->out.size() != in.size()) return std::nullopt;
  const std::vector<int64_t> dense = StridesOf(in);
  const int64_t plane = dense[1];
  if (plane == 0 || view->base % plane != 0) return std::nullopt;
  for (size_t d = 0; d < in.size(); ++d) {
    // (An axis of one element may have any stride: it never steps.)
    if ((d != 1 && view->out[d] != in[d]) || (view->out[d] > 1 && view->strides[d] != dense[d]))
      return std::nullopt;
  }
  const ChannelRange r{.start = view->base / plane, .count = view->out[1]};
  if (r.start + r.count > in[1]) return std::nullopt;
  return r;
}

std::optional<LastAxisRange> LastAxisRangeOf(const ir::Node& node, int opset) {
  if (node.op_type != "Slice") return std::nullopt;
  const std::optional<StridedView> view = StridedViewOf(node, opset);
  if (!view) return std::nullopt;
  const Shape& in = node.input(0)->shape;
  const size_t r = in.size();
  if (r == 0 || view->out.size() != r) return std::nullopt;
  const std::vector<int64_t> dense = StridesOf(in);
  for (size_t d = 0; d + 1 < r; ++d) {
    if (view->out[d] != in[d] || (view->out[d] > 1 && view->strides[d] != dense[d])) {
      return std::nullopt;
    }
  }
  const LastAxisRange range{.start = view->base,
                            .count = view->out[r - 1],
                            .step = view->out[r - 1] > 1 ? view->strides[r - 1] : 1};
  if (range.step <= 0 || range.start < 0 || range.count <= 0 ||
      range.start + (range.count - 1) * range.step >= in[r - 1]) {
    return std::nullopt;
  }
  return range;
}

std::vector<int64_t> TransposedStrides(const std::vector<int64_t>& shape,
                                       const std::vector<int64_t>& perm, bool unpermuted) {
  const size_t r = shape.size();
  std::vector<int64_t> held(r), strides(r, 1), out(r);
  for (size_t i = 0; i < r; ++i) {
    if (unpermuted) {
      held[static_cast<size_t>(perm[i])] = shape[i];
    } else {
      held[i] = shape[static_cast<size_t>(perm[i])];
    }
  }
  for (size_t i = r - 1; i > 0; --i) strides[i - 1] = strides[i] * held[i];
  for (size_t i = 0; i < r; ++i) {
    if (unpermuted) {
      out[i] = strides[static_cast<size_t>(perm[i])];
    } else {
      out[static_cast<size_t>(perm[i])] = strides[i];
    }
  }
  return out;
}

}  // namespace tessel::ops
