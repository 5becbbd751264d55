// Fast CPU kernels: library-backed (oneDNN) implementations of the
// compute-bound ops, chosen per node by the CPU target instead of the
// reference kernel of src/ops.
//
//   GraphKernels k = SelectGraphKernels(graph);   // in the target's CpuScope
//   k.fast[i]->scratch_needs();   // planned with the tensors
//   k.fast[i]->PackWeights();     // once, before the first Run
//   k.fast[i]->Run(ctx);          // ctx.scratch holds one buffer per need
//
// A fast kernel is built once, when the target selects it (its primitive
// created, its snippet JIT-compiled), and the executor that runs the model
// takes it from there (targets::BuiltKernels); its constant weights are
// reordered into the layout the primitive prefers by PackWeights, when the
// executor is made. Run allocates nothing: the library's scratchpad and any
// activation in a blocked layout live in the planned scratch buffers
// (oneDNN's scratchpad_mode::user). Outputs need not be zeroed.
//
// Selection, and the negotiation after it, are deterministic for a graph,
// a CPU and the target's options (ActiveOptions), so a model file planned
// elsewhere is decided again where it runs and compared (model/prepare.h).
// The CPU target's isa "generic" selects none (reference kernels everywhere).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
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
// The IR's layout (ir::Layout): kChannelsLast or kBlocked16.
using ActivationLayout = ir::Layout;

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
  // The kernel as typed data: what the select-kernels stage records
  // ("onednn conv (brgconv:avx512_core) direct x,y" as a string).
  virtual ir::KernelChoice Choice() const = 0;
  // Packs the constant weights it reads into its own layout, once, before
  // the first Run: a kernel is built without, so that selecting kernels
  // copies no weights.
  virtual void PackWeights() {}
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

// A Transpose whose output can be its input's bytes unchanged: one that
// moves the channels between axis 1 and the last axis ([B, N, C] <->
// [B, C, N], NHWC <-> NCHW) when one side is held in the graph's layout
// (channels last) and the other plain, and any one whose only reader reads
// its output through permuted strides, or whose input's only writer wrote
// it so (kUnpermuted, kPermuted: a oneDNN matrix product's operands and
// result). NegotiateLayouts and ReadTransposesStrided decide; the kernel
// then copies at most, and is a view (ir::KernelChoice::view), so the
// planner gives both sides one buffer where the input dies there: the
// transposes around a channels-last convolution vanish (a vision
// transformer's tokens as an image for a depthwise conv, ConvNeXt's permutes
// around LayerNorm), and so do attention's head transposes.
class RelayoutKernel : public FastKernel {
 public:
  enum class Mode {
    kPlain,       // both sides plain: a transpose
    kWriteIn,     // input plain, output held in the layout
    kReadIn,      // input held in the layout, output plain
    kUnpermuted,  // input plain, output held unpermuted (ir::Layout::kUnpermuted):
                  // its one reader reads it through permuted strides
    kPermuted,    // input held permuted (ir::Layout::kPermuted), output plain:
                  // its writer wrote it through permuted strides
  };
  Mode mode() const { return mode_; }
  // Whether its output held in `layout` is its input's plain bytes.
  virtual bool CanWriteIn(ActivationLayout layout) const = 0;
  // Whether its input held in `layout` is its output's plain bytes.
  virtual bool CanReadIn(ActivationLayout layout) const = 0;
  // Switches mode; CanWriteIn or CanReadIn must hold for kWriteIn or kReadIn.
  virtual void Relayout(Mode mode) = 0;
  // Its permutation (output axis i is input axis perm[i]).
  virtual const std::vector<int64_t>& perm() const = 0;
  // Whether it may change mode at all (float32, and not the same bytes
  // either way already).
  virtual bool can_relayout() const = 0;

 protected:
  Mode mode_ = Mode::kPlain;
};

// After NegotiateLayouts: the plain Transposes next to a kernel's operands
// that could become views (RelayoutKernel::Mode::kUnpermuted, kPermuted),
// the kernel reading or writing the tensor between them through
// ops::TransposedStrides. The tensor must be theirs alone (one reader, no graph
// output), plain, and so must the Transpose's other side.
class AdjacentTransposes {
 public:
  AdjacentTransposes(const ir::Graph& graph, std::vector<std::unique_ptr<FastKernel>>& kernels,
                     const std::vector<ir::Layout>& layouts);
  // The Transpose that produced the operand `v`; null if none may be a view.
  RelayoutKernel* Producing(const ir::Value* v) const;
  // The Transpose that alone reads the result `v`; null if none may be a view.
  RelayoutKernel* Reading(const ir::Value* v) const;

 private:
  RelayoutKernel* At(const ir::Node* t, const ir::Value* between) const;
  std::vector<std::unique_ptr<FastKernel>>& kernels_;
  const std::vector<ir::Layout>& layouts_;
  std::vector<std::vector<ir::Node*>> consumers_;
  std::vector<bool> is_output_;
  std::unordered_map<const ir::Node*, size_t> index_;
};

// The fast kernel for `node`, or null when the reference kernel runs it
// (op not covered, a dtype or shape the library does not take, weights that
// are not constants, fast kernels turned off). `node` must be typed.
// `layout` is the graph's (ChooseActivationLayout). Its weights are packed:
// it is ready to Run on one node, as the tests of single kernels do.
std::unique_ptr<FastKernel> SelectFastKernel(
    const ir::Node& node, int opset, ActivationLayout layout = ActivationLayout::kChannelsLast);

// A graph's kernels on the CPU target, as its select-kernels stage decides
// them: every node's fast kernel (by node index; null where the reference
// kernel runs), selected in the graph's activation layout
// (ChooseActivationLayout) and negotiated (NegotiateLayouts), and every
// value's layout (by value id: that layout where negotiation lets the
// kernels exchange it so, else plain). Weights are not packed yet.
struct GraphKernels {
  std::vector<std::unique_ptr<FastKernel>> fast;
  std::vector<ir::Layout> layouts;
};
GraphKernels SelectGraphKernels(const ir::Graph& graph);

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
// Returns, by value id, whether the value is exchanged in `layout`.
std::vector<bool> NegotiateLayouts(const ir::Graph& graph,
                                   std::vector<std::unique_ptr<FastKernel>>& kernels,
                                   ActivationLayout layout = ActivationLayout::kChannelsLast);

// Fast kernels SelectGraphKernels built in this process so far (primitives
// created, snippets compiled): a statistic, for tests that check kernels
// are built once.
int64_t FastKernelsBuilt();

// Whether fast kernels are enabled (the CPU target's isa is not "generic").
bool FastKernelsEnabled();

}  // namespace tessel::cpu
