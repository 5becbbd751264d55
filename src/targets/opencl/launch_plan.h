// The OpenCL target's decisions for a graph, without a device: which nodes
// have a kernel here (op, dtypes, shapes, attributes), the launches of each,
// where every tensor lives (a buffer and an element offset), and the
// snippets' lowered kernels. One function decides it, for both callers:
//
//   SelectKernels (compile time, no device):
//     TESSEL_ASSIGN_OR_RETURN(LaunchPlan p, PlanLaunches(graph, {}, {}));
//   OpenClExecutor::Create (prepare time):
//     TESSEL_ASSIGN_OR_RETURN(LaunchPlan p, PlanLaunches(graph, layout,
//                                                        {.compute_units = dev.compute_units}));
//
// Whether a node is supported depends on the graph alone, so a model that
// compiled for opencl prepares on any device. The memory layout only places
// tensors (a view planned onto its input then launches nothing), and the
// device's compute units only pick the GEMM tile (a launch size). What the
// device decides besides (local sizes, work-group limits) is bound later
// (executor.cc, BindLaunches).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "ir/memory_layout.h"
#include "snippets/kernel_ir.h"
#include "targets/opencl/op_launches.h"
#include "targets/opencl/storage.h"
#include "targets/opencl/typed_elementwise.h"

namespace tessel::opencl {

// A device buffer the executor allocates: a planned pool, or the buffer of
// one value that no pool holds (the caller's inputs and outputs, an
// unplanned constant, every value of a graph without a plan).
struct PlannedBuffer {
  int64_t size_bytes = 0;
  int pool = -1;   // index in the layout's pools, or -1
  int value = -1;  // the value's id when pool is -1; neither: the scratch
                   // buffer of split-K products (NodeContext::scratch)
  bool read_only = false;
  // An RGBA float image2d of width x height texels instead of a buffer
  // (size_bytes 0): a texture pool of the layout (`pool` indexes
  // MemoryLayout::textures), one value's own image (`value`), or a node's
  // scratch texture (neither).
  bool image = false;
  int64_t width = 0, height = 0;
};

struct LaunchPlan {
  // The pools first (in the layout's order), then one per unpooled value.
  std::vector<PlannedBuffer> buffers;
  std::vector<TensorRef> values;  // by value id
  // By value id: its layout and scope (storage.h; all plain and global
  // without storage decisions).
  std::vector<targets::ValuePlacement> placements;
  // By node index: the lowered snippet kernel (Subgraph nodes, and
  // elementwise nodes run as a one-op snippet), else empty.
  std::vector<std::optional<snippets::KernelIR>> snippets;
  // By node index: for a snippet that runs on images (an image node), which
  // of its arguments are images (snippets::EmitOpenClImageKernel); else
  // empty.
  std::vector<std::vector<bool>> snippet_image_args;
  // By node index: the typed elementwise kernel of a node that neither a
  // snippet nor the op library runs (typed_elementwise.h; its launches use
  // TypedKernelName and live in the snippets' program), else empty.
  std::vector<std::optional<TypedElementwise>> typed;
  // In schedule order; PendingLaunch::node names the node.
  std::vector<PendingLaunch> launches;
};

struct PlanOptions {
  // The device's compute units, which the GEMM tile fills; without a
  // device, 1.
  int64_t compute_units = 1;
  // Where values live and which nodes run image kernels (storage.h); null:
  // every value in a buffer.
  const StorageDecisions* storage = nullptr;
};

// By value id, whether the value lives in a buffer (not an image) under
// `options.storage`: HeldStrides' `in_buffer`.
std::vector<bool> InBuffers(const ir::Graph& graph, const PlanOptions& options);

// The name of node `index`'s snippet kernel ("f32_snippet_<index>__opencl").
std::string SnippetKernelName(size_t index);

// The snippet kernel of `node`, lowered, when it runs as one (a Subgraph, or
// an elementwise op as a one-op snippet, whose inputs go to `inputs` when
// they are not the node's: scalar constants become immediates); nullopt
// when it does not. Unsupported, naming the node, when the lowering refuses
// an elementwise op.
StatusOr<std::optional<snippets::KernelIR>> LowerNodeSnippet(const ir::Node& node, int opset,
                                                             std::vector<ir::Value*>* inputs);

// Decides the plan. `graph` is typed and final; `layout` is its memory plan,
// or empty (every value in a buffer, or a texture value in an image, of its
// own). An image node's activations in buffers are converted around its
// image kernel, through scratch textures that every node shares (one per
// operand position, as large as the largest use). Unsupported, in one line
// naming the node and why, when the OpenCL target cannot run a node or
// index a tensor (at most 2^31 - 1 elements, and offsets).
StatusOr<LaunchPlan> PlanLaunches(const ir::Graph& graph, const ir::MemoryLayout& layout,
                                  const PlanOptions& options);

}  // namespace tessel::opencl
