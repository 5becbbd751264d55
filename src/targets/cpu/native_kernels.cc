#include "targets/cpu/native_kernels.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "ops/op_registry.h"
#include "ops/reduce_plan.h"
#include "ops/spatial_plan.h"
#include "ops/strided_view.h"
#include "snippets/isa.h"
#include "targets/cpu/thread_pool.h"

namespace tessel::cpu {

namespace {

// The sum of f over n floats, in 16 lanes the compiler keeps in vector
// registers (the target-specific callers inline it into their ISA).
template <typename F>
__attribute__((always_inline)) inline double LaneSum(const float* in, int64_t n, F f) {
  constexpr int kLanes = 16;
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) acc[j] += f(in[i + j]);
  }
  double sum = 0;
  for (; i < n; ++i) sum += f(in[i]);
  for (int j = 0; j < kLanes; ++j) sum += acc[j];
  return sum;
}

__attribute__((target("avx2"))) void CopyRowsAvx2(char* out, int64_t out_stride, const char* in,
                                                  int64_t in_stride, int64_t row_bytes,
                                                  int64_t rows) {
  const int64_t full = row_bytes / 32, tail = row_bytes % 32 / 4;
  alignas(32) static const int32_t kLanes[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                 0,  0,  0,  0,  0,  0,  0,  0};
  const __m256i mask = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kLanes + 8 - tail));
  for (int64_t r = 0; r < rows; ++r) {
    const float* src = reinterpret_cast<const float*>(in + r * in_stride);
    float* dst = reinterpret_cast<float*>(out + r * out_stride);
    for (int64_t v = 0; v < full; ++v) _mm256_storeu_ps(dst + 8 * v, _mm256_loadu_ps(src + 8 * v));
    if (tail) {
      _mm256_maskstore_ps(dst + 8 * full, mask, _mm256_maskload_ps(src + 8 * full, mask));
    }
  }
}

}  // namespace

void CopyRows(char* out, int64_t out_stride, const char* in, int64_t in_stride, int64_t row_bytes,
              int64_t rows) {
  const bool avx2 = std::min(ActiveOptions().isa, snippets::HostIsa()) >= snippets::Isa::kAvx2;
  if (avx2 && row_bytes % 4 == 0 && row_bytes <= 512) {
    CopyRowsAvx2(out, out_stride, in, in_stride, row_bytes, rows);
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(out + r * out_stride, in + r * in_stride, static_cast<size_t>(row_bytes));
  }
}

// Calls fn(first, last) over ranges covering [0, items): all on the calling
// thread when the kernel moves fewer than `bytes` worth a second thread
// (ParallelCopyBytes), else `per_thread` ranges per thread of the pool, so
// that uneven ranges balance.
void ForRanges(int64_t items, int64_t bytes, int per_thread,
               const std::function<void(int64_t, int64_t)>& fn) {
  ThreadPool& pool = ThreadPool::Current();
  const int64_t chunks =
      bytes < ParallelCopyBytes() ? 1 : std::min<int64_t>(items, per_thread * pool.num_threads());
  if (chunks <= 1) {
    fn(0, items);
    return;
  }
  pool.ParallelFor(chunks, [&](int64_t c) { fn(items * c / chunks, items * (c + 1) / chunks); });
}

namespace {

class StridedCopy final : public FastKernel {
 public:
  StridedCopy(ops::StridedView view, size_t elem_bytes) : elem_(elem_bytes) {
    // Drop unit dims, then merge a dim into the next when together they walk
    // the input evenly: fewer, longer runs.
    for (size_t i = 0; i < view.out.size(); ++i) {
      if (view.out[i] == 1) continue;
      if (!dims_.empty() && strides_.back() == view.strides[i] * view.out[i]) {
        dims_.back() *= view.out[i];
        strides_.back() = view.strides[i];
      } else {
        dims_.push_back(view.out[i]);
        strides_.push_back(view.strides[i]);
      }
    }
    if (dims_.empty()) {
      dims_ = {1};
      strides_ = {1};
    }
    base_ = view.base;
    inner_ = dims_.back();
    rows_ = 1;
    for (size_t i = 0; i + 1 < dims_.size(); ++i) rows_ *= dims_[i];
    for (int64_t d : view.out) total_ *= d;
    // A (batched) transpose of 4-byte elements: the next-to-last output dim
    // walks the input contiguously, the last does not. Copied by 8x8 tiles
    // with AVX2 (NCHW <-> NHWC, attention heads): each load and store is a
    // whole vector instead of an element.
    const size_t n = dims_.size();
    // With fewer than 8 columns (talking heads' [.., S, S, heads]), blocks of
    // 64 rows, one column at a time: contiguous loads, stores within a few
    // cache lines.
    tiles_ = elem_ == 4 && n >= 2 && strides_[n - 2] == 1 && strides_[n - 1] != 1 &&
             dims_[n - 2] >= 8 &&
             (dims_[n - 1] < 8 ||
              std::min(ActiveOptions().isa, snippets::HostIsa()) >= snippets::Isa::kAvx2);
  }

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return none_; }
  ir::KernelChoice Choice() const override {
    return {.family = ir::KernelFamily::kNative,
            .implementation = tiles_ ? "transpose tiles" : "strided copy"};
  }

  Status Run(ops::KernelContext& ctx) override {
    if (total_ == 0) return Status::Ok();
    const char* in = static_cast<const char*>(ctx.in(0).raw_data());
    char* out = static_cast<char*>(ctx.out(0).raw_data());
    if (tiles_) {
      TransposeTiles(reinterpret_cast<const float*>(in) + base_, reinterpret_cast<float*>(out));
      return Status::Ok();
    }
    ForRanges(rows_, total_ * static_cast<int64_t>(elem_), 4,
              [&](int64_t first, int64_t last) { CopyRows(in, out, first, last); });
    return Status::Ok();
  }

 private:
  // Output rows [first, last): each a run of inner_ elements.
  void CopyRows(const char* in, char* out, int64_t first, int64_t last) const {
    const size_t outer = dims_.size() - 1;
    std::vector<int64_t> index(outer, 0);
    int64_t offset = base_;  // input element offset of the row
    for (int64_t r = first, i = static_cast<int64_t>(outer); i-- > 0;) {
      index[static_cast<size_t>(i)] = r % dims_[static_cast<size_t>(i)];
      r /= dims_[static_cast<size_t>(i)];
      offset += index[static_cast<size_t>(i)] * strides_[static_cast<size_t>(i)];
    }
    const int64_t step = strides_.back();
    for (int64_t row = first; row < last; ++row) {
      CopyRun(in + offset * static_cast<int64_t>(elem_), step,
              out + row * inner_ * static_cast<int64_t>(elem_));
      for (size_t i = outer; i-- > 0;) {  // next row: odometer
        offset += strides_[i];
        if (++index[i] < dims_[i]) break;
        offset -= strides_[i] * dims_[i];
        index[i] = 0;
      }
    }
  }

  void CopyRun(const char* in, int64_t step, char* out) const {
    if (step == 1) {
      std::memcpy(out, in, static_cast<size_t>(inner_) * elem_);
      return;
    }
    switch (elem_) {
      case 4:
        Gather<uint32_t>(in, step, out);
        return;
      case 8:
        Gather<uint64_t>(in, step, out);
        return;
      case 2:
        Gather<uint16_t>(in, step, out);
        return;
      case 1:
        Gather<uint8_t>(in, step, out);
        return;
      default:
        for (int64_t j = 0; j < inner_; ++j)
          std::memcpy(out + j * static_cast<int64_t>(elem_),
                      in + j * step * static_cast<int64_t>(elem_), elem_);
    }
  }

  // Output (outer..., R, C), C contiguous; input element (r, c) at
  // r + c * S from the outer index's offset. Tasks: 8 output rows each (64
  // when C < 8).
  void TransposeTiles(const float* in, float* out) const {
    const size_t n = dims_.size();
    const int64_t R = dims_[n - 2], C = dims_[n - 1], S = strides_[n - 1];
    const int64_t tile = C < 8 ? 64 : 8;
    const int64_t row_tiles = (R + tile - 1) / tile, outer = rows_ / R;
    ForRanges(outer * row_tiles, total_ * 4, 4, [&](int64_t first, int64_t last) {
      for (int64_t item = first; item < last; ++item) {
        const int64_t o = item / row_tiles, r0 = item % row_tiles * tile;
        int64_t offset = 0;  // the outer index's input offset
        for (int64_t rest = o, i = static_cast<int64_t>(n) - 2; i-- > 0;) {
          offset += rest % dims_[static_cast<size_t>(i)] * strides_[static_cast<size_t>(i)];
          rest /= dims_[static_cast<size_t>(i)];
        }
        if (C < 8) {
          NarrowRows(in + offset, S, out + o * R * C, C, r0, std::min<int64_t>(64, R - r0));
        } else {
          TileRows(in + offset, S, out + o * R * C, C, r0, std::min<int64_t>(8, R - r0));
        }
      }
    });
  }

