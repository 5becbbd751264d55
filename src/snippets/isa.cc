#include "snippets/isa.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <xbyak/xbyak_util.h>

namespace tessel::snippets {

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kInterpreter: return "interpreter";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
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

Isa DefaultIsa() {
  const char* env = std::getenv("TESSEL_JIT");
  const std::string_view v = env ? env : "";
  if (v == "off") return Isa::kInterpreter;
  if (v == "avx2") return std::min(HostIsa(), Isa::kAvx2);
  return HostIsa();
}

bool IsaSupported(Isa isa) { return isa <= HostIsa(); }

}  // namespace tessel::snippets
