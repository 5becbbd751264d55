// The compiler pipeline. Compile() is the table of contents: every stage, in
// order, from an ONNX file to a CompiledModel.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "compiler/compiled_model.h"
#include "compiler/plan_memory.h"
#include "core/status.h"
#include "onnx/importer.h"

namespace tessel {

struct CompileOptions {
  onnx_io::ImportOptions import;
  // Run the IR verifier after every stage (cheap; on by default).
  bool verify_each_stage = true;
  // Fuse memory-bound elementwise regions into Subgraph nodes, each run as
  // one JIT kernel (snippets; on by default, --no-fusion turns it off).
  bool fusion = true;
  // How the plan-memory stage places buffers (--planner, --pool).
  MemoryOptions memory;
  // Called with the stage name and the graph after each stage (--dump-after).
  std::function<void(const std::string& stage, const ir::Graph&)> after_stage;
};

// Imports and compiles an ONNX model.
StatusOr<CompiledModel> Compile(const std::filesystem::path& onnx_path,
                                const CompileOptions& options = {});

// Loads a model for running: a compiled model file (recognized by its magic
// bytes) or an ONNX file, compiled in memory.
StatusOr<CompiledModel> LoadOrCompile(const std::filesystem::path& path,
                                      const CompileOptions& options = {});

// Names of the stages, in order, for --dump-after.
const std::vector<std::string>& StageNames();

}  // namespace tessel
