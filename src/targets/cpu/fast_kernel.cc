#include "targets/cpu/fast_kernel.h"

#include <cstdlib>
#include <cstring>

#include "targets/cpu/native_kernels.h"
#include "targets/cpu/options.h"
#if TESSEL_WITH_ONEDNN
#include "targets/cpu/onednn_kernels.h"
#endif

namespace tessel::cpu {

bool FastKernelsEnabled() { return ProcessOptions().fast_kernels(); }

namespace {

std::unique_ptr<FastKernel> Select(const ir::Node& node, int opset, ActivationLayout layout,
                                   bool pack) {
  if (!FastKernelsEnabled()) return nullptr;
  for (const ir::Value* v : node.inputs) {
    // An input with no shape yet (or an omitted one in the middle) is not ours.
    if (v && !v->shape_known) return nullptr;
  }
  if (node.domain.empty() && (node.op_type == "Transpose" || node.op_type == "Slice")) {
    return MakeStridedCopy(node, opset);
  }
  if (node.domain == "tessel" && node.op_type == "ChannelShuffle") return MakeChannelShuffle(node);
#if TESSEL_WITH_ONEDNN
  if (node.domain.empty()) {
    if (node.op_type == "Conv") return MakeOneDnnConv(node, opset, layout, pack);
    if (node.op_type == "MatMul") return MakeOneDnnMatMul(node, opset, pack);
    if (node.op_type == "Gemm") return MakeOneDnnGemm(node, opset, pack);
    if (node.op_type == "Softmax") return MakeOneDnnSoftmax(node, opset);
    if (node.op_type == "MaxPool" || node.op_type == "AveragePool") return MakeOneDnnPool(node, opset);
    if (node.op_type == "LayerNormalization") return MakeOneDnnLayerNorm(node, opset);
    if (node.op_type == "Concat") return MakeOneDnnConcat(node, opset);
    if (node.op_type == "ReduceMean" || node.op_type == "ReduceSum" || node.op_type == "ReduceMax" ||
        node.op_type == "GlobalAveragePool" || node.op_type == "GlobalMaxPool") {
      return MakeOneDnnReduce(node, opset);
    }
  } else if (node.domain == "tessel" && node.op_type == "FusedConv") {
    return MakeOneDnnConv(node, opset, layout, pack);
  } else if (node.domain == "tessel" && node.op_type == "FusedMatMul") {
    return MakeOneDnnFusedMatMul(node, pack);
  }
#endif
  return nullptr;
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
