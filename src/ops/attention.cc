// The transformer ops of opset 23 and later: Attention (23, 24, 25) and
// RotaryEmbedding (23). RMSNormalization sits with the norms (nn_norm.cc).
// And tessel's FusedAttention, which passes/fuse_attention makes of the
// scaled dot-product written out in MatMul, Softmax and MatMul.
//
// They compute in double and round to the inputs' dtype where the ONNX
// reference rounds (after each of its numpy steps), so 16-bit floats give
// what the reference gives rather than a more precise answer the suite
// would count as wrong.
#include "ops/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/op_registry.h"
#include "ops/op_util.h"

namespace tessel::ops {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// v rounded to dtype t (a float dtype), as a double.
double RoundTo(DType t, double v) {
  switch (t) {
    case DType::kFloat32:
      return static_cast<float>(v);
    case DType::kFloat16:
      return HalfToFloat(FloatToHalf(static_cast<float>(v)));
    case DType::kBFloat16:
      return BFloat16ToFloat(FloatToBFloat16(static_cast<float>(v)));
    default:
      return v;
  }
}

void Store(Tensor& t, int64_t i, double v) { t.SetFromDouble(i, v); }

std::vector<double> Doubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) v[i] = t.GetAsDouble(i);
  return v;
}

std::string S(const Shape& s) { return ShapeToString(s); }

// ---- Attention ---------------------------------------------------------------

// Inputs: Q, K, V, attn_mask, past_key, past_value, nonpad_kv_seqlen (24+).
// Outputs: Y, present_key, present_value, qk_matmul_output.
struct AttentionDims {
  bool rank3 = false;
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, past_len = 0;
  int64_t head = 0, v_head = 0;
  int64_t total() const { return past_len + kv_len; }
};

StatusOr<AttentionDims> AttentionShapes(const ir::Node& node) {
  const Shape& q = node.input(0)->shape;
  const Shape& k = node.input(1)->shape;
  const Shape& v = node.input(2)->shape;
  AttentionDims d;
  const auto bad = [&](const std::string& why) {
    return InvalidArgument(node.Describe() + ": Q " + S(q) + ", K " + S(k) + ", V " + S(v) + ": " +
                           why);
  };
  if (q.size() != k.size() || q.size() != v.size() || (q.size() != 3 && q.size() != 4)) {
    return bad("Q, K and V must all be 3-D or all 4-D");
  }
  d.rank3 = q.size() == 3;
  d.batch = q[0];
  if (d.rank3) {
    d.q_heads = node.attrs.Int("q_num_heads", 0);
    d.kv_heads = node.attrs.Int("kv_num_heads", 0);
    if (d.q_heads <= 0 || d.kv_heads <= 0) {
      return bad("3-D inputs need attributes q_num_heads and kv_num_heads");
    }
    if (q[2] % d.q_heads != 0 || k[2] % d.kv_heads != 0 || v[2] % d.kv_heads != 0) {
      return bad("hidden sizes must be multiples of the head counts");
    }
    d.q_len = q[1];
    d.kv_len = k[1];
    d.head = q[2] / d.q_heads;
    d.v_head = v[2] / d.kv_heads;
    if (k[2] / d.kv_heads != d.head || v[1] != k[1]) return bad("K and V do not match Q's heads");
  } else {
    d.q_heads = q[1];
    d.kv_heads = k[1];
    d.q_len = q[2];
    d.kv_len = k[2];
    d.head = q[3];
    d.v_head = v[3];
    if (k[3] != d.head || v[1] != k[1] || v[2] != k[2]) return bad("K and V do not match Q");
  }
  if (k[0] != d.batch || v[0] != d.batch) return bad("batch sizes differ");
  if (d.kv_heads <= 0 || d.q_heads % d.kv_heads != 0) {
    return bad("the query heads must be a multiple of the key/value heads");
  }
  const ir::Value* past_key = node.input(4);
  const ir::Value* past_value = node.input(5);
  if ((past_key == nullptr) != (past_value == nullptr)) {
    return InvalidArgument(node.Describe() + ": past_key and past_value come together");
  }
  if (past_key) {
    const Shape& pk = past_key->shape;
    const Shape& pv = past_value->shape;
    if (pk.size() != 4 || pv.size() != 4 || pk[0] != d.batch || pk[1] != d.kv_heads ||
        pk[3] != d.head || pv[0] != d.batch || pv[1] != d.kv_heads || pv[2] != pk[2] ||
        pv[3] != d.v_head) {
      return InvalidArgument(node.Describe() + ": past_key " + S(pk) + " and past_value " + S(pv) +
                             " must be batch x kv_heads x past x head");
    }
    d.past_len = pk[2];
  }
  if (const ir::Value* n = node.input(6)) {
    if (past_key) {
      return InvalidArgument(node.Describe() +
                             ": nonpad_kv_seqlen and past_key exclude each other");
    }
    if (n->shape != Shape{d.batch}) {
      return InvalidArgument(node.Describe() + ": nonpad_kv_seqlen has shape " + S(n->shape) +
                             "; expected [" + std::to_string(d.batch) + "]");
    }
  }
  if (const ir::Value* m = node.input(3)) {
    const Shape& ms = m->shape;
    const Shape full = {d.batch, d.q_heads, d.q_len, d.total()};
    bool fits = !ms.empty() && ms.size() <= 4 && ms.back() <= d.total();
    for (size_t i = 0; fits && i + 1 < ms.size(); ++i) {
      const int64_t want = full[4 - ms.size() + i];
      fits = ms[i] == 1 || ms[i] == want;
    }
    if (!fits) {
      return InvalidArgument(node.Describe() + ": attn_mask " + S(ms) + " does not broadcast to " +
                             S(full) + " (its last axis may be shorter: padded as masked)");
    }
  }
  return d;
}