  // Output rows [r0, r0 + rows) of one (R, C) block, C < 8.
  static void NarrowRows(const float* in, int64_t S, float* out, int64_t C, int64_t r0,
                         int64_t rows) {
    for (int64_t c = 0; c < C; ++c) {
      const float* src = in + r0 + c * S;
      float* dst = out + r0 * C + c;
      for (int64_t j = 0; j < rows; ++j) dst[j * C] = src[j];
    }
  }

  // Output rows [r0, r0 + rows) of one (R, C) block.
  __attribute__((target("avx2"))) static void TileRows(const float* in, int64_t S, float* out,
                                                       int64_t C, int64_t r0, int64_t rows) {
    int64_t c0 = 0;
    if (rows == 8) {
      for (; c0 + 8 <= C; c0 += 8) {
        const float* src = in + r0 + c0 * S;
        __m256 v[8];
        for (int k = 0; k < 8; ++k) v[k] = _mm256_loadu_ps(src + k * S);
        const __m256 t0 = _mm256_unpacklo_ps(v[0], v[1]), t1 = _mm256_unpackhi_ps(v[0], v[1]);
        const __m256 t2 = _mm256_unpacklo_ps(v[2], v[3]), t3 = _mm256_unpackhi_ps(v[2], v[3]);
        const __m256 t4 = _mm256_unpacklo_ps(v[4], v[5]), t5 = _mm256_unpackhi_ps(v[4], v[5]);
        const __m256 t6 = _mm256_unpacklo_ps(v[6], v[7]), t7 = _mm256_unpackhi_ps(v[6], v[7]);
        const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
        const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
        const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
        const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
        float* dst = out + r0 * C + c0;
        _mm256_storeu_ps(dst + 0 * C, _mm256_permute2f128_ps(s0, s4, 0x20));
        _mm256_storeu_ps(dst + 1 * C, _mm256_permute2f128_ps(s1, s5, 0x20));
        _mm256_storeu_ps(dst + 2 * C, _mm256_permute2f128_ps(s2, s6, 0x20));
        _mm256_storeu_ps(dst + 3 * C, _mm256_permute2f128_ps(s3, s7, 0x20));
        _mm256_storeu_ps(dst + 4 * C, _mm256_permute2f128_ps(s0, s4, 0x31));
        _mm256_storeu_ps(dst + 5 * C, _mm256_permute2f128_ps(s1, s5, 0x31));
        _mm256_storeu_ps(dst + 6 * C, _mm256_permute2f128_ps(s2, s6, 0x31));
        _mm256_storeu_ps(dst + 7 * C, _mm256_permute2f128_ps(s3, s7, 0x31));
      }
    }
    // The columns past the last whole tile (all of them for a partial row tile).
    for (int64_t r = r0; r < r0 + rows; ++r) {
      for (int64_t c = c0; c < C; ++c) out[r * C + c] = in[r + c * S];
    }
  }

  template <typename T>
  void Gather(const char* in, int64_t step, char* out) const {
    const T* src = reinterpret_cast<const T*>(in);
    T* dst = reinterpret_cast<T*>(out);
    for (int64_t j = 0; j < inner_; ++j) dst[j] = src[j * step];
  }

  size_t elem_;
  std::vector<int64_t> dims_, strides_;
  int64_t base_ = 0, inner_ = 1, rows_ = 1, total_ = 1;
  bool tiles_ = false;
  std::vector<ops::ScratchNeed> none_;
};

// ChannelShuffle (ops/tensor.cc): channel j of the shuffled tensor is
// channel j / G of input j % G. In the plain layout whole planes move; in
// channels last each pixel's output row gathers from the inputs' rows.
class ChannelShuffleCopy final : public LayoutFlexibleKernel {
 public:
  ChannelShuffleCopy(const Shape& in, size_t groups, size_t parts, size_t elem_bytes)
      : groups_(static_cast<int64_t>(groups)),
        parts_(static_cast<int64_t>(parts)),
        elem_(static_cast<int64_t>(elem_bytes)),
        channels_(in[1]),
        out_channels_(in[1] * groups_ / parts_),
        images_(in[0]),
        pixels_(NumElements(Shape(in.begin() + 2, in.end()))) {}

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return none_; }
  ir::KernelChoice Choice() const override {
    if (!channels_last_)
      return {.family = ir::KernelFamily::kNative, .implementation = "plane copy"};
    return {.family = ir::KernelFamily::kNative,
            .implementation = "channel gather",
            .variant = ir::LayoutName(ir::Layout::kChannelsLast)};
  }
  bool CanRunIn(ActivationLayout layout) override {
    return layout == ActivationLayout::kChannelsLast;
  }
  void RunIn(ActivationLayout layout) override { channels_last_ = true; }

  Status Run(ops::KernelContext& ctx) override {
    if (channels_last_ && groups_ == 2 && elem_ == 4 && out_channels_ % 2 == 0) {
      GatherPairs(ctx);
    } else if (channels_last_) {
      Gather(ctx);
    } else {
      CopyPlanes(ctx);
    }
    return Status::Ok();
  }

 private:
  // The input that shuffled channel j comes from, and the output it goes to.
  const char* In(ops::KernelContext& ctx, int64_t j) const {
    return static_cast<const char*>(ctx.in(static_cast<size_t>(j % groups_)).raw_data());
  }
  char* Out(ops::KernelContext& ctx, int64_t j) const {
    return static_cast<char*>(ctx.out(static_cast<size_t>(j / out_channels_)).raw_data());
  }

  void CopyPlanes(ops::KernelContext& ctx) const {
    const int64_t plane = pixels_ * elem_;
    for (int64_t n = 0; n < images_; ++n) {
      for (int64_t j = 0; j < channels_ * groups_; ++j) {
        std::memcpy(Out(ctx, j) + (n * out_channels_ + j % out_channels_) * plane,
                    In(ctx, j) + (n * channels_ + j / groups_) * plane, static_cast<size_t>(plane));
      }
    }
  }

  // Any group count and element size, one element at a time.
  void Gather(ops::KernelContext& ctx) const {
    for (int64_t p = 0; p < images_ * pixels_; ++p) {
      for (int64_t j = 0; j < channels_ * groups_; ++j) {
        std::memcpy(Out(ctx, j) + (p * out_channels_ + j % out_channels_) * elem_,
                    In(ctx, j) + (p * channels_ + j / groups_) * elem_, static_cast<size_t>(elem_));
      }
    }
  }

  // ShuffleNet's case, two float inputs: output k's row interleaves the two
  // inputs' rows from channel k * out_channels / 2 on (a loop the compiler
  // vectorizes).
  void GatherPairs(ops::KernelContext& ctx) const {
    const auto* a = static_cast<const float*>(ctx.in(0).raw_data());
    const auto* b = static_cast<const float*>(ctx.in(1).raw_data());
    const int64_t half = out_channels_ / 2;
    for (int64_t k = 0; k < parts_; ++k) {
      auto* out = static_cast<float*>(ctx.out(static_cast<size_t>(k)).raw_data());
      for (int64_t p = 0; p < images_ * pixels_; ++p) {
        const float* ra = a + p * channels_ + k * half;
        const float* rb = b + p * channels_ + k * half;
        float* o = out + p * out_channels_;
        for (int64_t t = 0; t < half; ++t) {
          o[2 * t] = ra[t];
          o[2 * t + 1] = rb[t];
        }
      }
    }
  }

  const int64_t groups_, parts_, elem_, channels_, out_channels_, images_, pixels_;
  bool channels_last_ = false;
  const std::vector<ops::ScratchNeed> none_;
};

