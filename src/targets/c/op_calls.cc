#include "targets/c/op_calls.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "ops/attention.h"
#include "ops/fused_activation.h"
#include "ops/movement_plan.h"
#include "ops/nn_internal.h"
#include "ops/op_registry.h"
#include "ops/reduce_plan.h"
#include "ops/spatial_plan.h"
#include "snippets/c_emitter.h"
#include "snippets/canonicalize.h"
#include "snippets/lower.h"

namespace tessel::ctarget {

namespace {

Status NoKernel(const ir::Node& node, const std::string& why) {
  return Unsupported(node.Describe() + ": the C target " + why);
}

int64_t Product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) p *= s[i];
  return p;
}

int64_t Bytes(const ir::Value* v) { return v ? static_cast<int64_t>(v->size_bytes()) : 0; }

// A sliding window over NCHW, or over NCW as an image of height 1.
struct Window2D {
  int64_t h = 1, w = 1, oh = 1, ow = 1, kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t ph = 0, pw = 0, ph_end = 0, pw_end = 0;
};

// A `static const` parameter struct of a library kernel, field by field:
//   static const tessel_conv2d_t k3 = {.n = 1, .c = 3, ...};
class Params {
 public:
  // `part`: which of the node's structs, when it has several (k3, k3_1, ...).
  Params(const char* type, size_t node, size_t part = 0)
      : name_("k" + std::to_string(node) + (part ? "_" + std::to_string(part) : "")) {
    os_ << "static const " << type << " " << name_ << " = {";
  }
  Params& Int(const char* field, int64_t v) { return Field(field, std::to_string(v)); }
  Params& Float(const char* field, float v) { return Field(field, snippets::CFloatLiteral(v)); }
  // A window's geometry, as conv2d_t and pool2d_t name it (with its pads
  // after, `ends`, for pooling's divisor).
  Params& Window(const Window2D& g, bool ends) {
    Int("h", g.h).Int("w", g.w).Int("oh", g.oh).Int("ow", g.ow).Int("kh", g.kh).Int("kw", g.kw);
    Int("sh", g.sh).Int("sw", g.sw).Int("dh", g.dh).Int("dw", g.dw).Int("ph", g.ph).Int("pw", g.pw);
    return ends ? Int("ph_end", g.ph_end).Int("pw_end", g.pw_end) : *this;
  }
  // A C expression as it is (the name of a table).
  Params& Raw(const char* field, const std::string& expression) { return Field(field, expression); }
  Params& Ints(const char* field, const std::vector<int64_t>& v) {
    std::string list = "{";
    for (size_t i = 0; i < v.size(); ++i) list += (i ? ", " : "") + std::to_string(v[i]);
    return Field(field, list + "}");
  }
  // The definition, and the expression that points at it.
  std::string Definition() const { return os_.str() + "};\n"; }
  std::string Address() const { return "&" + name_; }

 private:
  Params& Field(const char* field, const std::string& value) {
    os_ << (first_ ? "" : ", ") << "." << field << " = " << value;
    first_ = false;
    return *this;
  }
  std::string name_;
  std::ostringstream os_;
  bool first_ = true;
};

std::string Call(const std::string& function, const std::vector<std::string>& args) {
  std::string s = "  " + function + "(";
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
  return s + ");\n";
}

const ir::Value* In(const CallContext& c, size_t i) { return c.node.input(i); }
const ir::Value* Out(const CallContext& c, size_t i = 0) { return c.node.output(i); }

Status RequireFloat(const CallContext& c, std::initializer_list<const ir::Value*> values) {
  for (const ir::Value* v : values) {
    if (v && v->dtype != DType::kFloat32) {
      return NoKernel(c.node, "computes float32 only, not " + std::string(DTypeName(v->dtype)) +
                                  " ('" + v->name + "')");
    }
  }
  return Status::Ok();
}

// ---------------------------------------------------------------- snippets

// A Subgraph node, or an elementwise node as a one-op snippet: a function of
// its own from the C-family emitter's C99 dialect.
StatusOr<NodeCall> Snippet(const CallContext& c) {
  std::unique_ptr<ir::Graph> single;
  std::vector<ir::Value*> single_inputs;
  if (c.node.op_type != "Subgraph") {
    TESSEL_ASSIGN_OR_RETURN(single, snippets::SingleOpBody(c.node, c.opset, &single_inputs));
  }
  StatusOr<snippets::KernelIR> ir = snippets::LowerSubgraph(single ? *single : *c.node.body);
  if (!ir.ok()) return NoKernel(c.node, "has no kernel for it (" + ir.status().message() + ")");
  NodeCall call{.kernel = "snippet"};
  const std::string name = "snippet_" + std::to_string(c.index);
  call.definitions = snippets::EmitC99Kernel(*ir, name);
  std::vector<std::string> args;
  for (const ir::Value* v : single ? single_inputs : c.node.inputs) {
    args.push_back(c.tensor(v));
    call.bytes += Bytes(v);
  }
  for (const ir::Value* v : c.node.outputs) {
    args.push_back(c.tensor(v));
    call.bytes += Bytes(v);
  }
  call.statements = Call(name, args);
  return call;
}

