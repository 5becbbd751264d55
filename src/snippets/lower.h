// Lowering: a Subgraph body to kernel IR, target independent. The table of
// contents of the snippets code generator, in the seed's order:
//
//   1. Canonicalize       ONNX ops -> kernel ops in scalar notation; scalar
//                         constants -> immediates; Pow -> PowerStatic
//   2. NormalizeDomain    6D scheduling domain, broadcast strides, dims merged
//   3. InsertMemoryOps    Load/Store, BroadcastMove -> BroadcastLoad, and the
//                         scalar tail tile
//
// Target code generation continues from here: register allocation and
// emission for x86 (x86_generator.h), or interpretation (interpreter.h).
#pragma once

#include <memory>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "snippets/kernel_ir.h"

namespace tessel::snippets {

// How a snippet's arguments hold their data: plain (row-major in their
// shape), channels last (nwc, nhwc, ndhwc), or in blocks of 16 channels
// (nChw16c: a rank-4 argument whose channels are a multiple of 16).
// The IR's layout (ir::Layout): kPlain, kChannelsLast or kBlocked16.
using ArgLayout = ir::Layout;

// Precondition: as Canonicalize (canonicalize.h). Fails naming the snippet
// when the body cannot be scheduled as one kernel.
//
// With another `layout` than plain, every argument's shape is first padded
// with leading 1s to the outputs' rank, then rewritten to where its elements
// lie: channels last moves axis 1 last; blocked splits the channels C into
// C/16 blocks and moves the 16 last ([N, C, H, W] -> [N, C/16, H, W, 16]),
// while an argument of one channel stays plain ([N, 1, H, W, 1]).
// Elementwise and broadcasting ops do not care where an axis lies, so the
// kernel computes the same values on that layout.
StatusOr<KernelIR> LowerSubgraph(const ir::Graph& body, ArgLayout layout = ArgLayout::kPlain);

// Whether an argument of `shape`, padded to `rank`, is read from the same
// bytes in `layout` as plain: one pixel per channel (a per-channel scale;
// in blocks, of channels by 16), or one channel (channels last; blocked
// lowering reads it plain).
bool SameAsPlain(const Shape& shape, size_t rank, ArgLayout layout);

// An elementwise node that fusion left alone (or --no-fusion) as the body of
// a one-op snippet, which a target without a kernel of its own for the op
// lowers like any other (OpenCL, C): the node's scalar constants become
// immediates, every other input a body input (listed in `outer_inputs`, in
// order). Precondition: IsFusable(node, opset).
StatusOr<std::unique_ptr<ir::Graph>> SingleOpBody(const ir::Node& node, int opset,
                                                  std::vector<ir::Value*>* outer_inputs);

}  // namespace tessel::snippets
