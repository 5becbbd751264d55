// Which code path a snippet runs: AVX-512 or AVX2 machine code from the x86
// JIT, or the portable interpreter. Chosen at run time from CPUID:
//
//   kAvx512       AVX512F + AVX512VL (zmm vector tile, k-register masks)
//   kAvx2         AVX2 + FMA (ymm vector tile)
//   kInterpreter  anything else, or when the cap says so
//
// SetIsaCap caps the choice for the process (the CPU target's `isa` option:
// the interpreter for "generic", AVX2 for "avx2", to run what a model was
// compiled for, or to compare the two paths on one machine).
#pragma once

namespace tessel::snippets {

enum class Isa { kInterpreter, kAvx2, kAvx512 };

const char* IsaName(Isa isa);  // "interpreter", "avx2", "avx512"
// The best path this CPU (and OS) supports, ignoring the cap.
Isa HostIsa();
// HostIsa() capped by SetIsaCap (uncapped by default).
Isa DefaultIsa();
void SetIsaCap(Isa cap);
bool IsaSupported(Isa isa);

}  // namespace tessel::snippets
