// The CPU executor on a memory plan: arenas allocated and tensors bound once,
// by the constructor; Run only copies planned inputs in and runs kernels.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/check.h"
#include "snippets/snippet_kernel.h"
#include "targets/cpu/executor.h"
#include "targets/cpu/fast_kernel.h"
#include "targets/cpu/planned_memory.h"
#include "targets/cpu/thread_pool.h"

namespace tessel::cpu {

namespace {

constexpr int64_t kArenaAlignment = 64;

}  // namespace

CpuExecutor::CpuExecutor(const ir::Graph& graph, const ir::MemoryLayout& layout)
    : CpuExecutor(graph) {
  BindPlan(layout);
}

void CpuExecutor::BindPlan(const ir::MemoryLayout& layout) {
  const auto& nodes = graph_.nodes();
  const auto& values = graph_.values();
  // The layout comes from plan-memory for this graph, or from a model file
  // whose loader checked it: a mismatch here is a bug.
  TESSEL_CHECK(layout.values.size() == values.size());
  TESSEL_CHECK(layout.scratch.size() == nodes.size() && layout.in_place.size() == nodes.size());
  auto plan = std::make_unique<PlannedMemory>();
  // Read-only pools hold constants only. On the CPU the graph's constants
  // already are host memory the kernels can read, so they stay where they
  // are: copying them into an arena would only double the weights' memory.
  // (The plan still places them, for targets that emit them at offsets.)
  for (const ir::MemoryPool& pool : layout.pools) {
    if (pool.read_only) {
      plan->arenas.emplace_back();
      continue;
    }
    plan->arenas.emplace_back(DType::kUInt8, Shape{(pool.size_bytes + kArenaAlignment - 1) /
                                                   kArenaAlignment * kArenaAlignment});
    plan->workspace_bytes += pool.size_bytes;
  }
  auto at = [&](const ir::BufferPlacement& p, int64_t size_bytes) {
    TESSEL_CHECK(p.pool >= 0 && static_cast<size_t>(p.pool) < plan->arenas.size());
    TESSEL_CHECK(p.offset_bytes >= 0 && p.offset_bytes + size_bytes <=
                                            layout.pools[static_cast<size_t>(p.pool)].size_bytes);
    return static_cast<char*>(plan->arenas[static_cast<size_t>(p.pool)].raw_data()) +
           p.offset_bytes;
  };

  std::vector<bool> is_input(values.size(), false);
  for (const ir::Value* v : graph_.inputs()) is_input[static_cast<size_t>(v->id)] = true;
  plan->values.resize(values.size());
  for (const auto& v : values) {
    const auto id = static_cast<size_t>(v->id);
    const ir::BufferPlacement& p = layout.values[id];
    if (v->is_constant()) {
      plan->values[id] = v->constant;
      continue;
    }
    if (!p.planned()) continue;  // the caller's, bound at every Run
    plan->values[id] = Tensor::View(v->dtype, v->shape, at(p, static_cast<int64_t>(v->size_bytes())));
  }
  for (const ir::Value* v : graph_.inputs()) {
    plan->input_in_arena.push_back(layout.values[static_cast<size_t>(v->id)].planned());
  }
  for (const ir::Value* o : graph_.outputs()) {
    const auto id = static_cast<size_t>(o->id);
    const bool caller = !o->is_constant() && !is_input[id] && !layout.values[id].planned();
    if (caller && std::find(plan->caller_outputs.begin(), plan->caller_outputs.end(), o->id) ==
                      plan->caller_outputs.end()) {
      plan->caller_outputs.push_back(o->id);
    }
  }

  const std::vector<ops::ScratchNeed> none;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& node = *nodes[i];
    plan->schemas.push_back(ops::OpRegistry::Global().Find(node.op_type, node.domain));
    TESSEL_CHECK_MSG(plan->schemas.back() != nullptr, node.op_type.c_str());
    ops::KernelContext ctx{node, opset_, {}, {}};
    for (const ir::Value* in : node.inputs) {
      ctx.inputs.push_back(in ? &plan->values[static_cast<size_t>(in->id)] : nullptr);
    }
    plan->cleared.emplace_back();
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const ir::Value* o = node.outputs[k];
      Tensor* t = o ? &plan->values[static_cast<size_t>(o->id)] : nullptr;
      ctx.outputs.push_back(t);
      // Fast kernels write every output element; reference kernels may
      // accumulate into a zeroed output.
      if (t && !fast_[i] && !(k == 0 && layout.in_place[i] >= 0)) plan->cleared.back().push_back(t);
    }
    const std::vector<ops::ScratchNeed> needs =
        fast_[i] ? fast_[i]->scratch_needs() : ops::ScratchNeeds(node, opset_);
    TESSEL_CHECK(needs.size() == layout.scratch[i].size());
    for (size_t k = 0; k < needs.size(); ++k)
      ctx.scratch.push_back(at(layout.scratch[i][k], needs[k].size_bytes));
    plan->contexts.push_back(std::move(ctx));
  }
  stats_.peak_activation_bytes = PredictPeakActivationBytes(graph_);
  stats_.workspace_bytes = plan->workspace_bytes;
  stats_.packed_weight_bytes = 0;
  for (const auto& k : fast_) stats_.packed_weight_bytes += k ? k->packed_weight_bytes() : 0;
  planned_ = std::move(plan);
}