Status InferAttention(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, kFloatTypes));
  TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, 1, 2}));
  if (node.input(3) && node.input(3)->dtype != DType::kBool) {
    TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, 3}));
  }
  if (node.input(4)) TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, 4, 5}));
  if (node.input(6)) TESSEL_RETURN_IF_ERROR(RequireDType(node, 6, {DType::kInt64}));
  TESSEL_ASSIGN_OR_RETURN(AttentionDims d, AttentionShapes(node));
  const int64_t mode = node.attrs.Int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) {
    return InvalidArgument(node.Describe() + ": qk_matmul_output_mode " + std::to_string(mode) +
                           " must be 0 to 3");
  }
  const int64_t precision = node.attrs.Int("softmax_precision", 0);
  if (precision != 0 && precision != 1 && precision != 10 && precision != 11 && precision != 16) {
    return InvalidArgument(node.Describe() + ": softmax_precision " + std::to_string(precision) +
                           " must be 1, 10, 11 or 16");
  }
  for (const char* w : {"left_window_size", "right_window_size"}) {
    if (node.attrs.Int(w, -1) < -1) {
      return InvalidArgument(node.Describe() + ": " + w + " must be -1 or more");
    }
  }
  if (!d.rank3 && (node.attrs.Has("q_num_heads") || node.attrs.Has("kv_num_heads")) &&
      opset >= 25) {
    return InvalidArgument(node.Describe() + ": q_num_heads and kv_num_heads are for 3-D inputs");
  }
  const DType t = node.input(0)->dtype;
  if (d.rank3) {
    SetOutput(node, 0, t, {d.batch, d.q_len, d.q_heads * d.v_head});
  } else {
    SetOutput(node, 0, t, {d.batch, d.q_heads, d.q_len, d.v_head});
  }
  SetOutput(node, 1, t, {d.batch, d.kv_heads, d.total(), d.head});
  SetOutput(node, 2, t, {d.batch, d.kv_heads, d.total(), d.v_head});
  SetOutput(node, 3, t, {d.batch, d.q_heads, d.q_len, d.total()});
  return Status::Ok();
}

