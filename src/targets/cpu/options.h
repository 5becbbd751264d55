// The CPU target's options: one struct, filled from the target's spec
// (model/target.h) by CpuTarget, never from the environment.
//
//   isa        what the kernels may use: "avx512" (AVX-512 F/VL/BW/DQ),
//              "avx2" (AVX2 + FMA), "generic" (no JIT: the reference
//              kernels and the snippets interpreter), or "auto" (the best
//              this CPU offers, resolved when the target is made; oneDNN's
//              own DNNL_MAX_CPU_ISA caps it)
//   threads    0: one per physical core
//   winograd   "auto" (F(2x2, 3x3) where 3x3 convolutions carry the graph's
//              work), "4x3" (F(4x4, 3x3) there), "off" (direct only)
//   parallel_min_mflop, parallel_min_kib
//              below these, a compute-bound kernel (MFLOP) or a
//              memory-bound one (KiB written) runs on the calling thread
//
// The options belong to the target object (CpuTarget): its kernels are
// built and run inside a CpuScope (thread_pool.h) that makes them, and the
// target's thread pool, the ones this thread sees. Two CPU targets in one
// process keep their own. Only oneDNN's maximum ISA is the process's
// (FixProcessIsa): oneDNN fixes it when it first runs, so a second target
// asking for another ISA is refused.
#pragma once

#include <string>

#include "core/status.h"
#include "snippets/isa.h"

namespace tessel::cpu {

enum class Winograd { kAuto, k4x3, kOff };

struct CpuOptions {
  snippets::Isa isa = snippets::Isa::kAvx512;  // resolved; kInterpreter is "generic"
  int threads = 0;
  Winograd winograd = Winograd::kAuto;
  double parallel_min_mflop = 2.0;
  double parallel_min_kib = 256;
  // Where the snippets JIT writes each kernel's machine code; empty:
  // nowhere (a host setting: it changes no result, no spec records it).
  std::string snippets_dump_dir;

  bool operator==(const CpuOptions&) const = default;

  // Whether library-backed (oneDNN) and native fast kernels run.
  bool fast_kernels() const { return isa != snippets::Isa::kInterpreter; }
};

// "avx512", "avx2", "generic".
const char* IsaOptionName(snippets::Isa isa);
// The best ISA this CPU offers: what CPUID says, unless LimitHostIsa set a
// lower one.
snippets::Isa HostIsa();
// Treats this CPU as if it offered at most `isa` from now on: to check, on
// one machine, what a smaller one would run and refuse (`tessel` maps
// DNNL_MAX_CPU_ISA=AVX2 to it).
void LimitHostIsa(snippets::Isa isa);
// Parses an isa option ("auto" resolves to this machine's best, HostIsa);
// fails, naming what this CPU lacks, when the CPU cannot run `name`.
StatusOr<snippets::Isa> ResolveIsa(const std::string& name);
const char* WinogradName(Winograd w);
StatusOr<Winograd> ParseWinograd(const std::string& name);

// Sets oneDNN's maximum ISA for the process to `isa`, once: fails, naming
// both, when another ISA was fixed before (oneDNN fixes its ISA when it
// first runs). kInterpreter (no fast kernels) fixes nothing.
Status FixProcessIsa(snippets::Isa isa);

}  // namespace tessel::cpu
