// The compiler pipeline. Compile() is the table of contents: every stage, in
// order, from an ONNX file to a CompiledModel.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "core/resources.h"
#include "core/status.h"
#include "model/compiled_model.h"
#include "model/plan_memory.h"
#include "model/prepare.h"
#include "model/target.h"
#include "onnx/importer.h"

namespace tessel {

// How much memory a model may ask for, checked at compile time before
// anything of that size is allocated: one line names the tensor (its shape
// and size) or the pools over the limit. A tensor defaults to this machine's
// physical memory (the compiler holds it); the pools to what the target
// allows (Target::memory_limit_bytes: this machine's memory, or a
// microcontroller's).
struct ResourceLimits {
  int64_t max_tensor_bytes = PhysicalMemoryBytes();  // any one tensor
  int64_t max_memory_bytes = 0;  // the plan's pools together; 0: the target's limit
};

struct CompilerOptions {
  onnx_io::ImportOptions import;
  ResourceLimits limits;
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

// Imports and compiles an ONNX model for `target`: its kernels, their
// scratch and the plan are the target's, and the model records target.spec().
StatusOr<CompiledModel> Compile(const std::filesystem::path& onnx_path,
                                const targets::Target& target, const CompilerOptions& options = {});

// Reads a compiled model file (recognized by its magic bytes), or compiles
// an ONNX file in memory for `target`. A model file keeps the target it was
// compiled for (model.target), which may not be `target`'s.
StatusOr<CompiledModel> LoadOrCompile(const std::filesystem::path& path,
                                      const targets::Target& target,
                                      const CompilerOptions& options = {});

// Names of the stages, in order, for --dump-after.
const std::vector<std::string>& StageNames();

}  // namespace tessel
