#include "passes/fold_batch_norm.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "ops/op_registry.h"
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
    if (!bn || bn->op_type != "BatchNormalization" || !bn->domain.empty() || bn->input(0) != y)
      continue;
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
  // What follows no foldable Conv (DenseNet's pre-activation BN -> ReLU ->
  // Conv, a BN after a Concat): (X - mean) * s + bias with s = scale /
  // sqrt(var + epsilon) per channel, three broadcasting ops that the
  // snippets fuse with their neighbours into one pass.
  std::vector<ir::Node*> rest;
  for (const auto& n : graph.nodes()) {
    if (n->op_type == "BatchNormalization" && n->domain.empty() && !removed.count(n.get()))
      rest.push_back(n.get());
  }
  bool decomposed = false;
  for (ir::Node* bn : rest) {
    const ir::Value* x = bn->input(0);
    if (graph.opset_version() < 7 || !x || x->dtype != DType::kFloat32 || x->shape.size() < 2 ||
        bn->outputs.empty() || !bn->outputs[0]) {
      continue;
    }
    bool ok = bn->attrs.Int("training_mode", 0) == 0;
    for (size_t i = 1; i < bn->outputs.size(); ++i) ok = ok && bn->outputs[i] == nullptr;
    const int64_t channels = x->shape[1];
    for (size_t i = 1; i < 5; ++i) ok = ok && FloatConstant(bn->input(i), {channels});
    if (!ok) continue;
    const double eps = bn->attrs.Float("epsilon", 1e-5f);
    const float* scale = bn->input(1)->constant.data<float>();
    const float* var = bn->input(4)->constant.data<float>();
    // Per channel, shaped to broadcast over axis 1: C x 1 x ... x 1.
    Shape per_channel(x->shape.size() - 1, 1);
    per_channel[0] = channels;
    Tensor s(DType::kFloat32, per_channel);
    for (int64_t c = 0; c < channels; ++c) {
      s.data<float>()[c] =
          static_cast<float>(scale[c] / std::sqrt(static_cast<double>(var[c]) + eps));
    }
    auto channel_constant = [&](const std::string& what, Tensor t) {
      return graph.AddConstant(graph.UniqueValueName(bn->name + "/" + what), std::move(t));
    };
    auto reshaped = [&](const ir::Value* v) {
      Tensor t(DType::kFloat32, per_channel);
      std::copy_n(v->constant.data<float>(), channels, t.data<float>());
      return t;
    };
    ir::Value* mean = channel_constant("mean", reshaped(bn->input(3)));
    ir::Value* bias = channel_constant("bias", reshaped(bn->input(2)));
    ir::Value* factor = channel_constant("factor", std::move(s));
    ir::Value* y = bn->outputs[0];
    ir::Value* centred = graph.AddValue(graph.UniqueValueName(bn->name + "/centred"));
    ir::Value* scaled = graph.AddValue(graph.UniqueValueName(bn->name + "/scaled"));
    bn->outputs[0] = nullptr;
    y->producer = nullptr;
    const int opset = graph.opset_version();
    for (ir::Node* n : {graph.AddNode("Sub", bn->name + "/Sub", {bn->inputs[0], mean}, {centred}),
                        graph.AddNode("Mul", bn->name + "/Mul", {centred, factor}, {scaled}),
                        graph.AddNode("Add", bn->name + "/Add", {scaled, bias}, {y})}) {
      TESSEL_RETURN_IF_ERROR(ops::InferNode(*n, opset));
    }
    removed.insert(bn);
    decomposed = true;
  }
  graph.RemoveNodes([&](const ir::Node& n) { return removed.count(&n) != 0; });
  return decomposed ? graph.SortTopologically() : Status::Ok();
}

}  // namespace tessel::passes
