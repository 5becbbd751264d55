// Matrix products: Gemm, MatMul and Einsum.
//
// Gemm and MatMul accumulate in float for float32 and the 16-bit floats (as
// ONNX runtimes do), in double for float64, and in uint64 for the integers so
// that overflow wraps like the two's-complement hardware the models target
// instead of being undefined behaviour. Einsum is a plain loop over every
// index combination and accumulates in double (uint64 for integers).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/einsum_plan.h"
#include "ops/op_registry.h"
#include "ops/op_util.h"

namespace tessel::ops {
namespace {

constexpr int kMaxEinsumInputs = 64;

template <typename T>
struct ProductTypeOf {
  using type = T;
};
template <>
struct ProductTypeOf<Half> {
  using type = float;
};
template <>
struct ProductTypeOf<BFloat16> {
  using type = float;
};
template <>
struct ProductTypeOf<int32_t> {
  using type = uint64_t;
};
template <>
struct ProductTypeOf<int64_t> {
  using type = uint64_t;
};
template <typename T>
using ProductType = typename ProductTypeOf<T>::type;

template <typename T>
ProductType<T> Widen(T v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    return v;
  } else {
    return static_cast<float>(ToDouble(v));
  }
}

template <typename T>
T Narrow(ProductType<T> v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<int64_t>(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    return v;
  } else {
    return FromDouble<T>(v);
  }
}

template <typename T>
std::vector<ProductType<T>> WidenAll(const T* p, int64_t n) {
  std::vector<ProductType<T>> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[i] = Widen(p[i]);
  return out;
}

// Calls f(T{}) for the element types the product kernels handle; infer has
// already rejected the others.
template <typename F>
Status DispatchProductType(const ir::Node& node, DType t, F&& f) {
  switch (t) {
    case DType::kFloat32:
      return f(float{});
    case DType::kFloat16:
      return f(Half{});
    case DType::kBFloat16:
      return f(BFloat16{});
    case DType::kFloat64:
      return f(double{});
    case DType::kInt32:
      return f(int32_t{});
    case DType::kInt64:
      return f(int64_t{});
    default:
      break;
  }
  return Internal(node.Describe() + ": no kernel for dtype " + DTypeName(t));
}

// c[0, n) += alpha * b[0, n). GCC's -O2 cost model vectorizes a loop only
// when it needs no runtime alias check (hence __restrict__; the rows never
// overlap) and its trip count is a known multiple of the vector width (hence
// the fixed-size blocks).
template <typename C>
void AxpyRow(C alpha, const C* __restrict__ b, C* __restrict__ c, int64_t n) {
  constexpr int64_t kBlock = 16;
  int64_t j = 0;
  for (; j + kBlock <= n; j += kBlock) {
    for (int64_t u = 0; u < kBlock; ++u) c[j + u] += alpha * b[j + u];
  }
  for (; j < n; ++j) c[j] += alpha * b[j];
}

// c[m x n] += a[m x k] * b[k x n], all dense row-major. The i-k-j order keeps
// the inner loop contiguous in b and c.
template <typename C>
void AccumulateProduct(const C* a, const C* b, C* c, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p < k; ++p) AxpyRow(a[i * k + p], b + p * n, c + i * n, n);
  }
}

// ---------------------------------------------------------------------------
// MatMul

struct MatMulPlan {
  int64_t m = 0, k = 0, n = 0;
  Shape batch;                     // broadcast leading dimensions
  std::vector<int64_t> a_strides;  // per batch dimension, in matrices of a
  std::vector<int64_t> b_strides;  // per batch dimension, in matrices of b
  Shape out_shape;
};

