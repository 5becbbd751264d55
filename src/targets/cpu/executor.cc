#include "targets/cpu/executor.h"

#include <algorithm>
#include <chrono>
#include <unordered_map>

#include "core/check.h"
#include "model/graph_memory.h"
#include "ops/op_registry.h"
#include "ops/subgraph.h"
#include "targets/cpu/fast_kernel.h"
#include "targets/cpu/options.h"
#include "targets/cpu/thread_pool.h"
#include "targets/reference/target.h"

namespace tessel::cpu {

namespace {

std::vector<targets::NodeKernel> DescribeKernels(
    const ir::Graph& graph, const std::vector<std::unique_ptr<FastKernel>>& fast) {
  std::vector<targets::NodeKernel> out(graph.nodes().size());
  for (size_t i = 0; i < out.size(); ++i) {
    const ir::Node& node = *graph.nodes()[i];
    if (fast[i]) {
      out[i].kernel = fast[i]->Choice();
      out[i].scratch = fast[i]->scratch_needs();
    } else {
      out[i].kernel = targets::ReferenceChoice(node);
      out[i].scratch = ops::ScratchNeeds(node, graph.opset_version());
    }
  }
  return out;
}

}  // namespace

targets::KernelDecisions SelectCpuKernels(const ir::Graph& graph) {
  GraphKernels kernels = SelectGraphKernels(graph);
  targets::KernelDecisions decisions;
  decisions.nodes = DescribeKernels(graph, kernels.fast);
  decisions.values.resize(graph.values().size());
  for (size_t v = 0; v < decisions.values.size(); ++v) {
    decisions.values[v].layout = kernels.layouts[v];
  }
  decisions.built = std::make_shared<CpuBuiltKernels>(std::move(kernels), graph, ActiveOptions());
  return decisions;
}

CpuExecutor::CpuExecutor(const ir::Graph& graph) : CpuExecutor(graph, nullptr, nullptr) {
  BindPlan(nullptr);
}

CpuExecutor::CpuExecutor(const ir::Graph& graph, const ir::MemoryLayout& layout)
    : CpuExecutor(graph, nullptr, nullptr) {
  BindPlan(&layout);
}

std::unique_ptr<CpuExecutor> CpuExecutor::ReleasingPackedConstants(ir::Graph& graph,
                                                                   const ir::MemoryLayout* layout,
                                                                   GraphKernels* kernels) {
  std::unique_ptr<CpuExecutor> executor(new CpuExecutor(graph, &graph, kernels));
  executor->BindPlan(layout);
  return executor;
}

CpuExecutor::CpuExecutor(const ir::Graph& graph, ir::Graph* release_packed, GraphKernels* kernels)
    : graph_(graph), opset_(graph.opset_version()) {
  const auto& nodes = graph.nodes();
  std::vector<std::vector<ir::Node*>> consumers;
  std::unordered_map<const ir::Node*, size_t> index;
  if (release_packed) {
    consumers = graph.Consumers();
    for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i].get()] = i;
  }
  GraphKernels selected;
  if (!kernels) {
    selected = SelectGraphKernels(graph);
    kernels = &selected;
  }
  fast_ = std::move(kernels->fast);
  TESSEL_CHECK(fast_.size() == nodes.size());
  // Weights packed in schedule order, each constant released as soon as
  // every kernel that reads it holds its own copy: never held twice.
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!fast_[i]) continue;
    fast_[i]->PackWeights();
    stats_.packed_weight_bytes += fast_[i]->packed_weight_bytes();
    if (release_packed) ReleasePacked(*release_packed, i, consumers, index);
  }
  kernels_ = DescribeKernels(graph, fast_);
}

void CpuExecutor::BindPlan(const ir::MemoryLayout* layout) {
  ir::MemoryLayout own;
  if (!layout) {
    StatusOr<ir::MemoryLayout> planned = UnsharedLayout(graph_, kernels_);
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
        if (r->inputs[i] == v)
          packed_by_all = std::find(packed.begin(), packed.end(), i) != packed.end();
      }
    }
    if (!packed_by_all) continue;
    stats_.released_constant_bytes += static_cast<int64_t>(v->constant.size_bytes());
    // A view of nothing: the value keeps its type, and no kernel reads it.
    v->constant = Tensor::View(v->dtype, v->shape, nullptr);
  }
}

StatusOr<std::vector<Tensor>> CpuExecutor::Run(const std::vector<Tensor>& inputs) {
  planned_.BindInputs(graph_, inputs);
  const auto& nodes = graph_.nodes();
  const bool profiling = !node_seconds_.empty();
  for (size_t step = 0; step < nodes.size(); ++step) {
    const auto start =
        profiling ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    TESSEL_RETURN_IF_ERROR(RunStep(step));
    if (profiling) {
      node_seconds_[step] +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  }
  return planned_.CollectOutputs(graph_);
}

Status CpuExecutor::RunStep(size_t step) {
  planned_.ClearOutputs(step);
  ops::KernelContext& ctx = planned_.contexts[step];
  if (fast_[step]) return fast_[step]->Run(ctx);
  return ops::RunKernel(*planned_.schemas[step], ctx);
}

}  // namespace tessel::cpu
