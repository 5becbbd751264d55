// Fast CPU kernels: library-backed (oneDNN) implementations of the
// compute-bound ops, chosen per node by the CPU target instead of the
// reference kernel of src/ops.
//
//   std::unique_ptr<FastKernel> k = SelectFastKernel(node, opset);   // null: reference
//   NegotiateLayouts(graph, kernels);   // once every node's kernel is selected
//   k->scratch_needs();      // planned with the tensors (GraphScratchNeeds)
//   k->Run(ctx);             // ctx.scratch holds one buffer per need
//
// A fast kernel is built once (executor construction, or compile time when
// only its scratch is asked for): its primitive is created and its constant
// weights are reordered into the layout the primitive prefers then. Run
// allocates nothing: the library's scratchpad and any activation in a
// blocked layout live in the planned scratch buffers (oneDNN's
// scratchpad_mode::user). Outputs need not be zeroed.
//
// Selection, and the negotiation after it, are deterministic for a given
// graph, CPU and environment, so the compiler (which plans the scratch) and
// the executor (which binds it) agree; a model file planned elsewhere is
// checked against this CPU's needs when it is loaded (CheckMemoryLayout).
// The CPU target's isa "generic" selects none (reference kernels everywhere).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "ops/op_registry.h"

namespace tessel::cpu {

// The layout in which convolutions and the kernels around them (pooling,
// Concat) exchange activations directly, chosen once per graph
// (ChooseActivationLayout): channels last (nhwc, what oneDNN's direct
// convolutions run fastest on), or blocked by 16 channels (nChw16c, what its
// Winograd convolutions need). Tensors with other channel counts, and every
// graph input and output, stay in tessel's plain layout.
enum class ActivationLayout { kChannelsLast, kBlocked16 };

// kBlocked16 when 3x3 convolutions that Winograd can run (stride 1, no
// groups, channels by 16) hold at least a third of the graph's convolution
// work and this CPU has oneDNN's Winograd kernels; else kChannelsLast.
// The CPU target's winograd=off forces kChannelsLast (direct convolutions
// only).
// Deterministic for a graph, CPU and environment, like SelectFastKernel.
ActivationLayout ChooseActivationLayout(const ir::Graph& graph);

class FastKernel {
 public:
  virtual ~FastKernel() = default;
  // Buffers Run needs in ctx.scratch, in order; one of zero bytes is not
  // used (NegotiateLayouts made it unnecessary, its index is kept).
  virtual const std::vector<ops::ScratchNeed>& scratch_needs() const = 0;
  // Runs on inputs and outputs of the node's dtypes and shapes.
  virtual Status Run(ops::KernelContext& ctx) = 0;
  // "onednn conv (brgconv:avx512_core)", for reports.
  virtual std::string Describe() const = 0;
  // Bytes of weights the kernel holds in its own layout (reordered copies).
  virtual int64_t packed_weight_bytes() const { return 0; }
  // Inputs (constants) the kernel copied when it was built and never reads
  // again: its packed weights.
  virtual std::vector<size_t> packed_inputs() const { return {}; }
};

// A kernel that runs in tessel's plain layout, or with all its inputs and
// outputs in the graph's activation layout once NegotiateLayouts switches it
// (pooling, Concat, ChannelShuffle: they move data without caring where the
// channels are).
class LayoutFlexibleKernel : public FastKernel {
 public:
  // Whether it can run in `layout` within the scratch it declared.
  virtual bool CanRunIn(ActivationLayout layout) = 0;
  // Switches to `layout`; CanRunIn(layout) must hold.
  virtual void RunIn(ActivationLayout layout) = 0;
  // Whether input `input` is read alike whether it is held in `layout` or
  // plain (a snippet's per-channel scale of one pixel): it need not be
  // exchanged in the kernel's layout.
  virtual bool TakesEitherLayout(size_t input, ActivationLayout layout) const { return false; }
};

// The fast kernel for `node`, or null when the reference kernel runs it
// (op not covered, a dtype or shape the library does not take, weights that
// are not constants, fast kernels turned off). `node` must be typed.
// `layout` is the graph's (ChooseActivationLayout).
std::unique_ptr<FastKernel> SelectFastKernel(
    const ir::Node& node, int opset, ActivationLayout layout = ActivationLayout::kChannelsLast);

// Every node's fast kernel (by node index; null where the reference kernel
// runs, and where `skip(i)` holds), selected in the graph's activation layout
// (ChooseActivationLayout) and then negotiated (NegotiateLayouts): what
// CpuExecutor runs, and what GraphScratchNeeds plans for. `pack` as for the
// executor (false: build the kernels only to learn their scratch).
// `selected(i)`, when set, runs once node i's kernel is made, before the next
// one is (CpuExecutor drops the constants every reader has packed there).
void SelectGraphKernels(const ir::Graph& graph, bool pack,
                        std::vector<std::unique_ptr<FastKernel>>& kernels,
                        const std::function<bool(size_t)>& skip = {},
                        const std::function<void(size_t)>& selected = {});

// The scratch each node's kernel on the CPU target needs (by node index), as
// CpuExecutor runs them (SelectGraphKernels): the fast kernel's once the
// graph's kernels negotiated their layouts (a tensor exchanged in a kernel's
// own layout needs no reorder buffer), else the reference kernel's
// (ops::ScratchNeeds). Nodes of a typed graph.
std::vector<std::vector<ops::ScratchNeed>> GraphScratchNeeds(const ir::Graph& graph);

// Called once all of a graph's kernels are selected (kernels[i] for node i,
// null for the others): lets adjacent fast kernels exchange a tensor in
// their own layout where every reader of it agrees, instead of each
// reordering to and from tessel's plain layout. Such a tensor keeps its
// plain size and is never a graph output; no other kernel reads it.
void NegotiateLayouts(const ir::Graph& graph, std::vector<std::unique_ptr<FastKernel>>& kernels,
                      ActivationLayout layout = ActivationLayout::kChannelsLast);

// Whether fast kernels are enabled (the CPU target's isa is not "generic").
bool FastKernelsEnabled();

}  // namespace tessel::cpu
