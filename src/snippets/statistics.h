// Statistics of a fused graph, for `tessel compile --dump-snippets`: every
// Subgraph with its ops, domain, arguments and register use, and the seed's
// shrinkage factor — bytes walked (read + written by each kernel launch)
// before fusion, node by node, over bytes walked by the fused kernels.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace tessel::snippets {

struct SnippetStats {
  std::string name;
  std::vector<std::string> ops;     // body op types, in order
  Shape domain;                     // broadcast of the outputs
  std::string schedule;             // the collapsed 6D domain, "128x1024"
  std::vector<std::string> inputs;  // "name: float32 1x128x1024"
  std::vector<std::string> outputs;
  int immediates = 0;         // scalar constants folded into the code
  int registers_avx512 = -1;  // zmm registers used; -1 if it does not lower
  int registers_avx2 = -1;    // ymm registers used
  int64_t bytes_before = 0;   // walked by the body's nodes run one by one
  int64_t bytes_after = 0;    // walked by the fused kernel
  std::string kernel;         // the lowered vector tile
};

struct SnippetReport {
  std::vector<SnippetStats> snippets;
  int64_t fused_ops = 0;
  int64_t fused_bytes_before = 0;  // over the fused regions only
  int64_t fused_bytes_after = 0;
  int64_t model_bytes_before = 0;  // every node of the model
  int64_t model_bytes_after = 0;
  // Every node of the model before any fusion stage (fuse-conv and
  // fuse-shuffle rewrite nodes before snippets form); -1 when not known.
  int64_t unfused_model_bytes = -1;
};

SnippetReport ReportSnippets(const ir::Graph& graph);

// `verbose` adds each snippet's kernel IR.
void PrintSnippetReport(const SnippetReport& report, std::ostream& os, bool verbose = false);

}  // namespace tessel::snippets