// ---------------------------------------------------------------- data movement

// A view (Reshape, Flatten, Squeeze, ...), Identity, Dropout without its
// mask: the same bytes, copied unless the plan put both at one address.
StatusOr<NodeCall> View(const CallContext& c) {
  NodeCall call{.kernel = "view"};
  const std::string x = c.tensor(In(c, 0)), y = c.tensor(Out(c));
  if (x != y && Bytes(Out(c)) > 0) {
    call.kernel = "copy";
    call.statements = "  memcpy(" + y + ", " + x + ", " + std::to_string(Bytes(Out(c))) + ");\n";
    call.bytes = 2 * Bytes(Out(c));
  }
  return call;
}

StatusOr<NodeCall> Movement(const CallContext& c) {
  StatusOr<std::vector<ops::StridedCopy>> copies = ops::PlanMovement(c.node, c.opset);
  if (!copies.ok()) return NoKernel(c.node, copies.status().message());
  NodeCall call{.kernel = "copy"};
  if (!copies->empty()) call.units = {"copy"};
  for (size_t k = 0; k < copies->size(); ++k) {
    const ops::StridedCopy& copy = (*copies)[k];
    const ir::Value* x = c.node.inputs[copy.input];
    const ir::Value* y = c.node.outputs[copy.output];
    if (!CType(y->dtype))
      return NoKernel(c.node, "does not move " + std::string(DTypeName(y->dtype)));
    Params p("tessel_copy_t", c.index, k);
    const auto list = [](const ops::Dims6& d) { return std::vector<int64_t>(d.begin(), d.end()); };
    p.Ints("dims", list(copy.dims))
        .Ints("xs", list(copy.x_strides))
        .Ints("ys", list(copy.y_strides))
        .Int("size", static_cast<int64_t>(DTypeSize(y->dtype)));
    call.definitions += p.Definition();
    call.statements +=
        Call("tessel_copy", {p.Address(), c.tensor(x) + " + " + std::to_string(copy.x_offset),
                             c.tensor(y) + " + " + std::to_string(copy.y_offset)});
    call.bytes += 2 * copy.elements() * static_cast<int64_t>(DTypeSize(y->dtype));
  }
  return call;
}

StatusOr<NodeCall> Gather(const CallContext& c) {
  const ir::Value* data = In(c, 0);
  const ir::Value* idx = In(c, 1);
  if (idx->dtype != DType::kInt64 && idx->dtype != DType::kInt32) {
    return NoKernel(c.node, "takes int32 or int64 indices only");
  }
  if (!CType(data->dtype)) {
    return NoKernel(c.node, "does not gather " + std::string(DTypeName(data->dtype)));
  }
  const auto r = static_cast<int64_t>(data->shape.size());
  int64_t axis = c.node.attrs.Int("axis", 0);
  if (axis < 0) axis += r;
  const auto a = static_cast<size_t>(axis);
  Params p("tessel_gather_t", c.index);
  p.Int("outer", Product(data->shape, 0, a))
      .Int("axis", data->shape[a])
      .Int("inner", Product(data->shape, a + 1, data->shape.size()))
      .Int("count", NumElements(idx->shape))
      .Int("size", static_cast<int64_t>(DTypeSize(data->dtype)))
      .Int("index64", idx->dtype == DType::kInt64 ? 1 : 0);
  NodeCall call{.kernel = "gather", .units = {"gather"}, .definitions = p.Definition()};
  call.statements = "  if (tessel_gather(" + p.Address() + ", " + c.tensor(data) + ", " +
                    c.tensor(idx) + ", " + c.tensor(Out(c)) + ")) return " +
                    std::to_string(kErrorIndex) + ";\n";
  call.bytes = 2 * Bytes(Out(c)) + Bytes(idx);
  return call;
}

// Cast between the C types: C's conversions, bool as "not zero".
StatusOr<NodeCall> Cast(const CallContext& c) {
  const ir::Value* x = In(c, 0);
  const ir::Value* y = Out(c);
  const char* to = CType(y->dtype);
  if (!CType(x->dtype) || !to) {
    return NoKernel(
        c.node, "does not cast " + std::string(DTypeName(x->dtype)) + " to " + DTypeName(y->dtype));
  }
  NodeCall call{.kernel = "cast"};
  const std::string n = std::to_string(NumElements(y->shape));
  const std::string from = "(" + c.tensor(x) + ")[i]";
  const std::string value = y->dtype == DType::kBool ? "(unsigned char)(" + from + " != 0)"
                                                     : "(" + std::string(to) + ")" + from;
  call.statements = "  {\n    long i;\n    for (i = 0; i < " + n + "; ++i) (" + c.tensor(y) +
                    ")[i] = " + value + ";\n  }\n";
  call.bytes = Bytes(x) + Bytes(y);
  return call;
}

