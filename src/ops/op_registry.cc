#include "ops/op_registry.h"

#include <limits>

#include "core/check.h"

namespace tessel::ops {

namespace {

// Ops whose versions after opset 17 tessel implements (OpSchema::max_opset:
// the default is 17). Versions that only add element types need no entry.
void SetNewerVersions(OpRegistry& r) {
  struct Newer {
    const char* op_type;
    int max_opset;  // why the versions up to it behave as implemented
  };
  static constexpr Newer kNewer[] = {
      // Cast-19's `saturate` and Cast-24's `round_mode` only concern float8
      // and float4 results, dtypes tessel rejects at import.
      {"Cast", 28},
      {"CastLike", 28},
      // Opset 18 moved `axes` to an input and added noop_with_empty_axes.
      {"ReduceL1", 18},
      {"ReduceL2", 18},
      {"ReduceLogSum", 28},
      {"ReduceLogSumExp", 28},
      {"ReduceMax", 18},
      {"ReduceMean", 18},
      {"ReduceMin", 18},
      {"ReduceProd", 18},
      {"ReduceSumSquare", 18},
      {"Split", 18},            // num_outputs
      {"Pad", 19},              // 18: axes; 19: mode 'wrap'
      {"AveragePool", 19},      // dilations
      {"LpPool", 18},           // ceil_mode, dilations
      {"ScatterElements", 18},  // reductions max and min
      {"ScatterND", 18},
      {"Mish", 18},                // new at 18
      {"Mod", 28},                 // fmod=0 defined for floats (floored)
      {"Gelu", 28},                // new at 20
      {"Swish", 28},               // new at 24
      {"GroupNormalization", 28},  // new at 18; 21 made scale and bias per channel
      {"CenterCropPad", 28},       // new at 18
      {"Col2Im", 28},              // new at 18
      {"RMSNormalization", 28},    // new at 23
      // Version 28 gave DepthToSpace an expansion as a function, took the
      // integer types from ReduceLogSum(Exp), and gave SpaceToDepth `mode`.
      {"DepthToSpace", 28},
      {"SpaceToDepth", 28},
      // 18: antialias, axes and keep_aspect_ratio_policy; 19: the
      // half_pixel_symmetric mode. Resize rejects what it does not implement
      // of these as unsupported, naming the attribute or mode.
      {"Resize", 19},
  };
  for (const Newer& n : kNewer) r.SetMaxOpset(n.op_type, n.max_opset);
}

}  // namespace

const OpRegistry& OpRegistry::Global() {
  static const OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    RegisterElementwiseOps(*r);
    RegisterNnOps(*r);
    RegisterMatmulOps(*r);
    RegisterTensorOps(*r);
    RegisterReductionOps(*r);
    RegisterSubgraphOps(*r);
    RegisterLossOps(*r);
    RegisterQuantizeOps(*r);
    RegisterDetectionOps(*r);
    RegisterSamplingOps(*r);
    RegisterSignalOps(*r);
    RegisterSelectionOps(*r);
    RegisterLinalgOps(*r);
    RegisterReorderOps(*r);
    RegisterTextOps(*r);
    RegisterRnnOps(*r);
    RegisterAttentionOps(*r);
    SetNewerVersions(*r);
    return r;
  }();
  return *registry;
}

void OpRegistry::SetMaxOpset(std::string_view op_type, int max_opset) {
  auto it = schemas_.find(std::make_pair(std::string(op_type), std::string()));
  TESSEL_CHECK_MSG(it != schemas_.end(), std::string(op_type).c_str());
  it->second.max_opset = max_opset;
}

void OpRegistry::Register(OpSchema schema) {
  TESSEL_CHECK(schema.infer != nullptr && schema.run != nullptr);
  auto key = std::make_pair(schema.op_type, schema.domain);
  TESSEL_CHECK_MSG(schemas_.count(key) == 0, schema.op_type.c_str());
  schemas_.emplace(std::move(key), std::move(schema));
}

const OpSchema* OpRegistry::Find(std::string_view op_type, std::string_view domain) const {
  // "ai.onnx" is the default domain spelled out.
  if (domain == "ai.onnx") domain = "";
  auto it = schemas_.find(std::make_pair(std::string(op_type), std::string(domain)));
  return it == schemas_.end() ? nullptr : &it->second;
}

std::vector<const OpSchema*> OpRegistry::All() const {
  std::vector<const OpSchema*> all;
  for (auto& [key, s] : schemas_) all.push_back(&s);
  return all;
}

