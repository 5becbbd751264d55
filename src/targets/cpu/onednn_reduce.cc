// oneDNN reductions (onednn_kernels.h): ReduceMean and ReduceSum over
// constant axes. (GlobalAveragePool has a native kernel that also runs
// channels last: native_kernels.h.)
// Compiled only with oneDNN (TESSEL_WITH_ONEDNN).
#if TESSEL_WITH_ONEDNN
#include "targets/cpu/onednn_kernels.h"

#include <memory>
#include <vector>

#include "targets/cpu/onednn_internal.h"

namespace tessel::cpu {

using dnnl::memory;

std::unique_ptr<FastKernel> MakeOneDnnReduce(const ir::Node& node, int opset) {
  const ir::Value* x = node.input(0);
  const ir::Value* y = node.output(0);
  if (!IsFloat32(x) || !IsFloat32(y) || x->shape.empty() || NumElements(y->shape) == 0) return nullptr;
  // oneDNN's max reduction drops NaN and, in some of its implementations,
  // turns a row of -inf (a fully masked attention row) into the lowest
  // finite float; ReduceMax and GlobalMaxPool keep the reference kernel.
  if (node.op_type == "ReduceMax" || node.op_type == "GlobalMaxPool") return nullptr;
  const bool sum = node.op_type == "ReduceSum";
  const auto alg = sum ? dnnl::algorithm::reduction_sum : dnnl::algorithm::reduction_mean;
  std::vector<int64_t> axes;
  if (sum ? opset >= 13 : opset >= 18) {
    const ir::Value* a = node.input(1);
    if (a && !a->is_constant()) return nullptr;
    if (a) axes = a->constant.ToInt64Vector();
    if (axes.empty() && node.attrs.Int("noop_with_empty_axes", 0) != 0) return nullptr;
  } else {
    axes = node.attrs.Ints("axes");
  }
  const auto rank = static_cast<int64_t>(x->shape.size());
  std::vector<int64_t> dims = x->shape;
  if (axes.empty()) dims.assign(x->shape.size(), 1);
  for (int64_t a : axes) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) return nullptr;
    dims[static_cast<size_t>(a)] = 1;
  }
  // keepdims=0 drops the 1s, which leaves the bytes where they are.
  if (NumElements(dims) != NumElements(y->shape)) return nullptr;
  const bool single = NumElements(x->shape) < ParallelElements();
  const SingleThreadScope threads(single);
  try {
    const memory::desc src = PlainDesc(x->shape), dst = PlainDesc(dims);
    dnnl::reduction::desc desc(alg, src, dst, 0.f, 0.f);
    dnnl::reduction::primitive_desc pd(desc, UserScratchpad(), Engine());
    return OneDnnUnary::Make<dnnl::reduction::primitive_desc, dnnl::reduction>(
        pd, "onednn reduction", src, dst, single);
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

}  // namespace tessel::cpu

#endif  // TESSEL_WITH_ONEDNN
