#include "targets/reference/planned_memory.h"

#include <algorithm>
#include <cstring>

#include "core/check.h"
#include "ir/liveness.h"

namespace tessel::targets {

namespace {

constexpr int64_t kArenaAlignment = 64;

}  // namespace

PlannedMemory BindPlannedMemory(const ir::Graph& graph, const ir::MemoryLayout& layout,
                                const std::vector<std::vector<ops::ScratchNeed>>& scratch,
                                const std::function<bool(size_t)>& writes_every_output) {
  const auto& nodes = graph.nodes();
  const auto& values = graph.values();
  // The layout comes from plan-memory for this graph, or from a model file
  // whose loader checked it: a mismatch here is a bug.
  TESSEL_CHECK(layout.values.size() == values.size());
  TESSEL_CHECK(layout.scratch.size() == nodes.size() && layout.in_place.size() == nodes.size());
  TESSEL_CHECK(scratch.size() == nodes.size());
  PlannedMemory plan;
  // Read-only pools hold constants only. On the host the graph's constants
  // already are memory the kernels can read, so they stay where they are:
  // copying them into an arena would only double the weights' memory. (The
  // plan still places them, for targets that emit them at offsets.)
  for (const ir::MemoryPool& pool : layout.pools) {
    if (pool.read_only) {
      plan.arenas.emplace_back();
      continue;
    }
    plan.arenas.emplace_back(DType::kUInt8, Shape{(pool.size_bytes + kArenaAlignment - 1) /
                                                  kArenaAlignment * kArenaAlignment});
    plan.workspace_bytes += pool.size_bytes;
  }
  auto at = [&](const ir::BufferPlacement& p, int64_t size_bytes) {
    TESSEL_CHECK(p.pool >= 0 && static_cast<size_t>(p.pool) < plan.arenas.size());
    TESSEL_CHECK(p.offset_bytes >= 0 && p.offset_bytes + size_bytes <=
                                            layout.pools[static_cast<size_t>(p.pool)].size_bytes);
    return static_cast<char*>(plan.arenas[static_cast<size_t>(p.pool)].raw_data()) + p.offset_bytes;
  };

  std::vector<bool> is_input(values.size(), false);
  for (const ir::Value* v : graph.inputs()) is_input[static_cast<size_t>(v->id)] = true;
  plan.values.resize(values.size());
  for (const auto& v : values) {
    const auto id = static_cast<size_t>(v->id);
    const ir::BufferPlacement& p = layout.values[id];
    if (v->is_constant()) {
      plan.values[id] = v->constant;
      continue;
    }
    if (!p.planned()) continue;  // the caller's, bound at every Run
    plan.values[id] =
        Tensor::View(v->dtype, v->shape, at(p, static_cast<int64_t>(v->size_bytes())));
  }
  for (const ir::Value* v : graph.inputs()) {
    plan.input_in_arena.push_back(layout.values[static_cast<size_t>(v->id)].planned());
  }
  for (const ir::Value* o : graph.outputs()) {
    const auto id = static_cast<size_t>(o->id);
    const bool caller = !o->is_constant() && !is_input[id] && !layout.values[id].planned();
    if (caller && std::find(plan.caller_outputs.begin(), plan.caller_outputs.end(), o->id) ==
                      plan.caller_outputs.end()) {
      plan.caller_outputs.push_back(o->id);
    }
  }

  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& node = *nodes[i];
    plan.schemas.push_back(ops::OpRegistry::Global().Find(node.op_type, node.domain));
    TESSEL_CHECK_MSG(plan.schemas.back() != nullptr, node.op_type.c_str());
    ops::KernelContext ctx{node, graph.opset_version(), {}, {}};
    for (const ir::Value* in : node.inputs) {
      ctx.inputs.push_back(in ? &plan.values[static_cast<size_t>(in->id)] : nullptr);
    }
    plan.cleared.emplace_back();
    const bool writes_all = writes_every_output && writes_every_output(i);
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const ir::Value* o = node.outputs[k];
      Tensor* t = o ? &plan.values[static_cast<size_t>(o->id)] : nullptr;
      ctx.outputs.push_back(t);
      // Reference kernels may accumulate into a zeroed output.
      if (t && !writes_all && !(k == 0 && layout.in_place[i] >= 0))
        plan.cleared.back().push_back(t);
    }
    const std::vector<ops::ScratchNeed>& needs = scratch[i];
    TESSEL_CHECK(needs.size() == layout.scratch[i].size());
    for (size_t k = 0; k < needs.size(); ++k)
      ctx.scratch.push_back(at(layout.scratch[i][k], needs[k].size_bytes));
    plan.contexts.push_back(std::move(ctx));
  }
  return plan;
}

void PlannedMemory::BindInputs(const ir::Graph& graph, const std::vector<Tensor>& inputs) {
  const auto& graph_inputs = graph.inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor& bound = values[static_cast<size_t>(graph_inputs[i]->id)];
    if (input_in_arena[i]) {
      std::memcpy(bound.raw_data(), inputs[i].raw_data(), inputs[i].size_bytes());
    } else {
      bound = inputs[i];
    }
  }
  for (int32_t id : caller_outputs) {
    const ir::Value& v = *graph.values()[static_cast<size_t>(id)];
    values[static_cast<size_t>(id)] = Tensor(v.dtype, v.shape);
  }
}

void PlannedMemory::ClearOutputs(size_t step) {
  for (Tensor* t : cleared[step]) std::memset(t->raw_data(), 0, t->size_bytes());
}

std::vector<Tensor> PlannedMemory::CollectOutputs(const ir::Graph& graph) const {
  std::vector<Tensor> outputs;
  for (const ir::Value* o : graph.outputs()) {
    const Tensor& t = values[static_cast<size_t>(o->id)];
    const bool in_arena =
        !o->is_constant() &&
        std::find(caller_outputs.begin(), caller_outputs.end(), o->id) == caller_outputs.end();
    // Arena memory is reused by the next Run: hand out a copy.
    outputs.push_back(o->is_constant() || in_arena ? t.Clone() : t);
  }
  return outputs;
}

int64_t PredictPeakActivationBytes(const ir::Graph& graph) {
  return ir::PeakLiveBytes(graph, ir::ComputeLiveness(graph));
}

}  // namespace tessel::targets
