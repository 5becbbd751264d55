// oneDNN normalizations (onednn_kernels.h): Softmax. (LayerNormalization has
// a native kernel: native_kernels.h.)
// Compiled only with oneDNN (TESSEL_WITH_ONEDNN).
#if TESSEL_WITH_ONEDNN
#include <memory>
#include <string>
#include <vector>

#include "targets/cpu/onednn_internal.h"
#include "targets/cpu/onednn_kernels.h"

namespace tessel::cpu {

using dnnl::memory;

std::unique_ptr<FastKernel> MakeOneDnnSoftmax(const ir::Node& node, int opset) {
  const ir::Value* x = node.input(0);
  const ir::Value* y = node.output(0);
  if (!IsFloat32(x) || !IsFloat32(y) || x->shape.empty() || NumElements(x->shape) == 0)
    return nullptr;
  const auto rank = static_cast<int64_t>(x->shape.size());
  int64_t axis = node.attrs.Int("axis", opset >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return nullptr;
  std::vector<int64_t> dims = x->shape;
  if (opset < 13) {  // softmax over the flattened [axis, rank) as one row
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i)
      (i < axis ? outer : inner) *= x->shape[static_cast<size_t>(i)];
    dims = {outer, inner};
    axis = 1;
  }
  const bool single = NumElements(x->shape) < ParallelElements();
  const SingleThreadScope threads(single);
  try {
    const memory::desc md = PlainDesc(dims);
    dnnl::softmax_forward::desc desc(dnnl::prop_kind::forward_inference, md,
                                     static_cast<int>(axis));
    dnnl::softmax_forward::primitive_desc pd(desc, UserScratchpad(), Engine());
    return OneDnnUnary::Make<dnnl::softmax_forward::primitive_desc, dnnl::softmax_forward>(
        pd, "softmax", md, md, single);
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

}  // namespace tessel::cpu

#endif  // TESSEL_WITH_ONEDNN