// Resize and Upsample of float tensors whose last two axes (rows and
// columns) are resampled and the others kept: each output row blends its
// rows' taps (ops::PlanResizeNode, the reference kernel's plan), each column
// gathering its columns' taps, written straight into the output. Rows are
// spread over the thread pool.
class ResizeRows final : public LayoutFlexibleKernel {
 public:
  ResizeRows(const ops::ResizeSampling& s, const Shape& in)
      : channels_(in.size() == 4 ? in[1] : 0),
        images_(in.size() == 4 ? in[0] : 0),
        rows_(Simplified(s.axes[in.size() - 2])),
        cols_(Simplified(s.axes[in.size() - 1])),
        extrapolation_(static_cast<float>(s.extrapolation_value)),
        in_h_(in[in.size() - 2]),
        in_w_(in[in.size() - 1]),
        out_h_(s.out[in.size() - 2]),
        out_w_(s.out[in.size() - 1]) {
    planes_ = NumElements(Shape(in.begin(), in.end() - 2));
    for (int64_t i : cols_.index) col_index_.push_back(static_cast<int32_t>(i));
    for (double w : cols_.weight) col_weight_.push_back(static_cast<float>(w));
    for (double w : rows_.weight) row_weight_.push_back(static_cast<float>(w));
    for (bool o : cols_.outside) any_col_outside_ = any_col_outside_ || o;
    cols_identity_ = cols_.identity;
  }

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return none_; }
  ir::KernelChoice Choice() const override {
    if (channels_last_) {
      return {.family = ir::KernelFamily::kNative,
              .implementation = "resize pixels",
              .variant = ir::LayoutName(ir::Layout::kChannelsLast)};
    }
    return {.family = ir::KernelFamily::kNative, .implementation = "resize rows"};
  }
  // Images (N, C, H, W): channels last, each output pixel's row of channels
  // blends its taps' rows.
  bool CanRunIn(ActivationLayout layout) override {
    return layout == ActivationLayout::kChannelsLast && channels_ > 0;
  }
  void RunIn(ActivationLayout) override { channels_last_ = true; }
  // Inputs 1-3 (roi, scales, sizes) are parameters, not data.
  bool TakesEitherLayout(size_t input, ActivationLayout) const override { return input > 0; }

  Status Run(ops::KernelContext& ctx) override {
    const float* in = ctx.in(0).data<float>();
    float* out = ctx.out(0).data<float>();
    if (channels_last_) {
      const int64_t rows = images_ * out_h_;
      ForRanges(rows, rows * out_w_ * channels_ * static_cast<int64_t>(sizeof(float)), 8,
                [&](int64_t first, int64_t last) {
                  for (int64_t r = first; r < last; ++r) {
                    PixelRow(in + (r / out_h_) * in_h_ * in_w_ * channels_, r % out_h_,
                             out + r * out_w_ * channels_);
                  }
                });
      return Status::Ok();
    }
    const int64_t rows = planes_ * out_h_;
    ForRanges(rows, rows * out_w_ * static_cast<int64_t>(sizeof(float)), 8,
              [&](int64_t first, int64_t last) {
                for (int64_t r = first; r < last; ++r) {
                  Row(in + (r / out_h_) * in_h_ * in_w_, r % out_h_, out + r * out_w_);
                }
              });
    return Status::Ok();
  }

 private:
  // An axis that keeps its length reads its own coordinate: one tap of
  // weight 1, as the reference kernel skips it (a linear plan's second tap
  // of weight 0 would turn a neighbouring infinity into NaN).
  static ops::AxisSampling Simplified(ops::AxisSampling a) {
    if (!a.identity || a.taps == 1) return a;
    const int64_t n = static_cast<int64_t>(a.outside.size());
    a.taps = 1;
    a.index.resize(n);
    for (int64_t x = 0; x < n; ++x) a.index[x] = x;
    a.weight.assign(n, 1.0);
    a.outside.assign(n, false);
    return a;
  }

  // Output row y of one image, channels last: each pixel's channels are the
  // blend of its taps' pixels, row taps times column taps.
  void PixelRow(const float* image, int64_t y, float* out) const {
    const int64_t C = channels_;
    const int64_t* ri = rows_.index.data() + y * rows_.taps;
    const float* rw = row_weight_.data() + y * rows_.taps;
    const int tc = cols_.taps;
    for (int64_t x = 0; x < out_w_; ++x) {
      float* dst = out + x * C;
      if (rows_.outside[y] || cols_.outside[x]) {
        std::fill(dst, dst + C, extrapolation_);
        continue;
      }
      const int32_t* ci = col_index_.data() + x * tc;
      const float* cw = col_weight_.data() + x * tc;
      if (rows_.taps == 1 && tc == 1 && rw[0] == 1.0f && cw[0] == 1.0f) {  // nearest
        std::memcpy(dst, image + (ri[0] * in_w_ + ci[0]) * C, static_cast<size_t>(C) * 4);
        continue;
      }
      std::fill(dst, dst + C, 0.f);
      for (int k = 0; k < rows_.taps; ++k) {
        for (int j = 0; j < tc; ++j) {
          const float w = rw[k] * cw[j];
          const float* src = image + (ri[k] * in_w_ + ci[j]) * C;
          for (int64_t c = 0; c < C; ++c) dst[c] += w * src[c];
        }
      }
    }
  }

  // Output row y of one plane.
  void Row(const float* plane, int64_t y, float* out) const {
    if (rows_.outside[y]) {
      std::fill(out, out + out_w_, extrapolation_);
      return;
    }
    const int64_t* ri = rows_.index.data() + y * rows_.taps;
    const float* rw = row_weight_.data() + y * rows_.taps;
    const int32_t* ci = col_index_.data();
    const float* cw = col_weight_.data();
    if (rows_.taps == 1 && rw[0] == 1.0f && cols_.taps == 1) {  // nearest: copies
      const float* src = plane + ri[0] * in_w_;
      if (cols_identity_) {
        std::memcpy(out, src, static_cast<size_t>(out_w_) * sizeof(float));
      } else {
        for (int64_t x = 0; x < out_w_; ++x)
          out[x] = cw[x] == 1.0f ? src[ci[x]] : cw[x] * src[ci[x]];
      }
    } else if (rows_.taps == 2 && cols_.taps == 2) {  // linear
      const float* a = plane + ri[0] * in_w_;
      const float* b = plane + ri[1] * in_w_;
      const float wa = rw[0], wb = rw[1];
      for (int64_t x = 0; x < out_w_; ++x) {
        const int32_t i0 = ci[2 * x], i1 = ci[2 * x + 1];
        const float w0 = cw[2 * x], w1 = cw[2 * x + 1];
        out[x] = wa * (w0 * a[i0] + w1 * a[i1]) + wb * (w0 * b[i0] + w1 * b[i1]);
      }
    } else if (rows_.taps == 2 && cols_identity_) {  // linear over rows only
      const float* a = plane + ri[0] * in_w_;
      const float* b = plane + ri[1] * in_w_;
      const float wa = rw[0], wb = rw[1];
      for (int64_t x = 0; x < out_w_; ++x) out[x] = wa * a[x] + wb * b[x];
    } else {  // any taps: cubic, antialiased, mixed
      const int tc = cols_.taps;
      for (int64_t x = 0; x < out_w_; ++x) {
        float v = 0;
        for (int k = 0; k < rows_.taps; ++k) {
          const float* src = plane + ri[k] * in_w_;
          float h = 0;
          for (int j = 0; j < tc; ++j) h += cw[x * tc + j] * src[ci[x * tc + j]];
          v += rw[k] * h;
        }
        out[x] = v;
      }
    }
    if (any_col_outside_) {
      for (int64_t x = 0; x < out_w_; ++x) {
        if (cols_.outside[x]) out[x] = extrapolation_;
      }
    }
  }

  const int64_t channels_, images_;  // 0 unless images (N, C, H, W)
  const ops::AxisSampling rows_, cols_;
  const float extrapolation_;
  const int64_t in_h_, in_w_, out_h_, out_w_;
  int64_t planes_ = 1;
  bool channels_last_ = false;
  std::vector<int32_t> col_index_;
  std::vector<float> col_weight_, row_weight_;
  bool any_col_outside_ = false, cols_identity_ = false;
  const std::vector<ops::ScratchNeed> none_;
};

