#include "passes/fuse_conv_activation.h"

#include <cfloat>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "ops/fused_activation.h"
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

// The activation applied to `y` alone, if any: the nodes that compute it
// (the last writes the result) and what the FusedConv applies.
struct Activation {
  std::vector<ir::Node*> nodes;
  ops::FusedActivation activation;
};

bool Plain(const ir::Node* n, const ChainFusion& fusion) {
  return n && n->domain.empty() && !fusion.Taken(n) && n->outputs.size() == 1 && n->outputs[0];
}

std::optional<Activation> MatchActivation(const Readers& readers, const ChainFusion& fusion,
                                          const ir::Value* y, int opset) {
  if (readers.IsGraphOutput(y)) return std::nullopt;
  const std::vector<ir::Node*>& r = readers.of(y);
  Activation a;
  if (r.size() == 1 && Plain(r[0], fusion) && r[0]->input(0) == y) {
    ir::Node* next = r[0];
    const std::string& op = next->op_type;
    using ops::ActivationKind;
    float lo = 0, hi = 0;
    if (op == "Relu") {
      a.activation = ops::DefaultActivation(ActivationKind::kRelu);
    } else if (op == "Sigmoid") {
      a.activation = ops::DefaultActivation(ActivationKind::kSigmoid);
    } else if (op == "HardSwish") {
      a.activation = ops::DefaultActivation(ActivationKind::kHardSwish);
    } else if (op == "Clip" && ClipBounds(*next, opset, &lo, &hi)) {
      a.activation = {.kind = ActivationKind::kClip, .alpha = lo, .beta = hi};
    } else if (op == "LeakyRelu") {
      // The ONNX ops' defaults are FusedConv's.
      a.activation = ops::DefaultActivation(ActivationKind::kLeakyRelu);
      a.activation.alpha = next->attrs.Float("alpha", a.activation.alpha);
    } else if (op == "HardSigmoid") {
      a.activation = ops::DefaultActivation(ActivationKind::kHardSigmoid);
      a.activation.alpha = next->attrs.Float("alpha", a.activation.alpha);
      a.activation.beta = next->attrs.Float("beta", a.activation.beta);
    } else {
      return std::nullopt;
    }
    a.nodes = {next};
    return a;
  }
  // Swish as exported, Mul(y, Sigmoid(y)), and HardSwish as opset-13
  // exports write it, Mul(y, HardSigmoid(y)) with alpha 1/6 and beta 1/2;
  // y read by exactly those two.
  if (r.size() == 2) {
    for (int k = 0; k < 2; ++k) {
      ir::Node* gate = r[k];
      ir::Node* mul = r[1 - k];
      if (!Plain(gate, fusion) || !Plain(mul, fusion) || mul->op_type != "Mul" ||
          gate->input(0) != y || mul->inputs.size() != 2) {
        continue;
      }
      const bool hard_swish = gate->op_type == "HardSigmoid" &&
                              gate->attrs.Float("alpha", 0.2f) == 1.0f / 6.0f &&
                              gate->attrs.Float("beta", 0.5f) == 0.5f;
      if (gate->op_type != "Sigmoid" && !hard_swish) continue;
      const ir::Value* s = gate->outputs[0];
      const bool pair = (mul->inputs[0] == y && mul->inputs[1] == s) ||
                        (mul->inputs[0] == s && mul->inputs[1] == y);
      if (!pair || readers.Sole(s) != mul || mul->outputs[0]->shape != y->shape) continue;
      a.activation = ops::DefaultActivation(hard_swish ? ops::ActivationKind::kHardSwish
                                                       : ops::ActivationKind::kSwish);
      a.nodes = {gate, mul};
      return a;
    }
  }
  return std::nullopt;
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
    AttributeMap attrs = conv->attrs;
    if (std::optional<Activation> a = MatchActivation(readers, fusion, y, opset)) {
      chain.insert(chain.end(), a->nodes.begin(), a->nodes.end());
      ops::SetFusedActivation(attrs, a->activation);
    }
    if (chain.size() == 1) continue;
    // The last node of the chain becomes the fused node; the others go.
    ir::Node* host = chain.back();
    std::vector<ir::Value*> inputs = {conv->input(0), conv->input(1), conv->input(2)};
    if (residual) inputs.push_back(residual);
    while (inputs.back() == nullptr) inputs.pop_back();
    fusion.Fuse(chain, host, "FusedConv", conv->name, std::move(attrs), std::move(inputs));
  }
  fusion.Finish(graph);
  return Status::Ok();
}

}  // namespace tessel::passes
