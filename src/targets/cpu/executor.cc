#include "targets/cpu/executor.h"

#include <algorithm>
#include <unordered_map>

#include "core/check.h"
#include "ops/op_registry.h"
#include "ops/subgraph.h"
#include "snippets/snippet_kernel.h"
#include "targets/cpu/fast_kernel.h"
#include "targets/cpu/planned_memory.h"
#include "targets/cpu/thread_pool.h"

namespace tessel::cpu {

Status ValidateInputs(const ir::Graph& graph, const std::vector<Tensor>& inputs) {
  const auto& expected = graph.inputs();
  if (inputs.size() != expected.size()) {
    return InvalidArgument("the model takes " + std::to_string(expected.size()) +
                           " inputs; got " + std::to_string(inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value& v = *expected[i];
    if (!inputs[i].defined()) return InvalidArgument("input '" + v.name + "' is missing");
    if (inputs[i].dtype() != v.dtype) {
      return InvalidArgument("input '" + v.name + "' has dtype " + DTypeName(inputs[i].dtype()) +
                             "; the model expects " + DTypeName(v.dtype));
    }
    if (inputs[i].shape() != v.shape) {
      return InvalidArgument("input '" + v.name + "' has shape " +
                             ShapeToString(inputs[i].shape()) + "; the model expects " +
                             ShapeToString(v.shape));
    }
  }
  return Status::Ok();
}

CpuExecutor::CpuExecutor(const ir::Graph& graph) : CpuExecutor(graph, nullptr) {}

std::unique_ptr<CpuExecutor> CpuExecutor::ReleasingPackedConstants(ir::Graph& graph,
                                                                   const ir::MemoryLayout* layout) {
  std::unique_ptr<CpuExecutor> executor(new CpuExecutor(graph, &graph));
  if (layout) executor->BindPlan(*layout);
  return executor;
}

CpuExecutor::CpuExecutor(const ir::Graph& graph, ir::Graph* release_packed)
    : graph_(graph), opset_(graph.opset_version()), last_use_(graph.values().size(), 0) {
  const auto& nodes = graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const ir::Value* in : nodes[i]->inputs) {
      if (in) last_use_[static_cast<size_t>(in->id)] = i;
    }
  }
  // Graph outputs live to the end.
  for (const ir::Value* o : graph.outputs()) last_use_[static_cast<size_t>(o->id)] = nodes.size();
  snippets_.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& n = *nodes[i];
    const bool complete = std::none_of(n.inputs.begin(), n.inputs.end(), [](auto* v) { return !v; }) &&
                          std::none_of(n.outputs.begin(), n.outputs.end(), [](auto* v) { return !v; });
    if (!ops::IsSubgraph(n) || !n.body || !complete) continue;
    auto kernel = snippets::SnippetKernel::Compile(*nodes[i]->body);
    if (kernel.ok()) snippets_[i] = std::move(*kernel);
  }
  own_scratch_.resize(nodes.size());
  std::vector<std::vector<ir::Node*>> consumers;
  std::unordered_map<const ir::Node*, size_t> index;
  if (release_packed) {
    consumers = graph.Consumers();
    for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i].get()] = i;
  }
  SelectGraphKernels(
      graph, /*pack=*/true, fast_, [&](size_t i) { return static_cast<bool>(snippets_[i]); },
      [&](size_t i) {
        stats_.packed_weight_bytes += fast_[i]->packed_weight_bytes();
        if (release_packed) ReleasePacked(*release_packed, i, consumers, index);
      });
}

CpuExecutor::~CpuExecutor() = default;

void CpuExecutor::ReleasePacked(ir::Graph& graph, size_t step,
                                const std::vector<std::vector<ir::Node*>>& consumers,
                                const std::unordered_map<const ir::Node*, size_t>& index) {
  const ir::Node& node = *graph.nodes()[step];
  for (size_t k : fast_[step]->packed_inputs()) {
    ir::Value* v = node.input(k);
    if (!v || !v->is_constant() || v->constant.raw_data() == nullptr) continue;
    if (std::find(graph.outputs().begin(), graph.outputs().end(), v) != graph.outputs().end())
      continue;
    bool packed_by_all = true;
    for (const ir::Node* r : consumers[static_cast<size_t>(v->id)]) {
      const size_t j = index.at(r);
      const std::vector<size_t> packed =
          j <= step && fast_[j] ? fast_[j]->packed_inputs() : std::vector<size_t>{};
      for (size_t i = 0; i < r->inputs.size() && packed_by_all; ++i) {
        if (r->inputs[i] == v) packed_by_all = std::find(packed.begin(), packed.end(), i) != packed.end();
      }
    }
    if (!packed_by_all) continue;
    stats_.released_constant_bytes += static_cast<int64_t>(v->constant.size_bytes());
    // A view of nothing: the value keeps its type, and no kernel reads it.
    v->constant = Tensor::View(v->dtype, v->shape, nullptr);
  }
}

