// tessel's FusedAttention (domain "tessel", made by passes/fuse_attention):
//   Y = softmax(scale * Q K^T + bias) V
// over the last two axes. Q [..., Sq, D], K [..., Skv, D], V [..., Skv, Dv],
// float32, rank 3 or 4; the axes before are Q's (and Y's) heads; K and V may
// have fewer heads on axis 1 of a rank-4 Q (grouped-query attention: query
// head h reads key/value head h / (Hq / Hkv)). bias (optional) broadcasts to
// [..., Sq, Skv] from the right. Attributes: scale (float);
// zero_masked_rows (int, 0): 1 makes a query row whose scores are all -inf
// zeros (torch's scaled_dot_product_attention: softmax, then NaN -> 0), 0
// leaves it what softmax gives (NaN).
//
// Its reference kernel is in ops/attention.cc; each target has its own.
#pragma once

#include <array>
#include <cstdint>

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::ops {

// A FusedAttention's sizes as [batch, heads, sequence, feature] (a 3-D
// operand has one batch) and where its bias's element (b, h, i, j) lies:
// b * bias_strides[0] + h * [1] + i * [2] + j * [3] (0 where it broadcasts).
struct FusedAttentionDims {
  size_t rank = 4;
  int64_t batch = 1, q_heads = 1, kv_heads = 1, q_len = 0, kv_len = 0, head = 0, v_head = 0;
  std::array<int64_t, 4> bias_strides{};
};

// Checks the node's shapes (InvalidArgument naming it when they do not fit).
StatusOr<FusedAttentionDims> FusedAttentionShapes(const ir::Node& node);

// tessel's Rotary (domain "tessel", made by passes/fuse_rotary): the rotary
// position embedding as the exporters write it out,
//   Y[..., j] = X[..., j] * cos[..., j] + rot(X)[..., j] * sin[..., j]   (j < R)
//   Y[..., j] = X[..., j]                                                (j >= R)
// with R the attribute rotary_dim (default: X's last axis, even), and
// rot(X)[j] = -X[j + R/2] for j < R/2, X[j - R/2] after (rotate_half), or
// with interleaved = 1, rot(X)[2i] = -X[2i + 1], rot(X)[2i + 1] = X[2i].
// X float32; cos and sin of R features, broadcast to X's shape from the
// right. Nothing about cos and sin is assumed (not that their halves repeat).
struct FusedRotaryDims {
  int64_t rows = 0, width = 0, rotary = 0;  // X as [rows, width]
};
StatusOr<FusedRotaryDims> FusedRotaryShapes(const ir::Node& node);

// Where row `row` of X (its axes before the last, row-major) starts in c
// (cos or sin), broadcast to X from the right.
int64_t BroadcastRowOffset(const Shape& x, const Shape& c, int64_t row);

// `shape` padded to 4 axes with leading ones.
Shape Pad4(const Shape& shape);

// The plain strides of `shape` padded to 4 axes with leading ones, and 0
// along its axes of one element: where a tensor broadcast from the right to
// 4 axes (FusedAttention's bias, Rotary's cos and sin) is read.
std::array<int64_t, 4> BroadcastStrides4(const Shape& shape);

}  // namespace tessel::ops
