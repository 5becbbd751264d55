#include "ir/printer.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace tessel::ir {

namespace {

// Whether the target's select-kernels stage has run: values then show
// their layout and storage scope.
bool Decided(const Graph& graph) {
  return std::any_of(graph.nodes().begin(), graph.nodes().end(),
                     [](const auto& n) { return n->kernel.family != KernelFamily::kUnselected; });
}

// "<nChw16c global>"
std::string Placement(const Value& v) {
  return std::string("<") + LayoutName(v.layout) + " " + StorageScopeName(v.scope) + ">";
}

std::string Ref(const Value* v, bool decided = false) {
  if (!v) return "_";
  if (v->is_constant()) return "@" + v->name + (decided ? Placement(*v) : "");
  return "%" + v->name;
}

std::string Type(const Value& v, bool decided = false) {
  return std::string(DTypeName(v.dtype)) + " " + (v.shape_known ? ShapeToString(v.shape) : "?") +
         (decided ? " " + Placement(v) : "");
}

}  // namespace

GraphStats ComputeStats(const Graph& graph) {
  GraphStats s;
  s.num_nodes = static_cast<int64_t>(graph.nodes().size());
  std::set<const void*> counted;  // constants may share storage (a folded Identity)
  for (const auto& v : graph.values()) {
    if (!v->is_constant()) continue;
    const void* data = v->constant.raw_data();
    if (data != nullptr && !counted.insert(data).second) continue;
    s.num_parameters += v->constant.num_elements();
    s.parameter_bytes += static_cast<int64_t>(v->constant.size_bytes());
  }
  return s;
}

namespace {

void PrintHeader(const Graph& graph, std::ostream& os) {
  const GraphStats s = ComputeStats(graph);
  char mib[32];
  std::snprintf(mib, sizeof mib, "%.1f MiB", static_cast<double>(s.parameter_bytes) / (1 << 20));
  os << "graph '" << graph.name() << "' opset " << graph.opset_version() << ": " << s.num_nodes
     << " nodes, " << s.num_parameters << " parameters (" << mib << ")\n";
  for (const Value* in : graph.inputs()) {
    os << "input  %" << in->name << ": " << Type(*in, Decided(graph)) << "\n";
  }
}

}  // namespace

void PrintSummary(const Graph& graph, std::ostream& os) {
  PrintHeader(graph, os);
  std::vector<std::pair<std::string, int>> counts;
  for (const auto& n : graph.nodes()) {
    auto it = std::find_if(counts.begin(), counts.end(),
                           [&](const auto& c) { return c.first == n->op_type; });
    if (it == counts.end()) {
      counts.emplace_back(n->op_type, 1);
    } else {
      ++it->second;
    }
  }
  std::stable_sort(counts.begin(), counts.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  os << "ops    ";
  for (size_t i = 0; i < counts.size(); ++i) {
    os << (i ? ", " : "") << counts[i].first << " x" << counts[i].second;
  }
  os << "\n";
  for (const Value* o : graph.outputs()) os << "output " << Ref(o) << ": " << Type(*o) << "\n";
}

void PrintGraph(const Graph& graph, std::ostream& os) {
  PrintHeader(graph, os);
  const bool decided = Decided(graph);
  for (const auto& n : graph.nodes()) {
    std::string outs;
    for (const Value* o : n->outputs) outs += (outs.empty() ? "" : ", ") + Ref(o);
    std::string ins;
    for (const Value* i : n->inputs) ins += (ins.empty() ? "" : ", ") + Ref(i, decided);
    os << outs << " = " << (n->domain.empty() ? "" : n->domain + ".") << n->op_type << "(" << ins
       << ")";
    if (!n->attrs.all().empty()) {
      os << " {";
      bool first = true;
      for (const auto& [name, value] : n->attrs.all()) {
        os << (first ? "" : ", ") << name << "=" << AttrValueToString(value);
        first = false;
      }
      os << "}";
    }
    std::string types;
    for (const Value* o : n->outputs) {
      if (o) types += (types.empty() ? "" : ", ") + Type(*o, decided);
    }
    os << " : " << types << "  # " << n->name;
    if (decided) os << " [" << n->kernel.ToString() << "]";
    os << "\n";
  }
  for (const Value* o : graph.outputs()) {
    os << "output " << Ref(o) << ": " << Type(*o, decided) << "\n";
  }
}

}  // namespace tessel::ir
