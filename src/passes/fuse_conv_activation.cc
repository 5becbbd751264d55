#include "passes/fuse_conv_activation.h"

#include <cfloat>
#include <unordered_set>

#include "passes/fusion.h"

namespace tessel::passes {

namespace {

bool IsFloat32(const ir::Value* v) { return v && v->dtype == DType::kFloat32 && v->shape_known; }

// A Clip's bounds when they are known at compile time (attributes before
// opset 11, constant inputs after).
bool ClipBounds(const ir::Node& clip, int opset, float* lo, float* hi) {
  *lo = -FLT_MAX;
  *hi = FLT_MAX;
  if (opset < 11) {
    *lo = clip.attrs.Float("min", -FLT_MAX);
    *hi = clip.attrs.Float("max", FLT_MAX);
    return true;
  }
  for (size_t i = 1; i <= 2; ++i) {
    const ir::Value* v = clip.input(i);
    if (!v) continue;
    if (!v->is_constant() || v->constant.num_elements() != 1 ||
        v->constant.dtype() != DType::kFloat32) {
      return false;
    }
    (i == 1 ? *lo : *hi) = v->constant.data<float>()[0];
  }
  return true;
}

}  // namespace

Status FuseConvActivation(ir::Graph& graph) {
  const int opset = graph.opset_version();
  const Readers readers(graph);
  ChainFusion fusion;
  for (const auto& owned : graph.nodes()) {
    ir::Node* conv = owned.get();
    if (conv->op_type != "Conv" || !conv->domain.empty() || fusion.Taken(conv)) continue;
    if (conv->outputs.size() != 1 || !IsFloat32(conv->outputs[0]) || !IsFloat32(conv->input(0)))
      continue;
    ir::Value* y = conv->outputs[0];
    ir::Value* residual = nullptr;
    std::string activation;
    float lo = 0, hi = 0;
    std::vector<ir::Node*> chain = {conv};
    ir::Node* next = readers.Sole(y);
    if (next && fusion.Taken(next)) next = nullptr;
    if (next && next->op_type == "Add" && next->domain.empty() && next->inputs.size() == 2 &&
        next->outputs.size() == 1) {
      ir::Value* other = next->inputs[0] == y ? next->inputs[1] : next->inputs[0];
      if (other != y && IsFloat32(other) && other->shape == y->shape &&
          next->outputs[0]->shape == y->shape) {
        residual = other;
        chain.push_back(next);
        y = next->outputs[0];
        next = readers.Sole(y);
        if (next && fusion.Taken(next)) next = nullptr;
      }
    }
    if (next && next->domain.empty() && next->outputs.size() == 1 && next->inputs[0] == y) {
      if (next->op_type == "Relu") {
        activation = "Relu";
      } else if (next->op_type == "Clip" && ClipBounds(*next, opset, &lo, &hi)) {
        activation = "Clip";
      }
      if (!activation.empty()) chain.push_back(next);
    }
    if (chain.size() == 1) continue;
    // The last node of the chain becomes the fused node; the others go.
    ir::Node* host = chain.back();
    AttributeMap attrs = conv->attrs;
    if (!activation.empty()) attrs.Set("activation", activation);
    if (activation == "Clip") {
      attrs.Set("activation_min", lo);
      attrs.Set("activation_max", hi);
    }
    std::vector<ir::Value*> inputs = {conv->input(0), conv->input(1), conv->input(2)};
    if (residual) inputs.push_back(residual);
    while (inputs.back() == nullptr) inputs.pop_back();
    fusion.Fuse(chain, host, "FusedConv", conv->name, std::move(attrs), std::move(inputs));
  }
  fusion.Finish(graph);
  return Status::Ok();
}

}  // namespace tessel::passes
