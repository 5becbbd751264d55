#include "common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <tuple>

#include "core/messages.h"
#include "memory/pool_spec.h"
#include "onnx/tensor_io.h"

namespace tessel::cli {

void AddModelOptions(CLI::App& app, ModelOptions& opts) {
  app.add_option("--input-shape", opts.input_shapes,
                 "Static shape for an input with symbolic dims: NAME=D0,D1,... (repeatable)");
  app.add_option("--bind", opts.bindings,
                 "Bind a graph input to a constant at compile time: NAME=FILE.pb (repeatable)");
  app.add_flag("--no-fusion", opts.no_fusion,
               "Do not fuse elementwise ops into snippets (each op runs its reference kernel)");
  app.add_option("--max-tensor-size", opts.max_tensor_size,
                 "Refuse a model with a tensor larger than this (like 512MiB; default: this "
                 "machine's memory)");
  app.add_option("--max-memory", opts.max_memory,
                 "Refuse a model whose planned memory (workspace and constants) is larger than "
                 "this (default: what the target allows: this machine's memory; 2 GiB for "
                 "--target c)");
}

StatusOr<CompilerOptions> MakeCompileOptions(const ModelOptions& opts) {
  CompilerOptions options;
  options.fusion = !opts.no_fusion;
  for (const auto& [flag, text, limit] :
       {std::tuple{"--max-tensor-size", &opts.max_tensor_size, &options.limits.max_tensor_bytes},
        std::tuple{"--max-memory", &opts.max_memory, &options.limits.max_memory_bytes}}) {
    if (text->empty()) continue;
    StatusOr<int64_t> bytes = memory::ParseByteCount(*text);
    if (!bytes.ok()) return InvalidArgument(std::string(flag) + " " + bytes.status().message());
    *limit = *bytes;
  }
  for (const std::string& spec : opts.input_shapes) {
    TESSEL_ASSIGN_OR_RETURN(auto parsed, onnx_io::ParseInputShape(spec));
    options.import.input_shapes[parsed.first] = parsed.second;
  }
  for (const std::string& spec : opts.bindings) {
    TESSEL_ASSIGN_OR_RETURN(auto parsed, onnx_io::ParseBinding(spec));
    if (options.import.constant_inputs.count(parsed.first)) {
      return InvalidArgument("--bind '" + spec + "': input '" + parsed.first + "' is bound twice");
    }
    options.import.constant_inputs[parsed.first] = std::move(parsed.second);
  }
  return options;
}

StatusOr<std::vector<Tensor>> OrderInputs(const ir::Graph& graph,
                                          const std::vector<onnx_io::NamedTensor>& given_all,
                                          const std::string& where,
                                          const std::set<std::string>& bound) {
  std::vector<const onnx_io::NamedTensor*> given;
  for (const auto& nt : given_all) {
    if (nt.name.empty() || !bound.count(nt.name)) given.push_back(&nt);
  }
  if (given.size() != graph.inputs().size()) {
    return InvalidArgument(where + " has " + std::to_string(given.size()) +
                           " inputs; the model takes " + std::to_string(graph.inputs().size()));
  }
  std::vector<Tensor> inputs(given.size());
  for (size_t k = 0; k < given.size(); ++k) {
    size_t index = k;
    for (size_t i = 0; i < graph.inputs().size(); ++i) {
      if (!given[k]->name.empty() && graph.inputs()[i]->name == given[k]->name) index = i;
    }
    inputs[index] = given[k]->tensor;
  }
  return inputs;
}

std::vector<Tensor> RandomInputs(const ir::Graph& graph, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Tensor> inputs;
  for (const ir::Value* v : graph.inputs()) {
    Tensor t(v->dtype, v->shape);
    DispatchDType(v->dtype, [&](auto tag) {
      using T = decltype(tag);
      T* p = static_cast<T*>(t.raw_data());
      std::uniform_real_distribution<double> real(-1.0, 1.0);
      std::uniform_int_distribution<int> small(0, 7);
      for (int64_t i = 0; i < t.num_elements(); ++i) {
        if constexpr (std::is_same_v<T, bool>) {
          p[i] = small(rng) & 1;
        } else if constexpr (std::is_integral_v<T>) {
          p[i] = static_cast<T>(small(rng));
        } else {
          p[i] = FromDouble<T>(real(rng));
        }
      }
    });
    inputs.push_back(std::move(t));
  }
  return inputs;
}

StatusOr<std::vector<Tensor>> LoadInputs(const ir::Graph& graph,
                                         const std::vector<std::string>& specs, uint32_t seed) {
  std::vector<Tensor> inputs = RandomInputs(graph, seed);
  for (const std::string& spec : specs) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgument("--input '" + spec + "': expected NAME=FILE.pb");
    }
    const std::string name = spec.substr(0, eq);
    size_t index = graph.inputs().size();
    for (size_t i = 0; i < graph.inputs().size(); ++i) {
      if (graph.inputs()[i]->name == name) index = i;
    }
    if (index == graph.inputs().size()) {
      return InvalidArgument("--input '" + spec + "': the model has no input named '" + name + "'");
    }
    TESSEL_ASSIGN_OR_RETURN(inputs[index], onnx_io::ReadTensorFile(spec.substr(eq + 1)));
  }
  return inputs;
}

Latency Summarize(std::vector<double> ms) {
  Latency l;
  if (ms.empty()) return l;
  std::sort(ms.begin(), ms.end());
  l.min_ms = ms.front();
  l.median_ms = ms[ms.size() / 2];
  l.p90_ms = ms[std::min(ms.size() - 1, ms.size() * 9 / 10)];
  double sum = 0;
  for (double x : ms) sum += x;
  l.mean_ms = sum / static_cast<double>(ms.size());
  return l;
}

std::string FormatBytes(int64_t bytes) {
  char buf[32];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  } else if (bytes < (1 << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  }
  return buf;
}

std::string Checksum(const Tensor& t) {
  double sum = 0, abs_sum = 0;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const double x = t.GetAsDouble(i);
    sum += x;
    abs_sum += std::fabs(x);
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "sum=%.6g abs_sum=%.6g", sum, abs_sum);
  return buf;
}

int ReportError(const Status& status) {
  // One line, whatever the message quotes (a library's text, bytes of a
  // file): line breaks fold, control bytes are escaped.
  std::cerr << "tessel: error: " << OneLine(status.message()) << "\n";
  return 2;
}

}  // namespace tessel::cli