bool CpuExecutor::RunsSerially(const ir::Node& node) {
  size_t bytes = 0;
  for (const ir::Value* o : node.outputs) bytes += o ? o->size_bytes() : 0;
  return static_cast<int64_t>(bytes) < ParallelCopyBytes();
}

namespace {

// Runs a compiled snippet into freshly allocated outputs.
std::vector<Tensor> RunSnippet(const snippets::SnippetKernel& kernel, const ir::Node& node,
                               const std::vector<const Tensor*>& inputs) {
  std::vector<const void*> in;
  for (const Tensor* t : inputs) in.push_back(t->raw_data());
  std::vector<Tensor> outs;
  std::vector<void*> out;
  for (const ir::Value* o : node.outputs) outs.emplace_back(o->dtype, o->shape);
  for (Tensor& t : outs) out.push_back(t.raw_data());
  ThreadPool& pool = ThreadPool::Default();
  const bool serial = CpuExecutor::RunsSerially(node);
  kernel.Run(in, out, [&pool, serial](int64_t n, const std::function<void(int64_t)>& fn) {
    if (serial) {
      for (int64_t i = 0; i < n; ++i) fn(i);
    } else {
      pool.ParallelFor(n, fn);
    }
  });
  return outs;
}

}  // namespace

StatusOr<std::vector<Tensor>> CpuExecutor::Run(const std::vector<Tensor>& inputs) {
  if (planned_) return RunPlanned(inputs);
  TESSEL_RETURN_IF_ERROR(ValidateInputs(graph_, inputs));
  std::vector<Tensor> values(graph_.values().size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    values[static_cast<size_t>(graph_.inputs()[i]->id)] = inputs[i];
  }
  int64_t live_bytes = 0;
  stats_.peak_activation_bytes = 0;
  const auto& nodes = graph_.nodes();
  std::vector<const Tensor*> in_ptrs;
  for (size_t step = 0; step < nodes.size(); ++step) {
    const ir::Node& node = *nodes[step];
    in_ptrs.clear();
    for (const ir::Value* in : node.inputs) {
      if (!in) {
        in_ptrs.push_back(nullptr);
      } else if (in->is_constant()) {
        in_ptrs.push_back(&in->constant);
      } else {
        in_ptrs.push_back(&values[static_cast<size_t>(in->id)]);
      }
    }
    std::vector<Tensor> outs;
    if (snippets_[step]) {
      outs = RunSnippet(*snippets_[step], node, in_ptrs);
    } else if (fast_[step]) {
      std::vector<Tensor>& scratch = own_scratch_[step];
      if (scratch.empty()) {
        for (const ops::ScratchNeed& need : fast_[step]->scratch_needs())
          scratch.emplace_back(DType::kUInt8, Shape{need.size_bytes});
      }
      ops::KernelContext ctx{node, opset_, in_ptrs, {}};
      for (const ir::Value* o : node.outputs) outs.emplace_back(o->dtype, o->shape);
      for (Tensor& t : outs) ctx.outputs.push_back(&t);
      for (Tensor& t : scratch) ctx.scratch.push_back(t.raw_data());
      TESSEL_RETURN_IF_ERROR(fast_[step]->Run(ctx));
    } else {
      TESSEL_ASSIGN_OR_RETURN(outs, ops::EvaluateNode(node, opset_, in_ptrs));
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const ir::Value* o = node.outputs[k];
      if (!o) continue;
      live_bytes += static_cast<int64_t>(outs[k].size_bytes());
      values[static_cast<size_t>(o->id)] = std::move(outs[k]);
    }
    stats_.peak_activation_bytes = std::max(stats_.peak_activation_bytes, live_bytes);
    for (const ir::Value* in : node.inputs) {
      if (!in || in->is_constant()) continue;
      const size_t id = static_cast<size_t>(in->id);
      if (last_use_[id] == step && values[id].defined() && in->producer) {
        live_bytes -= static_cast<int64_t>(values[id].size_bytes());
        values[id] = Tensor();
      }
    }
  }
  std::vector<Tensor> outputs;
  for (const ir::Value* o : graph_.outputs()) {
    outputs.push_back(o->is_constant() ? o->constant.Clone() : values[static_cast<size_t>(o->id)]);
  }
  return outputs;
}

}  // namespace tessel::cpu