// GlobalAveragePool of floats: one sum per image and channel, plain (each
// channel's pixels contiguous), channels last (each pixel's channels
// contiguous, summed a block of channels at a time) or nChw16c (each
// pixel's 16 channels of a block contiguous). The output, one pixel per
// channel, has the same bytes in all three.
class GlobalAverage final : public LayoutFlexibleKernel {
 public:
  explicit GlobalAverage(const Shape& in)
      : rank_(in.size()),
        images_(in[0]),
        channels_(in[1]),
        pixels_(NumElements(Shape(in.begin() + 2, in.end()))) {}

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return none_; }
  ir::KernelChoice Choice() const override {
    return {.family = ir::KernelFamily::kNative,
            .implementation = "global average",
            .variant = blocked_         ? ir::LayoutName(ir::Layout::kBlocked16)
                       : channels_last_ ? ir::LayoutName(ir::Layout::kChannelsLast)
                                        : ""};
  }
  bool CanRunIn(ActivationLayout layout) override {
    return layout == ActivationLayout::kChannelsLast || (rank_ == 4 && channels_ % 16 == 0);
  }
  void RunIn(ActivationLayout layout) override {
    channels_last_ = true;
    blocked_ = layout == ActivationLayout::kBlocked16;
  }

  Status Run(ops::KernelContext& ctx) override {
    const float* in = ctx.in(0).data<float>();
    float* out = ctx.out(0).data<float>();
    const float scale = 1.0f / static_cast<float>(pixels_);
    // Channels last: blocks of kBlock channels of one image.
    const int64_t blocks = (channels_ + kBlock - 1) / kBlock;
    const int64_t items = channels_last_ ? images_ * blocks : images_ * channels_;
    const int64_t bytes = images_ * channels_ * pixels_ * static_cast<int64_t>(sizeof(float));
    ForRanges(items, bytes, 4, [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i) {
        if (channels_last_) {
          SumBlock(in, i / blocks, (i % blocks) * kBlock, scale, out);
        } else {
          out[i] = SumPlane(in + i * pixels_) * scale;
        }
      }
    });
    return Status::Ok();
  }

 private:
  static constexpr int64_t kBlock = 64;

  float SumPlane(const float* p) const {
    return static_cast<float>(LaneSum(p, pixels_, [](float v) { return v; }));
  }

  // Channels [first, first + kBlock) of one image, channels last or blocked.
  void SumBlock(const float* in, int64_t image, int64_t first, float scale, float* out) const {
    const int64_t width = std::min(kBlock, channels_ - first);
    float acc[kBlock] = {};
    if (blocked_) {
      for (int64_t b = 0; b < width; b += 16) {  // kBlock is a multiple of 16
        const float* p = in + (image * channels_ + first + b) * pixels_;
        for (int64_t q = 0; q < pixels_; ++q, p += 16) {
          for (int64_t j = 0; j < 16; ++j) acc[b + j] += p[j];
        }
      }
    } else {
      const float* p = in + image * pixels_ * channels_ + first;
      for (int64_t q = 0; q < pixels_; ++q, p += channels_) {
        for (int64_t j = 0; j < width; ++j) acc[j] += p[j];
      }
    }
    for (int64_t j = 0; j < width; ++j) out[image * channels_ + first + j] = acc[j] * scale;
  }

  const size_t rank_;
  const int64_t images_, channels_, pixels_;
  bool channels_last_ = false;  // or blocked: a block of channels at a time
  bool blocked_ = false;
  const std::vector<ops::ScratchNeed> none_;
};

// Pad in constant mode (negative pads crop): each output row (the last
// axis) is the fill value where its outer index lies in the padding, else
// the fill, the input row's kept part and the fill again. Rows are spread
// over the thread pool.
class PadRows final : public FastKernel {
 public:
  PadRows(const Shape& in, ops::PadPlan plan)
      : in_(in), out_(plan.out), begin_(plan.begin), fill_(plan.fill), elem_(plan.fill.size()) {
    zero_fill_ = std::all_of(fill_.begin(), fill_.end(), [](uint8_t b) { return b == 0; });
    for (size_t d = 0; d + 1 < out_.size(); ++d) rows_ *= out_[d];
    last_ = out_.empty() ? 1 : out_.back();
  }

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return none_; }
  ir::KernelChoice Choice() const override {
    return {.family = ir::KernelFamily::kNative, .implementation = "pad rows"};
  }

  Status Run(ops::KernelContext& ctx) override {
    const auto* in = static_cast<const char*>(ctx.in(0).raw_data());
    auto* out = static_cast<char*>(ctx.out(0).raw_data());
    ForRanges(rows_, rows_ * last_ * static_cast<int64_t>(elem_), 8,
              [&](int64_t first, int64_t last) {
                for (int64_t r = first; r < last; ++r) Row(in, r, out);
              });
    return Status::Ok();
  }

 private:
  void Fill(char* to, int64_t n) const {
    if (n <= 0) return;
    if (zero_fill_) {
      std::memset(to, 0, static_cast<size_t>(n) * elem_);
      return;
    }
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(to + i * static_cast<int64_t>(elem_), fill_.data(), elem_);
  }

  // Output row r: its outer index, odometer-decoded.
  void Row(const char* in, int64_t r, char* out) const {
    const int64_t e = static_cast<int64_t>(elem_);
    char* to = out + r * last_ * e;
    const size_t rank = out_.size();
    int64_t offset = 0, stride = 1;
    bool inside = true;
    if (rank > 0) stride = in_[rank - 1];
    for (size_t d = rank - 1; d-- > 0;) {
      const int64_t o = r % out_[d];
      r /= out_[d];
      const int64_t i = o - begin_[d];
      inside = inside && i >= 0 && i < in_[d];
      offset += i * stride;
      stride *= in_[d];
    }
    if (!inside || rank == 0) {
      Fill(to, last_);
      return;
    }
    const int64_t b = begin_[rank - 1];
    const int64_t first = std::clamp<int64_t>(b, 0, last_);
    const int64_t end = std::clamp<int64_t>(b + in_[rank - 1], first, last_);
    Fill(to, first);
    std::memcpy(to + first * e, in + (offset + first - b) * e,
                static_cast<size_t>((end - first) * e));
    Fill(to + end * e, last_ - end);
  }

  const Shape in_, out_;
  const std::vector<int64_t> begin_;
  const std::vector<uint8_t> fill_;
  const size_t elem_;
  bool zero_fill_ = true;
  int64_t rows_ = 1, last_ = 1;
  const std::vector<ops::ScratchNeed> none_;
};

// Gather with indices known at compile time: for each outer index, the
// indexed blocks (everything after the axis) copied whole. Swin's q, k, v =
// qkv[0], qkv[1], qkv[2] are one contiguous block each.
class GatherBlocks final : public FastKernel {
 public:
  GatherBlocks(std::vector<int64_t> index, int64_t outer, int64_t axis_len, int64_t block_bytes)
      : index_(std::move(index)), outer_(outer), axis_len_(axis_len), block_(block_bytes) {}
  // Indices known only at run time (an embedding lookup of token ids): read
  // from input 1 (`count` of them, int32 or int64) at every run.
  GatherBlocks(int64_t count, DType index_type, int64_t outer, int64_t axis_len,
               int64_t block_bytes)
      : outer_(outer),
        axis_len_(axis_len),
        block_(block_bytes),
        runtime_count_(count),
        index_type_(index_type) {}

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return none_; }
  ir::KernelChoice Choice() const override {
    return {.family = ir::KernelFamily::kNative,
            .implementation = runtime_count_ > 0 ? "gather rows" : "gather blocks"};
  }

  Status Run(ops::KernelContext& ctx) override {
    if (runtime_count_ == 0) return Copy(ctx, index_);
    std::vector<int64_t> index(static_cast<size_t>(runtime_count_));
    for (int64_t k = 0; k < runtime_count_; ++k) {
      int64_t v = index_type_ == DType::kInt64 ? ctx.in(1).data<int64_t>()[k]
                                               : ctx.in(1).data<int32_t>()[k];
      if (v < 0) v += axis_len_;
      if (v < 0 || v >= axis_len_) {
        // The reference kernel names the index, its position and the range.
        return ops::RunKernel(*ops::OpRegistry::Global().Find("Gather", ""), ctx);
      }
      index[static_cast<size_t>(k)] = v;
    }
    return Copy(ctx, index);
  }

 private:
  Status Copy(ops::KernelContext& ctx, const std::vector<int64_t>& index) const {
    const auto* in = static_cast<const char*>(ctx.in(0).raw_data());
    auto* out = static_cast<char*>(ctx.out(0).raw_data());
    const auto n = static_cast<int64_t>(index.size());
    const int64_t items = outer_ * n;
    ForRanges(items, items * block_, 8, [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i) {
        const int64_t o = i / n, k = i % n;
        std::memcpy(out + i * block_, in + (o * axis_len_ + index[static_cast<size_t>(k)]) * block_,
                    static_cast<size_t>(block_));
      }
    });
    return Status::Ok();
  }

  const std::vector<int64_t> index_;  // normalized to [0, axis_len)
  const int64_t outer_, axis_len_, block_;
  const int64_t runtime_count_ = 0;  // > 0: indices from input 1 at run time
  const DType index_type_ = DType::kInt64;
  const std::vector<ops::ScratchNeed> none_;
};

