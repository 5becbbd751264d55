#include "targets/opencl/op_launches.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>

#include "ops/attention.h"
#include "ops/fused_activation.h"
#include "ops/movement_plan.h"
#include "ops/nn_internal.h"
#include "ops/spatial_plan.h"
#include "ops/strided_view.h"
#include "targets/opencl/index_launches.h"
#include "targets/opencl/launch_util.h"
#include "targets/opencl/spatial_launches.h"

namespace tessel::opencl {

namespace {

Status Copy(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  const ir::Value* in = c.node.input(0);
  const ir::Value* out = c.node.output(0);
  if (c.ref(in) == c.ref(out)) return Status::Ok();
  if (in->size_bytes() != out->size_bytes()) {
    return Unsupported(c.node, "copies tensors of equal size only");
  }
  const int64_t scale = static_cast<int64_t>(DTypeSize(out->dtype)) / 4;
  if (scale < 1 || out->size_bytes() % 4 != 0) {
    // Elements narrower than a word (a view of bool or float16 data): an
    // element-wise move, so that whether a view runs here does not depend
    // on the memory plan (a view planned onto its input launches nothing).
    const int64_t elems = NumElements(out->shape);
    const Dims6 dims = Pad6(Shape{elems});
    return StridedCopy(c, in, out, dims, Strides6(Shape{elems}), Strides6(Shape{elems}), 0, 0,
                       launches);
  }
  const int64_t n = static_cast<int64_t>(out->size_bytes() / 4);
  if (n == 0) return Status::Ok();
  TensorRef x = c.ref(in), y = c.ref(out);
  x.offset *= static_cast<int32_t>(scale);
  y.offset *= static_cast<int32_t>(scale);
  PendingLaunch l;
  l.kernel_name = "b32_copy";
  l.args.Tensor(x).Tensor(y).Int(n);
  l.geometry = Linear(n);
  l.bytes = 2 * n * 4;
  launches->push_back(std::move(l));
  return Status::Ok();
}

// Transpose, Slice, Concat, Split, Expand, ChannelShuffle: the strided
// copies of ops/movement_plan.h, each one launch.
Status Movement(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  if (c.node.op_type == "Transpose" &&
      (!c.HeldStrides(c.node.output(0)).empty() || !c.HeldStrides(c.node.input(0)).empty())) {
    return Copy(c, launches);  // a view: its reader or writer strides
  }
  StatusOr<std::vector<ops::StridedCopy>> copies = ops::PlanMovement(c.node, c.opset);
  if (!copies.ok()) return tessel::Unsupported("the OpenCL target: " + copies.status().message());
  for (const ops::StridedCopy& k : *copies) {
    const auto wide = [](const ops::Dims6& d) {
      return Dims6{d[0], d[1], d[2], d[3], d[4], d[5], 0, 0};
    };
    TESSEL_RETURN_IF_ERROR(StridedCopy(c, c.node.inputs[k.input], c.node.outputs[k.output],
                                       wide(k.dims), wide(k.x_strides), wide(k.y_strides),
                                       k.x_offset, k.y_offset, launches));
  }
  return Status::Ok();
}

Status Gather(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  const ir::Value* data = c.node.input(0);
  const ir::Value* idx = c.node.input(1);
  const ir::Value* out = c.node.output(0);
  TESSEL_ASSIGN_OR_RETURN(const char* prefix, MovePrefix(c.node, data->dtype));
  if (idx->dtype != DType::kInt64 && idx->dtype != DType::kInt32) {
    return Unsupported(c.node, "takes int32 or int64 indices only");
  }
  const int64_t r = static_cast<int64_t>(data->shape.size());
  int64_t axis = c.node.attrs.Int("axis", 0);
  if (axis < 0) axis += r;
  const int64_t outer = Product(data->shape, 0, static_cast<size_t>(axis));
  const int64_t inner = Product(data->shape, static_cast<size_t>(axis) + 1, data->shape.size());
  const int64_t num_idx = NumElements(idx->shape);
  const int64_t n = outer * num_idx * inner;
  if (n == 0) return Status::Ok();
  TensorRef x = c.ref(data), y = c.ref(out);
  // Rows of a multiple of 16 bytes move as uint4s.
  const int64_t f = VectorFactor(DTypeSize(data->dtype), {inner, x.offset, y.offset});
  x.offset /= static_cast<int32_t>(f);
  y.offset /= static_cast<int32_t>(f);
  PendingLaunch l;
  l.kernel_name = std::string(f > 1 ? "b128" : prefix) + "_gather_" +
                  (idx->dtype == DType::kInt64 ? "i64" : "i32");
  l.args.Tensor(x)
      .Tensor(c.ref(idx))
      .Tensor(y)
      .Int(n / f)
      .Int(num_idx)
      .Int(inner / f)
      .Int(data->shape[static_cast<size_t>(axis)]);
  l.geometry = Linear(n);
  l.bytes = 2 * Bytes(out) + Bytes(idx);
  launches->push_back(std::move(l));
  return Status::Ok();
}

// The kernel-name prefix of a dtype Cast takes; null for others.
const char* CastName(DType t) {
  switch (t) {
    case DType::kFloat32:
      return "f32";
    case DType::kInt32:
      return "i32";
    case DType::kInt64:
      return "i64";
    case DType::kUInt8:
      return "u8";
    case DType::kBool:
      return "bool";
    default:
      return nullptr;
  }
}

Status Cast(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  const ir::Value* in = c.node.input(0);
  const ir::Value* out = c.node.output(0);
  const char* from = CastName(in->dtype);
  const char* to = CastName(out->dtype);
  if (!from || !to) {
    return Unsupported(c.node, std::string("casts between float32, int32, int64, uint8 and bool "
                                           "only, not ") +
                                   DTypeName(in->dtype) + " to " + DTypeName(out->dtype));
  }
  const int64_t n = NumElements(out->shape);
  if (n == 0) return Status::Ok();
  PendingLaunch l;
  l.kernel_name = std::string(from) + "_cast_" + to;
  l.args.Tensor(c.ref(in)).Tensor(c.ref(out)).Int(n);
  l.geometry = Linear(n);
  l.bytes = Bytes(in) + Bytes(out);
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status Pad(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  const ir::Value* in = c.node.input(0);
  const ir::Value* out = c.node.output(0);
  const size_t r = in->shape.size();
  if (r > 6) return Unsupported(c.node, "pads at most 6 dims");
  TESSEL_ASSIGN_OR_RETURN(ops::PadPlan plan, ops::PlanPadNode(c.node, c.opset));
  const size_t size = DTypeSize(in->dtype);
  if (size != 4 && size != 8) {
    return Unsupported(
        c.node, std::string("pads 4- and 8-byte elements only, not ") + DTypeName(in->dtype));
  }
  const int64_t n = NumElements(out->shape);
  if (n == 0) return Status::Ok();
  Dims6 begin{0, 0, 0, 0, 0, 0, 0, 0};
  for (size_t d = 0; d < r; ++d) begin[6 - r + d] = plan.begin[d];
  const int mode = plan.mode == ops::PadMode::kConstant  ? 0
                   : plan.mode == ops::PadMode::kReflect ? 1
                   : plan.mode == ops::PadMode::kEdge    ? 2
                                                         : 3;
  PendingLaunch l;
  l.kernel_name = in->dtype == DType::kFloat32 ? "f32_pad" : size == 4 ? "b32_pad" : "b64_pad";
  l.args.Tensor(c.ref(in)).Tensor(c.ref(out)).Int(n).Ints(Pad6(out->shape)).Ints(Pad6(in->shape));
  l.args.Ints(begin).Int(mode).Raw(plan.fill.data(), size);
  l.geometry = Linear(n);
  l.bytes = Bytes(in) + Bytes(out);
  launches->push_back(std::move(l));
  return Status::Ok();
}

// Resize and Upsample of float32 on the two innermost axes (the others keep
// their length), through tap tables planned as the reference plans them.
Status Resize(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  const ir::Value* in = c.node.input(0);
  const ir::Value* out = c.node.output(0);
  if (in->dtype != DType::kFloat32) return Unsupported(c.node, "resizes float32 only");
  TESSEL_ASSIGN_OR_RETURN(ops::ResizeSampling s, ops::PlanResizeNode(c.node, c.opset));
  const size_t r = in->shape.size();
  if (r < 2) return Unsupported(c.node, "resizes tensors of rank 2 or more only");
  for (size_t d = 0; d + 2 < r; ++d) {
    if (!s.axes[d].identity) {
      return Unsupported(
          c.node, "resizes the two innermost axes only; axis " + std::to_string(d) + " changes");
    }
  }
  const ops::AxisSampling& rows = s.axes[r - 2];
  const ops::AxisSampling& cols = s.axes[r - 1];
  const int64_t OH = out->shape[r - 2], OW = out->shape[r - 1];
  const int64_t n = NumElements(out->shape);
  if (n == 0) return Status::Ok();
  ResizeTables tables = MakeResizeTables(rows, cols);
  PendingLaunch l;
  l.kernel_name = "f32_resize2d";
  l.args.Tensor(c.ref(in))
      .Tensor(c.ref(out))
      .Table(std::move(tables.index))
      .Table(std::move(tables.weight));
  l.args.Int(Product(in->shape, 0, r - 2))
      .Int(in->shape[r - 2])
      .Int(in->shape[r - 1])
      .Int(OH)
      .Int(OW)
      .Int(rows.taps)
      .Int(cols.taps)
      .Float(static_cast<float>(s.extrapolation_value));
  l.geometry = Grid(OW, OH, Product(in->shape, 0, r - 2));
  l.bytes = Bytes(in) + Bytes(out);
  l.flops = 2 * n * rows.taps * cols.taps;
  launches->push_back(std::move(l));
  return Status::Ok();
}

// GatherND with batch_dims b and k = the indices' last dim (at most 8).
Status GatherND(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  const ir::Value* data = c.node.input(0);
  const ir::Value* idx = c.node.input(1);
  const ir::Value* out = c.node.output(0);
  TESSEL_ASSIGN_OR_RETURN(const char* prefix, MovePrefix(c.node, data->dtype));
  if (idx->dtype != DType::kInt64 || idx->shape.empty()) {
    return Unsupported(c.node, "takes int64 indices of rank 1 or more only");
  }
  const auto b = static_cast<size_t>(c.node.attrs.Int("batch_dims", 0));
  const auto k = static_cast<size_t>(idx->shape.back());
  if (k > 8 || b + k > data->shape.size()) {
    return Unsupported(c.node, "indexes at most 8 data dims at once");
  }
  const int64_t n = NumElements(out->shape);
  if (n == 0) return Status::Ok();
  const int64_t inner = Product(data->shape, b + k, data->shape.size());
  const int64_t rows_per_batch = Product(idx->shape, b, idx->shape.size() - 1);
  const int64_t batch_stride = Product(data->shape, b, data->shape.size());
  Dims6 dims{1, 1, 1, 1, 1, 1, 1, 1}, strides{0, 0, 0, 0, 0, 0, 0, 0};
  for (size_t t = 0; t < k; ++t) {
    dims[t] = data->shape[b + t];
    strides[t] = Product(data->shape, b + t + 1, data->shape.size());
  }
  PendingLaunch l;
  l.kernel_name = std::string(prefix) + "_gather_nd";
  l.args.Tensor(c.ref(data)).Tensor(c.ref(idx)).Tensor(c.ref(out)).Int(n).Int(inner);
  l.args.Int(static_cast<int64_t>(k)).Int(std::max<int64_t>(rows_per_batch, 1)).Int(batch_stride);
  l.args.Ints(dims).Ints(strides);
  l.geometry = Linear(n);
  l.bytes = 2 * Bytes(out) + Bytes(idx);
  launches->push_back(std::move(l));
  return Status::Ok();
}

// What a convolution or matrix product applies as it stores
// (TESSEL_EPILOGUE_PARAMS): + beta * c (a bias or Gemm's C, element
// (bt, row, col) at (bt % cst[2]) * cst[3] + row * cst[0] + col * cst[1]),
// + z (a residual shaped like the output), then the activation.
struct Epilogue {
  const ir::Value* c = nullptr;
  std::array<int64_t, 4> cst{0, 0, 1, 0};
  float beta = 1;
  const ir::Value* z = nullptr;
  ops::FusedActivation act;
};

// Unused tensor arguments are bound to `dummy` (the output), never null.
void AddEpilogue(const NodeContext& c, const Epilogue& e, const ir::Value* dummy,
                 KernelArgs& args) {
  args.Tensor(c.ref(e.c ? e.c : dummy)).Int(e.c ? 1 : 0).Ints(e.cst).Float(e.beta);
  args.Tensor(c.ref(e.z ? e.z : dummy)).Int(e.z ? 1 : 0);
  // A TESSEL_ACT_* code (ops::ActivationCDefines) and its parameters.
  args.Int(static_cast<int>(e.act.kind)).Float(e.act.alpha).Float(e.act.beta);
}

// The tile of a register-tiled product and how many parts its reduction
// splits into. 64-tiles (4x4 per item, 256 items) when they give at least
// half as many work-groups as the device has compute units (on an H200 they
// reach 3x the 32-tiles' FLOP/s), else 32-tiles (2x2 per item, 256 items:
// small products need items more than registers). Then split-K, for
// products of k >= 512 whose tiles give fewer work-groups than hide memory
// latency (two a unit of 64-tiles, four of 32-tiles): parts of at least 128
// of k, each a work-group per tile, added up by a second launch (deep layers
// on few pixels: ResNet's 7x7x512 over 4608 taps runs 32 tiles in 18 parts).
struct TileChoice {
  int64_t tile = 64;
  int64_t splits = 1;
};

TileChoice ChooseTile(int64_t M, int64_t N, int64_t K, int64_t batch, int64_t compute_units) {
  auto groups = [&](int64_t tile) {
    return (M + tile - 1) / tile * ((N + tile - 1) / tile) * batch;
  };
  TileChoice t;
  t.tile = 2 * groups(64) >= compute_units ? 64 : 32;
  const int64_t g = groups(t.tile), want = (t.tile == 64 ? 2 : 4) * compute_units;
  if (g < want && K >= 512)
    t.splits = std::clamp<int64_t>(std::min((want + g - 1) / g, K / 128), 1, 32);
  return t;
}

// The launch of a register-tiled kernel (f32_gemm_* or f32_conv_gemm_*) whose
// operand arguments `operands` adds and whose strides or geometry (after the
// dims) `shape` adds, then its split-K sum when it splits (the
// parts go to the plan's scratch buffer, and the sum stores through the
// epilogue).
void TiledProduct(const NodeContext& c, const std::string& kernel, int64_t M, int64_t N, int64_t K,
                  int64_t batch, float alpha, const Epilogue& e, const ir::Value* y,
                  const std::function<void(KernelArgs&)>& operands,
                  const std::function<void(KernelArgs&)>& shape, int64_t bytes,
                  std::vector<PendingLaunch>* launches) {
  TileChoice t = ChooseTile(M, N, K, batch, c.compute_units);
  if (!c.scratch) t.splits = 1;
  const int64_t per_item = t.tile == 64 ? 4 : 2;
  const std::array<int64_t, 4> dims{M, N, K, t.splits};
  PendingLaunch l;
  l.kernel_name = kernel + (t.tile == 64 ? "_64x64" : "_32x32");
  operands(l.args);
  const int64_t total = batch * M * N;
  TensorRef parts;
  if (t.splits > 1) {
    parts = c.scratch(t.splits * total * 4);
    l.args.Tensor(parts);
  } else {
    l.args.Tensor(c.ref(y));
  }
  l.args.Ints(dims);
  shape(l.args);
  l.args.Float(t.splits > 1 ? 1.0f : alpha);
  AddEpilogue(c, t.splits > 1 ? Epilogue{} : e, y, l.args);
  l.geometry.dims = 3;
  l.geometry.global = {static_cast<size_t>((N + t.tile - 1) / t.tile * (t.tile / per_item)),
                       static_cast<size_t>((M + t.tile - 1) / t.tile * (t.tile / per_item)),
                       static_cast<size_t>(batch * t.splits)};
  l.geometry.local = {static_cast<size_t>(t.tile / per_item),
                      static_cast<size_t>(t.tile / per_item), 1};
  l.bytes = bytes + Bytes(e.c) + Bytes(e.z) + (t.splits > 1 ? t.splits * total * 4 : 0);
  l.flops = 2 * M * N * K * batch;
  launches->push_back(std::move(l));
  if (t.splits == 1) return;
  PendingLaunch sum;
  sum.kernel_name = "f32_split_k_sum";
  sum.args.Tensor(parts).Tensor(c.ref(y)).Ints(std::array<int64_t, 4>{M, N, batch, t.splits});
  sum.args.Float(alpha);
  AddEpilogue(c, e, y, sum.args);
  sum.geometry = Linear(total);
  sum.bytes = (t.splits + 1) * total * 4 + Bytes(e.c) + Bytes(e.z);
  sum.flops = t.splits * total;
  launches->push_back(std::move(sum));
}

// Products with N and K both at most this many run an item per output
// (f32_gemm_thin): CaiT's 4-head mixes took 22 us each in 64x64 tiles.
constexpr int64_t kThinGemm = 8;

// y[bt] = alpha * A[bt] B[bt], stored through the epilogue.
struct GemmArgs {
  const ir::Value *a, *b, *y;
  int64_t M, N, K, batch;
  std::array<int64_t, 8> st;  // a_rs, a_cs, b_rs, b_cs, a_bs, b_bs, 0, 0
  float alpha = 1;
  Epilogue epilogue;
};

void Gemm(const NodeContext& c, const GemmArgs& g, std::vector<PendingLaunch>* launches) {
  const int64_t bytes = Bytes(g.a) + Bytes(g.b) + Bytes(g.y);
  if (g.N == 1 && g.M > 1 && g.batch == 1) {
    // One column (a 1x1 convolution on one pixel: squeeze-and-excitation's
    // layers): y^T = B^T A^T, a matrix-vector product, a work-group per
    // output over A's rows. In tiles, 31 of 32 columns were empty and the
    // rows too few to fill the device: 11 GB/s against the GEMV's hundreds.
    GemmArgs t = g;
    t.a = g.b;
    t.b = g.a;
    t.M = 1;
    t.N = g.M;
    t.st = {0, g.st[2], g.st[1], g.st[0], 0, 0, 0, 0};
    t.epilogue.cst = {g.epilogue.cst[1], g.epilogue.cst[0], g.epilogue.cst[2], g.epilogue.cst[3]};
    Gemm(c, t, launches);
    return;
  }
  if (g.M == 1 && g.batch == 1) {
    // A matrix-vector product: tiles would waste all rows but one.
    PendingLaunch l;
    l.args.Tensor(c.ref(g.a)).Tensor(c.ref(g.b)).Tensor(c.ref(g.y));
    l.args.Int(g.N).Int(g.K).Ints(g.st).Float(g.alpha);
    AddEpilogue(c, g.epilogue, g.y, l.args);
    if (g.st[2] == 1) {
      l.kernel_name = "f32_gemv_rows";
      l.geometry = Rows(g.N);
    } else {
      l.kernel_name = "f32_gemv_cols";
      l.geometry = Linear(g.N);
    }
    l.bytes = bytes + Bytes(g.epilogue.c) + Bytes(g.epilogue.z);
    l.flops = 2 * g.N * g.K;
    launches->push_back(std::move(l));
    return;
  }
  if (g.N <= kThinGemm && g.K <= kThinGemm) {
    // A tile would be mostly empty columns: an item per output.
    PendingLaunch l;
    l.kernel_name = "f32_gemm_thin";
    l.args.Tensor(c.ref(g.a)).Tensor(c.ref(g.b)).Tensor(c.ref(g.y));
    l.args.Ints(std::array<int64_t, 4>{g.M, g.N, g.K, g.batch}).Ints(g.st).Float(g.alpha);
    AddEpilogue(c, g.epilogue, g.y, l.args);
    l.geometry = Grid(g.N, g.M, g.batch);
    l.geometry.dims = 3;
    l.bytes = bytes + Bytes(g.epilogue.c) + Bytes(g.epilogue.z);
    l.flops = 2 * g.M * g.N * g.K * g.batch;
    launches->push_back(std::move(l));
    return;
  }
  TiledProduct(
      c, "f32_gemm", g.M, g.N, g.K, g.batch, g.alpha, g.epilogue, g.y,
      [&](KernelArgs& args) { args.Tensor(c.ref(g.a)).Tensor(c.ref(g.b)); },
      [&](KernelArgs& args) { args.Ints(g.st); }, bytes, launches);
}

Status GemmOp(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  GemmArgs g{};
  g.a = c.node.input(0);
  g.b = c.node.input(1);
  g.y = c.node.output(0);
  const bool ta = c.node.attrs.Int("transA", 0) != 0, tb = c.node.attrs.Int("transB", 0) != 0;
  g.alpha = c.node.attrs.Float("alpha", 1.0f);
  const Shape& as = g.a->shape;
  const Shape& bs = g.b->shape;
  g.M = ta ? as[1] : as[0];
  g.K = ta ? as[0] : as[1];
  g.N = tb ? bs[0] : bs[1];
  g.batch = 1;
  g.st = {ta ? 1 : g.K, ta ? g.M : 1, tb ? 1 : g.N, tb ? g.K : 1, 0, 0, 0, 0};
  Epilogue& e = g.epilogue;
  e.c = c.node.input(2);
  e.beta = c.node.attrs.Float("beta", 1.0f);
  if (e.c) {
    const Shape& cs = e.c->shape;
    if (cs.size() == 2) {
      e.cst[0] = cs[0] != 1 ? cs[1] : 0;
      e.cst[1] = cs[1] != 1 ? 1 : 0;
    } else if (cs.size() == 1) {
      e.cst[1] = cs[0] != 1 ? 1 : 0;
    }
  }
  Gemm(c, g, launches);
  return Status::Ok();
}

// MatMul, plus a bias row added along the last axis when `bias` is set and
// a residual `z` (FusedMatMul: the bias as the epilogue's c with a zero row
// stride).
Status MatMulPlus(const NodeContext& c, const ir::Value* bias, const ir::Value* z,
                  std::vector<PendingLaunch>* launches) {
  GemmArgs g{};
  g.a = c.node.input(0);
  g.b = c.node.input(1);
  g.y = c.node.output(0);
  if (g.a->dtype != DType::kFloat32) return Unsupported(c.node, "multiplies float32 only");
  Shape as = g.a->shape, bs = g.b->shape;
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  g.M = as[as.size() - 2];
  g.K = as.back();
  g.N = bs.back();
  const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  const size_t rank = std::max(a_batch.size(), b_batch.size());
  Shape out_batch(rank, 1);
  auto pad = [rank](const Shape& s) {
    Shape p(rank - s.size(), 1);
    p.insert(p.end(), s.begin(), s.end());
    return p;
  };
  const Shape pa = pad(a_batch), pb = pad(b_batch);
  for (size_t i = 0; i < rank; ++i) out_batch[i] = std::max(pa[i], pb[i]);
  g.batch = NumElements(out_batch);
  const int64_t na = NumElements(pa), nb = NumElements(pb);
  if ((na != 1 && pa != out_batch) || (nb != 1 && pb != out_batch)) {
    return Unsupported(c.node, "broadcasts matrix batches only when one side has a single matrix");
  }
  g.st = {g.K, 1, g.N, 1, na == 1 ? 0 : g.M * g.K, nb == 1 ? 0 : g.K * g.N, 0, 0};
  if (nb == 1 && g.batch > 1 && na == g.batch) {
    // One right-hand matrix for a dense stack of left ones: a single product
    // of (batch * M) rows (a [128, 1, 256] x [256, 768] projection is then
    // one 128-row product, not 128 one-row ones).
    g.M *= g.batch;
    g.batch = 1;
    g.st[4] = 0;
  }
  if (bias) {
    if (g.batch != 1) return Unsupported(c.node, "adds a bias to one matrix product only");
    g.epilogue.c = bias;
    g.epilogue.cst = {0, 1, 1, 0};  // every row reads the same bias
  }
  g.epilogue.z = z;
  Gemm(c, g, launches);
  return Status::Ok();
}

Status MatMul(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  return MatMulPlus(c, nullptr, nullptr, launches);
}

// FusedMatMul (passes/fuse_matmul_bias): the product, its bias and the
// residual in one kernel.
Status FusedMatMul(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  return MatMulPlus(c, c.node.input(2), c.node.input(3), launches);
}

// The implicit-GEMM convolutions' taps: per k = (c, kh, kw) of one group's
// weights, int32 {c * H * W + kh * DH * W + kw * DW, kh * DH, kw * DW, 0}.
std::vector<unsigned char> ConvTaps(int64_t cpg, int64_t H, int64_t W, int64_t KH, int64_t KW,
                                    int64_t DH, int64_t DW) {
  std::vector<int32_t> taps;
  taps.reserve(static_cast<size_t>(cpg * KH * KW * 4));
  for (int64_t ch = 0; ch < cpg; ++ch) {
    for (int64_t kh = 0; kh < KH; ++kh) {
      for (int64_t kw = 0; kw < KW; ++kw) {
        const int64_t dh = kh * DH, dw = kw * DW;
        for (int64_t v : {ch * H * W + dh * W + dw, dh, dw, int64_t{0}}) {
          taps.push_back(static_cast<int32_t>(v));
        }
      }
    }
  }
  std::vector<unsigned char> bytes(taps.size() * sizeof(int32_t));
  std::memcpy(bytes.data(), taps.data(), bytes.size());
  return bytes;
}

// Grouped convolutions with fewer output channels per group than this run
// one output per item (f32_conv2d_direct): an implicit GEMM's 32-row tile
// would be mostly empty.
constexpr int64_t kMinGemmRows = 16;

// A convolution of volumes (NCDHW) through `epilogue`: ConvWith's kernels
// one axis deeper (spatial_kernels.cl.inc), the implicit GEMM's taps
// reaching into the depth.
Status ConvVolume(const NodeContext& c, Epilogue epilogue, std::vector<PendingLaunch>* launches) {
  const ir::Value* x = c.node.input(0);
  const ir::Value* w = c.node.input(1);
  const ir::Value* y = c.node.output(0);
  if (x->dtype != DType::kFloat32) return Unsupported(c.node, "convolves float32 only");
  const Shape in(x->shape.begin() + 2, x->shape.end());
  const std::vector<int64_t> kernel(w->shape.begin() + 2, w->shape.end());
  std::vector<int64_t> s, d, p;
  Shape out;
  TESSEL_RETURN_IF_ERROR(ops::ResolveWindow(c.node, in, kernel, false, &s, &d, &p, &out));
  const int64_t group = c.node.attrs.Int("group", 1);
  const int64_t N = x->shape[0], C = x->shape[1], OC = w->shape[0];
  const int64_t cpg = C / group, opg = OC / group, taps = kernel[0] * kernel[1] * kernel[2];
  epilogue.c = c.node.input(2);
  epilogue.cst = {1, 0, group, opg};  // the bias of (group, row)
  const int64_t bytes = Bytes(x) + Bytes(w) + Bytes(y);
  if (taps == 1 && group == 1 && s == std::vector<int64_t>{1, 1, 1} &&
      std::all_of(p.begin(), p.end(), [](int64_t v) { return v == 0; })) {
    // y[n] (OC x DHW) = W (OC x C) * x[n] (C x DHW), as ConvWith's pointwise.
    GemmArgs g{};
    g.a = w;
    g.b = x;
    g.y = y;
    g.M = OC;
    g.N = NumElements(in);
    g.K = C;
    g.batch = N;
    g.st = {C, 1, g.N, 1, 0, C * g.N, 0, 0};
    g.epilogue = epilogue;
    Gemm(c, g, launches);
    return Status::Ok();
  }
  const std::array<int64_t, 16> geo = {C,    in[0], in[1], in[2], OC,   out[0], out[1], out[2],
                                       s[0], s[1],  s[2],  p[0],  p[1], p[2],   group,  N};
  if (opg >= kMinGemmRows) {
    TiledProduct(
        c, "f32_conv3d_gemm", opg, NumElements(out), cpg * taps, N * group, 1.0f, epilogue, y,
        [&](KernelArgs& args) {
          args.Tensor(c.ref(x)).Tensor(c.ref(w));
          args.Table(spatial_ops::VolumeConvTaps(
              cpg, {in[0], in[1], in[2]}, {kernel[0], kernel[1], kernel[2]}, {d[0], d[1], d[2]}));
        },
        [&](KernelArgs& args) { args.Ints(geo); }, bytes, launches);
    return Status::Ok();
  }
  PendingLaunch l;
  l.kernel_name = "f32_conv3d_direct";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(w)).Tensor(c.ref(y)).Ints(geo);
  l.args.Ints(std::array<int64_t, 8>{kernel[0], kernel[1], kernel[2], d[0], d[1], d[2], 0, 0});
  AddEpilogue(c, epilogue, y, l.args);
  l.geometry = Grid(out[2], out[1], N * OC * out[0]);
  l.geometry.dims = 3;
  l.bytes = bytes + Bytes(epilogue.c) + Bytes(epilogue.z);
  l.flops = 2 * NumElements(y->shape) * cpg * taps;
  launches->push_back(std::move(l));
  return Status::Ok();
}

// A convolution (any 1-D, 2-D or 3-D Conv) whose launches store through
// `epilogue` (its bias added here).
Status ConvWith(const NodeContext& c, Epilogue epilogue, std::vector<PendingLaunch>* launches) {
  const ir::Value* x = c.node.input(0);
  const ir::Value* w = c.node.input(1);
  const ir::Value* b = c.node.input(2);
  const ir::Value* y = c.node.output(0);
  if (x->shape.size() == 5) return ConvVolume(c, std::move(epilogue), launches);
  if (x->shape.size() != 3 && x->shape.size() != 4) {
    return Unsupported(c.node, "convolves 1D signals, 2D images and 3D volumes only");
  }
  if (x->dtype != DType::kFloat32) return Unsupported(c.node, "convolves float32 only");
  Shape in_spatial(x->shape.begin() + 2, x->shape.end());
  std::vector<int64_t> kernel(w->shape.begin() + 2, w->shape.end());
  std::vector<int64_t> strides, dilations, pads;
  Shape out_spatial;
  TESSEL_RETURN_IF_ERROR(ops::ResolveWindow(c.node, in_spatial, kernel, false, &strides, &dilations,
                                            &pads, &out_spatial));
  if (x->shape.size() == 3) {
    // A signal is an image of one row: the same kernels, H = 1.
    in_spatial.insert(in_spatial.begin(), 1);
    kernel.insert(kernel.begin(), 1);
    out_spatial.insert(out_spatial.begin(), 1);
    strides.insert(strides.begin(), 1);
    dilations.insert(dilations.begin(), 1);
    pads = {0, pads[0], 0, pads[1]};
  }
  const int64_t group = c.node.attrs.Int("group", 1);
  const int64_t N = x->shape[0], C = x->shape[1], H = in_spatial[0], W = in_spatial[1];
  const int64_t OC = w->shape[0], OH = out_spatial[0], OW = out_spatial[1];
  const int64_t KH = kernel[0], KW = kernel[1];
  const int64_t cpg = C / group, opg = OC / group;
  epilogue.c = b;
  epilogue.cst = {1, 0, group, opg};  // the bias of (group, row)
  const int64_t bytes = Bytes(x) + Bytes(w) + Bytes(y);
  const bool pointwise = KH == 1 && KW == 1 && group == 1 && strides[0] == 1 && strides[1] == 1 &&
                         pads[0] == 0 && pads[1] == 0 && pads[2] == 0 && pads[3] == 0;
  if (pointwise) {
    // y[n] (OC x HW) = W (OC x C) * x[n] (C x HW).
    GemmArgs g{};
    g.a = w;
    g.b = x;
    g.y = y;
    g.M = OC;
    g.N = H * W;
    g.K = C;
    g.batch = N;
    g.st = {C, 1, H * W, 1, 0, C * H * W, 0, 0};
    g.epilogue = epilogue;
    Gemm(c, g, launches);
    return Status::Ok();
  }
  const std::array<int64_t, 16> geo = {
      C,          W == 0 ? 0 : H, W,       OC,      OH,           OW,           KH,    KW,
      strides[0], strides[1],     pads[0], pads[1], dilations[0], dilations[1], group, N};
  const bool depthwise = group == C && group == OC;
  if (!depthwise && opg >= kMinGemmRows) {
    TiledProduct(
        c, "f32_conv_gemm", opg, OH * OW, cpg * KH * KW, N * group, 1.0f, epilogue, y,
        [&](KernelArgs& args) {
          args.Tensor(c.ref(x)).Tensor(c.ref(w));
          args.Table(ConvTaps(cpg, H, W, KH, KW, dilations[0], dilations[1]));
        },
        [&](KernelArgs& args) { args.Ints(geo); }, bytes, launches);
    return Status::Ok();
  }
  PendingLaunch l;
  l.kernel_name = depthwise ? "f32_conv2d_depthwise_x4" : "f32_conv2d_direct";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(w)).Tensor(c.ref(y)).Ints(geo);
  AddEpilogue(c, epilogue, y, l.args);
  l.geometry = Grid(depthwise ? (OW + 3) / 4 : OW, OH, N * OC);
  l.geometry.dims = 3;
  l.bytes = bytes + Bytes(b) + Bytes(epilogue.z);
  l.flops = 2 * N * OC * OH * OW * cpg * KH * KW;
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status Conv(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  return ConvWith(c, Epilogue{}, launches);
}

// FusedConv (passes/fuse_conv_activation): the convolution storing
// act(conv + bias + residual) itself.
Status FusedConv(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  Epilogue e;
  e.z = c.node.input(3);
  TESSEL_ASSIGN_OR_RETURN(e.act, ops::ParseFusedActivation(c.node));
  return ConvWith(c, e, launches);
}

Status Pool(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  const ir::Value* x = c.node.input(0);
  const ir::Value* y = c.node.output(0);
  // Signals, volumes and MaxPool's Indices: f32_pool3d.
  if (x->shape.size() != 4 || c.node.output(1)) return spatial_ops::PoolVolume(c, launches);
  if (x->dtype != DType::kFloat32) return Unsupported(c.node, "pools float32 only");
  const bool is_max = c.node.op_type == "MaxPool";
  const Shape in_spatial(x->shape.begin() + 2, x->shape.end());
  std::vector<int64_t> kernel = c.node.attrs.Ints("kernel_shape");
  std::vector<int64_t> strides, dilations, pads;
  Shape out_spatial;
  TESSEL_RETURN_IF_ERROR(ops::ResolveWindow(c.node, in_spatial, kernel,
                                            c.node.attrs.Int("ceil_mode", 0) != 0, &strides,
                                            &dilations, &pads, &out_spatial));
  const int64_t planes = x->shape[0] * x->shape[1];
  const int64_t H = x->shape[2], W = x->shape[3];
  const std::array<int64_t, 16> geo = {x->shape[1],
                                       H,
                                       W,
                                       out_spatial[0],
                                       out_spatial[1],
                                       kernel[0],
                                       kernel[1],
                                       strides[0],
                                       strides[1],
                                       pads[0],
                                       pads[1],
                                       dilations[0],
                                       dilations[1],
                                       is_max ? 1 : 0,
                                       c.node.attrs.Int("count_include_pad", 0),
                                       H + pads[2]};
  PendingLaunch l;
  l.kernel_name = "f32_pool2d";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(y)).Int(planes).Ints(geo).Int(W + pads[3]);
  l.geometry = Grid(out_spatial[1], out_spatial[0], planes);
  l.geometry.dims = 3;
  l.bytes = Bytes(x) + Bytes(y);
  launches->push_back(std::move(l));
  return Status::Ok();
}

// Rows at least this long are reduced by a work-group each: one item
// looping over a long row leaves the GPU's memory system idle.
constexpr int64_t kGroupReduceLen = 256;
// Rows from this long to kGroupReduceLen take 16 items each.
constexpr int64_t kShortReduceLen = 16;

void Reduce(const NodeContext& c, const ir::Value* x, const ir::Value* y, int64_t outer,
            int64_t len, int64_t inner, int kind, std::vector<PendingLaunch>* launches) {
  PendingLaunch l;
  if (inner == 1 && len >= kGroupReduceLen) {
    l.kernel_name = "f32_reduce_rows";
    l.args.Tensor(c.ref(x)).Tensor(c.ref(y)).Int(len).Int(kind);
    l.geometry = Rows(outer);
  } else if (inner == 1 && len >= kShortReduceLen) {
    l.kernel_name = "f32_reduce_rows_short";
    l.args.Tensor(c.ref(x)).Tensor(c.ref(y)).Int(outer).Int(len).Int(kind);
    l.geometry = Grid(16, outer, 1);
    l.geometry.local = {16, 8, 1};
  } else {
    l.kernel_name = "f32_reduce";
    l.args.Tensor(c.ref(x)).Tensor(c.ref(y)).Int(outer).Int(len).Int(inner).Int(kind);
    l.geometry = Grid(inner, outer, 1);
  }
  l.bytes = Bytes(x) + Bytes(y);
  l.flops = NumElements(x->shape);
  launches->push_back(std::move(l));
}

Status GlobalPool(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  const ir::Value* x = c.node.input(0);
  if (x->dtype != DType::kFloat32) return Unsupported(c.node, "pools float32 only");
  Reduce(c, x, c.node.output(0), x->shape[0] * x->shape[1], Product(x->shape, 2, x->shape.size()),
         1, c.node.op_type == "GlobalMaxPool" ? 2 : 1, launches);
  return Status::Ok();
}

Status ReduceOp(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  const ir::Value* x = c.node.input(0);
  if (x->dtype != DType::kFloat32) return Unsupported(c.node, "reduces float32 only");
  const std::string& op = c.node.op_type;
  const int kind = op == "ReduceSum"         ? 0
                   : op == "ReduceMean"      ? 1
                   : op == "ReduceMax"       ? 2
                   : op == "ReduceMin"       ? 3
                   : op == "ReduceSumSquare" ? 4
                   : op == "ReduceProd"      ? 5
                   : op == "ReduceL1"        ? 6
                   : op == "ReduceL2"        ? 7
                                             : 8;  // ReduceLogSum
  std::vector<int64_t> axes;
  const bool axes_input = (op == "ReduceSum" && c.opset >= 13) || c.opset >= 18;
  if (axes_input) {
    TESSEL_ASSIGN_OR_RETURN(axes, ConstantInts(c, 1, "axes"));
  } else {
    axes = c.node.attrs.Ints("axes");
  }
  const int64_t r = static_cast<int64_t>(x->shape.size());
  std::vector<bool> reduced(static_cast<size_t>(r), axes.empty());
  if (axes.empty() && c.node.attrs.Int("noop_with_empty_axes", 0) != 0) return Copy(c, launches);
  for (int64_t a : axes) reduced[static_cast<size_t>(a < 0 ? a + r : a)] = true;
  // The reduced dims (ignoring 1s) must be contiguous: (outer, len, inner).
  int64_t first = -1, last = -1;
  for (int64_t i = 0; i < r; ++i) {
    if (reduced[static_cast<size_t>(i)] && x->shape[static_cast<size_t>(i)] != 1) {
      if (first < 0) first = i;
      last = i;
    }
  }
  if (first < 0) return Copy(c, launches);
  for (int64_t i = first; i <= last; ++i) {
    if (!reduced[static_cast<size_t>(i)] && x->shape[static_cast<size_t>(i)] != 1) {
      return Unsupported(c.node, "reduces contiguous axes only");
    }
  }
  Reduce(c, x, c.node.output(0), Product(x->shape, 0, static_cast<size_t>(first)),
         Product(x->shape, static_cast<size_t>(first), static_cast<size_t>(last) + 1),
         Product(x->shape, static_cast<size_t>(last) + 1, x->shape.size()), kind, launches);
  return Status::Ok();
}

Status Softmax(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  const ir::Value* x = c.node.input(0);
  const ir::Value* y = c.node.output(0);
  if (x->dtype != DType::kFloat32) return Unsupported(c.node, "runs Softmax on float32 only");
  const int64_t r = static_cast<int64_t>(x->shape.size());
  int64_t axis = c.node.attrs.Int("axis", c.opset >= 13 ? -1 : 1);
  if (axis < 0) axis += r;
  const int64_t outer = Product(x->shape, 0, static_cast<size_t>(axis));
  int64_t len, inner;
  if (c.opset >= 13) {
    len = x->shape[static_cast<size_t>(axis)];
    inner = Product(x->shape, static_cast<size_t>(axis) + 1, x->shape.size());
  } else {
    len = Product(x->shape, static_cast<size_t>(axis), x->shape.size());
    inner = 1;
  }
  const int log_softmax = c.node.op_type == "LogSoftmax" ? 1 : 0;
  PendingLaunch l;
  if (inner == 1) {
    l.kernel_name = "f32_softmax_rows";
    l.args.Tensor(c.ref(x)).Tensor(c.ref(y)).Int(len).Int(log_softmax);
    l.geometry = Rows(outer);
  } else {
    l.kernel_name = "f32_softmax_strided";
    l.args.Tensor(c.ref(x)).Tensor(c.ref(y)).Int(outer).Int(len).Int(inner).Int(log_softmax);
    l.geometry = Grid(inner, outer, 1);
  }
  l.bytes = Bytes(x) + Bytes(y);
  l.flops = 4 * NumElements(x->shape);
  launches->push_back(std::move(l));
  return Status::Ok();
}

// tessel's FusedAttention (passes/fuse_attention): one work-group per query
// row, an online softmax over blocks of keys.
Status FusedAttention(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  const ir::Value* q = c.node.input(0);
  const ir::Value* k = c.node.input(1);
  const ir::Value* v = c.node.input(2);
  const ir::Value* bias = c.node.input(3);
  const ir::Value* y = c.node.output(0);
  if (q->dtype != DType::kFloat32)
    return Unsupported(c.node, "runs FusedAttention on float32 only");
  TESSEL_ASSIGN_OR_RETURN(const ops::FusedAttentionDims d, ops::FusedAttentionShapes(c.node));
  // Each operand's strides as [B, H, S, D]: plain, or as a head Transpose
  // next to it lies.
  auto strides4 = [&](const ir::Value* x) {
    std::vector<int64_t> st = c.HeldStrides(x);
    if (st.empty()) st = StridesOf(x->shape);
    std::array<int64_t, 4> out{};
    for (size_t a = 0; a < st.size(); ++a) out[4 - st.size() + a] = st[a];
    return out;
  };
  // Heads of up to 64 features: the blocked kernels, keys and values staged
  // in local memory by blocks (a ViT's 197 x 197 x 64 by 3 heads on an H200:
  // 53 -> 37 us a layer; the per-row kernel re-reads them for every query); 32 query
  // rows a work-group when that gives every compute unit one, else 8. Wider
  // heads: a work-group per query row.
  const int64_t heads = d.batch * d.q_heads;
  const bool blocked = d.head <= 64 && d.v_head <= 64;
  const int64_t rows = (d.q_len + 31) / 32 * heads >= c.compute_units ? 32 : 8;
  PendingLaunch l;
  l.kernel_name = !blocked     ? "f32_attention_rows"
                  : rows == 32 ? "f32_attention_32x8"
                               : "f32_attention_8x32";
  l.args.Tensor(c.ref(q)).Tensor(c.ref(k)).Tensor(c.ref(v));
  l.args.Tensor(bias ? c.ref(bias) : c.ref(q)).Int(bias ? 1 : 0).Tensor(c.ref(y));
  l.args.Int(d.q_heads).Int(d.q_heads / d.kv_heads).Int(d.q_len).Int(d.kv_len).Int(d.head);
  l.args.Int(d.v_head);
  for (int64_t s : d.bias_strides) l.args.Int(s);
  l.args.Float(c.node.attrs.Float("scale", 1.0f)).Int(c.node.attrs.Int("zero_masked_rows", 0));
  for (const ir::Value* x : {q, k, v, y}) {
    for (int64_t st : strides4(x)) l.args.Int(st);
  }
  if (blocked) {
    l.geometry = Grid((d.q_len + rows - 1) / rows * 256, heads, 1);
    l.geometry.local = {256, 1, 1};
  } else {
    l.geometry = Rows(d.batch * d.q_heads * d.q_len);
  }
  l.bytes = Bytes(q) + Bytes(k) + Bytes(v) + Bytes(bias) + Bytes(y);
  l.flops = 2 * d.batch * d.q_heads * d.q_len * d.kv_len * (d.head + d.v_head);
  launches->push_back(std::move(l));
  return Status::Ok();
}

// tessel's Rotary (passes/fuse_rotary): an item per element.
Status Rotary(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  const ir::Value* x = c.node.input(0);
  const ir::Value* y = c.node.output(0);
  if (x->dtype != DType::kFloat32) return Unsupported(c.node, "runs Rotary on float32 only");
  if (x->shape.size() > 4) return Unsupported(c.node, "runs Rotary on at most 4 axes");
  TESSEL_ASSIGN_OR_RETURN(const ops::FusedRotaryDims d, ops::FusedRotaryShapes(c.node));
  const Shape x4 = ops::Pad4(x->shape);
  const std::array<int64_t, 4> cs = ops::BroadcastStrides4(c.node.input(1)->shape);
  const std::array<int64_t, 4> ss = ops::BroadcastStrides4(c.node.input(2)->shape);
  PendingLaunch l;
  l.kernel_name = "f32_rotary";
  l.args.Tensor(c.ref(x)).Tensor(c.ref(c.node.input(1))).Tensor(c.ref(c.node.input(2)));
  l.args.Tensor(c.ref(y)).Int(d.width).Int(d.rotary).Int(c.node.attrs.Int("interleaved", 0));
  l.args.Int(x4[1]).Int(x4[2]).Int(cs[0]).Int(cs[1]).Int(cs[2]).Int(ss[0]).Int(ss[1]).Int(ss[2]);
  l.args.Int(d.rows);
  // X's strides as [a, b, c, features]: plain, or as a head Transpose lies.
  std::vector<int64_t> xs = c.HeldStrides(x);
  if (xs.empty()) xs = StridesOf(x->shape);
  while (xs.size() < 4) xs.insert(xs.begin(), 0);
  for (int64_t st : xs) l.args.Int(st);
  l.geometry = Grid(d.width, d.rows, 1);
  l.bytes = 2 * Bytes(x) + Bytes(c.node.input(1)) + Bytes(c.node.input(2));
  l.flops = 3 * NumElements(x->shape);
  launches->push_back(std::move(l));
  return Status::Ok();
}

// A normalization of `rows` rows of `len` (LayerNormalization, and
// InstanceNormalization with channels > 0: a scale and bias per row's
// channel), with its mean and inverse deviation when `mean` is set.
struct NormArgs {
  const ir::Value *x, *scale, *bias, *y, *mean = nullptr, *inv_std = nullptr;
  int64_t rows, len, channels = 0;
  float epsilon;
};

// Rows at least this long, fewer than the device's compute units, are
// normalized by several work-groups each.
constexpr int64_t kSplitNormLen = 8192;

// A work-group a row, or 16 items a row and 8 rows a work-group for rows
// shorter than the group; or, for a few long rows, their sums by parts
// (f32_norm_parts, twice: the mean, then the deviations) into the plan's
// scratch buffer, then an item an element.
void Normalize(const NodeContext& c, const NormArgs& a, std::vector<PendingLaunch>* launches) {
  const bool stats = a.mean != nullptr;
  auto common = [&](KernelArgs& args) {
    args.Tensor(c.ref(a.scale))
        .Tensor(c.ref(a.bias ? a.bias : a.scale))
        .Int(a.bias ? 1 : 0)
        .Tensor(c.ref(a.y));
  };
  auto tail = [&](KernelArgs& args) {
    args.Tensor(c.ref(stats ? a.mean : a.y))
        .Tensor(c.ref(stats ? a.inv_std : a.y))
        .Int(stats ? 1 : 0)
        .Int(a.channels);
  };
  const int64_t bytes = Bytes(a.x) + Bytes(a.y) + Bytes(a.scale) + Bytes(a.bias);
  if (a.rows < c.compute_units && a.len >= kSplitNormLen && c.scratch) {
    const int64_t parts = std::clamp<int64_t>(
        std::min((2 * c.compute_units + a.rows - 1) / a.rows, a.len / 1024), 2, 32);
    const TensorRef sums = c.scratch(2 * a.rows * parts * 4);
    for (int pass = 0; pass < 2; ++pass) {
      PendingLaunch p;
      p.kernel_name = "f32_norm_parts";
      p.args.Tensor(c.ref(a.x)).Tensor(sums).Int(a.len).Int(parts).Int(a.rows).Int(pass);
      p.geometry = Grid(kRowGroup * parts, a.rows, 1);
      p.geometry.local = {static_cast<size_t>(kRowGroup), 1, 1};
      p.bytes = Bytes(a.x);
      p.flops = 2 * NumElements(a.x->shape);
      launches->push_back(std::move(p));
    }
    PendingLaunch l;
    l.kernel_name = "f32_norm_apply";
    l.args.Tensor(c.ref(a.x)).Tensor(sums);
    common(l.args);
    l.args.Int(a.len).Int(parts).Int(a.rows).Float(a.epsilon);
    tail(l.args);
    l.geometry = Grid(a.len, a.rows, 1);
    l.bytes = bytes;
    l.flops = 4 * NumElements(a.x->shape);
    launches->push_back(std::move(l));
    return;
  }
  PendingLaunch l;
  l.args.Tensor(c.ref(a.x));
  common(l.args);
  l.args.Int(a.len).Float(a.epsilon);
  tail(l.args);
  l.args.Int(a.rows);
  if (a.len >= kGroupReduceLen) {
    l.kernel_name = "f32_layer_norm_rows";
    l.geometry = Rows(a.rows);
  } else {
    l.kernel_name = "f32_layer_norm_rows_short";
    l.geometry = Grid(16, a.rows, 1);
    l.geometry.local = {16, 8, 1};
  }
  l.bytes = bytes;
  l.flops = 8 * NumElements(a.x->shape);
  launches->push_back(std::move(l));
}

Status LayerNorm(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  NormArgs a{.x = c.node.input(0),
             .scale = c.node.input(1),
             .bias = c.node.input(2),
             .y = c.node.output(0)};
  if (a.x->dtype != DType::kFloat32) return Unsupported(c.node, "normalizes float32 only");
  const int64_t r = static_cast<int64_t>(a.x->shape.size());
  int64_t axis = c.node.attrs.Int("axis", -1);
  if (axis < 0) axis += r;
  a.rows = Product(a.x->shape, 0, static_cast<size_t>(axis));
  a.len = Product(a.x->shape, static_cast<size_t>(axis), a.x->shape.size());
  if (NumElements(a.scale->shape) != a.len || (a.bias && NumElements(a.bias->shape) != a.len)) {
    return Unsupported(c.node, "takes scale and bias of the normalized shape only");
  }
  a.mean = c.node.output(1);
  a.inv_std = c.node.output(2);
  if ((a.mean != nullptr) != (a.inv_std != nullptr)) {
    return Unsupported(c.node, "produces Mean and InvStdDev together or not at all");
  }
  a.epsilon = c.node.attrs.Float("epsilon", 1e-5f);
  Normalize(c, a, launches);
  return Status::Ok();
}

// InstanceNormalization: the layer-norm kernels over each (n, c) plane,
// with one scale and bias per channel.
Status InstanceNorm(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  NormArgs a{.x = c.node.input(0),
             .scale = c.node.input(1),
             .bias = c.node.input(2),
             .y = c.node.output(0)};
  if (a.x->dtype != DType::kFloat32) return Unsupported(c.node, "normalizes float32 only");
  if (a.x->shape.size() < 3) return Unsupported(c.node, "normalizes (N, C, D...) tensors only");
  a.channels = a.x->shape[1];
  a.rows = a.x->shape[0] * a.channels;
  a.len = Product(a.x->shape, 2, a.x->shape.size());
  a.epsilon = c.node.attrs.Float("epsilon", 1e-5f);
  Normalize(c, a, launches);
  return Status::Ok();
}

Status BatchNorm(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  const ir::Value* x = c.node.input(0);
  const ir::Value* y = c.node.output(0);
  for (size_t i = 0; i < 5; ++i) {
    if (c.node.input(i)->dtype != DType::kFloat32)
      return Unsupported(c.node, "normalizes float32 only");
  }
  const int64_t n = NumElements(x->shape);
  const int64_t params = NumElements(c.node.input(1)->shape);
  const int64_t per_sample = Product(x->shape, 1, x->shape.size());
  if (n == 0 || params == 0) return Status::Ok();
  PendingLaunch l;
  l.kernel_name = "f32_batch_norm";
  l.args.Tensor(c.ref(x));
  for (size_t i = 1; i < 5; ++i) l.args.Tensor(c.ref(c.node.input(i)));
  l.args.Tensor(c.ref(y))
      .Int(n)
      .Int(per_sample / params)
      .Int(params)
      .Float(c.node.attrs.Float("epsilon", 1e-5f));
  l.geometry = Linear(n);
  l.bytes = Bytes(x) + Bytes(y);
  l.flops = 2 * n;
  launches->push_back(std::move(l));
  return Status::Ok();
}

Status Snippet(const NodeContext& c, std::vector<PendingLaunch>* launches) {
  PendingLaunch l;
  l.kernel_name = c.snippet_kernel;
  l.program = KernelProgram::kSnippets;
  int64_t n = 0;
  for (const ir::Value* v : c.snippet_inputs ? *c.snippet_inputs : c.node.inputs) {
    l.args.Tensor(c.ref(v));
    l.bytes += Bytes(v);
  }
  for (const ir::Value* v : c.node.outputs) {
    l.args.Tensor(c.ref(v));
    l.bytes += Bytes(v);
    n = std::max<int64_t>(n, NumElements(v->shape));
  }
  l.args.Int(n);
  l.geometry = Linear(n);
  l.flops = n * static_cast<int64_t>(c.node.body ? c.node.body->nodes().size() : 1);
  launches->push_back(std::move(l));
  return Status::Ok();
}

}  // namespace

