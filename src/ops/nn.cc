// The nn op family: convolution (nn_conv.cc), pooling (nn_pool.cc) and
// normalization (nn_norm.cc). This file registers them and holds what they
// share: reading and resolving sliding-window attributes, and running float
// kernels on the 16-bit float types.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "ops/nn_internal.h"
#include "ops/op_registry.h"
#include "ops/op_util.h"

namespace tessel::ops {

std::string IntsToString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

Status ReadSpatialInts(const ir::Node& node, const char* name, size_t n, int64_t fallback,
                       int64_t min_value, std::vector<int64_t>* out) {
  if (!node.attrs.Has(name)) {
    out->assign(n, fallback);
    return Status::Ok();
  }
  *out = node.attrs.Ints(name);
  if (out->size() != n) {
    return InvalidArgument(node.Describe() + ": " + name + " " + IntsToString(*out) + " has " +
                           std::to_string(out->size()) + " values; expected " + std::to_string(n) +
                           ", one per spatial dimension");
  }
  for (int64_t v : *out) {
    if (v < min_value) {
      return InvalidArgument(node.Describe() + ": " + name + " " + IntsToString(*out) +
                             " must all be >= " + std::to_string(min_value));
    }
  }
  return Status::Ok();
}

Status ReadAutoPad(const ir::Node& node, std::string* auto_pad) {
  *auto_pad = node.attrs.String("auto_pad", "NOTSET");
  if (*auto_pad == "NOTSET" || *auto_pad == "SAME_UPPER" || *auto_pad == "SAME_LOWER" ||
      *auto_pad == "VALID") {
    return Status::Ok();
  }
  return InvalidArgument(node.Describe() + ": auto_pad '" + *auto_pad +
                         "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
}

Status ReadPads(const ir::Node& node, size_t n, const std::string& auto_pad,
                std::vector<int64_t>* pads) {
  TESSEL_RETURN_IF_ERROR(ReadSpatialInts(node, "pads", 2 * n, 0, 0, pads));
  // Exporters often write zero pads next to auto_pad; only real ones conflict.
  if (auto_pad != "NOTSET" &&
      std::any_of(pads->begin(), pads->end(), [](int64_t p) { return p != 0; })) {
    return InvalidArgument(node.Describe() + ": pads " + IntsToString(*pads) +
                           " cannot be combined with auto_pad " + auto_pad);
  }
  return Status::Ok();
}

Status ResolveWindow(const ir::Node& node, const Shape& in_spatial,
                     const std::vector<int64_t>& kernel, bool ceil_mode,
                     std::vector<int64_t>* strides, std::vector<int64_t>* dilations,
                     std::vector<int64_t>* pads, Shape* out_spatial) {
  const size_t n = in_spatial.size();
  std::string auto_pad;
  TESSEL_RETURN_IF_ERROR(ReadAutoPad(node, &auto_pad));
  TESSEL_RETURN_IF_ERROR(ReadSpatialInts(node, "strides", n, 1, 1, strides));
  TESSEL_RETURN_IF_ERROR(ReadSpatialInts(node, "dilations", n, 1, 1, dilations));
  TESSEL_RETURN_IF_ERROR(ReadPads(node, n, auto_pad, pads));
  out_spatial->assign(n, 0);
  // Worked in 128 bits, with pads, strides and dilations of any int64 value:
  // whatever the attributes, nothing here overflows, and a window that does
  // not fit in 64 bits is refused before a kernel multiplies it out.
  using Wide = __int128;
  constexpr Wide kMax = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < n; ++i) {
    const Wide in = in_spatial[i], s = (*strides)[i];
    const Wide k_eff = Wide{(*dilations)[i]} * (kernel[i] - 1) + 1;
    int64_t& pb = (*pads)[i];
    int64_t& pe = (*pads)[i + n];
    Wide out = 0;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out = (in + s - 1) / s;
      const Wide total = std::max<Wide>(0, (out - 1) * s + k_eff - in);
      if (total > kMax) {
        return InvalidArgument(node.Describe() + ": its window along axis " +
                               std::to_string(i + 2) + " needs padding past 64 bits");
      }
      pb = static_cast<int64_t>(auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2);
      pe = static_cast<int64_t>(total - pb);
    } else {
      const Wide span = in + pb + pe - k_eff;
      if (span >= 0) {
        out = (ceil_mode && auto_pad == "NOTSET" ? (span + s - 1) / s : span / s) + 1;
        // A last window that would start inside the end padding reads no input.
        if (ceil_mode && (out - 1) * s >= in + pb) --out;
      }
    }
    if (in + pb + pe > kMax || k_eff > kMax) {
      return InvalidArgument(node.Describe() + ": its window along axis " + std::to_string(i + 2) +
                             " (kernel " + std::to_string(kernel[i]) + ", dilation " +
                             std::to_string((*dilations)[i]) + ", pads " + std::to_string(pb) +
                             "+" + std::to_string(pe) + ") spans past 64 bits");
    }
    if (out < 1) {
      return InvalidArgument(node.Describe() + ": kernel " + std::to_string(kernel[i]) +
                             " (dilation " + std::to_string((*dilations)[i]) +
                             ") does not fit input size " + std::to_string(in_spatial[i]) +
                             " along axis " + std::to_string(i + 2) + " padded by " +
                             std::to_string(pb) + "+" + std::to_string(pe));
    }
    (*out_spatial)[i] = static_cast<int64_t>(out);
  }
  return Status::Ok();
}