// Element (b, h, s, i) of Q, K or V in their 3-D or 4-D layout.
int64_t At(const AttentionDims& d, bool rank3, int64_t heads, int64_t len, int64_t size, int64_t b,
           int64_t h, int64_t s, int64_t i) {
  if (rank3) return ((b * len + s) * heads + h) * size + i;
  return ((b * heads + h) * len + s) * size + i;
}

Status RunAttention(KernelContext& ctx) {
  TESSEL_ASSIGN_OR_RETURN(AttentionDims d, AttentionShapes(ctx.node));
  const ir::Node& node = ctx.node;
  const DType t = ctx.in(0).dtype();
  const auto rt = [t](double v) { return RoundTo(t, v); };
  const std::vector<double> q = Doubles(ctx.in(0)), k_new = Doubles(ctx.in(1)),
                            v_new = Doubles(ctx.in(2));
  const int64_t total = d.total();
  // present_key / present_value: the past, then the new tokens (4-D).
  std::vector<double> k(static_cast<size_t>(d.batch * d.kv_heads * total * d.head));
  std::vector<double> v(static_cast<size_t>(d.batch * d.kv_heads * total * d.v_head));
  const std::vector<double> past_k = ctx.has_in(4) ? Doubles(ctx.in(4)) : std::vector<double>{};
  const std::vector<double> past_v = ctx.has_in(5) ? Doubles(ctx.in(5)) : std::vector<double>{};
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < d.kv_heads; ++h) {
      for (int64_t s = 0; s < total; ++s) {
        const bool past = s < d.past_len;
        const int64_t sn = s - d.past_len;
        for (int64_t i = 0; i < d.head; ++i) {
          k[((b * d.kv_heads + h) * total + s) * d.head + i] =
              past ? past_k[((b * d.kv_heads + h) * d.past_len + s) * d.head + i]
                   : k_new[At(d, d.rank3, d.kv_heads, d.kv_len, d.head, b, h, sn, i)];
        }
        for (int64_t i = 0; i < d.v_head; ++i) {
          v[((b * d.kv_heads + h) * total + s) * d.v_head + i] =
              past ? past_v[((b * d.kv_heads + h) * d.past_len + s) * d.v_head + i]
                   : v_new[At(d, d.rank3, d.kv_heads, d.kv_len, d.v_head, b, h, sn, i)];
        }
      }
    }
  }
  for (int64_t i = 0; i < static_cast<int64_t>(k.size()); ++i) {
    if (ctx.has_out(1)) Store(ctx.out(1), i, k[i]);
  }
  for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
    if (ctx.has_out(2)) Store(ctx.out(2), i, v[i]);
  }

  // The mask, right-aligned to (batch, q_heads, q, total); its last axis may
  // be shorter (the rest is masked).
  const bool has_mask = ctx.has_in(3);
  const bool bool_mask = has_mask && ctx.in(3).dtype() == DType::kBool;
  const std::vector<double> mask = has_mask ? Doubles(ctx.in(3)) : std::vector<double>{};
  Shape mask_shape = has_mask ? ctx.in(3).shape() : Shape{};
  while (mask_shape.size() < 4) mask_shape.insert(mask_shape.begin(), 1);
  const auto mask_at = [&](int64_t b, int64_t h, int64_t i, int64_t j) -> double {
    if (j >= mask_shape[3]) return kNegInf;
    const int64_t at =
        (((mask_shape[0] == 1 ? 0 : b) * mask_shape[1] + (mask_shape[1] == 1 ? 0 : h)) *
             mask_shape[2] +
         (mask_shape[2] == 1 ? 0 : i)) *
            mask_shape[3] +
        j;
    const double m = mask[at];
    return bool_mask ? (m != 0 ? 0.0 : kNegInf) : m;
  };
  std::vector<int64_t> nonpad;
  if (ctx.has_in(6)) {
    for (int64_t b = 0; b < d.batch; ++b) nonpad.push_back(ctx.in(6).GetAsInt64(b));
  }
  // Where the causal frontier and the window sit: after the past, or (an
  // external cache) after the valid keys of each batch.
  const auto offset_of = [&](int64_t b) -> int64_t {
    if (ctx.has_in(4)) return d.past_len;
    if (!nonpad.empty()) return nonpad[b] - d.q_len;
    return 0;
  };
  const bool causal = node.attrs.Int("is_causal", 0) != 0;
  const int64_t left = node.attrs.Int("left_window_size", -1);
  const int64_t right = node.attrs.Int("right_window_size", -1);
  const auto bias_at = [&](int64_t b, int64_t h, int64_t i, int64_t j) -> double {
    double bias = has_mask ? mask_at(b, h, i, j) : 0.0;
    const int64_t offset = offset_of(b);
    if (causal && j > i + offset) bias = kNegInf;
    if (left >= 0 || right >= 0) {
      const int64_t diff = i + offset - j;
      if ((left >= 0 && diff > left) || (right >= 0 && -diff > right)) bias = kNegInf;
    }
    if (!nonpad.empty() && j >= nonpad[b]) bias = kNegInf;
    return rt(bias);
  };

  double scale = node.attrs.Has("scale") ? node.attrs.Float("scale", 1.0f)
                                         : 1.0 / std::sqrt(static_cast<double>(d.head));
  const double root = rt(std::sqrt(scale));
  const double softcap = node.attrs.Float("softcap", 0.0f);
  const int64_t mode = node.attrs.Int("qk_matmul_output_mode", 0);
  const int64_t precision = node.attrs.Int("softmax_precision", 0);
  const DType soft_t = precision == 1    ? DType::kFloat32
                       : precision == 10 ? DType::kFloat16
                       : precision == 11 ? DType::kFloat64
                       : precision == 16 ? DType::kBFloat16
                                         : t;
  const auto rs = [soft_t](double x) { return RoundTo(soft_t, x); };
  const int64_t reps = d.q_heads / d.kv_heads;
  std::vector<double> qs(static_cast<size_t>(d.head)), logits(static_cast<size_t>(total)),
      biased(static_cast<size_t>(total)), p(static_cast<size_t>(total));
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < d.q_heads; ++h) {
      const int64_t kh = h / reps;  // each key/value head serves `reps` query heads in turn
      for (int64_t i = 0; i < d.q_len; ++i) {
        for (int64_t e = 0; e < d.head; ++e) {
          qs[e] = rt(q[At(d, d.rank3, d.q_heads, d.q_len, d.head, b, h, i, e)] * root);
        }
        double bias_max = kNegInf;
        for (int64_t j = 0; j < total; ++j) {
          const double* kr = &k[((b * d.kv_heads + kh) * total + j) * d.head];
          double dot = 0;
          for (int64_t e = 0; e < d.head; ++e) dot += qs[e] * rt(kr[e] * root);
          double x = rt(dot);
          if (softcap > 0) x = rt(rt(std::tanh(rt(x / softcap))) * softcap);
          logits[j] = x;
          const double bias = bias_at(b, h, i, j);
          bias_max = std::max(bias_max, bias);
          biased[j] = rs(rt(x + bias));
        }
        // Softmax; a row whose scores are all -inf gives zeros, not NaN.
        double row_max = kNegInf;
        for (int64_t j = 0; j < total; ++j) row_max = std::max(row_max, biased[j]);
        const double safe_max = std::isinf(row_max) && row_max < 0 ? 0.0 : row_max;
        double sum = 0;
        for (int64_t j = 0; j < total; ++j) {
          p[j] = rs(std::exp(rs(biased[j] - safe_max)));
          sum += p[j];
        }
        sum = rs(sum);
        if (sum == 0) sum = 1;
        // A row with every key masked (decided on the bias, not on the
        // possibly NaN scores) attends to nothing: zeros.
        const bool all_masked = std::isinf(bias_max) && bias_max < 0;
        for (int64_t j = 0; j < total; ++j) p[j] = all_masked ? 0.0 : rt(rs(p[j] / sum));
        if (ctx.has_out(3)) {
          for (int64_t j = 0; j < total; ++j) {
            const double out = mode == 3   ? p[j]
                               : mode == 2 ? rt(logits[j] + bias_at(b, h, i, j))
                                           : logits[j];
            Store(ctx.out(3), ((b * d.q_heads + h) * d.q_len + i) * total + j, out);
          }
        }
        for (int64_t e = 0; e < d.v_head; ++e) {
          double y = 0;
          for (int64_t j = 0; j < total; ++j) {
            y += p[j] * v[((b * d.kv_heads + kh) * total + j) * d.v_head + e];
          }
          Store(ctx.out(0), At(d, d.rank3, d.q_heads, d.q_len, d.v_head, b, h, i, e), y);
        }
      }
    }
  }
  return Status::Ok();
}

