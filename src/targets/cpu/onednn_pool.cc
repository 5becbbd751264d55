// oneDNN pooling (onednn_kernels.h): MaxPool and AveragePool, on
// OneDnnFlexible, so that they run in any activation layout.
// Compiled only with oneDNN (TESSEL_WITH_ONEDNN).
#if TESSEL_WITH_ONEDNN
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ops/nn_internal.h"
#include "targets/cpu/onednn_internal.h"
#include "targets/cpu/onednn_kernels.h"
#include "targets/cpu/thread_pool.h"

namespace tessel::cpu {

using dnnl::memory;

namespace {

// 2D pooling in the plain layout (NCHW), one plane after another: oneDNN
// has only its simple implementation there, which runs at about 20 ns an
// element (HGNetV2's stem: 42% of the run in one max pool).
struct PlainPool2d {
  bool max = false, include_pad = false;
  int64_t planes = 0, H = 0, W = 0, OH = 0, OW = 0, KH = 0, KW = 0, SH = 0, SW = 0, PT = 0, PL = 0;

  // One output row at a time: each input row of its windows is folded in
  // per kernel column over the outputs that column reaches, a loop the
  // compiler vectorizes at stride 1.
  void Plane(const float* x, float* y, float* acc) const {
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t h0 = oh * SH - PT;
      const int64_t ha = std::max<int64_t>(h0, 0), hb = std::min(h0 + KH, H);
      std::fill(acc, acc + OW, max ? -std::numeric_limits<float>::infinity() : 0.f);
      for (int64_t h = ha; h < hb; ++h) {
        for (int64_t kw = 0; kw < KW; ++kw) {
          // Outputs whose column w = ow * SW - PL + kw lies in [0, W).
          const int64_t lo = std::max<int64_t>(0, (PL - kw + SW - 1) / SW);
          const int64_t last = W - 1 + PL - kw;  // < 0: the column never lies inside
          const int64_t hi = last < 0 ? 0 : std::min(OW, last / SW + 1);
          const float* src = x + h * W - PL + kw;
          if (max) {
            // NaN never wins, as in the reference kernel and oneDNN's.
            for (int64_t ow = lo; ow < hi; ++ow) acc[ow] = std::max(acc[ow], src[ow * SW]);
          } else {
            for (int64_t ow = lo; ow < hi; ++ow) acc[ow] += src[ow * SW];
          }
        }
      }
      float* out = y + oh * OW;
      if (max) {
        std::copy(acc, acc + OW, out);
        continue;
      }
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t w0 = ow * SW - PL;
        const int64_t cols = std::min(w0 + KW, W) - std::max<int64_t>(w0, 0);
        const int64_t count = include_pad ? KH * KW : (hb - ha) * cols;
        out[ow] = count > 0 ? acc[ow] / static_cast<float>(count) : 0.f;
      }
    }
  }

  void operator()(ops::KernelContext& ctx) const {
    const float* x = ctx.in(0).data<float>();
    float* y = ctx.out(0).data<float>();
    auto plane = [&](int64_t p) {
      std::vector<float> acc(static_cast<size_t>(OW));
      Plane(x + p * H * W, y + p * OH * OW, acc.data());
    };
    if (planes * H * W >= ParallelElements()) {
      ThreadPool::Current().ParallelFor(planes, plane);
    } else {
      for (int64_t p = 0; p < planes; ++p) plane(p);
    }
  }
};

}  // namespace

std::unique_ptr<FastKernel> MakeOneDnnPool(const ir::Node& node, int opset) {
  const ir::Value* x = node.input(0);
  const ir::Value* y = node.output(0);
  const bool max = node.op_type == "MaxPool";
  if (!IsFloat32(x) || !IsFloat32(y) || node.output(1) != nullptr) return nullptr;
  if (x->shape.size() < 3 || x->shape.size() > 5 || NumElements(y->shape) == 0) return nullptr;
  const size_t n = x->shape.size() - 2;
  const bool ceil_mode = node.attrs.Int("ceil_mode", 0) != 0;
  // Ceil mode extends the end padding (below). oneDNN's average that
  // excludes padding divides by the elements inside the input, as ONNX does;
  // including padding, it would count the extension too.
  const bool include_pad = node.attrs.Int("count_include_pad", 0) != 0;
  if (!max && ceil_mode && include_pad) return nullptr;
  const std::vector<int64_t> kernel = node.attrs.Ints("kernel_shape");
  if (kernel.size() != n) return nullptr;
  const Shape in_spatial(x->shape.begin() + 2, x->shape.end());
  std::vector<int64_t> strides, dilations, pads;
  Shape out_spatial;
  if (!ops::ResolveWindow(node, in_spatial, kernel, ceil_mode, &strides, &dilations, &pads,
                          &out_spatial)
           .ok()) {
    return nullptr;
  }
  if (!std::equal(out_spatial.begin(), out_spatial.end(), y->shape.begin() + 2)) return nullptr;
  memory::dims pad_l(n), pad_r(n);
  for (size_t i = 0; i < n; ++i) {
    if (dilations[i] != 1) return nullptr;
    pad_l[i] = pads[i];
    // What oneDNN needs to get the same output size: ceil mode extends the
    // end padding (max pooling never reads it, an average excluding padding
    // never counts it).
    pad_r[i] = std::max(pads[i + n],
                        (out_spatial[i] - 1) * strides[i] + kernel[i] - in_spatial[i] - pads[i]);
  }
  const auto alg = max           ? dnnl::algorithm::pooling_max
                   : include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                 : dnnl::algorithm::pooling_avg_exclude_padding;
  const bool single = NumElements(x->shape) < ParallelElements();
  const memory::dims stride_dims(strides.begin(), strides.end()),
      kernel_dims(kernel.begin(), kernel.end());
  auto build = [=](const std::vector<memory::desc>& srcs, const memory::desc& dst,
                   memory::desc* scratchpad, std::string* impl) {
    dnnl::pooling_forward::desc desc(dnnl::prop_kind::forward_inference, alg, srcs[0], dst,
                                     stride_dims, kernel_dims, pad_l, pad_r);
    dnnl::pooling_forward::primitive_desc pd(desc, UserScratchpad(), Engine());
    *scratchpad = pd.scratchpad_desc();
    *impl = pd.impl_info_str();
    return dnnl::primitive(dnnl::pooling_forward(pd));
  };
  auto k = std::make_unique<OneDnnFlexible>(
      max ? "max pool" : "average pool", build, std::vector<int>{DNNL_ARG_SRC},
      std::vector<std::vector<int64_t>>{x->shape}, y->shape, single);
  if (!k->Init()) return nullptr;
  if (n == 2) {
    const PlainPool2d plain{.max = max,
                            .include_pad = include_pad,
                            .planes = x->shape[0] * x->shape[1],
                            .H = in_spatial[0],
                            .W = in_spatial[1],
                            .OH = out_spatial[0],
                            .OW = out_spatial[1],
                            .KH = kernel[0],
                            .KW = kernel[1],
                            .SH = strides[0],
                            .SW = strides[1],
                            .PT = pads[0],
                            .PL = pads[1]};
    k->plain_run = {plain, "plain planes"};
  }
  return k;
}

}  // namespace tessel::cpu

#endif  // TESSEL_WITH_ONEDNN
