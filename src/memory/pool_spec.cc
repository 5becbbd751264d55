#include "memory/pool_spec.h"

#include <charconv>
#include <set>
#include <utility>

namespace tessel::memory {

StatusOr<int64_t> ParseByteCount(std::string_view text) {
  const std::string bad =
      "'" + std::string(text) + "' is not a byte count (like 65536, 256KiB or 4MiB)";
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || p == text.data() || value < 0) return InvalidArgument(bad);
  const std::string_view suffix(p, static_cast<size_t>(end - p));
  static const std::pair<std::string_view, int64_t> kUnits[] = {
      {"", 1},          {"B", 1},     {"KiB", 1 << 10}, {"MiB", 1 << 20},
      {"GiB", 1 << 30}, {"KB", 1000}, {"MB", 1000000},  {"GB", 1000000000},
  };
  for (const auto& [name, scale] : kUnits) {
    if (suffix != name) continue;
    if (value > INT64_MAX / scale) return InvalidArgument(bad + ": too large");
    return value * scale;
  }
  return InvalidArgument(bad);
}

StatusOr<PoolInfo> ParsePoolSpec(std::string_view spec) {
  const std::string where = "--pool '" + std::string(spec) + "': ";
  PoolInfo pool;
  std::set<std::string> seen;
  size_t start = 0;
  while (start <= spec.size()) {
    const size_t comma = std::min(spec.find(',', start), spec.size());
    const std::string_view item = spec.substr(start, comma - start);
    start = comma + 1;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return InvalidArgument(where + "expected KEY=VALUE, found '" + std::string(item) + "'");
    }
    const std::string key(item.substr(0, eq));
    const std::string_view value = item.substr(eq + 1);
    if (!seen.insert(key).second) return InvalidArgument(where + "key '" + key + "' repeats");
    if (key == "name") {
      if (value.empty()) return InvalidArgument(where + "the name is empty");
      pool.name = std::string(value);
    } else if (key == "size") {
      StatusOr<int64_t> bytes = ParseByteCount(value);
      if (!bytes.ok()) return InvalidArgument(where + "size " + bytes.status().message());
      pool.size_limit_bytes = *bytes;
    } else if (key == "access") {
      if (value != "rw" && value != "ro") {
        return InvalidArgument(where + "access '" + std::string(value) + "' is not rw or ro");
      }
      pool.read_only = value == "ro";
    } else if (key == "targets") {
      size_t t = 0;
      while (t <= value.size()) {
        const size_t plus = std::min(value.find('+', t), value.size());
        if (plus == t) return InvalidArgument(where + "a target name is empty");
        pool.targets.emplace_back(value.substr(t, plus - t));
        t = plus + 1;
      }
    } else {
      return InvalidArgument(where + "unknown key '" + key +
                             "' (keys: name, size, access, targets)");
    }
  }
  if (pool.name.empty()) return InvalidArgument(where + "name=NAME is required");
  return pool;
}

}  // namespace tessel::memory
