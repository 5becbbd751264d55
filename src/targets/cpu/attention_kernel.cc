// FusedAttention on the CPU: a FlashAttention-style schedule in vector
// registers. Each task takes a block of query rows of one head and walks the
// keys in blocks: scores of the block (a register-tiled product of the
// queries by the keys, packed transposed and scaled once per head), the
// online softmax (running maximum and sum per row, earlier partial results
// rescaled when the maximum grows), and the product of the probabilities by
// the values, accumulated in a row block of the output. The scores of all
// queries by all keys never exist; a task holds at most one block of them.
//
// Written once with GCC's vector extensions over L lanes and compiled for
// AVX-512 (16 lanes) and AVX2 (8): the build targets baseline x86-64, and
// the CPU target's isa says which this machine may run. (This file is
// compiled with -ffp-contract=fast, so that a * b + c is one FMA.)
#include "targets/cpu/attention_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ops/attention.h"
#include "ops/op_util.h"
#include "ops/strided_view.h"
#include "snippets/isa.h"
#include "targets/cpu/native_kernels.h"
#include "targets/cpu/options.h"
#include "targets/cpu/thread_pool.h"

namespace tessel::cpu {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr int kRows = 6;  // query rows of a register tile

template <int L>
struct Lanes {
  typedef float F __attribute__((vector_size(4 * L)));
  typedef int32_t I __attribute__((vector_size(4 * L)));
  // Vectors of the scores' tile: 4 x 16 keys on AVX-512 (24 accumulators of
  // 32 registers), 2 x 8 on AVX2 (12 of 16).
  static constexpr int kTile = L == 16 ? 4 : 2;
};

#define TESSEL_INLINE __attribute__((always_inline)) inline

template <int L>
TESSEL_INLINE typename Lanes<L>::F Load(const float* p) {
  typename Lanes<L>::F v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <int L>
TESSEL_INLINE void Store(float* p, typename Lanes<L>::F v) {
  std::memcpy(p, &v, sizeof v);
}

// The constant c in every lane (folded at compile time; a run-time scalar
// is better an operand of a vector operation, which broadcasts it: F{} + x
// would add zero).
template <int L>
TESSEL_INLINE typename Lanes<L>::F Splat(float c) {
  return typename Lanes<L>::F{} + c;
}

// e^x for x <= 0 (scores minus their row's maximum): Cephes' polynomial on
// x - n ln 2, times 2^n; 0 below -87 (and for -inf).
template <int L>
TESSEL_INLINE typename Lanes<L>::F Exp(typename Lanes<L>::F x) {
  using F = typename Lanes<L>::F;
  using I = typename Lanes<L>::I;
  const I tiny = x < -87.f;
  x = tiny ? Splat<L>(-87.f) : x;
  const F shifter = Splat<L>(12582912.f);  // 1.5 * 2^23: adding it rounds to an integer
  const F n = (x * 1.44269504088896341f + shifter) - shifter;
  const F r = x - n * 0.693359375f - n * -2.12194440e-4f;
  F p = Splat<L>(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.f;
  const I bits = (__builtin_convertvector(n, I) + 127) << 23;
  F two_n;
  std::memcpy(&two_n, &bits, sizeof two_n);
  return tiny ? F{} : p * two_n;
}

template <int L>
TESSEL_INLINE float MaxOf(typename Lanes<L>::F v) {
  float m = v[0];
  for (int i = 1; i < L; ++i) m = std::max(m, v[i]);
  return m;
}

template <int L>
TESSEL_INLINE float SumOf(typename Lanes<L>::F v) {
  float s = 0;
  for (int i = 0; i < L; ++i) s += v[i];
  return s;
}

// c[r][0, N * L) (+)= sum over i < k of a[r][i] * b[i][0, N * L) for kRows
// rows: the scores (queries by the keys packed transposed, c zeroed first)
// and the output rows (probabilities by the values, accumulated).
template <int L, int N, bool kAccumulate>
TESSEL_INLINE void TileProduct(const float* a, int64_t a_stride, int64_t k, const float* b,
                               int64_t b_stride, float* c, int64_t c_stride) {
  using F = typename Lanes<L>::F;
  F acc[kRows][N] = {};
  if (kAccumulate) {
    for (int r = 0; r < kRows; ++r) {
      for (int v = 0; v < N; ++v) acc[r][v] = Load<L>(c + r * c_stride + v * L);
    }
  }
  for (int64_t i = 0; i < k; ++i) {
    F x[N];
#pragma GCC unroll 4
    for (int v = 0; v < N; ++v) x[v] = Load<L>(b + i * b_stride + v * L);
#pragma GCC unroll 6
    for (int r = 0; r < kRows; ++r) {
      const float ai = a[r * a_stride + i];
#pragma GCC unroll 4
      for (int v = 0; v < N; ++v) acc[r][v] += ai * x[v];
    }
  }
  for (int r = 0; r < kRows; ++r) {
    for (int v = 0; v < N; ++v) Store<L>(c + r * c_stride + v * L, acc[r][v]);
  }
}

int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

}  // namespace

// What one task needs of the kernel: sizes, strides (in floats), pointers.
struct AttentionKernel::Task {
  const float* q;
  const float* bias;
  float* y;
  const float* kt;  // packed: D rows of keys_pad, scaled
  const float* v;   // packed or the input's rows
  int64_t v_stride;
  int64_t b, h, first, rows;  // the head's query rows [first, first + rows)
  float* scratch;
};

AttentionKernel::AttentionKernel(const AttentionGeometry& g) : g_(g) {
  isa_ = std::min(ActiveOptions().isa, snippets::HostIsa());
  lanes_ = isa_ == snippets::Isa::kAvx512 ? 16 : 8;
  keys_pad_ = RoundUp(g_.kv_len, lanes_);
  v_cols_ = RoundUp(g_.v_head, lanes_);
  // V's rows are read where they lie when each is contiguous and whole vectors.
  v_direct_ = g_.v_strides[3] == 1 && g_.v_head % lanes_ == 0;
  key_block_ = keys_pad_ <= 512 ? keys_pad_ : 256;
  // Query rows per task: blocks of about 48, in whole register tiles.
  const int64_t blocks = (g_.q_len + 47) / 48;
  row_block_ = RoundUp((g_.q_len + blocks - 1) / blocks, kRows);
  tasks_ = g_.batch * g_.q_heads * ((g_.q_len + row_block_ - 1) / row_block_);
  const double flops = 4.0 * static_cast<double>(g_.batch * g_.q_heads * g_.q_len) *
                       static_cast<double>(g_.kv_len) * static_cast<double>(g_.head + g_.v_head);
  const int threads = ThreadPool::Current().num_threads();
  chunks_ = flops < ActiveOptions().parallel_min_mflop * 1e6
                ? 1
                : std::max<int64_t>(1, std::min<int64_t>(tasks_, threads));
  // Per chunk of tasks: the keys of the head at hand, transposed and
  // scaled (and its values, unless read where they lie), the queries, a
  // block of scores, the output rows, the rows' maxima and sums.
  packed_ = g_.head * keys_pad_ + (v_direct_ ? 0 : g_.kv_len * v_cols_);
  per_chunk_ = RoundUp(packed_, 16) + row_block_ * (g_.head + key_block_ + v_cols_ + 2);
  per_chunk_ = RoundUp(per_chunk_, 16);
  needs_.push_back({.name = "attention blocks",
                    .size_bytes = static_cast<int64_t>(sizeof(float)) * per_chunk_ * chunks_});
}

ir::KernelChoice AttentionKernel::Choice() const {
  return {.family = ir::KernelFamily::kNative,
          .implementation = "attention (online softmax)",
          .detail = isa_ == snippets::Isa::kAvx512 ? "avx512" : "avx2"};
}

Status AttentionKernel::Run(ops::KernelContext& ctx) {
  auto* blocks = static_cast<float*>(ctx.scratch[0]);
  const float* q = ctx.in(0).data<float>();
  const float* k = ctx.in(1).data<float>();
  const float* v = ctx.in(2).data<float>();
  const float* bias = ctx.has_in(3) ? ctx.in(3).data<float>() : nullptr;
  float* y = ctx.out(0).data<float>();
  const int64_t row_blocks = (g_.q_len + row_block_ - 1) / row_block_;
  const int64_t reps = g_.q_heads / g_.kv_heads;
  // The tasks of a chunk are consecutive, head by head: the keys and values
  // of a head are packed once per chunk that reaches it.
  auto chunk = [&](int64_t c) {
    float* scratch = blocks + c * per_chunk_;
    float* kt = scratch;
    float* vp = kt + g_.head * keys_pad_;
    int64_t packed_head = -1;
    for (int64_t t = tasks_ * c / chunks_; t < tasks_ * (c + 1) / chunks_; ++t) {
      Task task;
      const int64_t bh = t / row_blocks;
      task.b = bh / g_.q_heads;
      task.h = bh % g_.q_heads;
      task.first = t % row_blocks * row_block_;
      task.rows = std::min(row_block_, g_.q_len - task.first);
      task.q = q;
      task.bias = bias;
      task.y = y;
      const int64_t kv_head = task.h / reps;
      const int64_t kv = task.b * g_.kv_heads + kv_head;
      if (kv != packed_head) {
        const float* kh = k + task.b * g_.k_strides[0] + kv_head * g_.k_strides[1];
        const float* vh = v + task.b * g_.v_strides[0] + kv_head * g_.v_strides[1];
        if (lanes_ == 16) {
          PackAvx512(kh, kt, vh, vp);
        } else {
          PackAvx2(kh, kt, vh, vp);
        }
        packed_head = kv;
      }
      task.kt = kt;
      if (v_direct_) {
        task.v = v + task.b * g_.v_strides[0] + kv_head * g_.v_strides[1];
        task.v_stride = g_.v_strides[2];
      } else {
        task.v = vp;
        task.v_stride = v_cols_;
      }
      task.scratch = scratch + RoundUp(packed_, 16);
      if (lanes_ == 16) {
        RunTaskAvx512(task);
      } else {
        RunTaskAvx2(task);
      }
    }
  };
  if (chunks_ > 1) {
    ThreadPool::Current().ParallelFor(chunks_, chunk);
  } else {
    chunk(0);
  }
  return Status::Ok();
}

// One head's keys, transposed and scaled, in rows of keys_pad_ (zeros
// after the keys), and its values in rows of v_cols_ unless read in place.
TESSEL_INLINE void AttentionKernel::Pack(const float* k, float* kt, const float* v,
                                         float* vp) const {
  for (int64_t e = 0; e < g_.head; ++e) {
    std::fill(kt + e * keys_pad_ + g_.kv_len, kt + (e + 1) * keys_pad_, 0.f);
  }
  // Eight keys at a time: runs of eight floats written per feature.
  for (int64_t j0 = 0; j0 < g_.kv_len; j0 += 8) {
    const int64_t j1 = std::min(j0 + 8, g_.kv_len);
    for (int64_t e = 0; e < g_.head; ++e) {
      float* out = kt + e * keys_pad_;
      const float* in = k + e * g_.k_strides[3];
      for (int64_t j = j0; j < j1; ++j) out[j] = in[j * g_.k_strides[2]] * g_.scale;
    }
  }
  if (v_direct_) return;
  for (int64_t j = 0; j < g_.kv_len; ++j) {
    float* row = vp + j * v_cols_;
    const float* src = v + j * g_.v_strides[2];
    for (int64_t e = 0; e < g_.v_head; ++e) row[e] = src[e * g_.v_strides[3]];
    std::fill(row + g_.v_head, row + v_cols_, 0.f);
  }
}

template <int L>
TESSEL_INLINE void AttentionKernel::RunTask(const Task& t) const {
  using F = typename Lanes<L>::F;
  constexpr int N = Lanes<L>::kTile;
  const int64_t d = g_.head, mb = row_block_;
  float* qp = t.scratch;              // [mb, d]
  float* s = qp + mb * d;             // [mb, key_block_]
  float* o = s + mb * key_block_;     // [mb, v_cols_]
  float* row_max = o + mb * v_cols_;  // [mb]
  float* row_sum = row_max + mb;      // [mb]
  // The queries, and rows of zeros up to whole tiles.
  const float* qh = t.q + t.b * g_.q_strides[0] + t.h * g_.q_strides[1];
  for (int64_t i = 0; i < mb; ++i) {
    float* row = qp + i * d;
    if (i >= t.rows) {
      std::fill(row, row + d, 0.f);
      continue;
    }
    const float* src = qh + (t.first + i) * g_.q_strides[2];
    if (g_.q_strides[3] == 1) {
      std::memcpy(row, src, static_cast<size_t>(d) * sizeof(float));
    } else {
      for (int64_t e = 0; e < d; ++e) row[e] = src[e * g_.q_strides[3]];
    }
  }
  std::fill(o, o + mb * v_cols_, 0.f);
  std::fill(row_max, row_max + mb, kNegInf);
  std::fill(row_sum, row_sum + mb, 0.f);
  for (int64_t k0 = 0; k0 < g_.kv_len; k0 += key_block_) {
    const int64_t keys = std::min(key_block_, g_.kv_len - k0);
    const int64_t keys_pad = RoundUp(keys, L);
    // Scores of the block.
    const float* kt = t.kt + k0;
    for (int64_t r = 0; r < mb; r += kRows) {
      int64_t j = 0;
      for (; j + N * L <= keys_pad; j += N * L) {
        TileProduct<L, N, false>(qp + r * d, d, d, kt + j, keys_pad_, s + r * key_block_ + j,
                                 key_block_);
      }
      if (N > 2 && j + 2 * L <= keys_pad) {
        TileProduct<L, 2, false>(qp + r * d, d, d, kt + j, keys_pad_, s + r * key_block_ + j,
                                 key_block_);
        j += 2 * L;
      }
      for (; j < keys_pad; j += L) {
        TileProduct<L, 1, false>(qp + r * d, d, d, kt + j, keys_pad_, s + r * key_block_ + j,
                                 key_block_);
      }
    }
    // The bias, then the online softmax, row by row.
    for (int64_t i = 0; i < mb; ++i) {
      float* row = s + i * key_block_;
      if (t.bias && i < t.rows) {
        const float* b = t.bias + t.b * g_.bias_strides[0] + t.h * g_.bias_strides[1] +
                         (t.first + i) * g_.bias_strides[2] + k0 * g_.bias_strides[3];
        if (g_.bias_strides[3] == 1) {
          int64_t j = 0;
          for (; j + L <= keys; j += L) Store<L>(row + j, Load<L>(row + j) + Load<L>(b + j));
          for (; j < keys; ++j) row[j] += b[j];
        } else {
          for (int64_t j = 0; j < keys; ++j) row[j] += b[0];
        }
      }
      std::fill(row + keys, row + keys_pad, kNegInf);
      F vmax = Splat<L>(kNegInf);
      for (int64_t j = 0; j < keys_pad; j += L) {
        const F x = Load<L>(row + j);
        vmax = vmax > x ? vmax : x;
      }
      const float block_max = MaxOf<L>(vmax);
      const float m = std::max(row_max[i], block_max);
      if (m == kNegInf) {  // every key so far masked: nothing to add
        std::fill(row, row + keys_pad, 0.f);
        continue;
      }
      const float alpha = row_max[i] == kNegInf ? 0.f : std::exp(row_max[i] - m);
      F sum = F{};
      for (int64_t j = 0; j < keys_pad; j += L) {
        const F p = Exp<L>(Load<L>(row + j) - m);
        Store<L>(row + j, p);
        sum += p;
      }
      if (alpha != 1.f && row_sum[i] != 0.f) {
        float* out = o + i * v_cols_;
        for (int64_t c = 0; c < v_cols_; c += L) Store<L>(out + c, Load<L>(out + c) * alpha);
      }
      row_sum[i] = row_sum[i] * alpha + SumOf<L>(sum);
      row_max[i] = m;
    }
    // The probabilities by the values.
    const float* v = t.v + k0 * t.v_stride;
    for (int64_t r = 0; r < mb; r += kRows) {
      int64_t c = 0;
      for (; c + N * L <= v_cols_; c += N * L) {
        TileProduct<L, N, true>(s + r * key_block_, key_block_, keys, v + c, t.v_stride,
                                o + r * v_cols_ + c, v_cols_);
      }
      if (N > 2 && c + 2 * L <= v_cols_) {
        TileProduct<L, 2, true>(s + r * key_block_, key_block_, keys, v + c, t.v_stride,
                                o + r * v_cols_ + c, v_cols_);
        c += 2 * L;
      }
      for (; c < v_cols_; c += L) {
        TileProduct<L, 1, true>(s + r * key_block_, key_block_, keys, v + c, t.v_stride,
                                o + r * v_cols_ + c, v_cols_);
      }
    }
  }
  // Normalized; a row with every key masked is zeros or NaN (softmax's).
  float* yh = t.y + t.b * g_.y_strides[0] + t.h * g_.y_strides[1];
  for (int64_t i = 0; i < t.rows; ++i) {
    float* dst = yh + (t.first + i) * g_.y_strides[2];
    const float* src = o + i * v_cols_;
    const bool masked = row_sum[i] == 0.f;
    const float inv = masked ? (g_.zero_masked_rows ? 0.f : std::numeric_limits<float>::quiet_NaN())
                             : 1.f / row_sum[i];
    for (int64_t e = 0; e < g_.v_head; ++e) dst[e * g_.y_strides[3]] = masked ? inv : src[e] * inv;
  }
}

__attribute__((target("avx512f,avx512vl,avx2,fma"))) void AttentionKernel::RunTaskAvx512(
    const Task& t) const {
  RunTask<16>(t);
}

__attribute__((target("avx2,fma"))) void AttentionKernel::RunTaskAvx2(const Task& t) const {
  RunTask<8>(t);
}

__attribute__((target("avx512f,avx512vl,avx2,fma"))) void AttentionKernel::PackAvx512(
    const float* k, float* kt, const float* v, float* vp) const {
  Pack(k, kt, v, vp);
}

__attribute__((target("avx2,fma"))) void AttentionKernel::PackAvx2(const float* k, float* kt,
                                                                   const float* v,
                                                                   float* vp) const {
  Pack(k, kt, v, vp);
}

namespace {

// tessel's Rotary (ops/attention.h): X (rank <= 4, rows of whole features,
// possibly as a head Transpose left them) read once, rows of Y written in
// order; rotate_half in vectors of L lanes, the interleaved pairs and the
// features past rotary_dim one by one.
class RotaryKernel final : public FastKernel {
 public:
  RotaryKernel(const Shape& x, std::array<int64_t, 4> x_strides, std::array<int64_t, 4> cos,
               std::array<int64_t, 4> sin, int64_t rotary, bool interleaved)
      : dims_{x[0], x[1], x[2], x[3]},
        x_(x_strides),
        cos_(cos),
        sin_(sin),
        rotary_(rotary),
        interleaved_(interleaved) {}

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return none_; }
  ir::KernelChoice Choice() const override {
    return {.family = ir::KernelFamily::kNative,
            .implementation = interleaved_ ? "rotary interleaved" : "rotary rotate-half"};
  }

  Status Run(ops::KernelContext& ctx) override {
    const float* x = ctx.in(0).data<float>();
    const float* cos = ctx.in(1).data<float>();
    const float* sin = ctx.in(2).data<float>();
    float* y = ctx.out(0).data<float>();
    const int64_t rows = dims_[0] * dims_[1] * dims_[2], width = dims_[3];
    auto range = [&](int64_t first, int64_t last) {
      for (int64_t r = first; r < last; ++r) {
        const int64_t c = r % dims_[2], b = r / dims_[2] % dims_[1], a = r / dims_[2] / dims_[1];
        const auto at = [&](const std::array<int64_t, 4>& s) {
          return a * s[0] + b * s[1] + c * s[2];
        };
        Row(x + at(x_), cos + at(cos_), sin + at(sin_), y + r * width);
      }
    };
    ForRanges(rows, 2 * rows * width * static_cast<int64_t>(sizeof(float)), 4, range);
    return Status::Ok();
  }

 private:
  void Row(const float* x, const float* c, const float* s, float* y) const {
    if (isa_ == snippets::Isa::kAvx512) {
      RowAvx512(x, c, s, y);
    } else {
      RowAvx2(x, c, s, y);
    }
  }
  __attribute__((target("avx512f,avx512vl,avx2,fma"))) void RowAvx512(const float* x,
                                                                      const float* c,
                                                                      const float* s,
                                                                      float* y) const {
    RowAny<16>(x, c, s, y);
  }
  __attribute__((target("avx2,fma"))) void RowAvx2(const float* x, const float* c, const float* s,
                                                   float* y) const {
    RowAny<8>(x, c, s, y);
  }

  // rotate_half over features [j, half) and their partners, in whole
  // vectors of L lanes; returns where it stopped.
  template <int L>
  TESSEL_INLINE int64_t RotateHalf(const float* x, const float* c, const float* s, float* y,
                                   int64_t j, int64_t half) const {
    for (; j + L <= half; j += L) {
      const auto x1 = Load<L>(x + j), x2 = Load<L>(x + half + j);
      Store<L>(y + j, x1 * Load<L>(c + j) - x2 * Load<L>(s + j));
      Store<L>(y + half + j, x2 * Load<L>(c + half + j) + x1 * Load<L>(s + half + j));
    }
    return j;
  }

  template <int L>
  TESSEL_INLINE void RowAny(const float* x, const float* c, const float* s, float* y) const {
    const int64_t half = rotary_ / 2;
    if (interleaved_) {
      for (int64_t j = 0; j < rotary_; j += 2) {
        y[j] = x[j] * c[j] - x[j + 1] * s[j];
        y[j + 1] = x[j + 1] * c[j + 1] + x[j] * s[j + 1];
      }
    } else {
      int64_t j = RotateHalf<L>(x, c, s, y, 0, half);
      if (L > 8) j = RotateHalf<8>(x, c, s, y, j, half);  // Phi's 8-wide halves
      for (; j < half; ++j) {
        y[j] = x[j] * c[j] - x[j + half] * s[j];
        y[half + j] = x[half + j] * c[half + j] + x[j] * s[half + j];
      }
    }
    std::copy(x + rotary_, x + dims_[3], y + rotary_);
  }

  const std::array<int64_t, 4> dims_, x_, cos_, sin_;
  const int64_t rotary_;
  const bool interleaved_;
  const snippets::Isa isa_ = std::min(ActiveOptions().isa, snippets::HostIsa());
  const std::vector<ops::ScratchNeed> none_;
};

}  // namespace

std::unique_ptr<FastKernel> MakeRotary(const ir::Node& node, const std::vector<int64_t>& strides) {
  if (std::min(ActiveOptions().isa, snippets::HostIsa()) < snippets::Isa::kAvx2) return nullptr;
  const ir::Value* x = node.input(0);
  for (size_t i = 0; i < 3; ++i) {
    if (!node.input(i) || node.input(i)->dtype != DType::kFloat32) return nullptr;
  }
  StatusOr<ops::FusedRotaryDims> dims = ops::FusedRotaryShapes(node);
  if (!dims.ok() || x->shape.size() > 4 || dims->rows == 0) return nullptr;
  // X's strides as [a, b, c, features]; its rows must be whole.
  std::array<int64_t, 4> xs = ops::BroadcastStrides4(x->shape);
  if (!strides.empty()) {
    const size_t pad = 4 - strides.size();
    for (size_t a = 0; a < strides.size(); ++a) xs[pad + a] = x->shape[a] == 1 ? 0 : strides[a];
    if (x->shape.back() > 1 && xs[3] != 1) return nullptr;
  }
  // cos and sin against X's rows: right-aligned, their features R wide.
  return std::make_unique<RotaryKernel>(ops::Pad4(x->shape), xs,
                                        ops::BroadcastStrides4(node.input(1)->shape),
                                        ops::BroadcastStrides4(node.input(2)->shape), dims->rotary,
                                        node.attrs.Int("interleaved", 0) != 0);
}

std::unique_ptr<FastKernel> MakeFusedAttention(const ir::Node& node,
                                               const AttentionOperandStrides& strides) {
  if (std::min(ActiveOptions().isa, snippets::HostIsa()) < snippets::Isa::kAvx2) return nullptr;
  const ir::Value* q = node.input(0);
  const ir::Value* k = node.input(1);
  const ir::Value* v = node.input(2);
  const ir::Value* bias = node.input(3);
  const ir::Value* y = node.output(0);
  for (const ir::Value* x : {q, k, v, bias, y}) {
    if (x && (x->dtype != DType::kFloat32 || !x->shape_known)) return nullptr;
  }
  StatusOr<ops::FusedAttentionDims> dims = ops::FusedAttentionShapes(node);
  if (!dims.ok() || !y || NumElements(y->shape) == 0 || dims->kv_len == 0) return nullptr;
  auto plain = [](const Shape& s) {
    std::vector<int64_t> st(s.size(), 1);
    for (size_t i = s.size() - 1; i > 0; --i) st[i - 1] = st[i] * s[i];
    return st;
  };
  // The strides of operand `i` (0-2: Q, K, V; 3: Y) as [B, H, S, D].
  auto strides4 = [&](const ir::Value* x, size_t i) {
    std::vector<int64_t> st = strides[i].empty() ? plain(x->shape) : strides[i];
    std::array<int64_t, 4> out{};
    const size_t pad = 4 - st.size();
    for (size_t a = 0; a < st.size(); ++a) out[pad + a] = x->shape[a] == 1 ? 0 : st[a];
    return out;
  };
  AttentionGeometry g;
  g.batch = dims->batch;
  g.q_heads = dims->q_heads;
  g.kv_heads = dims->kv_heads;
  g.q_len = dims->q_len;
  g.kv_len = dims->kv_len;
  g.head = dims->head;
  g.v_head = dims->v_head;
  g.scale = node.attrs.Float("scale", 1.0f);
  g.zero_masked_rows = node.attrs.Int("zero_masked_rows", 0) != 0;
  g.q_strides = strides4(q, 0);
  g.k_strides = strides4(k, 1);
  g.v_strides = strides4(v, 2);
  g.y_strides = strides4(y, 3);
  g.bias_strides = dims->bias_strides;
  return std::make_unique<AttentionKernel>(g);
}

void ReadAttentionTransposesStrided(const ir::Graph& graph,
                                    std::vector<std::unique_ptr<FastKernel>>& kernels,
                                    std::vector<ir::Layout>& layouts) {
  const AdjacentTransposes adjacent(graph, kernels, layouts);
  const auto& nodes = graph.nodes();
  for (size_t n = 0; n < nodes.size(); ++n) {
    const ir::Node& node = *nodes[n];
    if (!kernels[n] || node.domain != "tessel") continue;
    if (node.op_type == "Rotary") {
      RelayoutKernel* t = adjacent.Producing(node.inputs[0]);
      if (!t) continue;
      const ir::Value* x = node.inputs[0];
      std::unique_ptr<FastKernel> strided =
          MakeRotary(node, ops::TransposedStrides(x->shape, t->perm(), true));
      if (!strided) continue;
      kernels[n] = std::move(strided);
      t->Relayout(RelayoutKernel::Mode::kUnpermuted);
      layouts[static_cast<size_t>(x->id)] = ir::Layout::kUnpermuted;
      continue;
    }
    if (node.op_type != "FusedAttention") continue;
    AttentionOperandStrides strides;
    std::array<RelayoutKernel*, 4> around{};
    std::array<const ir::Value*, 4> between{};
    for (size_t i = 0; i < 3; ++i) {
      between[i] = node.inputs[i];
      // An input read twice (self-attention of one tensor) stays plain.
      const bool shared = std::count(node.inputs.begin(), node.inputs.end(), between[i]) > 1;
      around[i] = shared ? nullptr : adjacent.Producing(between[i]);
      if (around[i])
        strides[i] = ops::TransposedStrides(between[i]->shape, around[i]->perm(), true);
    }
    between[3] = node.output(0);
    around[3] = adjacent.Reading(between[3]);
    if (around[3]) strides[3] = ops::TransposedStrides(between[3]->shape, around[3]->perm(), false);
    if (std::none_of(around.begin(), around.end(), [](auto* k) { return k != nullptr; })) continue;
    std::unique_ptr<FastKernel> strided = MakeFusedAttention(node, strides);
    if (!strided) continue;
    kernels[n] = std::move(strided);
    for (size_t i = 0; i < 4; ++i) {
      if (!around[i]) continue;
      around[i]->Relayout(i < 3 ? RelayoutKernel::Mode::kUnpermuted
                                : RelayoutKernel::Mode::kPermuted);
      layouts[static_cast<size_t>(between[i]->id)] =
          i < 3 ? ir::Layout::kUnpermuted : ir::Layout::kPermuted;
    }
  }
}

}  // namespace tessel::cpu
