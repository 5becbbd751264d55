// Ops that only move elements (Transpose, Slice, Concat, Split, Expand,
// tessel's ChannelShuffle) as strided copies over six dims, planned from a
// typed node whose starts, axes and steps are compile-time constants. A
// target runs each with one strided-copy kernel (OpenCL's, the C target's),
// so every target that moves elements moves them alike.
//
//   TESSEL_ASSIGN_OR_RETURN(std::vector<ops::StridedCopy> copies,
//                           ops::PlanMovement(node, opset));
//   for (const ops::StridedCopy& k : copies)
//     for every index d of k.dims (row-major):
//       out[k.output][k.y_offset + sum d[i] * k.y_strides[i]] =
//           in[k.input][k.x_offset + sum d[i] * k.x_strides[i]]
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::ops {

using Dims6 = std::array<int64_t, 6>;

struct StridedCopy {
  size_t input = 0;   // node.inputs index
  size_t output = 0;  // node.outputs index
  Dims6 dims{1, 1, 1, 1, 1, 1};
  Dims6 x_strides{}, y_strides{};  // in elements; 0 reads one element again
  int64_t x_offset = 0, y_offset = 0;

  int64_t elements() const;
};

// `s` right-aligned into six dims, leading 1s; and its row-major strides.
Dims6 PadDims6(const Shape& s);
Dims6 Strides6(const Shape& s);

// Whether PlanMovement plans `node`'s op.
bool IsMovement(const ir::Node& node);

// The copies that compute `node`'s outputs, in order (those of no element
// left out). Unsupported, naming the node, past six dims or when Slice's
// starts, axes or steps are not constants.
StatusOr<std::vector<StridedCopy>> PlanMovement(const ir::Node& node, int opset);

}  // namespace tessel::ops