StatusOr<MatMulPlan> PlanMatMul(const ir::Node& node, const Shape& a, const Shape& b) {
  const std::string shapes = ShapeToString(a) + " @ " + ShapeToString(b);
  if (a.empty() || b.empty()) {
    return InvalidArgument(node.Describe() + ": inputs must have rank >= 1: " + shapes);
  }
  // numpy: a 1-D left operand is a row vector, a 1-D right operand a column;
  // the inserted dimension is removed from the result again.
  Shape pa = a, pb = b;
  if (pa.size() == 1) pa.insert(pa.begin(), 1);
  if (pb.size() == 1) pb.push_back(1);
  MatMulPlan p;
  p.m = pa[pa.size() - 2];
  p.k = pa.back();
  p.n = pb.back();
  if (pb[pb.size() - 2] != p.k) {
    return InvalidArgument(node.Describe() + ": inner dimensions differ: " + shapes);
  }
  const Shape a_batch(pa.begin(), pa.end() - 2), b_batch(pb.begin(), pb.end() - 2);
  StatusOr<Shape> batch = BroadcastShapes(node, {a_batch, b_batch});
  if (!batch.ok()) {
    return InvalidArgument(node.Describe() + ": batch dimensions do not broadcast: " + shapes);
  }
  p.batch = std::move(batch).value();
  p.a_strides = BroadcastStrides(a_batch, p.batch);
  p.b_strides = BroadcastStrides(b_batch, p.batch);
  p.out_shape = p.batch;
  if (a.size() > 1) p.out_shape.push_back(p.m);
  if (b.size() > 1) p.out_shape.push_back(p.n);
  return p;
}

Status InferMatMul(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0,
                                      {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                                       DType::kFloat64, DType::kInt32, DType::kInt64}));
  TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, 1}));
  TESSEL_ASSIGN_OR_RETURN(MatMulPlan p,
                          PlanMatMul(node, node.input(0)->shape, node.input(1)->shape));
  SetOutput(node, 0, node.input(0)->dtype, p.out_shape);
  return Status::Ok();
}

template <typename T>
Status RunMatMulTyped(KernelContext& ctx, const MatMulPlan& p) {
  using C = ProductType<T>;
  const T* a = ctx.in(0).data<T>();
  const T* b = ctx.in(1).data<T>();
  T* out = ctx.out(0).data<T>();
  std::vector<C> wa, wb, wc;
  const C* ca;
  const C* cb;
  C* cc;
  if constexpr (std::is_same_v<T, C>) {
    ca = a;
    cb = b;
    cc = out;
  } else {
    wa = WidenAll(a, ctx.in(0).num_elements());
    wb = WidenAll(b, ctx.in(1).num_elements());
    wc.assign(static_cast<size_t>(ctx.out(0).num_elements()), C{0});
    ca = wa.data();
    cb = wb.data();
    cc = wc.data();
  }
  const int64_t a_size = p.m * p.k, b_size = p.k * p.n, c_size = p.m * p.n;
  const int64_t batches = NumElements(p.batch);
  BroadcastWalker w(p.batch, {p.a_strides, p.b_strides});
  for (int64_t i = 0; i < batches; ++i, w.Next()) {
    AccumulateProduct(ca + w.offset(0) * a_size, cb + w.offset(1) * b_size, cc + i * c_size, p.m,
                      p.k, p.n);
  }
  if constexpr (!std::is_same_v<T, C>) {
    for (size_t i = 0; i < wc.size(); ++i) out[i] = Narrow<T>(wc[i]);
  }
  return Status::Ok();
}

Status RunMatMul(KernelContext& ctx) {
  TESSEL_ASSIGN_OR_RETURN(MatMulPlan p, PlanMatMul(ctx.node, ctx.in(0).shape(), ctx.in(1).shape()));
  return DispatchProductType(ctx.node, ctx.in(0).dtype(),
                             [&](auto tag) { return RunMatMulTyped<decltype(tag)>(ctx, p); });
}