namespace {

using LaunchBuilder = Status (*)(const NodeContext& c, std::vector<PendingLaunch>* out);

// The OpenCL kernels, by domain ("" for ONNX's) and op.
const std::map<std::pair<std::string, std::string>, LaunchBuilder>& KernelTable() {
  static const auto* table = new std::map<std::pair<std::string, std::string>, LaunchBuilder>{
      {{"tessel", "FusedConv"}, FusedConv},
      {{"tessel", "ChannelShuffle"}, Movement},
      {{"tessel", "FusedMatMul"}, FusedMatMul},
      {{"", "Conv"}, Conv},
      {{"", "Gemm"}, GemmOp},
      {{"", "MatMul"}, MatMul},
      {{"", "MaxPool"}, Pool},
      {{"", "AveragePool"}, Pool},
      {{"", "GlobalAveragePool"}, GlobalPool},
      {{"", "GlobalMaxPool"}, GlobalPool},
      {{"", "ReduceMean"}, ReduceOp},
      {{"", "ReduceSum"}, ReduceOp},
      {{"", "ReduceMax"}, ReduceOp},
      {{"", "ReduceMin"}, ReduceOp},
      {{"", "ReduceSumSquare"}, ReduceOp},
      {{"", "ReduceProd"}, ReduceOp},
      {{"", "ReduceL1"}, ReduceOp},
      {{"", "ReduceL2"}, ReduceOp},
      {{"", "ReduceLogSum"}, ReduceOp},
      {{"", "Softmax"}, Softmax},
      {{"", "LogSoftmax"}, Softmax},
      {{"tessel", "FusedAttention"}, FusedAttention},
      {{"tessel", "Rotary"}, Rotary},
      {{"", "LayerNormalization"}, LayerNorm},
      {{"", "InstanceNormalization"}, InstanceNorm},
      {{"", "BatchNormalization"}, BatchNorm},
      {{"", "Concat"}, Movement},
      {{"", "Split"}, Movement},
      {{"", "Transpose"}, Movement},
      {{"", "Slice"}, Movement},
      {{"", "Gather"}, Gather},
      {{"", "Expand"}, Movement},
      {{"", "GatherND"}, GatherND},
      {{"", "Cast"}, Cast},
      {{"", "Pad"}, Pad},
      {{"", "Resize"}, Resize},
      {{"", "Upsample"}, Resize},
      {{"", "LpPool"}, spatial_ops::PoolVolume},
      {{"", "MaxUnpool"}, spatial_ops::MaxUnpool},
      {{"", "ConvTranspose"}, spatial_ops::ConvTranspose},
      {{"", "NegativeLogLikelihoodLoss"}, spatial_ops::Loss},
      {{"", "SoftmaxCrossEntropyLoss"}, spatial_ops::Loss},
      {{"", "GridSample"}, spatial_ops::GridSample},
      {{"", "Col2Im"}, spatial_ops::Col2Im},
      {{"", "RoiAlign"}, spatial_ops::RoiAlign},
      {{"", "ArgMax"}, index_ops::ArgExtreme},
      {{"", "ArgMin"}, index_ops::ArgExtreme},
      {{"", "Hardmax"}, index_ops::Hardmax},
      {{"", "CumSum"}, index_ops::CumSum},
      {{"", "TopK"}, index_ops::TopK},
      {{"", "LpNormalization"}, index_ops::LpNormalization},
      {{"", "RMSNormalization"}, index_ops::RmsNormalization},
      {{"", "LRN"}, index_ops::Lrn},
      {{"", "ReduceLogSumExp"}, index_ops::ReduceLogSumExp},
      {{"", "Trilu"}, index_ops::Trilu},
      {{"", "EyeLike"}, index_ops::EyeLike},
      {{"", "Tile"}, index_ops::Tile},
      {{"", "DepthToSpace"}, index_ops::DepthToSpace},
      {{"", "SpaceToDepth"}, index_ops::SpaceToDepth},
      {{"", "Compress"}, index_ops::Compress},
      {{"", "ReverseSequence"}, index_ops::ReverseSequence},
      {{"", "GatherElements"}, index_ops::GatherElements},
      {{"", "OneHot"}, index_ops::OneHot},
      {{"", "ScatterElements"}, index_ops::ScatterElements},
      {{"", "Scatter"}, index_ops::ScatterElements},
      {{"", "ScatterND"}, index_ops::ScatterNd},
      {{"", "Einsum"}, index_ops::Einsum},
  };
  return *table;
}

}  // namespace