namespace {

bool IsNarrowFloat(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }

Tensor WidenToFloat32(const Tensor& t) {
  Tensor wide(DType::kFloat32, t.shape());
  float* out = wide.data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) out[i] = static_cast<float>(t.GetAsDouble(i));
  return wide;
}

void NarrowInto(const Tensor& wide, Tensor& out) {
  const float* in = wide.data<float>();
  if (out.dtype() == DType::kFloat16) {
    Half* o = out.data<Half>();
    for (int64_t i = 0; i < out.num_elements(); ++i) o[i] = Half{FloatToHalf(in[i])};
  } else {
    BFloat16* o = out.data<BFloat16>();
    for (int64_t i = 0; i < out.num_elements(); ++i) o[i] = BFloat16{FloatToBFloat16(in[i])};
  }
}

}  // namespace

Status RunFloatKernel(KernelContext& ctx, KernelFn f32, KernelFn f64) {
  const DType t = ctx.in(0).dtype();
  if (t == DType::kFloat32) return f32(ctx);
  if (t == DType::kFloat64) return f64(ctx);
  // 16-bit floats compute in float32, like the targets do, and round once at
  // the end.
  std::vector<Tensor> wide_in(ctx.inputs.size()), wide_out(ctx.outputs.size());
  KernelContext wide{ctx.node, ctx.opset, ctx.inputs, ctx.outputs};
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (ctx.has_in(i) && IsNarrowFloat(ctx.in(i).dtype())) {
      wide_in[i] = WidenToFloat32(ctx.in(i));
      wide.inputs[i] = &wide_in[i];
    }
  }
  for (size_t i = 0; i < ctx.outputs.size(); ++i) {
    if (ctx.has_out(i) && IsNarrowFloat(ctx.out(i).dtype())) {
      wide_out[i] = Tensor(DType::kFloat32, ctx.out(i).shape());
      wide.outputs[i] = &wide_out[i];
    }
  }
  TESSEL_RETURN_IF_ERROR(f32(wide));
  for (size_t i = 0; i < ctx.outputs.size(); ++i) {
    if (wide_out[i].defined()) NarrowInto(wide_out[i], ctx.out(i));
  }
  return Status::Ok();
}

void RegisterNnOps(OpRegistry& r) {
  RegisterConvOps(r);
  RegisterPoolOps(r);
  RegisterNormOps(r);
}

}  // namespace tessel::ops