// FusedMatMul (domain "tessel", made by passes/fuse_matmul_bias):
// Y = MatMul(A, B) + bias (+ Z), float32, with B a matrix [K, N], bias N
// values added along the last axis, Z (optional) of Y's shape.
Status InferFusedMatMul(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(InferMatMul(node, opset));
  const ir::Value* y = node.output(0);
  const ir::Value* b = node.input(1);
  const ir::Value* bias = node.input(2);
  if (y->dtype != DType::kFloat32 || b->shape.size() != 2 || !bias ||
      bias->dtype != DType::kFloat32 || NumElements(bias->shape) != b->shape[1]) {
    return InvalidArgument(node.Describe() + ": expects float32, B a matrix and " +
                           std::to_string(b->shape.size() == 2 ? b->shape[1] : 0) + " bias values");
  }
  if (const ir::Value* z = node.input(3); z && (z->dtype != y->dtype || z->shape != y->shape)) {
    return InvalidArgument(node.Describe() + ": residual '" + z->name + "' has shape " +
                           ShapeToString(z->shape) + "; expected the output's " +
                           ShapeToString(y->shape));
  }
  return Status::Ok();
}

Status RunFusedMatMul(KernelContext& ctx) {
  TESSEL_RETURN_IF_ERROR(RunMatMul(ctx));
  float* y = ctx.out(0).data<float>();
  const float* bias = ctx.in(2).data<float>();
  const int64_t n = ctx.in(2).num_elements(), total = ctx.out(0).num_elements();
  for (int64_t i = 0; i < total; ++i) y[i] += bias[i % n];
  if (ctx.has_in(3)) {
    const float* z = ctx.in(3).data<float>();
    for (int64_t i = 0; i < total; ++i) y[i] += z[i];
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Gemm: Y = alpha * A' * B' + beta * C, with A' = transA ? A^T : A.

Status InferGemm(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, kFloatTypes));
  TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, 1, 2}));
  TESSEL_RETURN_IF_ERROR(RequireRank(node, 0, 2));
  TESSEL_RETURN_IF_ERROR(RequireRank(node, 1, 2));
  const Shape& a = node.input(0)->shape;
  const Shape& b = node.input(1)->shape;
  const int64_t trans_a = node.attrs.Int("transA", 0), trans_b = node.attrs.Int("transB", 0);
  const int64_t m = trans_a ? a[1] : a[0], ka = trans_a ? a[0] : a[1];
  const int64_t kb = trans_b ? b[1] : b[0], n = trans_b ? b[0] : b[1];
  if (ka != kb) {
    return InvalidArgument(node.Describe() + ": inner dimensions differ: A " + ShapeToString(a) +
                           " (transA=" + std::to_string(trans_a) + ") @ B " + ShapeToString(b) +
                           " (transB=" + std::to_string(trans_b) + ")");
  }
  if (const ir::Value* c = node.input(2)) {
    const Shape target = {m, n};
    // Before opset 7, C stretches only with broadcast=1.
    if (opset < 7 && node.attrs.Int("broadcast", 0) == 0 && c->shape != target) {
      return InvalidArgument(node.Describe() + ": C of shape " + ShapeToString(c->shape) +
                             " is not " + ShapeToString(target) + "; before opset 7 (model opset " +
                             std::to_string(opset) + ") broadcasting C needs broadcast=1");
    }
    // Unidirectional broadcasting: C may only stretch towards M x N.
    bool ok = c->shape.size() <= 2;
    for (size_t i = 0; ok && i < c->shape.size(); ++i) {
      const int64_t d = c->shape[c->shape.size() - 1 - i];
      ok = d == 1 || d == target[1 - i];
    }
    if (!ok) {
      return InvalidArgument(node.Describe() + ": C of shape " + ShapeToString(c->shape) +
                             " does not broadcast to " + ShapeToString(target));
    }
  }
  SetOutput(node, 0, node.input(0)->dtype, {m, n});
  return Status::Ok();
}