// ---- RotaryEmbedding -----------------------------------------------------------

// Inputs: X (batch x heads x seq x head or batch x seq x hidden with
// num_heads), cos_cache and sin_cache (max_pos x dim/2, or batch x seq x
// dim/2 without position_ids), position_ids (batch x seq, optional).
struct RotaryDims {
  bool rank3 = false;
  int64_t batch = 0, seq = 0, heads = 0, head = 0, dim = 0;
};

StatusOr<RotaryDims> RotaryShapes(const ir::Node& node) {
  const Shape& x = node.input(0)->shape;
  RotaryDims d;
  if (x.size() == 4) {
    d.batch = x[0];
    d.heads = x[1];
    d.seq = x[2];
    d.head = x[3];
  } else if (x.size() == 3) {
    d.rank3 = true;
    d.batch = x[0];
    d.seq = x[1];
    d.heads = node.attrs.Int("num_heads", 0);
    if (d.heads <= 0 || x[2] % d.heads != 0) {
      return InvalidArgument(node.Describe() + ": 3-D input " + S(x) +
                             " needs num_heads dividing its hidden size");
    }
    d.head = x[2] / d.heads;
  } else {
    return InvalidArgument(node.Describe() + ": input " + S(x) + " must be 3-D or 4-D");
  }
  d.dim = node.attrs.Int("rotary_embedding_dim", 0);
  if (d.dim == 0) d.dim = d.head;
  if (d.dim < 0 || d.dim > d.head || d.dim % 2 != 0) {
    return InvalidArgument(node.Describe() + ": rotary_embedding_dim " + std::to_string(d.dim) +
                           " must be even and at most the head size " + std::to_string(d.head));
  }
  const Shape& cos = node.input(1)->shape;
  const Shape& sin = node.input(2)->shape;
  const Shape want =
      node.input(3) ? Shape{cos.empty() ? 0 : cos[0], d.dim / 2} : Shape{d.batch, d.seq, d.dim / 2};
  if (cos != sin || cos != want) {
    return InvalidArgument(node.Describe() + ": cos_cache " + S(cos) + " and sin_cache " + S(sin) +
                           " must both be " + S(want) +
                           (node.input(3) ? " (max positions x rotary_embedding_dim / 2)"
                                          : " (batch x sequence x rotary_embedding_dim / 2)"));
  }
  if (const ir::Value* p = node.input(3)) {
    if (p->shape != Shape{d.batch, d.seq}) {
      return InvalidArgument(node.Describe() + ": position_ids " + S(p->shape) + " must be " +
                             S(Shape{d.batch, d.seq}));
    }
  }
  return d;
}

