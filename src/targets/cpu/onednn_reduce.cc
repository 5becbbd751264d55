// oneDNN reductions (onednn_kernels.h): ReduceMean and ReduceSum over
// constant axes. (GlobalAveragePool, and ReduceMean over an image's pixels,
// have a native kernel that also runs channels last: native_kernels.h.)
// Compiled only with oneDNN (TESSEL_WITH_ONEDNN).
#if TESSEL_WITH_ONEDNN
#include <memory>
#include <vector>

#include "ops/reduce_plan.h"
#include "targets/cpu/onednn_internal.h"
#include "targets/cpu/onednn_kernels.h"

namespace tessel::cpu {

using dnnl::memory;

std::unique_ptr<FastKernel> MakeOneDnnReduce(const ir::Node& node, int opset) {
  const ir::Value* x = node.input(0);
  const ir::Value* y = node.output(0);
  if (!IsFloat32(x) || !IsFloat32(y) || x->shape.empty() || NumElements(y->shape) == 0)
    return nullptr;
  // oneDNN's max reduction drops NaN and, in some of its implementations,
  // turns a row of -inf (a fully masked attention row) into the lowest
  // finite float; ReduceMax and GlobalMaxPool keep the reference kernel.
  if (node.op_type == "ReduceMax" || node.op_type == "GlobalMaxPool") return nullptr;
  const bool sum = node.op_type == "ReduceSum";
  const auto alg = sum ? dnnl::algorithm::reduction_sum : dnnl::algorithm::reduction_mean;
  StatusOr<ops::ReducedAxes> plan = ops::PlanReducedAxes(node, opset);
  if (!plan.ok() || plan->identity) return nullptr;
  std::vector<int64_t> dims = x->shape;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (plan->reduced[d]) dims[d] = 1;
  }
  // keepdims=0 drops the 1s, which leaves the bytes where they are.
  if (NumElements(dims) != NumElements(y->shape)) return nullptr;
  const bool single = NumElements(x->shape) < ParallelElements();
  const SingleThreadScope threads(single);
  try {
    const memory::desc src = PlainDesc(x->shape), dst = PlainDesc(dims);
    dnnl::reduction::desc desc(alg, src, dst, 0.f, 0.f);
    dnnl::reduction::primitive_desc pd(desc, UserScratchpad(), Engine());
    return OneDnnUnary::Make<dnnl::reduction::primitive_desc, dnnl::reduction>(pd, "reduction", src,
                                                                               dst, single);
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

}  // namespace tessel::cpu

#endif  // TESSEL_WITH_ONEDNN
