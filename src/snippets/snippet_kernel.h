// A compiled snippet: a Subgraph body lowered once, JIT-compiled for the best
// instruction set the CPU has (the interpreter otherwise), then run any
// number of times over caller-owned memory.
//
//   auto kernel = SnippetKernel::Compile(*node.body);    // validate + compile once
//   kernel->Run({x, bias}, {y}, parallel_for);            // per inference
//
// Run splits the domain into work items of about `grain_elements` elements:
// blocks of the innermost dimension when rows are long, groups of rows when
// they are short. Each item is one call of the kernel (KernelCall), so items
// can run on any thread in any order; outputs are written exactly once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "snippets/isa.h"
#include "snippets/kernel_ir.h"
#include "snippets/lower.h"

namespace tessel::snippets {

// Calls fn(i) for every i in [0, n), possibly in parallel; returns when all
// calls are done.
using ParallelFor = std::function<void(int64_t n, const std::function<void(int64_t)>& fn)>;

// The last-level cache size: sysfs (cpu0's largest cache), else sysconf, else
// 32 MiB.
int64_t LastLevelCacheBytes();

struct SnippetOptions {
  // The code path; capped at what the CPU supports. kInterpreter forces the
  // portable fallback.
  Isa isa = HostIsa();
  // Where the x86 JIT writes each kernel's machine code (GenerateX86); empty:
  // nowhere.
  std::string dump_dir;
  // A launch walking at least this many bytes (inputs + outputs) stores its
  // float outputs with non-temporal (streaming) stores, when every output row
  // is 64-byte aligned: a working set larger than the last-level cache would
  // not stay there for the next kernel anyway, and streaming stores save the
  // read-for-ownership of every destination line (a third of the traffic of
  // a unary op). Smaller working sets keep plain stores and stay in cache.
  int64_t nontemporal_threshold_bytes = LastLevelCacheBytes();
  // Elements per work item.
  int64_t grain_elements = 16384;
  // Launches over fewer elements run on the calling thread: waking the pool
  // costs more than the work.
  int64_t min_parallel_elements = int64_t{1} << 17;
  // Where the arguments hold their elements (LowerSubgraph): plain, channels
  // last, or in blocks of 16 channels.
  ArgLayout layout = ArgLayout::kPlain;
};

class X86Function;

class SnippetKernel {
 public:
  // Precondition: `body` is a Subgraph body (typed; see canonicalize.h).
  static StatusOr<std::unique_ptr<SnippetKernel>> Compile(const ir::Graph& body,
                                                          const SnippetOptions& options = {});
  ~SnippetKernel();

  // `inputs` and `outputs` follow the body's inputs and outputs; each points
  // at a dense row-major buffer of that argument's shape and dtype. Outputs
  // must not overlap inputs unless they are the same buffer with the same
  // shape (elementwise in place). A null `parallel_for` runs serially.
  void Run(const std::vector<const void*>& inputs, const std::vector<void*>& outputs,
           const ParallelFor& parallel_for = nullptr) const;

  // Whether Run with these outputs would use streaming (non-temporal) stores.
  bool Streams(const std::vector<void*>& outputs) const;

  // The code path that runs: the JIT's ISA, or kInterpreter.
  Isa isa() const { return isa_; }
  const KernelIR& ir() const { return ir_; }
  // Vector registers of the generated code (0 for the interpreter).
  int registers_used() const;
  // Why the JIT was not used although requested (ok otherwise).
  const Status& jit_status() const { return jit_status_; }

 private:
  SnippetKernel() = default;
  // The code for outputs at `base` (inputs first, then outputs).
  const X86Function* ChooseCode(const std::vector<const char*>& base) const;

  KernelIR ir_;
  SnippetOptions options_;
  Isa isa_ = Isa::kInterpreter;
  Status jit_status_;
  std::unique_ptr<X86Function> code_;
  std::unique_ptr<X86Function> streaming_code_;  // non-temporal stores; may be null
};

}  // namespace tessel::snippets
