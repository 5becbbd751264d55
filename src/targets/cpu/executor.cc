#include "targets/cpu/executor.h"

#include <algorithm>
#include <chrono>
#include <unordered_map>

#include "compiler/plan_memory.h"
#include "core/check.h"
#include "ops/op_registry.h"
#include "ops/subgraph.h"
#include "snippets/snippet_kernel.h"
#include "targets/cpu/fast_kernel.h"
#include "targets/cpu/options.h"
#include "targets/cpu/thread_pool.h"

namespace tessel::cpu {

namespace {

// Per node: the compiled snippet of a Subgraph node the JIT (or its
// interpreter) takes, else null.
std::vector<std::unique_ptr<snippets::SnippetKernel>> CompileSnippets(const ir::Graph& graph) {
  const auto& nodes = graph.nodes();
  std::vector<std::unique_ptr<snippets::SnippetKernel>> out(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& n = *nodes[i];
    const bool complete = std::none_of(n.inputs.begin(), n.inputs.end(), [](auto* v) { return !v; }) &&
                          std::none_of(n.outputs.begin(), n.outputs.end(), [](auto* v) { return !v; });
    if (!ops::IsSubgraph(n) || !n.body || !complete) continue;
    auto kernel = snippets::SnippetKernel::Compile(*nodes[i]->body);
    if (kernel.ok()) out[i] = std::move(*kernel);
  }
  return out;
}

std::vector<targets::NodeKernel> DescribeKernels(
    const ir::Graph& graph, const std::vector<std::unique_ptr<snippets::SnippetKernel>>& snippets,
    const std::vector<std::unique_ptr<FastKernel>>& fast) {
  std::vector<targets::NodeKernel> out(graph.nodes().size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (snippets[i]) {
      out[i].kernel = std::string("snippet (") + snippets::IsaName(snippets[i]->isa()) + ")";
    } else if (fast[i]) {
      out[i].kernel = fast[i]->Describe();
      out[i].scratch = fast[i]->scratch_needs();
    } else {
      out[i].kernel = "reference";
      out[i].scratch = ops::ScratchNeeds(*graph.nodes()[i], graph.opset_version());
    }
  }
  return out;
}

}  // namespace

std::vector<targets::NodeKernel> SelectCpuKernels(const ir::Graph& graph) {
  const auto snippets = CompileSnippets(graph);
  std::vector<std::unique_ptr<FastKernel>> fast;
  SelectGraphKernels(graph, /*pack=*/false, fast,
                     [&](size_t i) { return static_cast<bool>(snippets[i]); });
  return DescribeKernels(graph, snippets, fast);
}

CpuExecutor::CpuExecutor(const ir::Graph& graph) : CpuExecutor(graph, nullptr) {
  BindPlan(nullptr);
}

CpuExecutor::CpuExecutor(const ir::Graph& graph, const ir::MemoryLayout& layout)
    : CpuExecutor(graph, nullptr) {
  BindPlan(&layout);
}

std::unique_ptr<CpuExecutor> CpuExecutor::ReleasingPackedConstants(ir::Graph& graph,
                                                                   const ir::MemoryLayout* layout) {
  std::unique_ptr<CpuExecutor> executor(new CpuExecutor(graph, &graph));
  executor->BindPlan(layout);
  return executor;
}

CpuExecutor::CpuExecutor(const ir::Graph& graph, ir::Graph* release_packed)
    : graph_(graph), opset_(graph.opset_version()), snippets_(CompileSnippets(graph)) {
  const auto& nodes = graph.nodes();
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
  kernels_ = DescribeKernels(graph, snippets_, fast_);
}

void CpuExecutor::BindPlan(const ir::MemoryLayout* layout) {
  ir::MemoryLayout own;
  if (!layout) {
    MemoryOptions unshared;
    unshared.algorithm = "none";
    StatusOr<ir::MemoryLayout> planned = PlanMemory(graph_, kernels_, unshared);
    TESSEL_CHECK_MSG(planned.ok(), planned.status().message().c_str());
    own = std::move(*planned);
    layout = &own;
  }
  std::vector<std::vector<ops::ScratchNeed>> scratch;
  for (const targets::NodeKernel& k : kernels_) scratch.push_back(k.scratch);
  // Fast kernels write every output element; reference kernels may
  // accumulate into a zeroed output.
  planned_ = targets::BindPlannedMemory(graph_, *layout, scratch,
                                        [&](size_t i) { return fast_[i] != nullptr; });
  stats_.peak_activation_bytes = targets::PredictPeakActivationBytes(graph_);
  stats_.workspace_bytes = planned_.workspace_bytes;
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

StatusOr<std::vector<Tensor>> CpuExecutor::Run(const std::vector<Tensor>& inputs) {
  TESSEL_RETURN_IF_ERROR(targets::ValidateInputs(graph_, inputs));
  planned_.BindInputs(graph_, inputs);
  const auto& nodes = graph_.nodes();
  ThreadPool& pool = ThreadPool::Default();
  const bool profiling = !node_seconds_.empty();
  for (size_t step = 0; step < nodes.size(); ++step) {
    const auto start =
        profiling ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    TESSEL_RETURN_IF_ERROR(RunStep(step, pool));
    if (profiling) {
      node_seconds_[step] +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  }
  return planned_.CollectOutputs(graph_);
}

Status CpuExecutor::RunStep(size_t step, ThreadPool& pool) {
  planned_.ClearOutputs(step);
  ops::KernelContext& ctx = planned_.contexts[step];
  if (snippets_[step]) {
    std::vector<const void*>& in = planned_.snippet_inputs;
    std::vector<void*>& out = planned_.snippet_outputs;
    in.clear();
    out.clear();
    for (const Tensor* t : ctx.inputs) in.push_back(t->raw_data());
    for (Tensor* t : ctx.outputs) out.push_back(t->raw_data());
    const bool serial = RunsSerially(*graph_.nodes()[step]);
    snippets_[step]->Run(in, out,
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
  return ops::RunKernel(*planned_.schemas[step], ctx);
}

}  // namespace tessel::cpu