// LayerNormalization of floats over trailing axes, a row at a time: the
// mean, then the variance about it (two passes, as the reference kernel,
// sums in sixteen lanes the compiler keeps in vector registers), then
// (x - mean) / sqrt(var + epsilon) * scale + bias. Rows are spread over the
// thread pool.
class LayerNormRows final : public FastKernel {
 public:
  // channels > 0: InstanceNormalization, one scale and bias per row (its
  // channel, row % channels) instead of one per column.
  LayerNormRows(int64_t rows, int64_t cols, float epsilon, bool bias, int64_t channels = 0)
      : rows_(rows), cols_(cols), epsilon_(epsilon), bias_(bias), channels_(channels) {}

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return none_; }
  ir::KernelChoice Choice() const override {
    return {.family = ir::KernelFamily::kNative,
            .implementation = channels_ > 0 ? "instance norm rows" : "layer norm rows"};
  }

  Status Run(ops::KernelContext& ctx) override {
    const float* x = ctx.in(0).data<float>();
    const float* scale = ctx.in(1).data<float>();
    const float* bias = bias_ ? ctx.in(2).data<float>() : nullptr;
    float* y = ctx.out(0).data<float>();
    // Three passes and a square root per element: worth a second thread
    // from a quarter of what a copy needs.
    const int64_t bytes = rows_ * cols_ * static_cast<int64_t>(sizeof(float));
    ForRanges(rows_, 4 * bytes, 4, [&](int64_t first, int64_t last) {
      for (int64_t r = first; r < last; ++r) {
        const int64_t c = channels_ > 0 ? r % channels_ : -1;
        Row(x + r * cols_, c >= 0 ? scale + c : scale, c >= 0 && bias ? bias + c : bias,
            y + r * cols_);
      }
    });
    return Status::Ok();
  }

 private:
  template <typename F>
  __attribute__((always_inline)) inline double Sum(const float* in, F f) const {
    return LaneSum(in, cols_, f);
  }

  void Row(const float* in, const float* scale, const float* bias, float* out) const {
    switch (isa_) {
      case snippets::Isa::kAvx512:
        RowAvx512(in, scale, bias, out);
        return;
      case snippets::Isa::kAvx2:
        RowAvx2(in, scale, bias, out);
        return;
      default:
        RowAny(in, scale, bias, out);
    }
  }

  // The same row compiled for wider vectors: the build targets baseline
  // x86-64 (SSE2), and the CPU target's isa (ActiveOptions) says
  // which the machine may run.
  __attribute__((target("avx512f,avx512vl,avx2,fma"))) void RowAvx512(const float* in,
                                                                      const float* scale,
                                                                      const float* bias,
                                                                      float* out) const {
    RowAny(in, scale, bias, out);
  }
  __attribute__((target("avx2,fma"))) void RowAvx2(const float* in, const float* scale,
                                                   const float* bias, float* out) const {
    RowAny(in, scale, bias, out);
  }

  __attribute__((always_inline)) inline void RowAny(const float* in, const float* scale,
                                                    const float* bias, float* out) const {
    const double n = static_cast<double>(cols_);
    const float mean = static_cast<float>(Sum(in, [](float v) { return v; }) / n);
    const double var = Sum(in, [mean](float v) { return (v - mean) * (v - mean); }) / n;
    const float inv = static_cast<float>(1.0 / std::sqrt(var + epsilon_));
    if (channels_ > 0) {  // this row's channel: one scale, one bias
      const float a = inv * scale[0], b = bias ? bias[0] : 0.f;
      for (int64_t i = 0; i < cols_; ++i) out[i] = (in[i] - mean) * a + b;
    } else if (bias) {
      for (int64_t i = 0; i < cols_; ++i) out[i] = (in[i] - mean) * inv * scale[i] + bias[i];
    } else {
      for (int64_t i = 0; i < cols_; ++i) out[i] = (in[i] - mean) * inv * scale[i];
    }
  }

  const int64_t rows_, cols_;
  const double epsilon_;
  const bool bias_;
  const int64_t channels_;
  const snippets::Isa isa_ = std::min(ActiveOptions().isa, snippets::HostIsa());
  const std::vector<ops::ScratchNeed> none_;
};

// A reduction of float32 over contiguous axes, seen as (outer, len, inner):
// y[o, i] = Finish(sum over k of Term(x[o, k, i])). Rows (inner 1) sum in
// 16 lanes; otherwise a chunk of the inner axis accumulates whole, one input
// row of it after another, so every load streams.
class ReduceMiddle final : public LayoutFlexibleKernel {
 public:
  enum class Kind { kSum, kMean, kSumSquare, kL1, kL2, kLogSum };

  // `image`, `reduced`: an image's shape (N, C, H, W) and its reduced axes,
  // when it has 4 dims (else empty): channels last, the same reduction is
  // another (outer, len, inner) when its axes are still one run.
  ReduceMiddle(Kind kind, int64_t outer, int64_t len, int64_t inner, Shape image = {},
               std::vector<bool> reduced = {})
      : kind_(kind), outer_(outer), len_(len), inner_(inner) {
    if (image.size() == 4) {
      // The axes in channels-last order: N, H, W, C.
      const Shape nhwc = {image[0], image[2], image[3], image[1]};
      const std::vector<bool> r = {reduced[0], reduced[2], reduced[3], reduced[1]};
      channels_last_split_ = Split(nhwc, r);
    }
  }

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return none_; }
  ir::KernelChoice Choice() const override {
    return {.family = ir::KernelFamily::kNative,
            .implementation = inner_ == 1 ? "reduce rows" : "reduce columns",
            .variant = channels_last_ ? ir::LayoutName(ir::Layout::kChannelsLast) : ""};
  }
  bool CanRunIn(ActivationLayout layout) override {
    return layout == ActivationLayout::kChannelsLast && channels_last_split_.has_value();
  }
  void RunIn(ActivationLayout) override {
    channels_last_ = true;
    std::tie(outer_, len_, inner_) = *channels_last_split_;
  }
  // Input 1 (the axes, from opset 13 or 18) is a parameter, not data.
  bool TakesEitherLayout(size_t input, ActivationLayout) const override { return input > 0; }

  // (outer, len, inner) of a reduction of `shape` over `reduced`, or nullopt
  // when the reduced axes (size-1 axes aside) are not one contiguous run.
  static std::optional<std::tuple<int64_t, int64_t, int64_t>> Split(
      const Shape& shape, const std::vector<bool>& reduced) {
    const auto rank = static_cast<int64_t>(shape.size());
    int64_t first = -1, last = -1;
    for (int64_t d = 0; d < rank; ++d) {
      if (reduced[static_cast<size_t>(d)] && shape[static_cast<size_t>(d)] != 1) {
        if (first < 0) first = d;
        last = d;
      }
    }
    if (first < 0) return std::nullopt;
    for (int64_t d = first; d <= last; ++d) {
      if (!reduced[static_cast<size_t>(d)] && shape[static_cast<size_t>(d)] != 1)
        return std::nullopt;
    }
    auto span = [&](int64_t from, int64_t to) {
      return NumElements(Shape(shape.begin() + from, shape.begin() + to));
    };
    return std::make_tuple(span(0, first), span(first, last + 1), span(last + 1, rank));
  }

  Status Run(ops::KernelContext& ctx) override {
    switch (kind_) {
      case Kind::kSumSquare:
      case Kind::kL2:
        return Reduce(ctx, [](float v) { return v * v; });
      case Kind::kL1:
        return Reduce(ctx, [](float v) { return std::fabs(v); });
      default:
        return Reduce(ctx, [](float v) { return v; });
    }
  }

 private:
  static constexpr int64_t kChunk = 512;

  float Finish(float sum) const {
    switch (kind_) {
      case Kind::kMean:
        return sum / static_cast<float>(len_);
      case Kind::kL2:
        return std::sqrt(sum);
      case Kind::kLogSum:
        return std::log(sum);
      default:
        return sum;
    }
  }

  template <typename Term>
  Status Reduce(ops::KernelContext& ctx, Term term) const {
    const float* x = ctx.in(0).data<float>();
    float* y = ctx.out(0).data<float>();
    const int64_t bytes = outer_ * len_ * inner_ * static_cast<int64_t>(sizeof(float));
    if (inner_ == 1) {
      ForRanges(outer_, bytes, 4, [&](int64_t first, int64_t last) {
        for (int64_t o = first; o < last; ++o) y[o] = Finish(RowSum(x + o * len_, term));
      });
      return Status::Ok();
    }
    const int64_t chunks = (inner_ + kChunk - 1) / kChunk;
    ForRanges(outer_ * chunks, bytes, 4, [&](int64_t first, int64_t last) {
      float acc[kChunk];
      for (int64_t item = first; item < last; ++item) {
        const int64_t o = item / chunks, i0 = item % chunks * kChunk;
        const int64_t n = std::min(kChunk, inner_ - i0);
        std::fill(acc, acc + n, 0.f);
        for (int64_t k = 0; k < len_; ++k) {
          const float* row = x + (o * len_ + k) * inner_ + i0;
          for (int64_t j = 0; j < n; ++j) acc[j] += term(row[j]);
        }
        float* out = y + o * inner_ + i0;
        for (int64_t j = 0; j < n; ++j) out[j] = Finish(acc[j]);
      }
    });
    return Status::Ok();
  }

  template <typename Term>
  float RowSum(const float* in, Term term) const {
    return static_cast<float>(LaneSum(in, len_, term));
  }

  const Kind kind_;
  int64_t outer_, len_, inner_;
  std::optional<std::tuple<int64_t, int64_t, int64_t>> channels_last_split_;
  bool channels_last_ = false;
  const std::vector<ops::ScratchNeed> none_;
};

