// How Pad and Resize (and Upsample) read their input, planned from a typed
// node whose pads, scales, sizes and roi are compile-time constants: the
// reference kernels run these plans, and a target that runs the ops
// elsewhere (OpenCL) takes the same plan, so both sample alike.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::ops {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

struct PadPlan {
  PadMode mode = PadMode::kConstant;
  std::vector<int64_t> begin;  // per input dim; negative crops
  Shape out;
  // The padding value as one element of the input's dtype (kConstant).
  std::vector<uint8_t> fill;
};

// Pad's plan; Unsupported when pads, axes or the constant value are not
// known at compile time.
StatusOr<PadPlan> PlanPadNode(const ir::Node& node, int opset);

// How one output coordinate of an axis reads the input: `taps` input indices
// (clamped to the axis, which is the spec's edge padding) with weights, or
// the extrapolation value when tf_crop_and_resize samples outside the input.
struct AxisSampling {
  int taps = 1;
  std::vector<int64_t> index;  // taps per output coordinate
  std::vector<double> weight;
  std::vector<bool> outside;
  // The axis keeps its length and every output coordinate reads its own
  // (for interpolation, the reference kernel then skips the axis: its taps
  // are not read).
  bool identity = false;
};

struct ResizeSampling {
  bool nearest = false;  // one tap of weight 1 per axis: an exact copy
  double extrapolation_value = 0;
  std::vector<AxisSampling> axes;  // one per input dim
  Shape out;
};

// Resize's (opset >= 10) or Upsample's sampling; Unsupported when scales,
// sizes or roi are not known at compile time.
StatusOr<ResizeSampling> PlanResizeNode(const ir::Node& node, int opset);

}  // namespace tessel::ops