template <typename T>
Status RunGemmTyped(KernelContext& ctx) {
  using C = ProductType<T>;
  const Tensor& ta = ctx.in(0);
  const Tensor& tb = ctx.in(1);
  const bool trans_a = ctx.node.attrs.Int("transA", 0) != 0;
  const bool trans_b = ctx.node.attrs.Int("transB", 0) != 0;
  const C alpha = static_cast<C>(ctx.node.attrs.Float("alpha", 1.0f));
  const C beta = static_cast<C>(ctx.node.attrs.Float("beta", 1.0f));
  const int64_t m = trans_a ? ta.dim(1) : ta.dim(0), k = trans_a ? ta.dim(0) : ta.dim(1);
  const int64_t n = trans_b ? tb.dim(0) : tb.dim(1);
  // Packing both operands into dense row-major order costs O(mk + kn) and
  // lets one contiguous kernel serve all four transpose combinations.
  const T* a = ta.data<T>();
  const T* b = tb.data<T>();
  std::vector<C> pa(static_cast<size_t>(m * k)), pb(static_cast<size_t>(k * n));
  std::vector<C> acc(static_cast<size_t>(m * n), C{0});
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p < k; ++p) pa[i * k + p] = Widen(trans_a ? a[p * m + i] : a[i * k + p]);
  }
  for (int64_t p = 0; p < k; ++p) {
    for (int64_t j = 0; j < n; ++j) pb[p * n + j] = Widen(trans_b ? b[j * k + p] : b[p * n + j]);
  }
  AccumulateProduct(pa.data(), pb.data(), acc.data(), m, k, n);
  T* out = ctx.out(0).data<T>();
  // beta == 0 ignores C entirely, so an inf or NaN there does not leak in.
  if (ctx.has_in(2) && beta != C{0}) {
    const Tensor& tc = ctx.in(2);
    const T* c = tc.data<T>();
    const Shape out_shape = {m, n};
    BroadcastWalker w(out_shape, {BroadcastStrides(tc.shape(), out_shape)});
    for (int64_t i = 0; i < m * n; ++i, w.Next()) {
      out[i] = Narrow<T>(alpha * acc[i] + beta * Widen(c[w.offset(0)]));
    }
  } else {
    for (int64_t i = 0; i < m * n; ++i) out[i] = Narrow<T>(alpha * acc[i]);
  }
  return Status::Ok();
}

Status RunGemm(KernelContext& ctx) {
  return DispatchProductType(ctx.node, ctx.in(0).dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      return Internal(ctx.node.Describe() + ": no integer Gemm kernel");
    } else {
      return RunGemmTyped<T>(ctx);
    }
  });
}

// ---------------------------------------------------------------------------
// Einsum

// Labels: the letters take ids 0..51 in ASCII order (so sorting ids sorts
// the letters as numpy does); the dimensions covered by '...' take
// kEllipsisLabel + i.
constexpr int kNumLetters = 52;
constexpr int kEllipsisLabel = kNumLetters;

int LetterId(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -1;
}

char LetterOf(int id) { return static_cast<char>(id < 26 ? 'A' + id : 'a' + (id - 26)); }

struct EinsumTerm {
  std::vector<int> letters;
  int ellipsis_at = -1;  // index into letters where '...' sits, -1 if absent
};

struct EinsumPlan {
  Shape out_shape;
  Shape loop_shape;  // the output labels, then the summed ones
  int64_t out_elements = 0;
  int64_t sum_elements = 0;
  std::vector<std::vector<int64_t>> strides;  // per input, per loop dimension
};

StatusOr<EinsumTerm> ParseEinsumTerm(const std::string& term, const std::string& where) {
  EinsumTerm t;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (c == '.') {
      if (term.compare(i, 3, "...") != 0) {
        return InvalidArgument(where + "'.' must be part of '...' in term '" + term + "'");
      }
      if (t.ellipsis_at >= 0) {
        return InvalidArgument(where + "term '" + term + "' has more than one '...'");
      }
      t.ellipsis_at = static_cast<int>(t.letters.size());
      i += 2;
      continue;
    }
    const int id = LetterId(c);
    if (id < 0) {
      return InvalidArgument(where + "invalid character '" + std::string(1, c) + "' in term '" +
                             term + "'");
    }
    t.letters.push_back(id);
  }
  return t;
}