// Split along one axis: for each outer index, each output's block copied
// whole (attention's q, k, v from one projection).
class SplitBlocks final : public LayoutFlexibleKernel {
 public:
  // Split along the channels (axis 1 of 3 dims or more) may also run
  // channels last: `pixel_rows` rows (images x pixels), each output taking
  // `channel_bytes` of every row.
  SplitBlocks(int64_t outer, std::vector<int64_t> block_bytes, int64_t pixel_rows = 0,
              std::vector<int64_t> channel_bytes = {})
      : outer_(outer),
        block_(std::move(block_bytes)),
        pixel_rows_(pixel_rows),
        channel_bytes_(std::move(channel_bytes)) {
    for (int64_t b : block_) row_ += b;
  }

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return none_; }
  ir::KernelChoice Choice() const override {
    return {.family = ir::KernelFamily::kNative,
            .implementation = "split blocks",
            .variant = channels_last_ ? ir::LayoutName(ir::Layout::kChannelsLast) : ""};
  }
  bool CanRunIn(ActivationLayout layout) override {
    return layout == ActivationLayout::kChannelsLast && !channel_bytes_.empty();
  }
  // Input 1 (the sizes) is a parameter, not data.
  bool TakesEitherLayout(size_t input, ActivationLayout) const override { return input > 0; }
  // Channels last, a split along the channels is one along each pixel's row.
  void RunIn(ActivationLayout layout) override {
    channels_last_ = true;
    outer_ = pixel_rows_;
    block_ = channel_bytes_;
    row_ = 0;
    for (int64_t b : block_) row_ += b;
  }

  Status Run(ops::KernelContext& ctx) override {
    const auto* in = static_cast<const char*>(ctx.in(0).raw_data());
    std::vector<char*> outs;
    for (size_t k = 0; k < block_.size(); ++k)
      outs.push_back(static_cast<char*>(ctx.out(k).raw_data()));
    // Few rows (a plain split of channels): a task per block, so the blocks
    // spread over the pool; many rows (channels last, attention's q, k, v):
    // rows in ranges, a block of a few words copied as moves, not a call.
    const bool short_rows = outer_ >= 64;
    const auto parts = static_cast<int64_t>(block_.size());
    const int64_t items = short_rows ? outer_ : outer_ * parts;
    ForRanges(items, outer_ * row_, 8, [&](int64_t first, int64_t last) {
      if (short_rows) {
        int64_t offset = 0;
        for (size_t k = 0; k < block_.size(); ++k) {
          CopyRows(outs[k] + first * block_[k], block_[k], in + first * row_ + offset, row_,
                   block_[k], last - first);
          offset += block_[k];
        }
        return;
      }
      for (int64_t i = first; i < last; ++i) {
        const int64_t o = i / parts, k = i % parts;
        int64_t offset = 0;
        for (int64_t j = 0; j < k; ++j) offset += block_[static_cast<size_t>(j)];
        const int64_t b = block_[static_cast<size_t>(k)];
        std::memcpy(outs[static_cast<size_t>(k)] + o * b, in + o * row_ + offset,
                    static_cast<size_t>(b));
      }
    });
    return Status::Ok();
  }

 private:
  int64_t outer_;
  std::vector<int64_t> block_;  // bytes per outer index, per output
  int64_t row_ = 0;
  const int64_t pixel_rows_;
  const std::vector<int64_t> channel_bytes_;
  bool channels_last_ = false;
  const std::vector<ops::ScratchNeed> none_;
};

// A Slice that keeps a range of channels (axis 1, step 1, every other axis
// whole): the strided copy in the plain layout; channels last, each pixel's
// row gives `len` channels from `start` (GhostNet's cheap half, cut back).
class ChannelSliceCopy final : public LayoutFlexibleKernel {
 public:
  ChannelSliceCopy(std::unique_ptr<FastKernel> plain, int64_t pixel_rows, int64_t channels,
                   int64_t start, int64_t len, int64_t elem)
      : plain_(std::move(plain)),
        rows_(pixel_rows),
        channels_(channels),
        start_(start),
        len_(len),
        elem_(elem) {}

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return none_; }
  ir::KernelChoice Choice() const override {
    if (!channels_last_) return plain_->Choice();
    return {.family = ir::KernelFamily::kNative,
            .implementation = "channel rows",
            .variant = ir::LayoutName(ir::Layout::kChannelsLast)};
  }
  bool CanRunIn(ActivationLayout layout) override {
    return layout == ActivationLayout::kChannelsLast;
  }
  // Inputs 1-4 (starts, ends, axes, steps) are parameters, not data.
  bool TakesEitherLayout(size_t input, ActivationLayout) const override { return input > 0; }
  void RunIn(ActivationLayout) override { channels_last_ = true; }

  Status Run(ops::KernelContext& ctx) override {
    if (!channels_last_) return plain_->Run(ctx);
    const auto* in = static_cast<const char*>(ctx.in(0).raw_data());
    auto* out = static_cast<char*>(ctx.out(0).raw_data());
    const int64_t row = len_ * elem_;
    ForRanges(rows_, rows_ * row, 4, [&](int64_t first, int64_t last) {
      CopyRows(out + first * row, row, in + (first * channels_ + start_) * elem_, channels_ * elem_,
               row, last - first);
    });
    return Status::Ok();
  }

 private:
  std::unique_ptr<FastKernel> plain_;
  const int64_t rows_, channels_, start_, len_, elem_;
  bool channels_last_ = false;
  const std::vector<ops::ScratchNeed> none_;
};

// Copies `bytes` from `in` to `out` over the pool; nothing when they are one
// buffer (a view the planner ran in place).
void CopyWhole(char* out, const char* in, int64_t bytes) {
  if (out == in || bytes == 0) return;
  constexpr int64_t kChunk = 64 * 1024;
  const int64_t chunks = (bytes + kChunk - 1) / kChunk;
  ForRanges(chunks, bytes, 1, [&](int64_t first, int64_t last) {
    const int64_t begin = first * kChunk, end = std::min(bytes, last * kChunk);
    std::memcpy(out + begin, in + begin, static_cast<size_t>(end - begin));
  });
}

