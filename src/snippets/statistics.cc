#include "snippets/statistics.h"

#include <cstdio>
#include <sstream>

#include "ops/subgraph.h"
#include "snippets/assign_registers.h"
#include "snippets/lower.h"
#include "snippets/x86_generator.h"

namespace tessel::snippets {

namespace {

int64_t Walked(const ir::Node& n) {
  int64_t bytes = 0;
  for (const ir::Value* v : n.inputs) {
    if (v) bytes += static_cast<int64_t>(v->size_bytes());
  }
  for (const ir::Value* v : n.outputs) {
    if (v) bytes += static_cast<int64_t>(v->size_bytes());
  }
  return bytes;
}

std::string Describe(const ir::Value& v) {
  return v.name + ": " + DTypeName(v.dtype) + " " + ShapeToString(v.shape);
}

std::string Bytes(int64_t b) {
  char buf[32];
  if (b < 1024) {
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  } else if (b < (1 << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / 1024);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1 << 20));
  }
  return buf;
}

std::string Factor(int64_t before, int64_t after) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "x%.2f", after > 0 ? static_cast<double>(before) / after : 1.0);
  return buf;
}

int Registers(const KernelIR& ir, Isa isa) {
  int used = 0;
  for (const auto* tile : {&ir.body, &ir.scalar_body}) {
    auto ra = AssignRegisters(ir, *tile, NumVectorRegisters(isa));
    if (!ra.ok()) return -1;
    used = std::max(used, ra->num_used);
  }
  return used;
}

SnippetStats Stats(const ir::Node& node) {
  SnippetStats s;
  s.name = node.name;
  const ir::Graph& body = *node.body;
  for (const auto& n : body.nodes()) {
    s.ops.push_back(n->op_type);
    s.bytes_before += Walked(*n);
  }
  s.bytes_after = Walked(node);
  for (const ir::Value* v : node.inputs) {
    if (v) s.inputs.push_back(Describe(*v));
  }
  for (const ir::Value* v : node.outputs) {
    if (v) s.outputs.push_back(Describe(*v));
  }
  for (const auto& v : body.values()) s.immediates += v->is_constant() ? 1 : 0;
  auto ir = LowerSubgraph(body);
  if (!ir.ok()) {
    s.kernel = "  (does not lower: " + ir.status().message() + ")\n";
    return s;
  }
  s.domain = ir->output_shape;
  std::string schedule;
  for (int64_t d : ir->domain) {
    if (d != 1 || !schedule.empty()) schedule += (schedule.empty() ? "" : "x") + std::to_string(d);
  }
  s.schedule = schedule.empty() ? "1" : schedule;
  s.registers_avx512 = Registers(*ir, Isa::kAvx512);
  s.registers_avx2 = Registers(*ir, Isa::kAvx2);
  std::ostringstream os;
  PrintInstrs(ir->body, os, "    ");
  s.kernel = os.str();
  return s;
}

}  // namespace

SnippetReport ReportSnippets(const ir::Graph& graph) {
  SnippetReport r;
  for (const auto& n : graph.nodes()) {
    if (!ops::IsSubgraph(*n) || !n->body) {
      const int64_t b = Walked(*n);
      r.model_bytes_before += b;
      r.model_bytes_after += b;
      continue;
    }
    SnippetStats s = Stats(*n);
    r.fused_ops += static_cast<int64_t>(s.ops.size());
    r.fused_bytes_before += s.bytes_before;
    r.fused_bytes_after += s.bytes_after;
    r.model_bytes_before += s.bytes_before;
    r.model_bytes_after += s.bytes_after;
    r.snippets.push_back(std::move(s));
  }
  return r;
}

void PrintSnippetReport(const SnippetReport& report, std::ostream& os, bool verbose) {
  for (const SnippetStats& s : report.snippets) {
    os << "snippet '" << s.name << "': " << s.ops.size() << " ops (";
    for (size_t i = 0; i < s.ops.size(); ++i) os << (i ? " " : "") << s.ops[i];
    os << "), domain " << ShapeToString(s.domain) << " scheduled as " << s.schedule << "\n";
    for (const std::string& in : s.inputs) os << "  input  " << in << "\n";
    for (const std::string& out : s.outputs) os << "  output " << out << "\n";
    os << "  registers: avx512 " << s.registers_avx512 << " zmm, avx2 " << s.registers_avx2
       << " ymm; immediates " << s.immediates << "; bytes walked " << Bytes(s.bytes_before)
       << " -> " << Bytes(s.bytes_after) << " (" << Factor(s.bytes_before, s.bytes_after) << ")\n";
    if (verbose) os << s.kernel;
  }
  os << "snippets: " << report.snippets.size() << " subgraphs, " << report.fused_ops
     << " ops fused\n";
  auto total = [&](const char* what, int64_t before, int64_t after) {
    os << "bytes walked by " << what << ": " << Bytes(before) << " -> " << Bytes(after) << " ("
       << before << " B -> " << after << " B, shrinkage " << Factor(before, after) << ")\n";
  };
  total("fused regions", report.fused_bytes_before, report.fused_bytes_after);
  total("the model", report.model_bytes_before, report.model_bytes_after);
  if (report.unfused_model_bytes >= 0) {
    total("the model, every fusion stage", report.unfused_model_bytes, report.model_bytes_after);
  }
}

}  // namespace tessel::snippets