// Pad, constant mode: the fill, then the input copied inside (negative pads
// crop).
StatusOr<NodeCall> Pad(const CallContext& c) {
  const ir::Value* x = In(c, 0);
  const ir::Value* y = Out(c);
  if (x->shape.size() > 6) return NoKernel(c.node, "pads at most 6 dims");
  TESSEL_ASSIGN_OR_RETURN(ops::PadPlan plan, ops::PlanPadNode(c.node, c.opset));
  if (plan.mode != ops::PadMode::kConstant) {
    return NoKernel(c.node, "pads in constant mode only");
  }
  if (x->dtype != DType::kFloat32) return NoKernel(c.node, "pads float32 only");
  float fill = 0;
  std::memcpy(&fill, plan.fill.data(), sizeof fill);
  const size_t r = x->shape.size();
  const ops::Dims6 xs = ops::Strides6(x->shape), ys = ops::Strides6(y->shape);
  ops::Dims6 dims{1, 1, 1, 1, 1, 1};
  int64_t x_off = 0, y_off = 0;
  for (size_t d = 0; d < r; ++d) {
    const int64_t b = plan.begin[d], in = x->shape[d], out = y->shape[d];
    const int64_t first = std::max<int64_t>(0, -b), last = std::min(in, out - b);
    dims[6 - r + d] = std::max<int64_t>(0, last - first);
    x_off += first * xs[6 - r + d];
    y_off += (first + b) * ys[6 - r + d];
  }
  NodeCall call{.kernel = "pad"};
  call.statements = "  {\n    long i;\n    for (i = 0; i < " +
                    std::to_string(NumElements(y->shape)) + "; ++i) " + c.tensor(y) +
                    "[i] = " + snippets::CFloatLiteral(fill) + ";\n  }\n";
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  if (n > 0) {
    Params p("tessel_copy_t", c.index);
    p.Ints("dims", {dims.begin(), dims.end()})
        .Ints("xs", {xs.begin(), xs.end()})
        .Ints("ys", {ys.begin(), ys.end()})
        .Int("size", 4);
    call.units = {"copy"};
    call.definitions = p.Definition();
    call.statements +=
        Call("tessel_copy", {p.Address(), c.tensor(x) + " + " + std::to_string(x_off),
                             c.tensor(y) + " + " + std::to_string(y_off)});
  }
  call.bytes = Bytes(x) + Bytes(y);
  return call;
}

// ---------------------------------------------------------------- compute

// kernels/activation.c's codes.
static_assert(static_cast<int>(ops::ActivationKind::kNone) == 0 &&
                  static_cast<int>(ops::ActivationKind::kRelu) == 1 &&
                  static_cast<int>(ops::ActivationKind::kClip) == 2 &&
                  static_cast<int>(ops::ActivationKind::kLeakyRelu) == 3 &&
                  static_cast<int>(ops::ActivationKind::kSigmoid) == 4 &&
                  static_cast<int>(ops::ActivationKind::kHardSigmoid) == 5 &&
                  static_cast<int>(ops::ActivationKind::kHardSwish) == 6 &&
                  static_cast<int>(ops::ActivationKind::kSwish) == 7,
              "kernels/activation.c numbers the activations so");

// `x` of rank 3 or 4 (else Unsupported, `what` saying what the node does),
// `y` the output, and the window as ops::ResolveWindow resolves it.
StatusOr<Window2D> ResolveWindow2D(const CallContext& c, const ir::Value* x, const ir::Value* y,
                                   const std::vector<int64_t>& kernel, bool ceil_mode,
                                   const char* what) {
  const size_t rank = x->shape.size();
  if (rank != 3 && rank != 4) {
    return NoKernel(c.node, std::string(what) + " 1D and 2D (NCW, NCHW) only");
  }
  const Shape in_spatial(x->shape.begin() + 2, x->shape.end());
  std::vector<int64_t> strides, dilations, pads;
  Shape out_spatial;
  TESSEL_RETURN_IF_ERROR(ops::ResolveWindow(c.node, in_spatial, kernel, ceil_mode, &strides,
                                            &dilations, &pads, &out_spatial));
  Window2D g;
  const size_t n = rank - 2;  // pads: every begin, then every end
  g.w = x->shape[rank - 1];
  g.ow = y->shape[rank - 1];
  g.kw = kernel[n - 1];
  g.sw = strides[n - 1];
  g.dw = dilations[n - 1];
  g.pw = pads[n - 1];
  g.pw_end = pads[2 * n - 1];
  if (n == 2) {
    g.h = x->shape[2];
    g.oh = y->shape[2];
    g.kh = kernel[0];
    g.sh = strides[0];
    g.dh = dilations[0];
    g.ph = pads[0];
    g.ph_end = pads[2];
  }
  return g;
}

