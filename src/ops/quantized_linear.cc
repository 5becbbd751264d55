// Quantized matrix products and convolutions: MatMulInteger, QLinearMatMul,
// ConvInteger, QLinearConv (8-bit operands).
//
// Operands have their zero points subtracted and accumulate exactly in int64.
// The QLinear ops then requantize: acc * (scale_a * scale_b / scale_y), the
// multiplier in float32 and the product in double as the ONNX reference
// computes them, rounded half to even, plus the output zero point, saturated.
#include <string>
#include <vector>

#include "ops/nn_internal.h"
#include "ops/op_registry.h"
#include "ops/op_util.h"
#include "ops/quantize_internal.h"

namespace tessel::ops::quantize_internal {
namespace {

// Input positions of the operands of each op; -1 where the op has none.
struct Operands {
  int a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, bias;
  bool requantizes() const { return y_scale >= 0; }
};
enum class QOp { kMatMulInteger, kQLinearMatMul, kConvInteger, kQLinearConv };
constexpr Operands OperandsOf(QOp op) {
  switch (op) {
    case QOp::kMatMulInteger:
    case QOp::kConvInteger:
      return {0, -1, 2, 1, -1, 3, -1, -1, -1};
    case QOp::kQLinearMatMul:
      return {0, 1, 2, 3, 4, 5, 6, 7, -1};
    case QOp::kQLinearConv:
      return {0, 1, 2, 3, 4, 5, 6, 7, 8};
  }
  return {};
}

const ir::Value* Input(const ir::Node& node, int i) { return i >= 0 ? node.input(i) : nullptr; }
const Tensor* KernelInput(const KernelContext& ctx, int i) {
  return i >= 0 && ctx.has_in(i) ? &ctx.in(i) : nullptr;
}

// Dtypes shared by all four ops; a and b per-slice lengths checked by the
// caller. Returns the output dtype.
StatusOr<DType> CheckOperandTypes(const ir::Node& node, const Operands& q) {
  for (int i : {q.a, q.b}) {
    TESSEL_RETURN_IF_ERROR(RequireDType(node, i, {DType::kUInt8, DType::kInt8}));
  }
  TESSEL_RETURN_IF_ERROR(
      RequireSameDType(node, {static_cast<size_t>(q.a), static_cast<size_t>(q.a_zp)}));
  TESSEL_RETURN_IF_ERROR(
      RequireSameDType(node, {static_cast<size_t>(q.b), static_cast<size_t>(q.b_zp)}));
  if (!q.requantizes()) return DType::kInt32;
  for (int i : {q.a_scale, q.b_scale, q.y_scale}) {
    TESSEL_RETURN_IF_ERROR(RequireDType(node, i, {DType::kFloat32}));
  }
  TESSEL_RETURN_IF_ERROR(RequireDType(node, q.y_zp, {DType::kUInt8, DType::kInt8}));
  TESSEL_RETURN_IF_ERROR(CheckQuantParam(node, q.y_scale, "y_scale", -1, ""));
  TESSEL_RETURN_IF_ERROR(CheckQuantParam(node, q.y_zp, "y_zero_point", -1, ""));
  return node.input(q.y_zp)->dtype;
}

// The output value of an int64 accumulator `acc` whose a slice is i and b
// slice j.
struct Requantizer {
  const Operands& q;
  const KernelContext& ctx;
  int64_t operator()(int64_t acc, int64_t i, int64_t j) const {
    const float multiplier = static_cast<float>(ParamAt(ctx.in(q.a_scale), i)) *
                             static_cast<float>(ParamAt(ctx.in(q.b_scale), j)) /
                             static_cast<float>(ParamAt(ctx.in(q.y_scale), 0));
    const double y = static_cast<double>(acc) * static_cast<double>(multiplier);
    return RoundAndSaturate(y + static_cast<double>(ZeroPointAt(&ctx.in(q.y_zp), 0)),
                            ctx.in(q.y_zp).dtype());
  }
};

// ---- MatMulInteger, QLinearMatMul -------------------------------------------

// numpy matmul of a (... x M x K) and b (... x K x N), batch dimensions
// broadcast; a 1-D a is a row and a 1-D b a column, dropped from the output.
struct MatMulPlan {
  int64_t m = 1, k = 1, n = 1;
  Shape batch, out;
  std::vector<int64_t> a_strides, b_strides;  // per batch dim, in matrices
};

StatusOr<MatMulPlan> PlanMatMul(const ir::Node& node, const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) {
    return InvalidArgument(node.Describe() + ": operands of shapes " + ShapeToString(a) + " and " +
                           ShapeToString(b) + " must have rank >= 1");
  }
  MatMulPlan p;
  Shape a2 = a.size() == 1 ? Shape{1, a[0]} : a;
  Shape b2 = b.size() == 1 ? Shape{b[0], 1} : b;
  p.m = a2[a2.size() - 2];
  p.k = a2.back();
  p.n = b2.back();
  if (b2[b2.size() - 2] != p.k) {
    return InvalidArgument(node.Describe() + ": operand shapes " + ShapeToString(a) + " and " +
                           ShapeToString(b) + " do not multiply (inner dimensions " +
                           std::to_string(p.k) + " and " + std::to_string(b2[b2.size() - 2]) + ")");
  }
  const Shape a_batch(a2.begin(), a2.end() - 2), b_batch(b2.begin(), b2.end() - 2);
  TESSEL_ASSIGN_OR_RETURN(p.batch, BroadcastShapes(node, {a_batch, b_batch}));
  p.a_strides = BroadcastStrides(a_batch, p.batch);
  p.b_strides = BroadcastStrides(b_batch, p.batch);
  p.out = p.batch;
  if (a.size() > 1) p.out.push_back(p.m);
  if (b.size() > 1) p.out.push_back(p.n);
  return p;
}

template <QOp kOp>
Status InferQMatMul(ir::Node& node, int opset) {
  constexpr Operands q = OperandsOf(kOp);
  TESSEL_ASSIGN_OR_RETURN(DType out_dtype, CheckOperandTypes(node, q));
  TESSEL_ASSIGN_OR_RETURN(MatMulPlan p,
                          PlanMatMul(node, node.input(q.a)->shape, node.input(q.b)->shape));
  const std::string rows = "row of '" + node.input(q.a)->name + "'";
  const std::string cols = "column of '" + node.input(q.b)->name + "'";
  TESSEL_RETURN_IF_ERROR(CheckQuantParam(node, q.a_zp, "a_zero_point", p.m, rows));
  TESSEL_RETURN_IF_ERROR(CheckQuantParam(node, q.b_zp, "b_zero_point", p.n, cols));
  if (q.requantizes()) {
    TESSEL_RETURN_IF_ERROR(CheckQuantParam(node, q.a_scale, "a_scale", p.m, rows));
    TESSEL_RETURN_IF_ERROR(CheckQuantParam(node, q.b_scale, "b_scale", p.n, cols));
  }
  SetOutput(node, 0, out_dtype, p.out);
  return Status::Ok();
}

template <QOp kOp>
Status RunQMatMul(KernelContext& ctx) {
  constexpr Operands q = OperandsOf(kOp);
  const Tensor& a = ctx.in(q.a);
  const Tensor& b = ctx.in(q.b);
  TESSEL_ASSIGN_OR_RETURN(MatMulPlan p, PlanMatMul(ctx.node, a.shape(), b.shape()));
  const Tensor* a_zp = KernelInput(ctx, q.a_zp);
  const Tensor* b_zp = KernelInput(ctx, q.b_zp);
  const Requantizer requantize{q, ctx};
  Tensor& y = ctx.out(0);
  BroadcastWalker w(p.batch, {p.a_strides, p.b_strides});
  const int64_t batches = NumElements(p.batch);
  std::vector<int64_t> row(static_cast<size_t>(p.k));
  int64_t at = 0;
  for (int64_t bi = 0; bi < batches; ++bi, w.Next()) {
    const int64_t a_base = w.offset(0) * p.m * p.k, b_base = w.offset(1) * p.k * p.n;
    for (int64_t i = 0; i < p.m; ++i) {
      const int64_t azp = ZeroPointAt(a_zp, i);
      for (int64_t kk = 0; kk < p.k; ++kk) row[kk] = a.GetAsInt64(a_base + i * p.k + kk) - azp;
      for (int64_t j = 0; j < p.n; ++j, ++at) {
        const int64_t bzp = ZeroPointAt(b_zp, j);
        int64_t acc = 0;
        for (int64_t kk = 0; kk < p.k; ++kk) {
          acc += row[kk] * (b.GetAsInt64(b_base + kk * p.n + j) - bzp);
        }
        StoreInt(y, at, q.requantizes() ? requantize(acc, i, j) : acc);
      }
    }
  }
  return Status::Ok();
}

// ---- ConvInteger, QLinearConv -----------------------------------------------

struct ConvPlan {
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
  Shape in_spatial, kernel, out_spatial;
  std::vector<int64_t> strides, dilations, pads;
};

StatusOr<ConvPlan> PlanConv(const ir::Node& node, const Shape& x, const Shape& w) {
  ConvPlan g;
  g.group = node.attrs.Int("group", 1);
  if (x.size() < 3 || w.size() != x.size()) {
    return InvalidArgument(node.Describe() + ": input shape " + ShapeToString(x) +
                           " and weight shape " + ShapeToString(w) +
                           " must have the same rank >= 3 (N x C x D1 ...)");
  }
  if (g.group < 1 || x[1] % g.group != 0 || x[1] / g.group != w[1] || w[0] % g.group != 0) {
    return InvalidArgument(node.Describe() + ": input shape " + ShapeToString(x) +
                           " and weight shape " + ShapeToString(w) + " do not fit group " +
                           std::to_string(g.group));
  }
  g.kernel.assign(w.begin() + 2, w.end());
  for (int64_t k : g.kernel) {
    if (k < 1) {
      return InvalidArgument(node.Describe() + ": weight shape " + ShapeToString(w) +
                             " has an empty kernel");
    }
  }
  if (node.attrs.Has("kernel_shape") && node.attrs.Ints("kernel_shape") != g.kernel) {
    return InvalidArgument(node.Describe() + ": kernel_shape " +
                           IntsToString(node.attrs.Ints("kernel_shape")) +
                           " does not match weight shape " + ShapeToString(w));
  }
  g.batch = x[0];
  g.in_channels = x[1];
  g.out_channels = w[0];
  g.in_spatial.assign(x.begin() + 2, x.end());
  TESSEL_RETURN_IF_ERROR(ResolveWindow(node, g.in_spatial, g.kernel, /*ceil_mode=*/false,
                                       &g.strides, &g.dilations, &g.pads, &g.out_spatial));
  return g;
}

template <QOp kOp>
Status InferQConv(ir::Node& node, int opset) {
  constexpr Operands q = OperandsOf(kOp);
  TESSEL_ASSIGN_OR_RETURN(DType out_dtype, CheckOperandTypes(node, q));
  TESSEL_ASSIGN_OR_RETURN(ConvPlan g,
                          PlanConv(node, node.input(q.a)->shape, node.input(q.b)->shape));
  const std::string channels = "output channel";
  TESSEL_RETURN_IF_ERROR(CheckQuantParam(node, q.a_zp, "x_zero_point", -1, ""));
  TESSEL_RETURN_IF_ERROR(CheckQuantParam(node, q.b_zp, "w_zero_point", g.out_channels, channels));
  if (q.requantizes()) {
    TESSEL_RETURN_IF_ERROR(CheckQuantParam(node, q.a_scale, "x_scale", -1, ""));
    TESSEL_RETURN_IF_ERROR(CheckQuantParam(node, q.b_scale, "w_scale", g.out_channels, channels));
  }
  if (const ir::Value* bias = Input(node, q.bias)) {
    TESSEL_RETURN_IF_ERROR(RequireDType(node, q.bias, {DType::kInt32}));
    if (bias->shape != Shape{g.out_channels}) {
      return InvalidArgument(node.Describe() + ": bias '" + bias->name + "' has shape " +
                             ShapeToString(bias->shape) + "; expected " +
                             std::to_string(g.out_channels) + " (one per output channel)");
    }
  }
  Shape out = {g.batch, g.out_channels};
  out.insert(out.end(), g.out_spatial.begin(), g.out_spatial.end());
  SetOutput(node, 0, out_dtype, out);
  return Status::Ok();
}

// Advances a row-major multi-index over `shape`.
void Advance(std::vector<int64_t>& index, const Shape& shape) {
  for (size_t d = index.size(); d-- > 0;) {
    if (++index[d] < shape[d]) return;
    index[d] = 0;
  }
}

template <QOp kOp>
Status RunQConv(KernelContext& ctx) {
  constexpr Operands q = OperandsOf(kOp);
  const Tensor& x = ctx.in(q.a);
  const Tensor& w = ctx.in(q.b);
  TESSEL_ASSIGN_OR_RETURN(ConvPlan g, PlanConv(ctx.node, x.shape(), w.shape()));
  const Tensor* w_zp = KernelInput(ctx, q.b_zp);
  const Tensor* bias = KernelInput(ctx, q.bias);
  const int64_t x_zp = ZeroPointAt(KernelInput(ctx, q.a_zp), 0);
  const Requantizer requantize{q, ctx};
  const size_t rank = g.in_spatial.size();
  const int64_t in_plane = NumElements(g.in_spatial), kernel_size = NumElements(g.kernel);
  const int64_t out_plane = NumElements(g.out_spatial);
  const int64_t group_in = g.in_channels / g.group, group_out = g.out_channels / g.group;
  Tensor& y = ctx.out(0);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t m = 0; m < g.out_channels; ++m) {
      const int64_t wzp = ZeroPointAt(w_zp, m);
      const int64_t c0 = (m / group_out) * group_in;
      std::vector<int64_t> o(rank, 0);
      for (int64_t op = 0; op < out_plane; ++op, Advance(o, g.out_spatial)) {
        int64_t acc = bias ? bias->GetAsInt64(m) : 0;
        std::vector<int64_t> k(rank, 0);
        for (int64_t kp = 0; kp < kernel_size; ++kp, Advance(k, g.kernel)) {
          // Padding reads the zero point, which contributes nothing.
          int64_t in_offset = 0;
          bool inside = true;
          for (size_t d = 0; d < rank && inside; ++d) {
            const int64_t i = o[d] * g.strides[d] - g.pads[d] + k[d] * g.dilations[d];
            inside = i >= 0 && i < g.in_spatial[d];
            in_offset = in_offset * g.in_spatial[d] + i;
          }
          if (!inside) continue;
          for (int64_t c = 0; c < group_in; ++c) {
            const int64_t xv = x.GetAsInt64((n * g.in_channels + c0 + c) * in_plane + in_offset);
            const int64_t wv = w.GetAsInt64((m * group_in + c) * kernel_size + kp);
            acc += (xv - x_zp) * (wv - wzp);
          }
        }
        const int64_t at = (n * g.out_channels + m) * out_plane + op;
        StoreInt(y, at, q.requantizes() ? requantize(acc, 0, m) : acc);
      }
    }
  }
  return Status::Ok();
}

}  // namespace

void RegisterQuantizedLinearOps(OpRegistry& r) {
  r.Register({.op_type = "MatMulInteger",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 2,
              .max_inputs = 4,
              .infer = InferQMatMul<QOp::kMatMulInteger>,
              .run = RunQMatMul<QOp::kMatMulInteger>});
  r.Register({.op_type = "QLinearMatMul",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 8,
              .max_inputs = 8,
              .infer = InferQMatMul<QOp::kQLinearMatMul>,
              .run = RunQMatMul<QOp::kQLinearMatMul>});
  r.Register({.op_type = "ConvInteger",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 2,
              .max_inputs = 4,
              .infer = InferQConv<QOp::kConvInteger>,
              .run = RunQConv<QOp::kConvInteger>});
  r.Register({.op_type = "QLinearConv",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 8,
              .max_inputs = 9,
              .infer = InferQConv<QOp::kQLinearConv>,
              .run = RunQConv<QOp::kQLinearConv>});
}

}  // namespace tessel::ops::quantize_internal