Status InferNode(ir::Node& node, int opset) {
  const OpSchema* schema = OpRegistry::Global().Find(node.op_type, node.domain);
  if (!schema) return Unsupported(node.Describe() + ": op type is not supported");
  int present_inputs = static_cast<int>(node.inputs.size());
  while (present_inputs > 0 && node.inputs[present_inputs - 1] == nullptr) --present_inputs;
  if (present_inputs < schema->min_inputs || present_inputs > schema->max_inputs) {
    std::string expected = std::to_string(schema->min_inputs);
    if (schema->max_inputs == std::numeric_limits<int>::max()) {
      expected = "at least " + expected;
    } else if (schema->max_inputs != schema->min_inputs) {
      expected += " to " + std::to_string(schema->max_inputs);
    }
    return InvalidArgument(node.Describe() + ": has " + std::to_string(present_inputs) +
                           " inputs; expected " + expected);
  }
  const int num_outputs = static_cast<int>(node.outputs.size());
  if (num_outputs < schema->min_outputs || num_outputs > schema->max_outputs) {
    return InvalidArgument(node.Describe() + ": has " + std::to_string(num_outputs) +
                           " outputs; expected " + std::to_string(schema->min_outputs) +
                           (schema->max_outputs != schema->min_outputs
                                ? " to " + std::to_string(schema->max_outputs)
                                : std::string()));
  }
  for (int i = 0; i < schema->min_inputs; ++i) {
    if (node.inputs[i] == nullptr) {
      return InvalidArgument(node.Describe() + ": required input " + std::to_string(i) +
                             " is missing");
    }
  }
  for (ir::Value* in : node.inputs) {
    if (in && (!in->shape_known || in->dtype == DType::kUndefined)) {
      return InvalidArgument(node.Describe() + ": input '" + in->name +
                             "' has no known type and shape");
    }
  }
  return schema->infer(node, opset);
}

Status RunKernel(const OpSchema& schema, KernelContext& ctx) {
  for (const Tensor* out : ctx.outputs) {
    if (out && out->num_elements() > 0) return schema.run(ctx);
  }
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> EvaluateNode(const ir::Node& node, int opset,
                                           const std::vector<const Tensor*>& inputs) {
  const OpSchema* schema = OpRegistry::Global().Find(node.op_type, node.domain);
  if (!schema) return Unsupported(node.Describe() + ": op type is not supported");
  std::vector<Tensor> outputs(node.outputs.size());
  KernelContext ctx{node, opset, inputs, {}};
  ctx.outputs.resize(node.outputs.size(), nullptr);
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const ir::Value* o = node.outputs[i];
    if (!o) continue;
    outputs[i] = Tensor(o->dtype, o->shape);
    ctx.outputs[i] = &outputs[i];
  }
  // Without a memory plan, scratch lives as long as this call (64-byte
  // aligned byte tensors).
  std::vector<Tensor> scratch;
  if (schema->scratch) {
    for (const ScratchNeed& need : schema->scratch(node, opset)) {
      scratch.emplace_back(DType::kUInt8, Shape{need.size_bytes});
      ctx.scratch.push_back(scratch.back().raw_data());
    }
  }
  TESSEL_RETURN_IF_ERROR(RunKernel(*schema, ctx));
  return outputs;
}

std::vector<ScratchNeed> ScratchNeeds(const ir::Node& node, int opset) {
  const OpSchema* schema = OpRegistry::Global().Find(node.op_type, node.domain);
  if (!schema || !schema->scratch) return {};
  return schema->scratch(node, opset);
}

StatusOr<std::vector<Tensor>> RunSingleOp(const std::string& op_type, const AttributeMap& attrs,
                                          const std::vector<Tensor>& inputs, int num_outputs,
                                          int opset) {
  ir::Graph g;
  std::vector<ir::Value*> ins;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      ins.push_back(nullptr);
      continue;
    }
    // Every input is known, so ops that need compile-time constants (Reshape's
    // shape, Slice's starts) can be tested through here too.
    ir::Value* v = g.AddValue("in" + std::to_string(i), inputs[i].dtype(), inputs[i].shape(), true);
    v->constant = inputs[i];
    ins.push_back(v);
  }
  std::vector<ir::Value*> outs;
  for (int i = 0; i < num_outputs; ++i) outs.push_back(g.AddValue("out" + std::to_string(i)));
  ir::Node* node = g.AddNode(op_type, "node", ins, outs);
  node->attrs = attrs;
  TESSEL_RETURN_IF_ERROR(InferNode(*node, opset));
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : inputs) ptrs.push_back(t.defined() ? &t : nullptr);
  return EvaluateNode(*node, opset, ptrs);
}

bool IsView(const ir::Node& node) {
  if (node.outputs.size() != 1) return false;
  const OpSchema* schema = OpRegistry::Global().Find(node.op_type, node.domain);
  return schema != nullptr && schema->view;
}

}  // namespace tessel::ops