StatusOr<NodeCall> Conv(const CallContext& c) {
  const ir::Value* x = In(c, 0);
  const ir::Value* w = In(c, 1);
  const ir::Value* b = In(c, 2);
  const ir::Value* z = c.node.op_type == "FusedConv" ? In(c, 3) : nullptr;
  const ir::Value* y = Out(c);
  TESSEL_RETURN_IF_ERROR(RequireFloat(c, {x, w, b, z, y}));
  const std::vector<int64_t> kernel(w->shape.begin() + 2, w->shape.end());
  TESSEL_ASSIGN_OR_RETURN(const Window2D g,
                          ResolveWindow2D(c, x, y, kernel, /*ceil_mode=*/false, "convolves"));
  ops::FusedActivation act;
  if (c.node.op_type == "FusedConv") {
    TESSEL_ASSIGN_OR_RETURN(act, ops::ParseFusedActivation(c.node));
  }
  const int64_t group = c.node.attrs.Int("group", 1);
  Params p("tessel_conv2d_t", c.index);
  p.Int("n", x->shape[0])
      .Int("c", x->shape[1])
      .Int("oc", y->shape[1])
      .Window(g, /*ends=*/false)
      .Int("group", group)
      .Int("activation", static_cast<int>(act.kind))
      .Float("alpha", act.alpha)
      .Float("beta", act.beta);
  NodeCall call{
      .kernel = "conv2d", .units = {"activation", "conv2d"}, .definitions = p.Definition()};
  call.statements = Call("tessel_conv2d", {p.Address(), c.tensor(x), c.tensor(w), c.tensor(b),
                                           c.tensor(z), c.tensor(y)});
  call.macs = NumElements(y->shape) * (x->shape[1] / group) * g.kh * g.kw;
  call.bytes = Bytes(x) + Bytes(w) + Bytes(b) + Bytes(z) + Bytes(y);
  return call;
}

StatusOr<NodeCall> Gemm(const CallContext& c) {
  const ir::Value* a = In(c, 0);
  const ir::Value* b = In(c, 1);
  const ir::Value* cc = In(c, 2);
  const ir::Value* y = Out(c);
  TESSEL_RETURN_IF_ERROR(RequireFloat(c, {a, b, cc, y}));
  const int64_t trans_a = c.node.attrs.Int("transA", 0), trans_b = c.node.attrs.Int("transB", 0);
  const int64_t m = y->shape[0], n = y->shape[1];
  const int64_t k = trans_a ? a->shape[0] : a->shape[1];
  // C broadcast to [m, n] (unidirectionally): stride 0 along an axis of 1.
  int64_t row = 0, col = 0;
  if (cc) {
    const Shape& s = cc->shape;
    const int64_t rows = s.size() == 2 ? s[0] : 1, cols = s.empty() ? 1 : s.back();
    col = cols == 1 ? 0 : 1;
    row = rows == 1 ? 0 : cols;
  }
  Params p("tessel_gemm_t", c.index);
  p.Int("m", m)
      .Int("n", n)
      .Int("k", k)
      .Int("trans_a", trans_a)
      .Int("trans_b", trans_b)
      .Float("alpha", c.node.attrs.Float("alpha", 1.0f))
      .Float("beta", c.node.attrs.Float("beta", 1.0f))
      .Int("c_row_stride", row)
      .Int("c_col_stride", col);
  NodeCall call{.kernel = "gemm", .units = {"gemm"}, .definitions = p.Definition()};
  call.statements =
      Call("tessel_gemm", {p.Address(), c.tensor(a), c.tensor(b), c.tensor(cc), c.tensor(y)});
  call.macs = m * n * k;
  call.bytes = Bytes(a) + Bytes(b) + Bytes(cc) + Bytes(y);
  return call;
}

// MatMul over broadcast batch dims, and FusedMatMul (B a matrix, a bias
// along the last axis, an optional residual of the output's shape).
StatusOr<NodeCall> MatMul(const CallContext& c) {
  const ir::Value* a = In(c, 0);
  const ir::Value* b = In(c, 1);
  const bool fused = c.node.op_type == "FusedMatMul";
  const ir::Value* bias = fused ? In(c, 2) : nullptr;
  const ir::Value* z = fused ? In(c, 3) : nullptr;
  const ir::Value* y = Out(c);
  TESSEL_RETURN_IF_ERROR(RequireFloat(c, {a, b, bias, z, y}));
  // Vectors become matrices: A [K] is [1, K], B [K] is [K, 1].
  Shape sa = a->shape, sb = b->shape;
  if (sa.size() == 1) sa.insert(sa.begin(), 1);
  if (sb.size() == 1) sb.push_back(1);
  const int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  const Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  const size_t rank = std::max(ba.size(), bb.size());
  if (rank > 4) return NoKernel(c.node, "multiplies over at most 4 batch dims");
  std::vector<int64_t> batch(rank), as(rank, 0), bs(rank, 0);
  int64_t a_stride = m * k, b_stride = k * n;
  for (size_t i = rank; i-- > 0;) {
    const size_t from_end = rank - 1 - i;
    const int64_t da = from_end < ba.size() ? ba[ba.size() - 1 - from_end] : 1;
    const int64_t db = from_end < bb.size() ? bb[bb.size() - 1 - from_end] : 1;
    batch[i] = std::max(da, db);
    as[i] = da == 1 ? 0 : a_stride;
    bs[i] = db == 1 ? 0 : b_stride;
    a_stride *= da;
    b_stride *= db;
  }
  while (batch.size() < 4) {
    batch.push_back(1);
    as.push_back(0);
    bs.push_back(0);
  }
  Params p("tessel_matmul_t", c.index);
  p.Int("m", m)
      .Int("n", n)
      .Int("k", k)
      .Int("batch_rank", static_cast<int64_t>(rank))
      .Ints("batch", batch)
      .Ints("a_stride", as)
      .Ints("b_stride", bs);
  NodeCall call{.kernel = "matmul", .units = {"matmul"}, .definitions = p.Definition()};
  call.statements = Call("tessel_matmul", {p.Address(), c.tensor(a), c.tensor(b), c.tensor(bias),
                                           c.tensor(z), c.tensor(y)});
  call.macs = NumElements(y->shape) * k;
  call.bytes = Bytes(a) + Bytes(b) + Bytes(bias) + Bytes(z) + Bytes(y);
  return call;
}

