#include "targets/cpu/fast_kernel.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "ops/subgraph.h"
#include "targets/cpu/attention_kernel.h"
#include "targets/cpu/native_kernels.h"
#include "targets/cpu/thread_pool.h"
#if TESSEL_WITH_ONEDNN
#include "targets/cpu/onednn_kernels.h"
#endif

namespace tessel::cpu {

bool FastKernelsEnabled() { return ActiveOptions().fast_kernels(); }

namespace {

using KernelMaker = std::unique_ptr<FastKernel> (*)(const ir::Node& node, int opset,
                                                    ActivationLayout layout);

// The CPU target's fast kernels, by domain ("" for ONNX's) and op.
const std::map<std::pair<std::string, std::string>, KernelMaker>& KernelTable() {
  static const auto* table = [] {
    // Reductions over contiguous axes run natively, at memory speed.
    const KernelMaker reduce = [](const ir::Node& n, int opset, ActivationLayout) {
      return MakeReduce(n, opset);
    };
    const KernelMaker view = [](const ir::Node& n, int, ActivationLayout) { return MakeView(n); };
    auto* t = new std::map<std::pair<std::string, std::string>, KernelMaker>{
        {{"", "Transpose"},
         [](const ir::Node& n, int opset, ActivationLayout) { return MakeTranspose(n, opset); }},
        {{"", "Reshape"}, view},
        {{"", "Flatten"}, view},
        {{"", "Squeeze"}, view},
        {{"", "Unsqueeze"}, view},
        {{"", "Slice"},
         [](const ir::Node& n, int opset, ActivationLayout) { return MakeSlice(n, opset); }},
        {{"", "Expand"},
         [](const ir::Node& n, int opset, ActivationLayout) { return MakeStridedCopy(n, opset); }},
        {{"", "Resize"},
         [](const ir::Node& n, int opset, ActivationLayout) { return MakeResize(n, opset); }},
        {{"", "Upsample"},
         [](const ir::Node& n, int opset, ActivationLayout) { return MakeResize(n, opset); }},
        {{"", "Gather"}, [](const ir::Node& n, int, ActivationLayout) { return MakeGather(n); }},
        {{"", "LayerNormalization"},
         [](const ir::Node& n, int, ActivationLayout) { return MakeLayerNorm(n); }},
        {{"", "InstanceNormalization"},
         [](const ir::Node& n, int, ActivationLayout) { return MakeInstanceNorm(n); }},
        {{"", "Split"}, [](const ir::Node& n, int, ActivationLayout) { return MakeSplit(n); }},
        {{"", "Pad"},
         [](const ir::Node& n, int opset, ActivationLayout) { return MakePad(n, opset); }},
        {{"", "GlobalAveragePool"},
         [](const ir::Node& n, int, ActivationLayout) { return MakeGlobalAverage(n); }},
        {{"", "ReduceMean"},
         [](const ir::Node& n, int opset, ActivationLayout) {
           std::unique_ptr<FastKernel> k = MakeSpatialMean(n, opset);
           return k ? std::move(k) : MakeReduce(n, opset);
         }},
        {{"", "ReduceSum"}, reduce},
        {{"", "ReduceSumSquare"}, reduce},
        {{"", "ReduceL1"}, reduce},
        {{"", "ReduceL2"}, reduce},
        {{"", "ReduceLogSum"}, reduce},
        {{"tessel", "Rotary"},
         [](const ir::Node& n, int, ActivationLayout) { return MakeRotary(n); }},
        {{"tessel", "FusedAttention"},
         [](const ir::Node& n, int, ActivationLayout) { return MakeFusedAttention(n); }},
        {{"tessel", "ChannelShuffle"},
         [](const ir::Node& n, int, ActivationLayout) { return MakeChannelShuffle(n); }},
    };
#if TESSEL_WITH_ONEDNN
    const KernelMaker conv = [](const ir::Node& n, int opset, ActivationLayout layout) {
      return MakeOneDnnConv(n, opset, layout);
    };
    const KernelMaker pool = [](const ir::Node& n, int opset, ActivationLayout) {
      return MakeOneDnnPool(n, opset);
    };
    const KernelMaker onednn_reduce = [](const ir::Node& n, int opset, ActivationLayout) {
      return MakeOneDnnReduce(n, opset);
    };
    // A mean or sum over contiguous axes runs a native kernel (a mean over
    // an image's pixels, in any layout); other means and sums go to oneDNN.
    const KernelMaker mean = [](const ir::Node& n, int opset, ActivationLayout) {
      std::unique_ptr<FastKernel> k = MakeSpatialMean(n, opset);
      if (!k) k = MakeReduce(n, opset);
      return k ? std::move(k) : MakeOneDnnReduce(n, opset);
    };
    const KernelMaker sum = [](const ir::Node& n, int opset, ActivationLayout) {
      std::unique_ptr<FastKernel> k = MakeReduce(n, opset);
      return k ? std::move(k) : MakeOneDnnReduce(n, opset);
    };
    t->insert({
        {{"", "Conv"}, conv},
        {{"tessel", "FusedConv"}, conv},
        {{"", "MatMul"},
         [](const ir::Node& n, int opset, ActivationLayout) { return MakeOneDnnMatMul(n, opset); }},
        {{"", "Gemm"},
         [](const ir::Node& n, int opset, ActivationLayout) { return MakeOneDnnGemm(n, opset); }},
        {{"tessel", "FusedMatMul"},
         [](const ir::Node& n, int, ActivationLayout) { return MakeOneDnnFusedMatMul(n); }},
        {{"", "Softmax"},
         [](const ir::Node& n, int opset, ActivationLayout) {
           return MakeOneDnnSoftmax(n, opset);
         }},
        {{"", "Concat"},
         [](const ir::Node& n, int opset, ActivationLayout) { return MakeOneDnnConcat(n, opset); }},
        {{"", "MaxPool"}, pool},
        {{"", "AveragePool"}, pool},
        {{"", "ReduceMax"}, onednn_reduce},
        {{"", "GlobalMaxPool"}, onednn_reduce},
    });
    (*t)[{"", "ReduceMean"}] = mean;  // replace the native-only entries
    (*t)[{"", "ReduceSum"}] = sum;
#endif
    return t;
  }();
  return *table;
}

std::unique_ptr<FastKernel> Select(const ir::Node& node, int opset, ActivationLayout layout) {
  // Snippets run with fast kernels or without (their JIT has its own ISA).
  if (ops::IsSubgraph(node)) return MakeSnippetNodeKernel(node);
  if (!FastKernelsEnabled()) return nullptr;
  for (const ir::Value* v : node.inputs) {
    // An input with no shape yet (or an omitted one in the middle) is not ours.
    if (v && !v->shape_known) return nullptr;
  }
  const auto& table = KernelTable();
  const auto it = table.find({node.domain, node.op_type});
  return it == table.end() ? nullptr : it->second(node, opset, layout);
}

std::atomic<int64_t> built{0};

}  // namespace

AdjacentTransposes::AdjacentTransposes(const ir::Graph& graph,
                                       std::vector<std::unique_ptr<FastKernel>>& kernels,
                                       const std::vector<ir::Layout>& layouts)
    : kernels_(kernels),
      layouts_(layouts),
      consumers_(graph.Consumers()),
      is_output_(graph.values().size(), false) {
  for (const ir::Value* v : graph.outputs()) is_output_[static_cast<size_t>(v->id)] = true;
  for (size_t i = 0; i < graph.nodes().size(); ++i) index_[graph.nodes()[i].get()] = i;
}

RelayoutKernel* AdjacentTransposes::Producing(const ir::Value* v) const {
  return v ? At(v->producer, v) : nullptr;
}

RelayoutKernel* AdjacentTransposes::Reading(const ir::Value* v) const {
  if (!v) return nullptr;
  const auto& readers = consumers_[static_cast<size_t>(v->id)];
  return At(readers.size() == 1 ? readers[0] : nullptr, v);
}

RelayoutKernel* AdjacentTransposes::At(const ir::Node* t, const ir::Value* between) const {
  const auto id = between ? static_cast<size_t>(between->id) : 0;
  if (!t || !between || is_output_[id] || consumers_[id].size() != 1 ||
      layouts_[id] != ir::Layout::kPlain || !t->input(0) || !t->output(0)) {
    return nullptr;
  }
  const ir::Value* other = t->input(0) == between ? t->output(0) : t->input(0);
  auto* k = dynamic_cast<RelayoutKernel*>(kernels_[index_.at(t)].get());
  const bool ok = k && k->can_relayout() && k->mode() == RelayoutKernel::Mode::kPlain &&
                  k->perm().size() == between->shape.size() &&
                  layouts_[static_cast<size_t>(other->id)] == ir::Layout::kPlain;
  return ok ? k : nullptr;
}

int64_t FastKernelsBuilt() { return built.load(std::memory_order_relaxed); }

ActivationLayout ChooseActivationLayout(const ir::Graph& graph) {
#if TESSEL_WITH_ONEDNN
  if (FastKernelsEnabled()) return ChooseOneDnnActivationLayout(graph);
#endif
  return ActivationLayout::kChannelsLast;
}

std::unique_ptr<FastKernel> SelectFastKernel(const ir::Node& node, int opset,
                                             ActivationLayout layout) {
  std::unique_ptr<FastKernel> k = Select(node, opset, layout);
  if (k) k->PackWeights();
  return k;
}

std::vector<bool> NegotiateLayouts(const ir::Graph& graph,
                                   std::vector<std::unique_ptr<FastKernel>>& kernels,
                                   ActivationLayout layout) {
#if TESSEL_WITH_ONEDNN
  return NegotiateOneDnnLayouts(graph, kernels, layout);
#else
  return std::vector<bool>(graph.values().size(), false);
#endif
}

GraphKernels SelectGraphKernels(const ir::Graph& graph) {
  const auto& nodes = graph.nodes();
  const ActivationLayout layout = ChooseActivationLayout(graph);
  GraphKernels out;
  out.fast.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    out.fast[i] = Select(*nodes[i], graph.opset_version(), layout);
    if (out.fast[i]) built.fetch_add(1, std::memory_order_relaxed);
  }
  const std::vector<bool> direct = NegotiateLayouts(graph, out.fast, layout);
  out.layouts.assign(graph.values().size(), ir::Layout::kPlain);
  for (size_t v = 0; v < direct.size(); ++v) {
    if (direct[v]) out.layouts[v] = layout;
  }
#if TESSEL_WITH_ONEDNN
  ReadTransposesStrided(graph, out.fast, out.layouts);
#endif
  ReadAttentionTransposesStrided(graph, out.fast, out.layouts);
  return out;
}

std::vector<std::vector<ops::ScratchNeed>> GraphScratchNeeds(const ir::Graph& graph) {
  const GraphKernels kernels = SelectGraphKernels(graph);
  std::vector<std::vector<ops::ScratchNeed>> needs(kernels.fast.size());
  for (size_t i = 0; i < needs.size(); ++i) {
    needs[i] = kernels.fast[i] ? kernels.fast[i]->scratch_needs()
                               : ops::ScratchNeeds(*graph.nodes()[i], graph.opset_version());
  }
  return needs;
}

}  // namespace tessel::cpu