// A Transpose: the strided copy in the plain layout; one that moves the
// channels between axis 1 and the last axis is its input's bytes when one
// side is held channels last (RelayoutKernel), and one that only moves
// axes of one element always is (torch's MultiheadAttention's [S, 1, E] <->
// [1, S, E]).
class TransposeCopy final : public RelayoutKernel {
 public:
  // `relayouts`: whether it may be one (float32, what convolutions and
  // matrix products exchange); `same_bytes`: whether its output is always
  // its input's bytes.
  TransposeCopy(std::unique_ptr<FastKernel> plain, std::vector<int64_t> perm, int64_t bytes,
                bool relayouts, bool same_bytes)
      : plain_(std::move(plain)),
        perm_(std::move(perm)),
        bytes_(bytes),
        relayouts_(relayouts && !same_bytes),
        same_bytes_(same_bytes) {}

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return none_; }
  ir::KernelChoice Choice() const override {
    if (same_bytes_) {
      return {.family = ir::KernelFamily::kNative, .implementation = "view", .view = true};
    }
    if (mode_ == Mode::kPlain) return plain_->Choice();
    return {.family = ir::KernelFamily::kNative,
            .implementation = "relayout",
            .variant = mode_ == Mode::kWriteIn    ? "to channels last"
                       : mode_ == Mode::kReadIn   ? "from channels last"
                       : mode_ == Mode::kPermuted ? "permuted"
                                                  : "unpermuted",
            .view = true};
  }
  // Held channels last, the output's axes lie in the order 0, 2, ..., r-1,
  // 1; they are the input's axes perm[0], perm[2], ..., perm[1]: the
  // input's own order when perm is (0, r-1, 1, ..., r-2).
  bool CanWriteIn(ActivationLayout layout) const override {
    const auto r = static_cast<int64_t>(perm_.size());
    if (!relayouts_ || layout != ActivationLayout::kChannelsLast || r < 3 || r > 5) return false;
    for (int64_t j = 2; j < r; ++j) {
      if (perm_[static_cast<size_t>(j)] != j - 1) return false;
    }
    return perm_[0] == 0 && perm_[1] == r - 1;
  }
  // The input held channels last lies as its axes 0, 2, ..., r-1, 1: the
  // output's plain order when perm is exactly that.
  bool CanReadIn(ActivationLayout layout) const override {
    const auto r = static_cast<int64_t>(perm_.size());
    if (!relayouts_ || layout != ActivationLayout::kChannelsLast || r < 3 || r > 5) return false;
    for (int64_t j = 1; j + 1 < r; ++j) {
      if (perm_[static_cast<size_t>(j)] != j + 1) return false;
    }
    return perm_[0] == 0 && perm_.back() == 1;
  }
  void Relayout(Mode mode) override {
    TESSEL_CHECK((mode != Mode::kWriteIn || CanWriteIn(ActivationLayout::kChannelsLast)) &&
                 (mode != Mode::kReadIn || CanReadIn(ActivationLayout::kChannelsLast)));
    mode_ = mode;
  }
  const std::vector<int64_t>& perm() const override { return perm_; }
  bool can_relayout() const override { return relayouts_; }

  Status Run(ops::KernelContext& ctx) override {
    if (mode_ == Mode::kPlain && !same_bytes_) return plain_->Run(ctx);
    CopyWhole(static_cast<char*>(ctx.out(0).raw_data()),
              static_cast<const char*>(ctx.in(0).raw_data()), bytes_);
    return Status::Ok();
  }

 private:
  std::unique_ptr<FastKernel> plain_;
  const std::vector<int64_t> perm_;
  const int64_t bytes_;
  const bool relayouts_, same_bytes_;
  const std::vector<ops::ScratchNeed> none_;
};

// A view op (Reshape, Flatten, Squeeze, Unsqueeze): its input's bytes, not
// copied where the planner gave both one buffer. One that keeps the batch
// and the channels (axes 0 and 1) and regroups the rest is the same bytes
// channels last too ([B, C, H, W] held as [B, H, W, C] is [B, C, H*W] held
// as [B, H*W, C]): a token sequence seen as an image and back.
class ViewCopy final : public LayoutFlexibleKernel {
 public:
  ViewCopy(int64_t bytes, bool keeps_channels) : bytes_(bytes), keeps_channels_(keeps_channels) {}

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return none_; }
  ir::KernelChoice Choice() const override {
    return {.family = ir::KernelFamily::kNative,
            .implementation = "view",
            .variant = channels_last_ ? ir::LayoutName(ir::Layout::kChannelsLast) : ""};
  }
  bool CanRunIn(ActivationLayout layout) override {
    return layout == ActivationLayout::kChannelsLast && keeps_channels_;
  }
  // Reshape's input 1 (the shape) and Squeeze/Unsqueeze's axes are parameters.
  bool TakesEitherLayout(size_t input, ActivationLayout) const override { return input > 0; }
  void RunIn(ActivationLayout) override { channels_last_ = true; }

  Status Run(ops::KernelContext& ctx) override {
    CopyWhole(static_cast<char*>(ctx.out(0).raw_data()),
              static_cast<const char*>(ctx.in(0).raw_data()), bytes_);
    return Status::Ok();
  }

 private:
  const int64_t bytes_;
  const bool keeps_channels_;
  bool channels_last_ = false;
  const std::vector<ops::ScratchNeed> none_;
};

}  // namespace

std::unique_ptr<FastKernel> MakeChannelShuffle(const ir::Node& node) {
  if (node.domain != "tessel" || node.op_type != "ChannelShuffle" || node.inputs.size() < 2)
    return nullptr;
  const ir::Value* x = node.input(0);
  if (!x || x->shape.size() < 3 || node.outputs.empty()) return nullptr;
  for (const ir::Value* v : node.inputs) {
    if (!v || v->shape != x->shape || v->dtype != x->dtype) return nullptr;
  }
  for (const ir::Value* v : node.outputs) {
    if (!v) return nullptr;
  }
  return std::make_unique<ChannelShuffleCopy>(x->shape, node.inputs.size(), node.outputs.size(),
                                              DTypeSize(x->dtype));
}

std::unique_ptr<FastKernel> MakeResize(const ir::Node& node, int opset) {
  const ir::Value* x = node.input(0);
  const ir::Value* y = node.output(0);
  if (!x || !y || x->dtype != DType::kFloat32 || y->dtype != DType::kFloat32) return nullptr;
  const size_t rank = x->shape.size();
  if (rank < 2 || x->shape[rank - 1] > std::numeric_limits<int32_t>::max()) return nullptr;
  StatusOr<ops::ResizeSampling> s = ops::PlanResizeNode(node, opset);
  if (!s.ok() || s->out != y->shape || s->axes.size() != rank) return nullptr;
  for (size_t d = 0; d + 2 < rank; ++d) {
    if (!s->axes[d].identity) return nullptr;  // resampled images or channels: rare
  }
  return std::make_unique<ResizeRows>(*s, x->shape);
}

std::unique_ptr<FastKernel> MakeGlobalAverage(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  const ir::Value* y = node.output(0);
  if (!x || !y || x->dtype != DType::kFloat32 || x->shape.size() < 3) return nullptr;
  if (NumElements(x->shape) == 0) return nullptr;
  return std::make_unique<GlobalAverage>(x->shape);
}

std::unique_ptr<FastKernel> MakeSpatialMean(const ir::Node& node, int opset) {
  const ir::Value* x = node.input(0);
  if (!x || x->shape.size() < 3) return nullptr;
  StatusOr<ops::ReducedAxes> plan = ops::PlanReducedAxes(node, opset);
  if (!plan.ok() || plan->identity) return nullptr;
  for (size_t d = 0; d < x->shape.size(); ++d) {
    if (plan->reduced[d] != (d >= 2)) return nullptr;
  }
  return MakeGlobalAverage(node);
}

std::unique_ptr<FastKernel> MakePad(const ir::Node& node, int opset) {
  const ir::Value* x = node.input(0);
  const ir::Value* y = node.output(0);
  if (!x || !y || x->shape.empty() || DTypeSize(x->dtype) == 0) return nullptr;
  StatusOr<ops::PadPlan> plan = ops::PlanPadNode(node, opset);
  if (!plan.ok() || plan->mode != ops::PadMode::kConstant || plan->out != y->shape ||
      plan->fill.size() != DTypeSize(x->dtype) || NumElements(x->shape) == 0) {
    return nullptr;
  }
  return std::make_unique<PadRows>(x->shape, std::move(*plan));
}