Status InferRotary(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, kFloatTypes));
  TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, 1, 2}));
  if (node.input(3)) TESSEL_RETURN_IF_ERROR(RequireDType(node, 3, {DType::kInt64}));
  TESSEL_RETURN_IF_ERROR(RotaryShapes(node).status());
  SetOutput(node, 0, node.input(0)->dtype, node.input(0)->shape);
  return Status::Ok();
}

Status RunRotary(KernelContext& ctx) {
  TESSEL_ASSIGN_OR_RETURN(RotaryDims d, RotaryShapes(ctx.node));
  const bool interleaved = ctx.node.attrs.Int("interleaved", 0) != 0;
  const Tensor& x = ctx.in(0);
  const DType t = x.dtype();
  const std::vector<double> cos = Doubles(ctx.in(1)), sin = Doubles(ctx.in(2));
  const int64_t half = d.dim / 2;
  const int64_t positions = ctx.in(1).dim(0);
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t s = 0; s < d.seq; ++s) {
      int64_t row = b * d.seq + s;  // of the caches without position_ids
      if (ctx.has_in(3)) {
        row = ctx.in(3).GetAsInt64(b * d.seq + s);
        if (row < 0 || row >= positions) {
          return InvalidArgument(ctx.node.Describe() + ": position_ids holds " +
                                 std::to_string(row) + ", outside the caches' " +
                                 std::to_string(positions) + " positions");
        }
      }
      for (int64_t h = 0; h < d.heads; ++h) {
        const int64_t base = d.rank3 ? ((b * d.seq + s) * d.heads + h) * d.head
                                     : ((b * d.heads + h) * d.seq + s) * d.head;
        for (int64_t i = 0; i < half; ++i) {
          const int64_t a = base + (interleaved ? 2 * i : i);
          const int64_t c = base + (interleaved ? 2 * i + 1 : i + half);
          const double x1 = x.GetAsDouble(a), x2 = x.GetAsDouble(c);
          const double co = cos[row * half + i], si = sin[row * half + i];
          Store(ctx.out(0), a, RoundTo(t, RoundTo(t, co * x1) - RoundTo(t, si * x2)));
          Store(ctx.out(0), c, RoundTo(t, RoundTo(t, si * x1) + RoundTo(t, co * x2)));
        }
        for (int64_t i = d.dim; i < d.head; ++i)
          Store(ctx.out(0), base + i, x.GetAsDouble(base + i));
      }
    }
  }
  return Status::Ok();
}

}  // namespace

