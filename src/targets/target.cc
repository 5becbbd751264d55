#include "targets/target.h"

namespace tessel::targets {

std::string TargetSpec::ToString() const {
  std::string out = name;
  for (const auto& [key, value] : options) out += " " + key + "=" + value;
  return out;
}

std::string TargetSpec::Option(const std::string& key, const std::string& fallback) const {
  const auto it = options.find(key);
  return it == options.end() ? fallback : it->second;
}

std::string KernelFamily(const std::string& kernel) {
  const size_t paren = kernel.find(" (");
  return paren == std::string::npos ? kernel : kernel.substr(0, paren);
}

}  // namespace tessel::targets
