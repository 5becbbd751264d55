// Which code path a snippet runs: AVX-512 or AVX2 machine code from the x86
// JIT, or the portable interpreter. Chosen at run time from CPUID:
//
//   kAvx512       AVX512F + AVX512VL (zmm vector tile, k-register masks)
//   kAvx2         AVX2 + FMA (ymm vector tile)
//   kInterpreter  anything else, or when the cap says so
//
// Whoever compiles a snippet says which (SnippetOptions::isa: the CPU
// target's `isa` option, capped at HostIsa).
#pragma once

namespace tessel::snippets {

enum class Isa { kInterpreter, kAvx2, kAvx512 };

const char* IsaName(Isa isa);  // "interpreter", "avx2", "avx512"
// The best path this CPU (and OS) supports, ignoring the cap.
Isa HostIsa();
bool IsaSupported(Isa isa);

}  // namespace tessel::snippets