StatusOr<EinsumPlan> PlanEinsum(const ir::Node& node, const std::vector<Shape>& shapes) {
  std::string equation = node.attrs.String("equation", "");
  const std::string where = node.Describe() + ": equation '" + equation + "': ";
  equation.erase(std::remove_if(equation.begin(), equation.end(),
                                [](unsigned char c) { return std::isspace(c) != 0; }),
                 equation.end());
  if (equation.empty()) {
    return InvalidArgument(node.Describe() + ": attribute 'equation' is missing or empty");
  }
  const size_t arrow = equation.find("->");
  const bool explicit_output = arrow != std::string::npos;
  const std::string lhs = explicit_output ? equation.substr(0, arrow) : equation;
  const std::string rhs = explicit_output ? equation.substr(arrow + 2) : std::string();

  std::vector<std::string> term_texts;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    term_texts.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (term_texts.size() != shapes.size()) {
    return InvalidArgument(where + "has " + std::to_string(term_texts.size()) +
                           " input terms but the node has " + std::to_string(shapes.size()) +
                           " inputs");
  }

  std::vector<EinsumTerm> terms;
  std::vector<int64_t> ellipsis_ranks;
  int64_t ellipsis_rank = 0;
  for (size_t k = 0; k < shapes.size(); ++k) {
    TESSEL_ASSIGN_OR_RETURN(EinsumTerm t, ParseEinsumTerm(term_texts[k], where));
    const int64_t rank = static_cast<int64_t>(shapes[k].size());
    const int64_t labelled = static_cast<int64_t>(t.letters.size());
    if (t.ellipsis_at < 0 ? labelled != rank : labelled > rank) {
      return InvalidArgument(where + "term '" + term_texts[k] + "' has " +
                             std::to_string(labelled) + " labels but input " + std::to_string(k) +
                             " has shape " + ShapeToString(shapes[k]));
    }
    const int64_t ell = t.ellipsis_at < 0 ? 0 : rank - labelled;
    ellipsis_rank = std::max(ellipsis_rank, ell);
    ellipsis_ranks.push_back(ell);
    terms.push_back(std::move(t));
  }

  // Sizes of every label. '...' dimensions broadcast as in numpy; a letter
  // broadcasts across inputs where it has size 1 but must agree within one
  // input (a diagonal).
  Shape ellipsis_dims(static_cast<size_t>(ellipsis_rank), 1);
  std::vector<int64_t> letter_size(kNumLetters, -1);
  std::vector<int> letter_count(kNumLetters, 0);
  for (size_t k = 0; k < shapes.size(); ++k) {
    const EinsumTerm& t = terms[k];
    const int64_t ell = ellipsis_ranks[k];
    for (int64_t j = 0; j < ell; ++j) {
      const int64_t d = shapes[k][t.ellipsis_at + j];
      int64_t& e = ellipsis_dims[ellipsis_rank - ell + j];
      if (d == e || d == 1) continue;
      if (e != 1) {
        return InvalidArgument(where + "the '...' dimensions of input " + std::to_string(k) +
                               " (shape " + ShapeToString(shapes[k]) + ") do not broadcast");
      }
      e = d;
    }
    std::vector<int64_t> own_size(kNumLetters, -1);
    for (size_t i = 0; i < t.letters.size(); ++i) {
      const int id = t.letters[i];
      const bool after_ellipsis = t.ellipsis_at >= 0 && static_cast<int>(i) >= t.ellipsis_at;
      const int64_t d = shapes[k][static_cast<int64_t>(i) + (after_ellipsis ? ell : 0)];
      const std::string label(1, LetterOf(id));
      if (own_size[id] >= 0 && own_size[id] != d) {
        return InvalidArgument(where + "label '" + label + "' of input " + std::to_string(k) +
                               " has sizes " + std::to_string(own_size[id]) + " and " +
                               std::to_string(d));
      }
      own_size[id] = d;
      ++letter_count[id];
      int64_t& s = letter_size[id];
      if (s == -1 || s == 1) {
        s = d;
      } else if (d != 1 && d != s) {
        return InvalidArgument(where + "label '" + label + "' has sizes " + std::to_string(s) +
                               " and " + std::to_string(d));
      }
    }
  }

  std::vector<int> out_labels;
  if (explicit_output) {
    TESSEL_ASSIGN_OR_RETURN(EinsumTerm out, ParseEinsumTerm(rhs, where));
    std::vector<bool> seen(kNumLetters, false);
    for (size_t i = 0; i <= out.letters.size(); ++i) {
      if (static_cast<int>(i) == out.ellipsis_at) {
        for (int64_t e = 0; e < ellipsis_rank; ++e) out_labels.push_back(kEllipsisLabel + e);
      }
      if (i == out.letters.size()) break;
      const int id = out.letters[i];
      const std::string label(1, LetterOf(id));
      if (letter_size[id] < 0) {
        return InvalidArgument(where + "output label '" + label + "' does not appear in any input");
      }
      if (seen[id]) return InvalidArgument(where + "output label '" + label + "' is repeated");
      seen[id] = true;
      out_labels.push_back(id);
    }
    if (out.ellipsis_at < 0 && ellipsis_rank > 0) {
      return InvalidArgument(where + "the inputs use '...' but the output does not");
    }
  } else {
    for (int64_t e = 0; e < ellipsis_rank; ++e) out_labels.push_back(kEllipsisLabel + e);
    for (int id = 0; id < kNumLetters; ++id) {
      if (letter_count[id] == 1) out_labels.push_back(id);
    }
  }

  std::vector<int> loop_labels = out_labels;
  for (int id = 0; id < kNumLetters; ++id) {
    if (letter_size[id] >= 0 &&
        std::find(out_labels.begin(), out_labels.end(), id) == out_labels.end()) {
      loop_labels.push_back(id);
    }
  }
  auto size_of = [&](int label) {
    return label >= kEllipsisLabel ? ellipsis_dims[label - kEllipsisLabel] : letter_size[label];
  };
  EinsumPlan p;
  for (int label : loop_labels) p.loop_shape.push_back(size_of(label));
  p.out_shape.assign(p.loop_shape.begin(), p.loop_shape.begin() + out_labels.size());
  p.out_elements = NumElements(p.out_shape);
  p.sum_elements = 1;
  for (size_t i = out_labels.size(); i < loop_labels.size(); ++i) p.sum_elements *= p.loop_shape[i];

  // A label repeated within one input adds up its strides: walking the label
  // then walks that input's diagonal.
  for (size_t k = 0; k < shapes.size(); ++k) {
    const EinsumTerm& t = terms[k];
    const int64_t ell = ellipsis_ranks[k];
    std::vector<int> dim_labels;
    for (size_t i = 0; i <= t.letters.size(); ++i) {
      if (static_cast<int>(i) == t.ellipsis_at) {
        for (int64_t j = 0; j < ell; ++j) {
          dim_labels.push_back(kEllipsisLabel + static_cast<int>(ellipsis_rank - ell + j));
        }
      }
      if (i < t.letters.size()) dim_labels.push_back(t.letters[i]);
    }
    const std::vector<int64_t> dense = StridesOf(shapes[k]);
    std::vector<int64_t> strides(loop_labels.size(), 0);
    for (size_t q = 0; q < dim_labels.size(); ++q) {
      // A size-1 dimension never moves, whether it broadcasts or not.
      if (shapes[k][q] == 1) continue;
      const auto pos = std::find(loop_labels.begin(), loop_labels.end(), dim_labels[q]);
      strides[pos - loop_labels.begin()] += dense[q];
    }
    p.strides.push_back(std::move(strides));
  }
  return p;
}

