#include "model/target.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "core/resources.h"

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

StatusOr<EmitReport> Target::Emit(const CompiledModel&, const EmitRequest&) const {
  return Unsupported("target '" + spec().ToString() +
                     "' runs models in process and writes no sources (the c target does)");
}

int64_t Target::memory_limit_bytes() const { return PhysicalMemoryBytes(); }

Status ValidateInputs(const ir::Graph& graph, const std::vector<Tensor>& inputs) {
  const auto& expected = graph.inputs();
  if (inputs.size() != expected.size()) {
    return InvalidArgument("the model takes " + std::to_string(expected.size()) + " inputs; got " +
                           std::to_string(inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value& v = *expected[i];
    if (!inputs[i].defined()) return InvalidArgument("input '" + v.name + "' is missing");
    if (inputs[i].dtype() != v.dtype) {
      return InvalidArgument("input '" + v.name + "' has dtype " + DTypeName(inputs[i].dtype()) +
                             "; the model expects " + DTypeName(v.dtype));
    }
    if (inputs[i].shape() != v.shape) {
      return InvalidArgument("input '" + v.name + "' has shape " +
                             ShapeToString(inputs[i].shape()) + "; the model expects " +
                             ShapeToString(v.shape));
    }
  }
  return Status::Ok();
}

std::string FormatProfile(const std::vector<ProfileRow>& rows, int runs) {
  std::vector<ProfileRow> sorted = rows;
  std::sort(sorted.begin(), sorted.end(),
            [](const ProfileRow& a, const ProfileRow& b) { return a.ms > b.ms; });
  double total = 0, slow = 0;
  const ProfileRow* slowest = nullptr;
  int slow_nodes = 0;
  for (const ProfileRow& r : sorted) {
    total += r.ms;
    if (!r.slow) continue;
    slow += r.ms;
    slow_nodes += r.nodes;
    if (!slowest) slowest = &r;
  }
  auto share = [&](double ms) { return total > 0 ? 100 * ms / total : 0.0; };
  char line[512];
  std::snprintf(line, sizeof line, "profile  per run, by op and kernel (total %.3f ms, %d runs)\n",
                total, runs);
  std::string out = line;
  for (const ProfileRow& r : sorted) {
    std::snprintf(line, sizeof line, "  %8.3f ms %5.1f%%  %s  %s (%d node%s)%s\n", r.ms,
                  share(r.ms), r.op_type.c_str(), r.kernel.c_str(), r.nodes,
                  r.nodes == 1 ? "" : "s", r.slow ? "  <- slow path" : "");
    out += line;
  }
  if (slowest) {
    std::snprintf(line, sizeof line,
                  "slow paths  %.1f%% of the time in %d node%s; the most: %s %s, %.1f%%\n",
                  share(slow), slow_nodes, slow_nodes == 1 ? "" : "s", slowest->op_type.c_str(),
                  slowest->kernel.c_str(), share(slowest->ms));
  } else {
    std::snprintf(line, sizeof line, "slow paths  none\n");
  }
  out += line;
  return out;
}

}  // namespace tessel::targets