// ---- FusedAttention (ops/attention.h) -------------------------------------------

StatusOr<FusedAttentionDims> FusedAttentionShapes(const ir::Node& node) {
  const Shape& q = node.input(0)->shape;
  const Shape& k = node.input(1)->shape;
  const Shape& v = node.input(2)->shape;
  const auto bad = [&](const std::string& why) {
    return InvalidArgument(node.Describe() + ": Q " + S(q) + ", K " + S(k) + ", V " + S(v) + ": " +
                           why);
  };
  if (q.size() != k.size() || q.size() != v.size() || (q.size() != 3 && q.size() != 4)) {
    return bad("Q, K and V must all be 3-D or all 4-D");
  }
  FusedAttentionDims d;
  const size_t r = q.size();
  d.rank = r;
  if (r == 4) d.batch = q[0];
  d.q_heads = q[r - 3];
  d.kv_heads = k[r - 3];
  d.q_len = q[r - 2];
  d.kv_len = k[r - 2];
  d.head = q[r - 1];
  d.v_head = v[r - 1];
  if ((r == 4 && (k[0] != d.batch || v[0] != d.batch)) || v[r - 3] != d.kv_heads ||
      v[r - 2] != d.kv_len || k[r - 1] != d.head) {
    return bad("K and V do not match Q");
  }
  if (d.kv_heads <= 0 || d.q_heads % d.kv_heads != 0 || (r == 3 && d.kv_heads != d.q_heads)) {
    return bad("the query heads must be a multiple of the key/value heads (rank 4 only)");
  }
  if (const ir::Value* m = node.input(3)) {
    const Shape& ms = m->shape;
    const Shape full = {d.batch, d.q_heads, d.q_len, d.kv_len};
    bool fits = ms.size() <= r;
    for (size_t i = 0; fits && i < ms.size(); ++i) {
      const int64_t want = full[4 - ms.size() + i];
      fits = ms[i] == 1 || ms[i] == want;
    }
    if (!fits) {
      return InvalidArgument(node.Describe() + ": bias " + S(ms) + " does not broadcast to " +
                             S(Shape(full.end() - static_cast<int64_t>(r), full.end())));
    }
    d.bias_strides = BroadcastStrides4(ms);
  }
  return d;
}

Shape Pad4(const Shape& shape) {
  Shape d = shape;
  while (d.size() < 4) d.insert(d.begin(), 1);
  return d;
}

