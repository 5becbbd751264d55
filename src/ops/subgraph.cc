#include "ops/subgraph.h"

#include <cstring>
#include <limits>
#include <unordered_map>

#include "ir/verifier.h"
#include "ops/op_registry.h"
#include "ops/op_util.h"

namespace tessel::ops {

namespace {

// Bodies nest only through corrupt files; the bound keeps validation finite.
constexpr int kMaxBodyDepth = 8;

Status Validate(const ir::Node& node, int opset, int depth) {
  if (!node.body) return InvalidArgument(node.Describe() + ": has no body graph");
  if (depth > kMaxBodyDepth) return InvalidArgument(node.Describe() + ": bodies nest too deeply");
  ir::Graph& body = *node.body;
  Status s = ir::VerifyGraph(body, /*require_types=*/true);
  if (!s.ok()) return InvalidArgument(node.Describe() + ": body is inconsistent: " + s.message());
  auto mismatch = [&](const char* what, size_t i, const ir::Value* outer, const ir::Value* inner) {
    return InvalidArgument(node.Describe() + ": " + what + " " + std::to_string(i) + " '" +
                           outer->name + "' is " + DTypeName(outer->dtype) + " " +
                           ShapeToString(outer->shape) + " but the body's '" + inner->name +
                           "' is " + DTypeName(inner->dtype) + " " + ShapeToString(inner->shape));
  };
  if (node.inputs.size() != body.inputs().size()) {
    return InvalidArgument(node.Describe() + ": has " + std::to_string(node.inputs.size()) +
                           " inputs; its body takes " + std::to_string(body.inputs().size()));
  }
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ir::Value* outer = node.input(i);
    const ir::Value* inner = body.inputs()[i];
    if (!outer)
      return InvalidArgument(node.Describe() + ": input " + std::to_string(i) + " is missing");
    if (outer->dtype != inner->dtype || outer->shape != inner->shape) {
      return mismatch("input", i, outer, inner);
    }
  }
  if (node.outputs.size() != body.outputs().size()) {
    return InvalidArgument(node.Describe() + ": has " + std::to_string(node.outputs.size()) +
                           " outputs; its body produces " + std::to_string(body.outputs().size()));
  }
  const int body_opset = body.opset_version() > 0 ? body.opset_version() : opset;
  for (const auto& n : body.nodes()) {
    if (IsSubgraph(*n)) {
      TESSEL_RETURN_IF_ERROR(Validate(*n, body_opset, depth + 1));
      continue;
    }
    Status inferred = InferNode(*n, body_opset);
    if (!inferred.ok()) {
      return InvalidArgument(node.Describe() + ": body: " + inferred.message());
    }
  }
  return Status::Ok();
}

Status InferSubgraph(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(Validate(node, opset, 0));
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const ir::Value* inner = node.body->outputs()[i];
    SetOutput(node, i, inner->dtype, inner->shape);
  }
  return Status::Ok();
}

Status RunSubgraph(KernelContext& ctx) {
  const ir::Graph& body = *ctx.node.body;
  const int opset = body.opset_version() > 0 ? body.opset_version() : ctx.opset;
  std::unordered_map<const ir::Value*, Tensor> values;
  for (size_t i = 0; i < body.inputs().size(); ++i) values[body.inputs()[i]] = ctx.in(i);
  std::vector<const Tensor*> in_ptrs;
  for (const auto& n : body.nodes()) {
    in_ptrs.clear();
    for (const ir::Value* v : n->inputs) {
      if (!v) {
        in_ptrs.push_back(nullptr);
      } else if (v->is_constant()) {
        in_ptrs.push_back(&v->constant);
      } else {
        in_ptrs.push_back(&values.at(v));
      }
    }
    TESSEL_ASSIGN_OR_RETURN(std::vector<Tensor> outs, EvaluateNode(*n, opset, in_ptrs));
    for (size_t k = 0; k < n->outputs.size(); ++k) {
      if (n->outputs[k]) values[n->outputs[k]] = std::move(outs[k]);
    }
  }
  for (size_t i = 0; i < body.outputs().size(); ++i) {
    if (!ctx.has_out(i)) continue;
    const ir::Value* o = body.outputs()[i];
    const Tensor& t = o->is_constant() ? o->constant : values.at(o);
    std::memcpy(ctx.out(i).raw_data(), t.raw_data(), t.size_bytes());
  }
  return Status::Ok();
}

}  // namespace

bool IsSubgraph(const ir::Node& node) {
  return node.op_type == kSubgraphOpType && node.domain == kTesselDomain;
}

Status ValidateSubgraph(const ir::Node& node, int opset) { return Validate(node, opset, 0); }

void RegisterSubgraphOps(OpRegistry& r) {
  r.Register({.op_type = kSubgraphOpType,
              .domain = kTesselDomain,
              .op_class = OpClass::kBroadcast,
              .min_inputs = 0,
              .max_inputs = std::numeric_limits<int>::max(),
              .min_outputs = 1,
              .max_outputs = std::numeric_limits<int>::max(),
              .infer = InferSubgraph,
              .run = RunSubgraph});
}

}  // namespace tessel::ops