StatusOr<NodeCall> Pool(const CallContext& c) {
  const ir::Value* x = In(c, 0);
  const ir::Value* y = Out(c);
  TESSEL_RETURN_IF_ERROR(RequireFloat(c, {x, y}));
  if (c.node.output(1)) return NoKernel(c.node, "does not produce MaxPool's Indices");
  TESSEL_ASSIGN_OR_RETURN(const Window2D g,
                          ResolveWindow2D(c, x, y, c.node.attrs.Ints("kernel_shape"),
                                          c.node.attrs.Int("ceil_mode", 0) != 0, "pools"));
  Params p("tessel_pool2d_t", c.index);
  p.Int("planes", x->shape[0] * x->shape[1])
      .Window(g, /*ends=*/true)
      .Int("max", c.node.op_type == "MaxPool" ? 1 : 0)
      .Int("count_include_pad", c.node.attrs.Int("count_include_pad", 0));
  NodeCall call{.kernel = "pool2d", .units = {"pool2d"}, .definitions = p.Definition()};
  call.statements = Call("tessel_pool2d", {p.Address(), c.tensor(x), c.tensor(y)});
  call.bytes = Bytes(x) + Bytes(y);
  return call;
}

NodeCall ReduceCall(const CallContext& c, int64_t outer, int64_t r, int64_t inner, int kind) {
  Params p("tessel_reduce_t", c.index);
  p.Int("outer", outer).Int("r", r).Int("inner", inner).Int("kind", kind);
  NodeCall call{.kernel = "reduce", .units = {"reduce"}, .definitions = p.Definition()};
  call.statements = Call("tessel_reduce", {p.Address(), c.tensor(In(c, 0)), c.tensor(Out(c))});
  call.bytes = Bytes(In(c, 0)) + Bytes(Out(c));
  return call;
}

StatusOr<NodeCall> GlobalPool(const CallContext& c) {
  const ir::Value* x = In(c, 0);
  TESSEL_RETURN_IF_ERROR(RequireFloat(c, {x, Out(c)}));
  if (x->shape.size() < 2) return NoKernel(c.node, "pools inputs of rank 2 or more only");
  return ReduceCall(c, x->shape[0] * x->shape[1], Product(x->shape, 2, x->shape.size()), 1,
                    c.node.op_type == "GlobalMaxPool" ? 2 : 1);
}

StatusOr<NodeCall> Reduce(const CallContext& c) {
  const ir::Value* x = In(c, 0);
  TESSEL_RETURN_IF_ERROR(RequireFloat(c, {x, Out(c)}));
  // The kinds of kernels/reduce.c.
  static const std::map<std::string, int> kinds = {
      {"ReduceSum", 0},       {"ReduceMean", 1},     {"ReduceMax", 2}, {"ReduceMin", 3},
      {"ReduceSumSquare", 4}, {"ReduceProd", 5},     {"ReduceL1", 6},  {"ReduceL2", 7},
      {"ReduceLogSum", 8},    {"ReduceLogSumExp", 9}};
  TESSEL_ASSIGN_OR_RETURN(const ops::ReducedAxes axes, ops::PlanReducedAxes(c.node, c.opset));
  if (axes.identity) {
    return View(c);
  }
  // The reduced axes must be adjacent (after dropping axes of 1).
  size_t first = x->shape.size(), last = 0;
  for (size_t d = 0; d < x->shape.size(); ++d) {
    if (!axes.reduced[d] || x->shape[d] == 1) continue;
    first = std::min(first, d);
    last = d;
  }
  if (first == x->shape.size())
    return ReduceCall(c, NumElements(x->shape), 1, 1, kinds.at(c.node.op_type));
  for (size_t d = first; d <= last; ++d) {
    if (!axes.reduced[d] && x->shape[d] != 1) {
      return NoKernel(c.node, "reduces adjacent axes only");
    }
  }
  return ReduceCall(c, Product(x->shape, 0, first), Product(x->shape, first, last + 1),
                    Product(x->shape, last + 1, x->shape.size()), kinds.at(c.node.op_type));
}

