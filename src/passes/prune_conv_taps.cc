#include "passes/prune_conv_taps.h"

#include <algorithm>
#include <string>
#include <vector>

#include "ops/nn_internal.h"
#include "ops/op_registry.h"
#include "ops/op_util.h"

namespace tessel::passes {

Status PruneConvTaps(ir::Graph& graph) {
  const int opset = graph.opset_version();
  std::vector<ir::Node*> convs;
  for (const auto& n : graph.nodes()) {
    if (n->op_type == "Conv" && n->domain.empty()) convs.push_back(n.get());
  }
  for (ir::Node* conv : convs) {
    const ir::Value* x = conv->input(0);
    const ir::Value* w = conv->input(1);
    const ir::Value* y = conv->output(0);
    if (!x || !w || !y || x->dtype != DType::kFloat32 || !w->is_constant() ||
        w->dtype != DType::kFloat32 || w->shape.size() < 3 || x->shape.size() != w->shape.size() ||
        y->shape.size() != x->shape.size()) {
      continue;
    }
    if (conv->attrs.String("auto_pad", "NOTSET") != "NOTSET") continue;
    const size_t n = w->shape.size() - 2;
    // The attributes as the kernels read them (validated, one per axis).
    std::vector<int64_t> strides, dilations, pads;
    Shape out_spatial;
    if (!ops::ResolveWindow(*conv, Shape(x->shape.begin() + 2, x->shape.end()),
                            std::vector<int64_t>(w->shape.begin() + 2, w->shape.end()), false,
                            &strides, &dilations, &pads, &out_spatial)
             .ok()) {
      continue;
    }
    std::vector<int64_t> first(n), last(n);
    bool smaller = false, valid = true;
    for (size_t a = 0; a < n && valid; ++a) {
      const int64_t k = w->shape[a + 2], in = x->shape[a + 2], out = y->shape[a + 2];
      const int64_t s = strides[a], d = dilations[a], p = pads[a];
      first[a] = k;
      last[a] = -1;
      for (int64_t i = 0; i < k; ++i) {
        // Rows read: i*d - p + y*s for y in [0, out), in 128 bits (a
        // hostile model's dilations and pads may be near 2^62).
        const ops::WideInt lo = ops::WideInt{i} * d - p, hi = lo + ops::WideInt{out - 1} * s;
        if (out > 0 && lo <= in - 1 && hi >= 0) {
          first[a] = std::min(first[a], i);
          last[a] = std::max(last[a], i);
        }
      }
      if (last[a] < first[a]) {
        valid = false;  // no tap reads anything: leave it to the kernel
        break;
      }
      const ops::WideInt begin = p - ops::WideInt{first[a]} * d,
                         end = pads[a + n] - ops::WideInt{k - 1 - last[a]} * d;
      if (begin < 0 || end < 0) valid = false;
      smaller = smaller || first[a] > 0 || last[a] < k - 1;
    }
    if (!valid || !smaller) continue;
    // The live taps' weights, in the same [Cout, Cin/group, k...] order.
    Shape kept = {w->shape[0], w->shape[1]};
    for (size_t a = 0; a < n; ++a) kept.push_back(last[a] - first[a] + 1);
    Tensor pruned(DType::kFloat32, kept);
    const float* from = w->constant.data<float>();
    float* to = pruned.data<float>();
    std::vector<int64_t> index(kept.size(), 0);
    for (int64_t e = 0; e < pruned.num_elements(); ++e) {
      int64_t offset = 0;
      for (size_t dim = 0; dim < kept.size(); ++dim) {
        const int64_t at = dim < 2 ? index[dim] : index[dim] + first[dim - 2];
        offset = offset * w->shape[dim] + at;
      }
      to[e] = from[offset];
      for (size_t dim = kept.size(); dim-- > 0;) {  // next index: odometer
        if (++index[dim] < kept[dim]) break;
        index[dim] = 0;
      }
    }
    std::vector<int64_t> kernel_shape;
    for (size_t a = 0; a < n; ++a) {
      kernel_shape.push_back(kept[a + 2]);
      pads[a] -= first[a] * dilations[a];
      pads[a + n] -= (w->shape[a + 2] - 1 - last[a]) * dilations[a];
    }
    conv->inputs[1] =
        graph.AddConstant(graph.UniqueValueName(conv->name + "/W_live_taps"), std::move(pruned));
    conv->attrs.Set("kernel_shape", kernel_shape);
    conv->attrs.Set("pads", pads);
    const Shape before = y->shape;
    TESSEL_RETURN_IF_ERROR(ops::InferNode(*conv, opset));
    if (conv->output(0)->shape != before) {
      return Internal(conv->Describe() + ": pruning its taps changed its output shape");
    }
  }
  return Status::Ok();
}

}  // namespace tessel::passes
