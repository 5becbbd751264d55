// oneDNN pooling (onednn_kernels.h): MaxPool and AveragePool, on
// OneDnnFlexible, so that they run in any activation layout.
// Compiled only with oneDNN (TESSEL_WITH_ONEDNN).
#if TESSEL_WITH_ONEDNN
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "ops/nn_internal.h"
#include "targets/cpu/onednn_internal.h"
#include "targets/cpu/onednn_kernels.h"

namespace tessel::cpu {

using dnnl::memory;

std::unique_ptr<FastKernel> MakeOneDnnPool(const ir::Node& node, int opset) {
  const ir::Value* x = node.input(0);
  const ir::Value* y = node.output(0);
  const bool max = node.op_type == "MaxPool";
  if (!IsFloat32(x) || !IsFloat32(y) || node.output(1) != nullptr) return nullptr;
  if (x->shape.size() < 3 || x->shape.size() > 5 || NumElements(y->shape) == 0) return nullptr;
  const size_t n = x->shape.size() - 2;
  const bool ceil_mode = node.attrs.Int("ceil_mode", 0) != 0;
  if (!max && ceil_mode) return nullptr;  // oneDNN would average over the extra padding
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
    // end padding (max pooling never reads it).
    pad_r[i] = std::max(pads[i + n],
                        (out_spatial[i] - 1) * strides[i] + kernel[i] - in_spatial[i] - pads[i]);
  }
  const auto alg = max ? dnnl::algorithm::pooling_max
                   : node.attrs.Int("count_include_pad", 0) != 0
                       ? dnnl::algorithm::pooling_avg_include_padding
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
  return k;
}

}  // namespace tessel::cpu

#endif  // TESSEL_WITH_ONEDNN