std::vector<Shape> InputShapes(const ir::Node& node) {
  std::vector<Shape> shapes;
  for (const ir::Value* v : node.inputs) shapes.push_back(v ? v->shape : Shape{});
  return shapes;
}

Status InferEinsum(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0,
                                      {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                                       DType::kFloat64, DType::kInt32, DType::kInt64}));
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!node.inputs[i]) {
      return InvalidArgument(node.Describe() + ": input " + std::to_string(i) + " is missing");
    }
    TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, i}));
  }
  TESSEL_ASSIGN_OR_RETURN(EinsumPlan p, PlanEinsum(node, InputShapes(node)));
  SetOutput(node, 0, node.input(0)->dtype, p.out_shape);
  return Status::Ok();
}

template <typename T>
Status RunEinsumTyped(KernelContext& ctx, const EinsumPlan& p) {
  using W = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;
  auto widen = [](T v) -> W {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<uint64_t>(static_cast<int64_t>(v));
    } else {
      return ToDouble(v);
    }
  };
  std::vector<const T*> in;
  for (size_t k = 0; k < ctx.inputs.size(); ++k) in.push_back(ctx.in(k).data<T>());
  T* out = ctx.out(0).data<T>();
  BroadcastWalker w(p.loop_shape, p.strides);
  for (int64_t o = 0; o < p.out_elements; ++o) {
    W acc = 0;
    for (int64_t s = 0; s < p.sum_elements; ++s, w.Next()) {
      W prod = 1;
      for (size_t k = 0; k < in.size(); ++k) prod *= widen(in[k][w.offset(k)]);
      acc += prod;
    }
    if constexpr (std::is_integral_v<T>) {
      out[o] = static_cast<T>(static_cast<int64_t>(acc));
    } else {
      out[o] = FromDouble<T>(acc);
    }
  }
  return Status::Ok();
}