std::unique_ptr<FastKernel> MakeGather(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  const ir::Value* indices = node.input(1);
  const ir::Value* y = node.output(0);
  if (!x || !indices || !y || x->shape.empty() || DTypeSize(x->dtype) == 0 ||
      NumElements(y->shape) == 0) {
    return nullptr;
  }
  const auto rank = static_cast<int64_t>(x->shape.size());
  int64_t axis = node.attrs.Int("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return nullptr;
  const int64_t len = x->shape[static_cast<size_t>(axis)];
  if (!indices->is_constant()) {
    if (indices->dtype != DType::kInt64 && indices->dtype != DType::kInt32) return nullptr;
    const int64_t count = NumElements(indices->shape);
    if (count == 0 || !indices->shape_known) return nullptr;
    return std::make_unique<GatherBlocks>(
        count, indices->dtype, NumElements(Shape(x->shape.begin(), x->shape.begin() + axis)), len,
        NumElements(Shape(x->shape.begin() + axis + 1, x->shape.end())) *
            static_cast<int64_t>(DTypeSize(x->dtype)));
  }
  std::vector<int64_t> index = indices->constant.ToInt64Vector();
  for (int64_t& i : index) {
    if (i < 0) i += len;
    if (i < 0 || i >= len) return nullptr;  // the reference kernel names it at run time
  }
  const int64_t outer = NumElements(Shape(x->shape.begin(), x->shape.begin() + axis));
  const int64_t inner = NumElements(Shape(x->shape.begin() + axis + 1, x->shape.end()));
  return std::make_unique<GatherBlocks>(std::move(index), outer, len,
                                        inner * static_cast<int64_t>(DTypeSize(x->dtype)));
}

std::unique_ptr<FastKernel> MakeLayerNorm(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  const ir::Value* scale = node.input(1);
  const ir::Value* bias = node.input(2);
  const ir::Value* y = node.output(0);
  auto f32 = [](const ir::Value* v) { return v && v->dtype == DType::kFloat32; };
  if (!f32(x) || !f32(y) || !f32(scale) || (bias && !f32(bias)) || x->shape.empty()) return nullptr;
  if (node.output(1) || node.output(2)) return nullptr;  // Mean, InvStdDev
  const auto rank = static_cast<int64_t>(x->shape.size());
  int64_t axis = node.attrs.Int("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return nullptr;
  const int64_t rows = NumElements(Shape(x->shape.begin(), x->shape.begin() + axis));
  const int64_t cols = NumElements(Shape(x->shape.begin() + axis, x->shape.end()));
  // Scale and B cover the normalized axes exactly (no broadcasting).
  if (NumElements(scale->shape) != cols || (bias && NumElements(bias->shape) != cols))
    return nullptr;
  if (rows == 0 || cols == 0) return nullptr;
  return std::make_unique<LayerNormRows>(rows, cols, node.attrs.Float("epsilon", 1e-5f),
                                         bias != nullptr);
}

std::unique_ptr<FastKernel> MakeReduce(const ir::Node& node, int opset) {
  static const std::map<std::string, ReduceMiddle::Kind> kinds = {
      {"ReduceSum", ReduceMiddle::Kind::kSum},
      {"ReduceMean", ReduceMiddle::Kind::kMean},
      {"ReduceSumSquare", ReduceMiddle::Kind::kSumSquare},
      {"ReduceL1", ReduceMiddle::Kind::kL1},
      {"ReduceL2", ReduceMiddle::Kind::kL2},
      {"ReduceLogSum", ReduceMiddle::Kind::kLogSum}};
  const auto kind = kinds.find(node.op_type);
  const ir::Value* x = node.input(0);
  const ir::Value* y = node.output(0);
  if (!node.domain.empty() || kind == kinds.end() || !x || !y || x->dtype != DType::kFloat32 ||
      y->dtype != DType::kFloat32) {
    return nullptr;
  }
  StatusOr<ops::ReducedAxes> plan = ops::PlanReducedAxes(node, opset);
  if (!plan.ok() || plan->identity) return nullptr;
  // The reduced axes (ignoring 1s) must be one contiguous run: (outer, len, inner).
  const auto split = ReduceMiddle::Split(x->shape, plan->reduced);
  if (!split) return nullptr;  // nothing to reduce (the reference copies), or axes apart
  const auto [outer, len, inner] = *split;
  if (outer * inner != NumElements(y->shape) || outer * inner == 0 || len == 0) return nullptr;
  return std::make_unique<ReduceMiddle>(kind->second, outer, len, inner,
                                        x->shape.size() == 4 ? x->shape : Shape{}, plan->reduced);
}

std::unique_ptr<FastKernel> MakeInstanceNorm(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  const ir::Value* scale = node.input(1);
  const ir::Value* bias = node.input(2);
  const ir::Value* y = node.output(0);
  if (!x || !scale || !bias || !y || x->shape.size() < 3) return nullptr;
  for (const ir::Value* v : {x, scale, bias, y}) {
    if (v->dtype != DType::kFloat32) return nullptr;
  }
  const int64_t channels = x->shape[1];
  if (NumElements(scale->shape) != channels || NumElements(bias->shape) != channels) return nullptr;
  const int64_t rows = x->shape[0] * channels;
  const int64_t cols = NumElements(Shape(x->shape.begin() + 2, x->shape.end()));
  if (rows == 0 || cols == 0) return nullptr;
  return std::make_unique<LayerNormRows>(rows, cols, node.attrs.Float("epsilon", 1e-5f), true,
                                         channels);
}

std::unique_ptr<FastKernel> MakeSplit(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  if (!x || x->shape.empty() || DTypeSize(x->dtype) == 0 || node.outputs.empty()) return nullptr;
  const auto rank = static_cast<int64_t>(x->shape.size());
  int64_t axis = node.attrs.Int("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return nullptr;
  const int64_t inner = NumElements(Shape(x->shape.begin() + axis + 1, x->shape.end())) *
                        static_cast<int64_t>(DTypeSize(x->dtype));
  std::vector<int64_t> blocks;
  int64_t taken = 0;
  for (const ir::Value* y : node.outputs) {
    if (!y || y->dtype != x->dtype || y->shape.size() != x->shape.size()) return nullptr;
    const int64_t len = y->shape[static_cast<size_t>(axis)];
    blocks.push_back(len * inner);
    taken += len;
  }
  if (taken != x->shape[static_cast<size_t>(axis)] || NumElements(x->shape) == 0) return nullptr;
  const int64_t outer = NumElements(Shape(x->shape.begin(), x->shape.begin() + axis));
  if (axis != 1 || rank < 3) return std::make_unique<SplitBlocks>(outer, std::move(blocks));
  std::vector<int64_t> channel_bytes;
  for (const ir::Value* y : node.outputs)
    channel_bytes.push_back(y->shape[1] * static_cast<int64_t>(DTypeSize(x->dtype)));
  return std::make_unique<SplitBlocks>(
      outer, std::move(blocks), NumElements(x->shape) / x->shape[1], std::move(channel_bytes));
}

std::unique_ptr<FastKernel> MakeSlice(const ir::Node& node, int opset) {
  std::unique_ptr<FastKernel> plain = MakeStridedCopy(node, opset);
  const ir::Value* x = node.input(0);
  const std::optional<ops::ChannelRange> range = ops::ChannelRangeOf(node, opset);
  if (!plain || !range || x->shape.size() < 3) return plain;
  const int64_t channels = x->shape[1];
  return std::make_unique<ChannelSliceCopy>(std::move(plain), NumElements(x->shape) / channels,
                                            channels, range->start, range->count,
                                            static_cast<int64_t>(DTypeSize(x->dtype)));
}

std::unique_ptr<FastKernel> MakeTranspose(const ir::Node& node, int opset) {
  std::unique_ptr<FastKernel> plain = MakeStridedCopy(node, opset);
  const ir::Value* x = node.input(0);
  if (!plain) return nullptr;
  std::vector<int64_t> perm = node.attrs.Ints("perm");
  if (perm.empty()) {  // the default: axes reversed
    for (size_t i = x->shape.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  }
  // Axes of more than one element that keep their order: the same bytes.
  int64_t last = -1;
  bool same_bytes = true;
  for (int64_t p : perm) {
    if (x->shape[static_cast<size_t>(p)] == 1) continue;
    same_bytes = same_bytes && p > last;
    last = p;
  }
  return std::make_unique<TransposeCopy>(std::move(plain), std::move(perm),
                                         static_cast<int64_t>(x->size_bytes()),
                                         x->dtype == DType::kFloat32, same_bytes);
}

std::unique_ptr<FastKernel> MakeView(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  const ir::Value* y = node.output(0);
  if (!ops::IsView(node) || !x || !y || !y->shape_known || x->dtype != y->dtype ||
      x->size_bytes() != y->size_bytes()) {
    return nullptr;
  }
  const bool keeps_channels = x->dtype == DType::kFloat32 && x->shape.size() >= 3 &&
                              x->shape.size() <= 5 && y->shape.size() >= 3 &&
                              y->shape.size() <= 5 && x->shape[0] == y->shape[0] &&
                              x->shape[1] == y->shape[1];
  return std::make_unique<ViewCopy>(static_cast<int64_t>(x->size_bytes()), keeps_channels);
}

std::unique_ptr<FastKernel> MakeStridedCopy(const ir::Node& node, int opset) {
  const ir::Value* x = node.input(0);
  const ir::Value* y = node.output(0);
  if (!x || !y || x->dtype != y->dtype || DTypeSize(x->dtype) == 0) return nullptr;
  std::optional<ops::StridedView> view = ops::StridedViewOf(node, opset);
  if (!view || view->out != y->shape) return nullptr;
  return std::make_unique<StridedCopy>(std::move(*view), DTypeSize(x->dtype));
}

}  // namespace tessel::cpu