// Resize and Upsample over the last two axes (or the last of three), the
// others kept, with the sampling tabulated as static arrays.
StatusOr<NodeCall> Resize(const CallContext& c) {
  const ir::Value* x = In(c, 0);
  const ir::Value* y = Out(c);
  TESSEL_RETURN_IF_ERROR(RequireFloat(c, {x, y}));
  TESSEL_ASSIGN_OR_RETURN(const ops::ResizeSampling s, ops::PlanResizeNode(c.node, c.opset));
  const size_t rank = x->shape.size();
  if (rank < 2 || rank > 4) return NoKernel(c.node, "resizes tensors of rank 2 to 4 only");
  for (size_t d = 0; d + 2 < rank; ++d) {
    if (!s.axes[d].identity) return NoKernel(c.node, "resizes the last two axes only");
  }
  const std::string k = "k" + std::to_string(c.index);
  std::string tables;
  // One axis's taps: `name`_i (indices) and `name`_w (weights), and the
  // count of taps per output coordinate.
  const auto table = [&](size_t d, const std::string& name) -> StatusOr<int> {
    const ops::AxisSampling& a = s.axes[d];
    const int64_t out = y->shape[d];
    const int taps = a.identity ? 1 : a.taps;
    std::string index = "static const long " + name + "_i[" + std::to_string(out * taps) + "] = {";
    std::string weight =
        "static const float " + name + "_w[" + std::to_string(out * taps) + "] = {";
    for (int64_t o = 0; o < out; ++o) {
      if (!a.identity && a.outside[static_cast<size_t>(o)]) {
        return NoKernel(c.node, "does not extrapolate (tf_crop_and_resize outside the input)");
      }
      for (int t = 0; t < taps; ++t) {
        const size_t at = static_cast<size_t>(o * taps + t);
        const bool first = o == 0 && t == 0;
        index += (first ? "" : ", ") + std::to_string(a.identity ? o : a.index[at]);
        weight += (first ? "" : ", ") +
                  snippets::CFloatLiteral(a.identity ? 1.0f : static_cast<float>(a.weight[at]));
      }
    }
    tables += index + "};\n" + weight + "};\n";
    return taps;
  };
  TESSEL_ASSIGN_OR_RETURN(const int tx, table(rank - 1, k + "_x"));
  TESSEL_ASSIGN_OR_RETURN(const int ty, table(rank - 2, k + "_y"));
  Params p("tessel_resize2d_t", c.index);
  p.Int("planes", Product(x->shape, 0, rank - 2))
      .Int("h", x->shape[rank - 2])
      .Int("w", x->shape[rank - 1])
      .Int("oh", y->shape[rank - 2])
      .Int("ow", y->shape[rank - 1])
      .Int("ty", ty)
      .Int("tx", tx)
      .Raw("iy", k + "_y_i")
      .Raw("wy", k + "_y_w")
      .Raw("ix", k + "_x_i")
      .Raw("wx", k + "_x_w");
  NodeCall call{
      .kernel = "resize2d", .units = {"resize2d"}, .definitions = tables + p.Definition()};
  call.statements = Call("tessel_resize2d", {p.Address(), c.tensor(x), c.tensor(y)});
  call.bytes = Bytes(x) + Bytes(y);
  return call;
}

// ArgMax and ArgMin: int64 indices along one axis.
StatusOr<NodeCall> ArgExtreme(const CallContext& c) {
  const ir::Value* x = In(c, 0);
  TESSEL_RETURN_IF_ERROR(RequireFloat(c, {x}));
  const auto r = static_cast<int64_t>(x->shape.size());
  int64_t axis = c.node.attrs.Int("axis", 0);
  if (axis < 0) axis += r;
  const auto a = static_cast<size_t>(axis);
  Params p("tessel_arg_extreme_t", c.index);
  p.Int("outer", Product(x->shape, 0, a))
      .Int("r", x->shape[a])
      .Int("inner", Product(x->shape, a + 1, x->shape.size()))
      .Int("max", c.node.op_type == "ArgMax" ? 1 : 0)
      .Int("last", c.node.attrs.Int("select_last_index", 0) != 0 ? 1 : 0);
  NodeCall call{.kernel = "arg_extreme", .units = {"arg_extreme"}, .definitions = p.Definition()};
  call.statements = Call("tessel_arg_extreme", {p.Address(), c.tensor(x), c.tensor(Out(c))});
  call.bytes = Bytes(x) + Bytes(Out(c));
  return call;
}

StatusOr<NodeCall> Softmax(const CallContext& c) {
  const ir::Value* x = In(c, 0);
  TESSEL_RETURN_IF_ERROR(RequireFloat(c, {x, Out(c)}));
  const auto r = static_cast<int64_t>(x->shape.size());
  int64_t axis = c.node.attrs.Int("axis", c.opset < 13 ? 1 : -1);
  if (axis < 0) axis += r;
  const auto a = static_cast<size_t>(axis);
  // Before opset 13 the input is coerced to 2D at axis.
  const int64_t outer = Product(x->shape, 0, a);
  const int64_t len = c.opset < 13 ? Product(x->shape, a, x->shape.size()) : x->shape[a];
  const int64_t inner = c.opset < 13 ? 1 : Product(x->shape, a + 1, x->shape.size());
  Params p("tessel_softmax_t", c.index);
  p.Int("outer", outer)
      .Int("r", len)
      .Int("inner", inner)
      .Int("log", c.node.op_type == "LogSoftmax");
  NodeCall call{.kernel = "softmax", .units = {"softmax"}, .definitions = p.Definition()};
  call.statements = Call("tessel_softmax", {p.Address(), c.tensor(x), c.tensor(Out(c))});
  call.bytes = Bytes(x) + Bytes(Out(c));
  return call;
}

