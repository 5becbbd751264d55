// PruneConvTaps: drops the kernel taps of a convolution that never touch
// its input, only its zero padding. An atrous (dilated) convolution whose
// dilation is as large as the feature map is the case: DeepLabV3's ASPP
// branches at dilations 24 and 36 on a 14x14 map read only their centre
// tap, and are 1x1 convolutions in disguise doing 9 times the work.
//
// Per spatial axis, with input length H, output length O, stride s,
// dilation d and begin padding p, tap i reads input rows y*s + i*d - p for
// y in [0, O); it is live when that range meets [0, H). When the live taps
// of every axis are a smaller range [a, b], the Conv gets the weights of
// those taps only (a new constant), kernel_shape b - a + 1, and pads
// reduced by a*d at the begin and (k-1-b)*d at the end, which keeps the
// output shape and every output value.
//
// Only float32 Convs with constant weights, explicit pads (auto_pad NOTSET)
// and pads that stay >= 0. Precondition: InferShapes ran. Preserves the
// topological order; the result is typed.
#pragma once

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::passes {

Status PruneConvTaps(ir::Graph& graph);

}  // namespace tessel::passes
