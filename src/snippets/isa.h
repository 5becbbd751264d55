// Which code path a snippet runs: AVX-512 or AVX2 machine code from the x86
// JIT, or the portable interpreter. Chosen at run time from CPUID:
//
//   kAvx512       AVX512F + AVX512VL (zmm vector tile, k-register masks)
//   kAvx2         AVX2 + FMA (ymm vector tile)
//   kInterpreter  anything else, or TESSEL_JIT=off
//
// TESSEL_JIT caps the choice: "off" forces the interpreter, "avx2" stops at
// AVX2 (to compare the two paths on one machine); unset, empty or "on" take
// the best the CPU has. Other values are treated as unset.
#pragma once

namespace tessel::snippets {

enum class Isa { kInterpreter, kAvx2, kAvx512 };

const char* IsaName(Isa isa);  // "interpreter", "avx2", "avx512"
// The best path this CPU (and OS) supports, ignoring TESSEL_JIT.
Isa HostIsa();
// HostIsa() capped by TESSEL_JIT.
Isa DefaultIsa();
bool IsaSupported(Isa isa);

}  // namespace tessel::snippets