// tessel's FusedAttention (passes/fuse_attention): one row of queries at a
// time, an online softmax over the keys.
StatusOr<NodeCall> FusedAttention(const CallContext& c) {
  const ir::Value* q = In(c, 0);
  const ir::Value* k = In(c, 1);
  const ir::Value* v = In(c, 2);
  const ir::Value* bias = In(c, 3);
  const ir::Value* y = Out(c);
  TESSEL_RETURN_IF_ERROR(RequireFloat(c, {q, k, v, bias, y}));
  TESSEL_ASSIGN_OR_RETURN(const ops::FusedAttentionDims d, ops::FusedAttentionShapes(c.node));
  Params p("tessel_attention_t", c.index);
  p.Int("batch", d.batch)
      .Int("q_heads", d.q_heads)
      .Int("reps", d.q_heads / d.kv_heads)
      .Int("q_len", d.q_len)
      .Int("kv_len", d.kv_len)
      .Int("d", d.head)
      .Int("dv", d.v_head)
      .Ints("bs", std::vector<int64_t>(d.bias_strides.begin(), d.bias_strides.end()))
      .Float("scale", c.node.attrs.Float("scale", 1.0f))
      .Int("zero_masked", c.node.attrs.Int("zero_masked_rows", 0));
  NodeCall call{.kernel = "attention", .units = {"attention"}, .definitions = p.Definition()};
  call.statements = Call("tessel_attention", {p.Address(), c.tensor(q), c.tensor(k), c.tensor(v),
                                              c.tensor(bias), c.tensor(y)});
  call.macs = d.batch * d.q_heads * d.q_len * d.kv_len * (d.head + d.v_head);
  call.bytes = Bytes(q) + Bytes(k) + Bytes(v) + Bytes(bias) + Bytes(y);
  return call;
}

// tessel's Rotary (passes/fuse_rotary): a row of features at a time.
StatusOr<NodeCall> Rotary(const CallContext& c) {
  const ir::Value* x = In(c, 0);
  const ir::Value* y = Out(c);
  TESSEL_RETURN_IF_ERROR(RequireFloat(c, {x, In(c, 1), In(c, 2), y}));
  if (x->shape.size() > 4) return NoKernel(c.node, "embeds at most 4 axes");
  TESSEL_ASSIGN_OR_RETURN(const ops::FusedRotaryDims d, ops::FusedRotaryShapes(c.node));
  const Shape x4 = ops::Pad4(x->shape);
  const std::array<int64_t, 4> cs = ops::BroadcastStrides4(In(c, 1)->shape);
  const std::array<int64_t, 4> ss = ops::BroadcastStrides4(In(c, 2)->shape);
  Params p("tessel_rotary_t", c.index);
  p.Int("d0", x4[0])
      .Int("d1", x4[1])
      .Int("d2", x4[2])
      .Int("width", d.width)
      .Int("rotary", d.rotary)
      .Ints("cs", {cs[0], cs[1], cs[2]})
      .Ints("ss", {ss[0], ss[1], ss[2]})
      .Int("interleaved", c.node.attrs.Int("interleaved", 0));
  NodeCall call{.kernel = "rotary", .units = {"rotary"}, .definitions = p.Definition()};
  call.statements = Call("tessel_rotary", {p.Address(), c.tensor(x), c.tensor(In(c, 1)),
                                           c.tensor(In(c, 2)), c.tensor(y)});
  call.bytes = 2 * Bytes(x) + Bytes(In(c, 1)) + Bytes(In(c, 2));
  return call;
}

StatusOr<NodeCall> LayerNorm(const CallContext& c) {
  const ir::Value* x = In(c, 0);
  const ir::Value* scale = In(c, 1);
  const ir::Value* bias = In(c, 2);
  TESSEL_RETURN_IF_ERROR(RequireFloat(c, {x, scale, bias, Out(c), Out(c, 1), Out(c, 2)}));
  const auto r = static_cast<int64_t>(x->shape.size());
  int64_t axis = c.node.attrs.Int("axis", -1);
  if (axis < 0) axis += r;
  const auto a = static_cast<size_t>(axis);
  const int64_t size = Product(x->shape, a, x->shape.size());
  if (NumElements(scale->shape) != size || (bias && NumElements(bias->shape) != size)) {
    return NoKernel(c.node, "needs a scale and bias of the normalized shape");
  }
  Params p("tessel_layer_norm_t", c.index);
  p.Int("outer", Product(x->shape, 0, a))
      .Int("size", size)
      .Float("epsilon", c.node.attrs.Float("epsilon", 1e-5f));
  NodeCall call{.kernel = "layer_norm", .units = {"layer_norm"}, .definitions = p.Definition()};
  call.statements =
      Call("tessel_layer_norm", {p.Address(), c.tensor(x), c.tensor(scale), c.tensor(bias),
                                 c.tensor(Out(c)), c.tensor(Out(c, 1)), c.tensor(Out(c, 2))});
  call.bytes = 2 * Bytes(x) + Bytes(scale) + Bytes(bias);
  return call;
}

