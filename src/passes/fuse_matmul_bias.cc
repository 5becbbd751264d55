#include "passes/fuse_matmul_bias.h"

#include <unordered_set>

#include "passes/fusion.h"

namespace tessel::passes {

namespace {

bool IsFloat32(const ir::Value* v) { return v && v->dtype == DType::kFloat32 && v->shape_known; }

bool IsAdd(const ir::Node* n) {
  return n && n->op_type == "Add" && n->domain.empty() && n->inputs.size() == 2 &&
         n->outputs.size() == 1 && IsFloat32(n->outputs[0]);
}

// The input of `add` that is not `v` (nullptr if both are).
ir::Value* Other(const ir::Node& add, const ir::Value* v) {
  if (add.inputs[0] == v) return add.inputs[1] == v ? nullptr : add.inputs[1];
  return add.inputs[0];
}

// N values along the last axis: [N] or [1, ..., 1, N].
bool IsBiasRow(const ir::Value* bias, int64_t n) {
  if (!IsFloat32(bias) || !bias->is_constant() || bias->shape.empty() || bias->shape.back() != n) {
    return false;
  }
  return NumElements(bias->shape) == n;
}

}  // namespace

Status FuseMatMulBias(ir::Graph& graph) {
  const Readers readers(graph);
  ChainFusion fusion;
  for (const auto& owned : graph.nodes()) {
    ir::Node* matmul = owned.get();
    if (matmul->op_type != "MatMul" || !matmul->domain.empty() || matmul->outputs.size() != 1)
      continue;
    const ir::Value* a = matmul->input(0);
    ir::Value* w = matmul->input(1);
    ir::Value* y = matmul->outputs[0];
    if (!IsFloat32(a) || !IsFloat32(y) || !IsFloat32(w) || !w->is_constant() ||
        w->shape.size() != 2 || a->shape.size() < 2) {
      continue;
    }
    ir::Node* add = readers.Sole(y);
    if (!IsAdd(add) || fusion.Taken(add) || add->outputs[0]->shape != y->shape) continue;
    ir::Value* bias = Other(*add, y);
    if (!IsBiasRow(bias, w->shape[1])) continue;
    std::vector<ir::Node*> chain = {matmul, add};
    std::vector<ir::Value*> inputs = {matmul->inputs[0], w, bias};
    ir::Value* out = add->outputs[0];
    ir::Node* residual = readers.Sole(out);
    if (IsAdd(residual) && !fusion.Taken(residual) && residual->outputs[0]->shape == y->shape) {
      ir::Value* z = Other(*residual, out);
      if (IsFloat32(z) && z->shape == y->shape) {
        inputs.push_back(z);
        chain.push_back(residual);
      }
    }
    fusion.Fuse(chain, chain.back(), "FusedMatMul", matmul->name, AttributeMap(),
                std::move(inputs));
  }
  fusion.Finish(graph);
  return Status::Ok();
}

}  // namespace tessel::passes
