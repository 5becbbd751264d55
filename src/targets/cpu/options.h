// The CPU target's options: one struct, filled from the target's spec
// (targets/target.h) by CpuTarget, never from the environment.
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
// oneDNN's ISA, the JIT's and the thread count belong to the process, so
// the options in force are process-wide too (ConfigureProcess): one process
// runs one CPU configuration. The kernels read them through
// ProcessOptions().
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

// Puts `options` in force for the process: oneDNN's maximum ISA, the JIT's
// cap, the thread count, the thresholds. Fails when another ISA is already
// in force (oneDNN fixes its ISA when it first runs).
Status ConfigureProcess(const CpuOptions& options);
// The options in force (the defaults, with the best ISA, until configured).
const CpuOptions& ProcessOptions();

}  // namespace tessel::cpu
