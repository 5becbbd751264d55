// Ops whose output is a strided view of input 0 (Transpose, Slice, Expand):
// the view, for targets that copy it faster than the reference kernel does.
//
//   output element at index (i0, i1, ...) = input element
//       base + i0 * strides[0] + i1 * strides[1] + ...   (in elements)
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"

namespace tessel::ops {

struct StridedView {
  Shape out;
  int64_t base = 0;
  std::vector<int64_t> strides;
};

// The view of a typed Transpose, Slice or Expand node whose parameters are
// known at compile time (Expand: its output shape); nullopt for any other node.
std::optional<StridedView> StridedViewOf(const ir::Node& node, int opset);

// A Slice that keeps one range of channels: axis 1 of 2 dims or more, step
// 1, every other axis whole (ShuffleNet's halves, GhostNet's cut).
struct ChannelRange {
  int64_t start = 0, count = 0;
};
// Its range, or nullopt for any other node.
std::optional<ChannelRange> ChannelRangeOf(const ir::Node& node, int opset);

// A Slice that keeps every axis but the last whole, and of the last `count`
// elements from `start`, `step` apart (step > 0): rotary embeddings' halves
// and their even and odd features.
struct LastAxisRange {
  int64_t start = 0, count = 0, step = 1;
};
// Its range, or nullopt for any other node.
std::optional<LastAxisRange> LastAxisRangeOf(const ir::Node& node, int opset);

// The strides (in elements) of `shape` held as a Transpose of permutation
// `perm` lies: unpermuted (as its input x, `shape` its output: axis i is x's
// axis perm[i]), or permuted (as its output, `shape` its input: axis perm[j]
// is the output's axis j). What a kernel reads or writes through when the
// Transpose next to it is a view.
std::vector<int64_t> TransposedStrides(const std::vector<int64_t>& shape,
                                       const std::vector<int64_t>& perm, bool unpermuted);

}  // namespace tessel::ops
