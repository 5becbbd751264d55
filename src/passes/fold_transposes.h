// FoldTransposes: two Transposes with at most a view between them (Reshape,
// Flatten, Squeeze, Unsqueeze), each read by nothing but the next, become
// one: a Reshape of the input, one Transpose, a Reshape to the result.
//
//   x ─ Transpose ─ Reshape ─ Transpose ─► z    becomes    x ─ Reshape ─ Transpose ─ Reshape ─► z
//
// MobileViT's unfold of an image into patches, two strided copies with
// runs of two floats, is then one copy. The axes of x are split into the
// common refinement of both sides of the view (each dim of the first
// Transpose's output and of the view's output a product of consecutive
// factors, found by walking both shapes); when the dims do not divide into
// one another that way, the chain stays. The Reshapes a step does not need
// (no axis split, or the result already of z's shape) are left out, and
// EliminateDeadNodes removes the old nodes and an identity Transpose.
// Precondition: InferShapes ran (static shapes). Returns how many chains
// were folded.
#pragma once

#include "ir/graph.h"

namespace tessel::passes {

int FoldTransposes(ir::Graph& graph);

}  // namespace tessel::passes
