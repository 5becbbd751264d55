#include "targets/cpu/options.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>

#if TESSEL_WITH_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace tessel::cpu {

namespace {

std::mutex mu;
// oneDNN's ISA, once a target fixed it (FixProcessIsa).
std::optional<snippets::Isa> process_isa;
std::atomic<snippets::Isa> host_limit{snippets::Isa::kAvx512};

#if TESSEL_WITH_ONEDNN
// The best of ours that oneDNN will run here (DNNL_MAX_CPU_ISA caps it).
// Reading it fixes oneDNN's ISA for the process.
snippets::Isa OneDnnIsa() {
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  auto at_least = [&](dnnl::cpu_isa floor) {
    return (static_cast<unsigned>(isa) & static_cast<unsigned>(floor)) ==
           static_cast<unsigned>(floor);
  };
  if (at_least(dnnl::cpu_isa::avx512_core)) return snippets::Isa::kAvx512;
  if (at_least(dnnl::cpu_isa::avx2)) return snippets::Isa::kAvx2;
  return snippets::Isa::kInterpreter;
}
#endif

}  // namespace

const char* IsaOptionName(snippets::Isa isa) {
  switch (isa) {
    case snippets::Isa::kAvx512:
      return "avx512";
    case snippets::Isa::kAvx2:
      return "avx2";
    case snippets::Isa::kInterpreter:
      return "generic";
  }
  return "?";
}

snippets::Isa HostIsa() { return std::min(snippets::HostIsa(), host_limit.load()); }

void LimitHostIsa(snippets::Isa isa) { host_limit.store(std::min(host_limit.load(), isa)); }

StatusOr<snippets::Isa> ResolveIsa(const std::string& name) {
  const snippets::Isa host = HostIsa();
  if (name == "auto") {
#if TESSEL_WITH_ONEDNN
    std::lock_guard<std::mutex> lock(mu);
    if (process_isa) return *process_isa;
    // Unless the host was limited (then oneDNN is set to that limit, and
    // must not be read before), oneDNN's own cap counts: DNNL_MAX_CPU_ISA.
    if (host < snippets::HostIsa()) return host;
    return std::min(host, OneDnnIsa());
#else
    return host;
#endif
  }
  snippets::Isa isa;
  if (name == "avx512") {
    isa = snippets::Isa::kAvx512;
  } else if (name == "avx2") {
    isa = snippets::Isa::kAvx2;
  } else if (name == "generic") {
    isa = snippets::Isa::kInterpreter;
  } else {
    return InvalidArgument("isa '" + name + "': expected auto, avx512, avx2 or generic");
  }
  if (isa > host) {
    return Unsupported(std::string("this CPU cannot run isa ") + IsaOptionName(isa) + ": it has " +
                       (host == snippets::Isa::kInterpreter
                            ? std::string("neither AVX2 nor AVX-512")
                            : std::string(IsaOptionName(host)) + " at most"));
  }
  return isa;
}

const char* WinogradName(Winograd w) {
  switch (w) {
    case Winograd::kAuto:
      return "auto";
    case Winograd::k4x3:
      return "4x3";
    case Winograd::kOff:
      return "off";
  }
  return "?";
}

StatusOr<Winograd> ParseWinograd(const std::string& name) {
  if (name == "auto") return Winograd::kAuto;
  if (name == "4x3") return Winograd::k4x3;
  if (name == "off") return Winograd::kOff;
  return InvalidArgument("winograd '" + name + "': expected auto, 4x3 or off");
}

Status FixProcessIsa(snippets::Isa isa) {
  if (isa == snippets::Isa::kInterpreter) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu);
  if (process_isa && *process_isa != isa) {
    return InvalidArgument(std::string("this process already runs oneDNN at isa ") +
                           IsaOptionName(*process_isa) + "; it cannot switch to " +
                           IsaOptionName(isa) + " (one ISA per process)");
  }
#if TESSEL_WITH_ONEDNN
  if (!process_isa) {
    const dnnl::cpu_isa cap =
        isa == snippets::Isa::kAvx512 ? dnnl::cpu_isa::avx512_core : dnnl::cpu_isa::avx2;
    try {
      dnnl::set_max_cpu_isa(cap);
    } catch (const dnnl::error&) {
      // oneDNN fixed its ISA already (it ran, or DNNL_MAX_CPU_ISA was read):
      // fine if it is the one asked for.
      if (OneDnnIsa() != isa) {
        return InvalidArgument(std::string("oneDNN already runs at another ISA in this "
                                           "process; it cannot switch to ") +
                               IsaOptionName(isa));
      }
    }
  }
#endif
  process_isa = isa;
  return Status::Ok();
}

}  // namespace tessel::cpu