StatusOr<NodeCall> BatchNorm(const CallContext& c) {
  const ir::Value* x = In(c, 0);
  TESSEL_RETURN_IF_ERROR(RequireFloat(c, {x, In(c, 1), In(c, 2), In(c, 3), In(c, 4), Out(c)}));
  if (c.node.outputs.size() > 1 && (c.node.output(1) || c.node.output(2))) {
    return NoKernel(c.node, "normalizes at inference only (no running statistics)");
  }
  if (x->shape.size() < 2) return NoKernel(c.node, "normalizes inputs of rank 2 or more only");
  // Per channel; before opset 9 with spatial=0, per element of a sample
  // (the parameters then have the shape of x without its batch axis).
  const int64_t channels = NumElements(In(c, 1)->shape);
  const int64_t sample = Product(x->shape, 1, x->shape.size());
  if (channels == 0 || sample % channels != 0) {
    return NoKernel(c.node, "needs parameters that tile a sample");
  }
  Params p("tessel_batch_norm_t", c.index);
  p.Int("n", x->shape[0])
      .Int("c", channels)
      .Int("plane", sample / channels)
      .Float("epsilon", c.node.attrs.Float("epsilon", 1e-5f));
  NodeCall call{.kernel = "batch_norm", .units = {"batch_norm"}, .definitions = p.Definition()};
  call.statements =
      Call("tessel_batch_norm", {p.Address(), c.tensor(x), c.tensor(In(c, 1)), c.tensor(In(c, 2)),
                                 c.tensor(In(c, 3)), c.tensor(In(c, 4)), c.tensor(Out(c))});
  call.bytes = 2 * Bytes(x);
  return call;
}

using Builder = StatusOr<NodeCall> (*)(const CallContext&);

// The kernels, by domain ("" for ONNX's) and op.
const std::map<std::pair<std::string, std::string>, Builder>& Table() {
  static const auto* table = new std::map<std::pair<std::string, std::string>, Builder>{
      {{"tessel", "FusedConv"}, Conv},
      {{"tessel", "FusedMatMul"}, MatMul},
      {{"", "Conv"}, Conv},
      {{"", "Gemm"}, Gemm},
      {{"", "MatMul"}, MatMul},
      {{"", "MaxPool"}, Pool},
      {{"", "AveragePool"}, Pool},
      {{"", "GlobalAveragePool"}, GlobalPool},
      {{"", "GlobalMaxPool"}, GlobalPool},
      {{"", "ReduceMean"}, Reduce},
      {{"", "ReduceSum"}, Reduce},
      {{"", "ReduceMax"}, Reduce},
      {{"", "ReduceMin"}, Reduce},
      {{"", "ReduceSumSquare"}, Reduce},
      {{"", "ReduceProd"}, Reduce},
      {{"", "ReduceL1"}, Reduce},
      {{"", "ReduceL2"}, Reduce},
      {{"", "ReduceLogSum"}, Reduce},
      {{"", "ReduceLogSumExp"}, Reduce},
      {{"", "ArgMax"}, ArgExtreme},
      {{"", "Resize"}, Resize},
      {{"", "Upsample"}, Resize},
      {{"", "ArgMin"}, ArgExtreme},
      {{"", "Softmax"}, Softmax},
      {{"", "LogSoftmax"}, Softmax},
      {{"tessel", "FusedAttention"}, FusedAttention},
      {{"tessel", "Rotary"}, Rotary},
      {{"", "LayerNormalization"}, LayerNorm},
      {{"", "BatchNormalization"}, BatchNorm},
      {{"", "Gather"}, Gather},
      {{"", "Cast"}, Cast},
      {{"", "Pad"}, Pad},
  };
  return *table;
}

}  // namespace

const char* CType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float";
    case DType::kFloat64:
      return "double";
    case DType::kInt64:
      return "int64_t";
    case DType::kInt32:
      return "int32_t";
    case DType::kInt16:
      return "int16_t";
    case DType::kInt8:
      return "int8_t";
    case DType::kUInt8:
      return "uint8_t";
    case DType::kBool:
      return "unsigned char";
    default:
      return nullptr;
  }
}

StatusOr<NodeCall> BuildCall(const CallContext& c) {
  const ir::Node& node = c.node;
  for (const ir::Value* v : node.outputs) {
    if (v && !CType(v->dtype)) {
      return NoKernel(
          node, "has no C type for " + std::string(DTypeName(v->dtype)) + " ('" + v->name + "')");
    }
  }
  if (node.op_type == "Subgraph" || snippets::IsFusable(node, c.opset)) return Snippet(c);
  if (ops::IsView(node) || node.op_type == "Identity" ||
      (node.op_type == "Dropout" && !node.output(1))) {
    return View(c);
  }
  if (ops::IsMovement(node)) return Movement(c);
  const std::string domain = node.domain == "ai.onnx" ? "" : node.domain;
  const auto it = Table().find({domain, node.op_type});
  if (it != Table().end()) return it->second(c);
  return NoKernel(node, "has no kernel for it");
}

}  // namespace tessel::ctarget