StatusOr<std::vector<Tensor>> CpuExecutor::RunPlanned(const std::vector<Tensor>& inputs) {
  TESSEL_RETURN_IF_ERROR(ValidateInputs(graph_, inputs));
  PlannedMemory& plan = *planned_;
  const auto& graph_inputs = graph_.inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor& bound = plan.values[static_cast<size_t>(graph_inputs[i]->id)];
    if (plan.input_in_arena[i]) {
      std::memcpy(bound.raw_data(), inputs[i].raw_data(), inputs[i].size_bytes());
    } else {
      bound = inputs[i];
    }
  }
  for (int32_t id : plan.caller_outputs) {
    const ir::Value& v = *graph_.values()[static_cast<size_t>(id)];
    plan.values[static_cast<size_t>(id)] = Tensor(v.dtype, v.shape);
  }
  const auto& nodes = graph_.nodes();
  ThreadPool& pool = ThreadPool::Default();
  const bool profiling = !node_seconds_.empty();
  for (size_t step = 0; step < nodes.size(); ++step) {
    const auto start =
        profiling ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    TESSEL_RETURN_IF_ERROR(RunStep(plan, step, pool));
    if (profiling) {
      node_seconds_[step] +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  }
  return CollectOutputs(plan);
}

Status CpuExecutor::RunStep(PlannedMemory& plan, size_t step, ThreadPool& pool) {
  for (Tensor* t : plan.cleared[step]) std::memset(t->raw_data(), 0, t->size_bytes());
  ops::KernelContext& ctx = plan.contexts[step];
  if (snippets_[step]) {
    plan.snippet_inputs.clear();
    plan.snippet_outputs.clear();
    for (const Tensor* t : ctx.inputs) plan.snippet_inputs.push_back(t->raw_data());
    for (Tensor* t : ctx.outputs) plan.snippet_outputs.push_back(t->raw_data());
    const bool serial = RunsSerially(*graph_.nodes()[step]);
    snippets_[step]->Run(plan.snippet_inputs, plan.snippet_outputs,
                         [&pool, serial](int64_t n, const std::function<void(int64_t)>& fn) {
                           if (serial) {
                             for (int64_t i = 0; i < n; ++i) fn(i);
                           } else {
                             pool.ParallelFor(n, fn);
                           }
                         });
    return Status::Ok();
  }
  if (fast_[step]) return fast_[step]->Run(ctx);
  return plan.schemas[step]->run(ctx);
}

std::vector<Tensor> CpuExecutor::CollectOutputs(PlannedMemory& plan) {
  std::vector<Tensor> outputs;
  for (const ir::Value* o : graph_.outputs()) {
    const Tensor& t = plan.values[static_cast<size_t>(o->id)];
    const bool in_arena =
        !o->is_constant() && std::find(plan.caller_outputs.begin(), plan.caller_outputs.end(),
                                       o->id) == plan.caller_outputs.end();
    // Arena memory is reused by the next Run: hand out a copy.
    outputs.push_back(o->is_constant() || in_arena ? t.Clone() : t);
  }
  return outputs;
}

int64_t PredictPeakActivationBytes(const ir::Graph& graph) {
  const auto& nodes = graph.nodes();
  std::vector<size_t> last_use(graph.values().size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const ir::Value* in : nodes[i]->inputs) {
      if (in) last_use[static_cast<size_t>(in->id)] = i;
    }
  }
  for (const ir::Value* o : graph.outputs()) last_use[static_cast<size_t>(o->id)] = nodes.size();
  std::vector<bool> freed(graph.values().size(), false);
  int64_t live = 0, peak = 0;
  for (size_t step = 0; step < nodes.size(); ++step) {
    for (const ir::Value* o : nodes[step]->outputs) {
      if (o) live += static_cast<int64_t>(o->size_bytes());
    }
    peak = std::max(peak, live);
    for (const ir::Value* in : nodes[step]->inputs) {
      if (!in || in->is_constant()) continue;
      const auto id = static_cast<size_t>(in->id);
      if (last_use[id] == step && !freed[id] && in->producer) {
        live -= static_cast<int64_t>(in->size_bytes());
        freed[id] = true;
      }
    }
  }
  return peak;
}

}  // namespace tessel::cpu
