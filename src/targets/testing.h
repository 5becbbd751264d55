// Targets for tests: one of each per process (the CPU target's ISA belongs
// to the process), in default options.
//
//   Compile(path, targets::testing::Cpu(), options);
//   Prepare(model, targets::testing::Reference());
#pragma once

#include "core/check.h"
#include "targets/registry.h"

namespace tessel::targets::testing {

inline const Target& Named(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Target>> made;
  std::unique_ptr<Target>& t = made[name];
  if (!t) {
    StatusOr<std::unique_ptr<Target>> target = MakeTarget({name, {}});
    TESSEL_CHECK_MSG(target.ok(), target.status().message().c_str());
    t = std::move(*target);
  }
  return *t;
}

inline const Target& Cpu() { return Named("cpu"); }
inline const Target& Reference() { return Named("reference"); }

}  // namespace tessel::targets::testing
