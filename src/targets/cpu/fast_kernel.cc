#include "targets/cpu/fast_kernel.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "ops/subgraph.h"
#include "targets/cpu/native_kernels.h"
#include "targets/cpu/thread_pool.h"
#if TESSEL_WITH_ONEDNN
#include "targets/cpu/onednn_kernels.h"
#endif

namespace tessel::cpu {

bool FastKernelsEnabled() { return ActiveOptions().fast_kernels(); }

namespace {

using KernelMaker = std::unique_ptr<FastKernel> (*)(const ir::Node& node, int opset,
                                                    ActivationLayout layout, bool pack);

// The CPU target's fast kernels, by domain ("" for ONNX's) and op.
const std::map<std::pair<std::string, std::string>, KernelMaker>& KernelTable() {
  static const auto* table = [] {
    auto* t = new std::map<std::pair<std::string, std::string>, KernelMaker>{
        {{"", "Transpose"},
         [](const ir::Node& n, int opset, ActivationLayout, bool) {
           return MakeStridedCopy(n, opset);
         }},
        {{"", "Slice"},
         [](const ir::Node& n, int opset, ActivationLayout, bool) {
           return MakeStridedCopy(n, opset);
         }},
        {{"", "Resize"},
         [](const ir::Node& n, int opset, ActivationLayout, bool) { return MakeResize(n, opset); }},
        {{"", "Upsample"},
         [](const ir::Node& n, int opset, ActivationLayout, bool) { return MakeResize(n, opset); }},
        {{"", "Gather"},
         [](const ir::Node& n, int, ActivationLayout, bool) { return MakeGather(n); }},
        {{"", "LayerNormalization"},
         [](const ir::Node& n, int, ActivationLayout, bool) { return MakeLayerNorm(n); }},
        {{"", "Split"},
         [](const ir::Node& n, int, ActivationLayout, bool) { return MakeSplit(n); }},
        {{"", "Pad"},
         [](const ir::Node& n, int opset, ActivationLayout, bool) { return MakePad(n, opset); }},
        {{"", "GlobalAveragePool"},
         [](const ir::Node& n, int, ActivationLayout, bool) { return MakeGlobalAverage(n); }},
        {{"", "ReduceMean"},
         [](const ir::Node& n, int opset, ActivationLayout, bool) {
           return MakeSpatialMean(n, opset);
         }},
        {{"tessel", "ChannelShuffle"},
         [](const ir::Node& n, int, ActivationLayout, bool) { return MakeChannelShuffle(n); }},
    };
#if TESSEL_WITH_ONEDNN
    const KernelMaker conv = [](const ir::Node& n, int opset, ActivationLayout layout, bool pack) {
      return MakeOneDnnConv(n, opset, layout, pack);
    };
    const KernelMaker pool = [](const ir::Node& n, int opset, ActivationLayout, bool) {
      return MakeOneDnnPool(n, opset);
    };
    const KernelMaker reduce = [](const ir::Node& n, int opset, ActivationLayout, bool) {
      return MakeOneDnnReduce(n, opset);
    };
    // A mean over an image's pixels runs the native kernel, in any layout;
    // other means go to oneDNN.
    const KernelMaker mean = [](const ir::Node& n, int opset, ActivationLayout, bool) {
      std::unique_ptr<FastKernel> k = MakeSpatialMean(n, opset);
      return k ? std::move(k) : MakeOneDnnReduce(n, opset);
    };
    t->insert({
        {{"", "Conv"}, conv},
        {{"tessel", "FusedConv"}, conv},
        {{"", "MatMul"},
         [](const ir::Node& n, int opset, ActivationLayout, bool pack) {
           return MakeOneDnnMatMul(n, opset, pack);
         }},
        {{"", "Gemm"},
         [](const ir::Node& n, int opset, ActivationLayout, bool pack) {
           return MakeOneDnnGemm(n, opset, pack);
         }},
        {{"tessel", "FusedMatMul"},
         [](const ir::Node& n, int, ActivationLayout, bool pack) {
           return MakeOneDnnFusedMatMul(n, pack);
         }},
        {{"", "Softmax"},
         [](const ir::Node& n, int opset, ActivationLayout, bool) {
           return MakeOneDnnSoftmax(n, opset);
         }},
        {{"", "Concat"},
         [](const ir::Node& n, int opset, ActivationLayout, bool) {
           return MakeOneDnnConcat(n, opset);
         }},
        {{"", "MaxPool"}, pool},
        {{"", "AveragePool"}, pool},
        {{"", "ReduceSum"}, reduce},
        {{"", "ReduceMax"}, reduce},
        {{"", "GlobalMaxPool"}, reduce},
    });
    (*t)[{"", "ReduceMean"}] = mean;  // replaces the native-only entry
#endif
    return t;
  }();
  return *table;
}

std::unique_ptr<FastKernel> Select(const ir::Node& node, int opset, ActivationLayout layout,
                                   bool pack) {
  // Snippets run with fast kernels or without (their JIT has its own ISA).
  if (ops::IsSubgraph(node)) return MakeSnippetNodeKernel(node);
  if (!FastKernelsEnabled()) return nullptr;
  for (const ir::Value* v : node.inputs) {
    // An input with no shape yet (or an omitted one in the middle) is not ours.
    if (v && !v->shape_known) return nullptr;
  }
  const auto& table = KernelTable();
  const auto it = table.find({node.domain, node.op_type});
  return it == table.end() ? nullptr : it->second(node, opset, layout, pack);
}

}  // namespace

ActivationLayout ChooseActivationLayout(const ir::Graph& graph) {
#if TESSEL_WITH_ONEDNN
  if (FastKernelsEnabled()) return ChooseOneDnnActivationLayout(graph);
#endif
  return ActivationLayout::kChannelsLast;
}

std::unique_ptr<FastKernel> SelectFastKernel(const ir::Node& node, int opset,
                                             ActivationLayout layout) {
  return Select(node, opset, layout, /*pack=*/true);
}

void NegotiateLayouts(const ir::Graph& graph, std::vector<std::unique_ptr<FastKernel>>& kernels,
                      ActivationLayout layout) {
#if TESSEL_WITH_ONEDNN
  NegotiateOneDnnLayouts(graph, kernels, layout);
#endif
}

void SelectGraphKernels(const ir::Graph& graph, bool pack,
                        std::vector<std::unique_ptr<FastKernel>>& kernels,
                        const std::function<bool(size_t)>& skip,
                        const std::function<void(size_t)>& selected) {
  const auto& nodes = graph.nodes();
  const ActivationLayout layout = ChooseActivationLayout(graph);
  kernels.clear();
  kernels.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (skip && skip(i)) continue;
    kernels[i] = Select(*nodes[i], graph.opset_version(), layout, pack);
    if (kernels[i] && selected) selected(i);
  }
  NegotiateLayouts(graph, kernels, layout);
}

std::vector<std::vector<ops::ScratchNeed>> GraphScratchNeeds(const ir::Graph& graph) {
  // The executor's kernels, built without packing their weights. The nodes
  // it runs as JIT snippets (Subgraphs) have no fast kernel either way.
  std::vector<std::unique_ptr<FastKernel>> kernels;
  SelectGraphKernels(graph, /*pack=*/false, kernels);
  std::vector<std::vector<ops::ScratchNeed>> needs(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    needs[i] = kernels[i] ? kernels[i]->scratch_needs()
                          : ops::ScratchNeeds(*graph.nodes()[i], graph.opset_version());
  }
  return needs;
}

}  // namespace tessel::cpu