ResizeTables MakeResizeTables(const ops::AxisSampling& rows, const ops::AxisSampling& cols) {
  std::vector<int32_t> index;
  std::vector<float> weight;
  for (const ops::AxisSampling* a : {&rows, &cols}) {
    const size_t coords = a->outside.size();
    for (size_t x = 0; x < coords; ++x) {
      for (int k = 0; k < a->taps; ++k) {
        const size_t t = x * static_cast<size_t>(a->taps) + static_cast<size_t>(k);
        index.push_back(a->outside[x] ? -1 : static_cast<int32_t>(a->index[t]));
        weight.push_back(static_cast<float>(a->weight[t]));
      }
    }
  }
  auto bytes = [](const auto& v) {
    const auto* p = reinterpret_cast<const unsigned char*>(v.data());
    return std::vector<unsigned char>(p, p + v.size() * sizeof(v[0]));
  };
  return {.index = bytes(index), .weight = bytes(weight)};
}

std::vector<std::vector<int64_t>> HeldStrides(const ir::Graph& graph,
                                              const std::vector<bool>& in_buffer) {
  std::vector<std::vector<int64_t>> held(graph.values().size());
  const std::vector<std::vector<ir::Node*>> consumers = graph.Consumers();
  std::vector<bool> is_output(graph.values().size(), false);
  for (const ir::Value* v : graph.outputs()) is_output[static_cast<size_t>(v->id)] = true;
  const auto id = [](const ir::Value* v) { return static_cast<size_t>(v->id); };
  // A float32 Transpose between buffers, `between` one of its sides and
  // theirs alone (no graph output, one reader), neither side held yet.
  const auto transpose = [&](const ir::Node* t, const ir::Value* between) -> bool {
    if (!t || t->op_type != "Transpose" || !t->domain.empty() || !t->input(0) || !t->output(0) ||
        t->output(0)->dtype != DType::kFloat32) {
      return false;
    }
    const ir::Value* a = t->input(0);
    const ir::Value* b = t->output(0);
    return !is_output[id(between)] && consumers[id(between)].size() == 1 && in_buffer[id(a)] &&
           in_buffer[id(b)] && held[id(a)].empty() && held[id(b)].empty();
  };
  const auto perm = [](const ir::Node& t) {
    std::vector<int64_t> p = t.attrs.Ints("perm", {});
    if (p.empty()) {
      for (size_t i = t.input(0)->shape.size(); i-- > 0;) p.push_back(static_cast<int64_t>(i));
    }
    return p;
  };
  for (const auto& owned : graph.nodes()) {
    const ir::Node& n = *owned;
    if (n.domain != "tessel" || (n.op_type != "FusedAttention" && n.op_type != "Rotary")) continue;
    const size_t operands = n.op_type == "Rotary" ? 1 : 3;
    for (size_t k = 0; k < operands && k < n.inputs.size(); ++k) {
      const ir::Value* v = n.inputs[k];
      if (!v || std::count(n.inputs.begin(), n.inputs.end(), v) != 1 || !in_buffer[id(v)] ||
          !transpose(v->producer, v)) {
        continue;
      }
      held[id(v)] = ops::TransposedStrides(v->shape, perm(*v->producer), true);
    }
    const ir::Value* y = n.output(0);
    if (n.op_type == "FusedAttention" && y && in_buffer[id(y)] && consumers[id(y)].size() == 1 &&
        transpose(consumers[id(y)][0], y) && consumers[id(y)][0]->input(0) == y) {
      held[id(y)] = ops::TransposedStrides(y->shape, perm(*consumers[id(y)][0]), false);
    }
  }
  return held;
}

Status BuildNodeLaunches(const NodeContext& c, std::vector<PendingLaunch>* out) {
  if (c.node.op_type == "Subgraph" || !c.snippet_kernel.empty()) return Snippet(c, out);
  // A view moves no bytes (Dropout at inference neither, without its mask).
  if (ops::IsView(c.node) || (c.node.op_type == "Dropout" && !c.node.output(1))) {
    return Copy(c, out);
  }
  const std::string domain = c.node.domain == "ai.onnx" ? "" : c.node.domain;
  const auto& table = KernelTable();
  const auto it = table.find({domain, c.node.op_type});
  if (it != table.end()) return it->second(c, out);
  if (!domain.empty() && domain != "tessel") {
    return Unsupported(c.node, "has no kernel for domain '" + c.node.domain + "'");
  }
  return Unsupported(c.node, "has no kernel for it");
}

}  // namespace tessel::opencl
