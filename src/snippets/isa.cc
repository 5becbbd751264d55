#include "snippets/isa.h"

#include <xbyak/xbyak_util.h>

#include <algorithm>
#include <atomic>

namespace tessel::snippets {

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kInterpreter:
      return "interpreter";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
  }
  return "?";
}

Isa HostIsa() {
  static const Isa host = [] {
    using Xbyak::util::Cpu;
    const Cpu cpu;
    const bool avx2 = cpu.has(Cpu::tAVX2) && cpu.has(Cpu::tFMA);
    if (avx2 && cpu.has(Cpu::tAVX512F) && cpu.has(Cpu::tAVX512VL)) return Isa::kAvx512;
    return avx2 ? Isa::kAvx2 : Isa::kInterpreter;
  }();
  return host;
}

bool IsaSupported(Isa isa) { return isa <= HostIsa(); }

}  // namespace tessel::snippets
