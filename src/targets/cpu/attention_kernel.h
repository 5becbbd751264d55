// tessel's FusedAttention (ops/attention.h) on the CPU: one kernel, tiled
// over query rows and key blocks, with an online softmax (attention_kernel.cc
// says how). Its operands may lie as the Transposes next to it left them
// (attention's heads): it reads Q, K and V and writes Y through strides.
// And tessel's Rotary, whose X may lie so too.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "snippets/isa.h"
#include "targets/cpu/fast_kernel.h"

namespace tessel::cpu {

// Sizes and strides (in floats, axes [batch, heads, sequence, feature];
// 0 along an axis of one element or a broadcast one) of an attention.
struct AttentionGeometry {
  int64_t batch = 1, q_heads = 1, kv_heads = 1, q_len = 0, kv_len = 0, head = 0, v_head = 0;
  float scale = 1;
  bool zero_masked_rows = false;
  std::array<int64_t, 4> q_strides{}, k_strides{}, v_strides{}, y_strides{}, bias_strides{};
};

class AttentionKernel final : public FastKernel {
 public:
  explicit AttentionKernel(const AttentionGeometry& g);
  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return needs_; }
  ir::KernelChoice Choice() const override;
  Status Run(ops::KernelContext& ctx) override;

 private:
  struct Task;
  template <int L>
  void RunTask(const Task& t) const;
  void RunTaskAvx512(const Task& t) const;
  void RunTaskAvx2(const Task& t) const;
  void Pack(const float* k, float* kt, const float* v, float* vp) const;
  void PackAvx512(const float* k, float* kt, const float* v, float* vp) const;
  void PackAvx2(const float* k, float* kt, const float* v, float* vp) const;

  const AttentionGeometry g_;
  snippets::Isa isa_;
  int64_t lanes_ = 16;
  int64_t keys_pad_ = 0;   // keys rounded up to whole vectors
  int64_t v_cols_ = 0;     // V's and Y's features rounded up to whole vectors
  bool v_direct_ = false;  // V read where it lies (rows of whole vectors)
  int64_t key_block_ = 0, row_block_ = 0;
  int64_t tasks_ = 0, chunks_ = 1, packed_ = 0, per_chunk_ = 0;
  std::vector<ops::ScratchNeed> needs_;
};

// The strides (in floats, one per axis of the operand) at which Q, K, V and
// Y lie; empty: plain.
using AttentionOperandStrides = std::array<std::vector<int64_t>, 4>;

// Null where the reference kernel runs FusedAttention (no AVX2, not float32).
std::unique_ptr<FastKernel> MakeFusedAttention(const ir::Node& node,
                                               const AttentionOperandStrides& strides = {});

// tessel's Rotary, X read through `strides` (one per axis, in floats) when
// given (a head Transpose's); null where the reference kernel runs it.
std::unique_ptr<FastKernel> MakeRotary(const ir::Node& node,
                                       const std::vector<int64_t>& strides = {});

// After NegotiateLayouts: the plain Transposes that make a FusedAttention's
// Q, K or V, or that alone read its result (attention's head Transposes),
// and those that make a Rotary's X, become views (AdjacentTransposes), the
// kernel rebuilt to read and write the tensors between through their
// strides.
void ReadAttentionTransposesStrided(const ir::Graph& graph,
                                    std::vector<std::unique_ptr<FastKernel>>& kernels,
                                    std::vector<ir::Layout>& layouts);

}  // namespace tessel::cpu
