#include "passes/fold_batch_norm.h"

#include <cmath>
#include <unordered_set>

#include "passes/fusion.h"

namespace tessel::passes {

namespace {

bool FloatConstant(const ir::Value* v, const Shape& shape) {
  return v && v->is_constant() && v->dtype == DType::kFloat32 && v->shape == shape;
}

}  // namespace

Status FoldBatchNorm(ir::Graph& graph) {
  const Readers readers(graph);
  std::unordered_set<const ir::Node*> removed;
  // New constants are added while walking; take the nodes first.
  std::vector<ir::Node*> convs;
  for (const auto& n : graph.nodes()) {
    if (n->op_type == "Conv" && n->domain.empty() && n->outputs.size() == 1)
      convs.push_back(n.get());
  }
  for (ir::Node* conv : convs) {
    ir::Value* y = conv->outputs[0];
    const ir::Value* w = conv->input(1);
    if (!y || !w || w->shape.size() < 3) continue;
    ir::Node* bn = readers.Sole(y);
    if (!bn || bn->op_type != "BatchNormalization" || !bn->domain.empty() || bn->input(0) != y) continue;
    if (bn->outputs.empty() || !bn->outputs[0]) continue;
    bool extra_outputs = false;
    for (size_t i = 1; i < bn->outputs.size(); ++i) extra_outputs |= bn->outputs[i] != nullptr;
    const int64_t channels = w->shape[0];
    const Shape per_channel = {channels};
    bool constant = FloatConstant(w, w->shape) &&
                    (!conv->input(2) || FloatConstant(conv->input(2), per_channel));
    for (size_t i = 1; i < 5; ++i) constant = constant && FloatConstant(bn->input(i), per_channel);
    if (extra_outputs || !constant) continue;

    const double eps = bn->attrs.Float("epsilon", 1e-5f);
    const float* scale = bn->input(1)->constant.data<float>();
    const float* shift = bn->input(2)->constant.data<float>();
    const float* mean = bn->input(3)->constant.data<float>();
    const float* var = bn->input(4)->constant.data<float>();
    const float* bias = conv->input(2) ? conv->input(2)->constant.data<float>() : nullptr;
    Tensor folded_w(DType::kFloat32, w->shape);
    Tensor folded_b(DType::kFloat32, per_channel);
    const int64_t per_filter = w->constant.num_elements() / channels;
    for (int64_t c = 0; c < channels; ++c) {
      const double s = scale[c] / std::sqrt(static_cast<double>(var[c]) + eps);
      for (int64_t k = 0; k < per_filter; ++k) {
        const int64_t i = c * per_filter + k;
        folded_w.data<float>()[i] = static_cast<float>(w->constant.data<float>()[i] * s);
      }
      folded_b.data<float>()[c] =
          static_cast<float>(((bias ? bias[c] : 0.0) - mean[c]) * s + shift[c]);
    }
    ir::Value* new_w = graph.AddConstant(conv->name + "/W_folded_bn", std::move(folded_w));
    ir::Value* new_b = graph.AddConstant(conv->name + "/B_folded_bn", std::move(folded_b));
    conv->inputs = {conv->inputs[0], new_w, new_b};
    conv->outputs = {bn->outputs[0]};
    y->producer = nullptr;
    bn->outputs[0]->producer = conv;
    removed.insert(bn);
  }
  graph.RemoveNodes([&](const ir::Node& n) { return removed.count(&n) != 0; });
  return Status::Ok();
}

}  // namespace tessel::passes
