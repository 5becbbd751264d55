// Tokenization: finds the memory-bound elementwise regions of a graph and
// replaces each with one Subgraph node (op "Subgraph", domain "tessel")
// whose body holds the original nodes.
//
// Like a lexer, it walks the nodes in order and greedily grows subgraphs: a
// fusable node (snippets::IsFusable) joins the subgraph(s) of the producers
// of its inputs when the union
//
//   - creates no cycle (no path leaves the subgraph and comes back),
//   - needs at most `max_args` kernel arguments (inputs + outputs),
//   - lowers to one schedule (every output spans the broadcast domain), and
//   - fits `max_vector_registers` in the register allocator,
//
// and otherwise leads a new subgraph. Scalar constants move into the body
// as immediates; other constants (a bias vector) stay outer inputs. A value
// becomes a subgraph output when a node outside reads it or it is a graph
// output.
//
//   Add(bias) -> Div -> Erf -> Add -> Mul -> Mul    ==>   Subgraph (6 ops)
//     └──────────────────────────────┘                    inputs: x, bias
//
// Outer values keep their identity: consumers of a fused output are
// untouched.
#pragma once

#include "core/status.h"
#include "ir/graph.h"
#include "snippets/kernel_ir.h"

namespace tessel::snippets {

struct TokenizeOptions {
  int max_args = kMaxKernelArgs;
  // AVX2's register file, so every subgraph compiles for either ISA.
  int max_vector_registers = 16;
  // Ops in one subgraph. Each candidate is lowered to check it, so growing
  // a group costs its size: the cap keeps tokenizing linear in the graph (a
  // chain of a million elementwise ops), far above what real models fuse
  // (GELU, SiLU, residual + activation: under 16).
  int max_ops = 32;
};

// Precondition: `graph` is typed and topologically sorted (after
// InferShapes and EliminateDeadNodes). Postcondition: it still is, with the
// fused nodes replaced by Subgraph nodes.
Status TokenizeSnippets(ir::Graph& graph, const TokenizeOptions& options = {});

}  // namespace tessel::snippets