Status RunEinsum(KernelContext& ctx) {
  std::vector<Shape> shapes;
  for (size_t k = 0; k < ctx.inputs.size(); ++k) shapes.push_back(ctx.in(k).shape());
  TESSEL_ASSIGN_OR_RETURN(EinsumPlan p, PlanEinsum(ctx.node, shapes));
  return DispatchProductType(ctx.node, ctx.in(0).dtype(),
                             [&](auto tag) { return RunEinsumTyped<decltype(tag)>(ctx, p); });
}

}  // namespace

StatusOr<EinsumLoops> PlanEinsumLoops(const ir::Node& node) {
  TESSEL_ASSIGN_OR_RETURN(EinsumPlan p, PlanEinsum(node, InputShapes(node)));
  return EinsumLoops{.out_rank = p.out_shape.size(),
                     .loop_shape = std::move(p.loop_shape),
                     .strides = std::move(p.strides)};
}

void RegisterMatmulOps(OpRegistry& r) {
  r.Register({.op_type = "Gemm",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 2,
              .max_inputs = 3,
              .infer = InferGemm,
              .run = RunGemm});
  r.Register({.op_type = "FusedMatMul",
              .domain = "tessel",
              .op_class = OpClass::kOpaque,
              .min_inputs = 3,
              .max_inputs = 4,
              .infer = InferFusedMatMul,
              .run = RunFusedMatMul,
              .foldable = false});
  r.Register({.op_type = "MatMul",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 2,
              .max_inputs = 2,
              .infer = InferMatMul,
              .run = RunMatMul});
  r.Register({.op_type = "Einsum",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 1,
              .max_inputs = kMaxEinsumInputs,
              .infer = InferEinsum,
              .run = RunEinsum});
}

}  // namespace tessel::ops