std::array<int64_t, 4> BroadcastStrides4(const Shape& shape) {
  std::array<int64_t, 4> out{};
  int64_t stride = 1;
  for (size_t a = 4; a-- > 0;) {
    const int64_t dim = a + shape.size() >= 4 ? shape[a + shape.size() - 4] : 1;
    out[a] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
  return out;
}

int64_t BroadcastRowOffset(const Shape& x, const Shape& c, int64_t row) {
  int64_t at = 0, stride = c.empty() ? 1 : c.back();
  // X's axes before the last, innermost first, against c's from the right.
  for (size_t a = x.size() - 1; a-- > 0;) {
    const int64_t i = row % x[a];
    row /= x[a];
    const size_t from_end = x.size() - a;  // 2 for X's second to last axis
    if (from_end > c.size()) break;
    const int64_t dim = c[c.size() - from_end];
    if (dim != 1) at += i * stride;
    stride *= dim;
  }
  return at;
}

StatusOr<FusedRotaryDims> FusedRotaryShapes(const ir::Node& node) {
  const Shape& x = node.input(0)->shape;
  FusedRotaryDims d;
  if (x.empty()) return InvalidArgument(node.Describe() + ": X must have a feature axis");
  d.width = x.back();
  d.rows = d.width == 0 ? 0 : NumElements(x) / d.width;
  d.rotary = node.attrs.Int("rotary_dim", d.width);
  if (d.rotary <= 0 || d.rotary > d.width || d.rotary % 2 != 0) {
    return InvalidArgument(node.Describe() + ": rotary_dim " + std::to_string(d.rotary) +
                           " must be even and at most X's " + std::to_string(d.width) +
                           " features");
  }
  Shape rotated = x;
  rotated.back() = d.rotary;
  for (size_t i = 1; i < 3; ++i) {
    const Shape& c = node.input(i)->shape;
    bool fits = c.size() <= x.size();
    for (size_t a = 0; fits && a < c.size(); ++a) {
      const int64_t want = rotated[rotated.size() - c.size() + a];
      fits = c[a] == 1 || c[a] == want;
    }
    if (!fits || c.empty() || c.back() != d.rotary) {
      return InvalidArgument(node.Describe() + ": " + (i == 1 ? "cos " : "sin ") + S(c) +
                             " does not broadcast to " + S(rotated));
    }
  }
  return d;
}

namespace {

Status InferFusedAttention(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, {DType::kFloat32}));
  TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, 1, 2}));
  if (node.input(3)) TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, 3}));
  if (!node.attrs.Has("scale")) {
    return InvalidArgument(node.Describe() + ": needs the attribute scale");
  }
  TESSEL_RETURN_IF_ERROR(FusedAttentionShapes(node).status());
  Shape y = node.input(0)->shape;
  y.back() = node.input(2)->shape.back();
  SetOutput(node, 0, DType::kFloat32, y);
  return Status::Ok();
}

// In double, a query row at a time.
Status RunFusedAttention(KernelContext& ctx) {
  TESSEL_ASSIGN_OR_RETURN(FusedAttentionDims d, FusedAttentionShapes(ctx.node));
  const double scale = ctx.node.attrs.Float("scale", 1.0f);
  const bool zero_masked = ctx.node.attrs.Int("zero_masked_rows", 0) != 0;
  const float* q = ctx.in(0).data<float>();
  const float* k = ctx.in(1).data<float>();
  const float* v = ctx.in(2).data<float>();
  float* y = ctx.out(0).data<float>();
  const float* bias = ctx.has_in(3) ? ctx.in(3).data<float>() : nullptr;
  const auto& bs = d.bias_strides;
  const auto bias_at = [&](int64_t b, int64_t h, int64_t i, int64_t j) -> double {
    return bias ? bias[b * bs[0] + h * bs[1] + i * bs[2] + j * bs[3]] : 0.0;
  };
  const int64_t reps = d.q_heads / d.kv_heads;
  std::vector<double> s(static_cast<size_t>(d.kv_len)), acc(static_cast<size_t>(d.v_head));
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < d.q_heads; ++h) {
      const int64_t kh = b * d.kv_heads + h / reps;
      const float* kb = k + kh * d.kv_len * d.head;
      const float* vb = v + kh * d.kv_len * d.v_head;
      for (int64_t i = 0; i < d.q_len; ++i) {
        const float* qi = q + ((b * d.q_heads + h) * d.q_len + i) * d.head;
        double row_max = kNegInf;
        for (int64_t j = 0; j < d.kv_len; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < d.head; ++e) dot += double{qi[e]} * kb[j * d.head + e];
          s[j] = scale * dot + bias_at(b, h, i, j);
          row_max = std::max(row_max, s[j]);
        }
        const bool masked = std::isinf(row_max) && row_max < 0;
        double sum = 0;
        for (int64_t j = 0; j < d.kv_len; ++j) sum += s[j] = std::exp(s[j] - row_max);
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t j = 0; j < d.kv_len; ++j) {
          for (int64_t e = 0; e < d.v_head; ++e) acc[e] += s[j] * vb[j * d.v_head + e];
        }
        float* yi = y + ((b * d.q_heads + h) * d.q_len + i) * d.v_head;
        for (int64_t e = 0; e < d.v_head; ++e) {
          yi[e] = masked && zero_masked ? 0.f : static_cast<float>(acc[e] / sum);
        }
      }
    }
  }
  return Status::Ok();
}

Status InferFusedRotary(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, {DType::kFloat32}));
  TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {0, 1, 2}));
  TESSEL_RETURN_IF_ERROR(FusedRotaryShapes(node).status());
  SetOutput(node, 0, DType::kFloat32, node.input(0)->shape);
  return Status::Ok();
}

Status RunFusedRotary(KernelContext& ctx) {
  TESSEL_ASSIGN_OR_RETURN(FusedRotaryDims d, FusedRotaryShapes(ctx.node));
  const bool interleaved = ctx.node.attrs.Int("interleaved", 0) != 0;
  const Shape& xs = ctx.in(0).shape();
  const float* x = ctx.in(0).data<float>();
  float* y = ctx.out(0).data<float>();
  const int64_t half = d.rotary / 2;
  for (int64_t r = 0; r < d.rows; ++r) {
    const float* xr = x + r * d.width;
    float* yr = y + r * d.width;
    const float* cos = ctx.in(1).data<float>() + BroadcastRowOffset(xs, ctx.in(1).shape(), r);
    const float* sin = ctx.in(2).data<float>() + BroadcastRowOffset(xs, ctx.in(2).shape(), r);
    for (int64_t j = 0; j < d.rotary; ++j) {
      float rot;
      if (interleaved) {
        rot = j % 2 == 0 ? -xr[j + 1] : xr[j - 1];
      } else {
        rot = j < half ? -xr[j + half] : xr[j - half];
      }
      yr[j] = xr[j] * cos[j] + rot * sin[j];
    }
    for (int64_t j = d.rotary; j < d.width; ++j) yr[j] = xr[j];
  }
  return Status::Ok();
}

}  // namespace

void RegisterAttentionOps(OpRegistry& r) {
  r.Register({.op_type = "Attention",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 3,
              .max_inputs = 7,
              .min_outputs = 1,
              .max_outputs = 4,
              .infer = InferAttention,
              .run = RunAttention,
              .max_opset = 28});
  r.Register({.op_type = "RotaryEmbedding",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 3,
              .max_inputs = 4,
              .infer = InferRotary,
              .run = RunRotary,
              .max_opset = 28});
  r.Register({.op_type = "Rotary",
              .domain = "tessel",
              .op_class = OpClass::kOpaque,
              .min_inputs = 3,
              .max_inputs = 3,
              .infer = InferFusedRotary,
              .run = RunFusedRotary,
              .foldable = false});
  r.Register({.op_type = "FusedAttention",
              .domain = "tessel",
              .op_class = OpClass::kOpaque,
              .min_inputs = 3,
              .max_inputs = 4,
              .infer = InferFusedAttention,
              .run = RunFusedAttention,
              .foldable = false});
}

}  // namespace tessel::ops
