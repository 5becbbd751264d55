// Shared pieces of the tessel subcommands.
#pragma once

#include <CLI/CLI.hpp>
#include <set>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "core/status.h"
#include "onnx/test_data.h"

namespace tessel::cli {

// Options every model-loading subcommand takes.
struct ModelOptions {
  std::vector<std::string> input_shapes;  // NAME=D0,D1,...
  std::vector<std::string> bindings;      // NAME=FILE.pb: input bound at compile time
  bool no_fusion = false;                 // --no-fusion: no snippets (CompilerOptions::fusion)
  std::string max_tensor_size;            // --max-tensor-size: ResourceLimits (default: RAM)
  std::string max_memory;                 // --max-memory
};
void AddModelOptions(CLI::App& app, ModelOptions& opts);
StatusOr<CompilerOptions> MakeCompileOptions(const ModelOptions& opts);

// Orders a data set's inputs as the graph's: by proto name where it names a
// graph input, by position otherwise. Tensors named after an input in `bound`
// (bound to a constant at compile time) are dropped first. `where` names the
// data set in messages.
StatusOr<std::vector<Tensor>> OrderInputs(const ir::Graph& graph,
                                          const std::vector<onnx_io::NamedTensor>& given,
                                          const std::string& where,
                                          const std::set<std::string>& bound = {});

// Seeded random inputs for every graph input: floats in [-1, 1), integers in
// [0, 8), booleans 0/1.
std::vector<Tensor> RandomInputs(const ir::Graph& graph, uint32_t seed);

// Inputs from NAME=FILE.pb specs, random for the rest.
StatusOr<std::vector<Tensor>> LoadInputs(const ir::Graph& graph,
                                         const std::vector<std::string>& specs, uint32_t seed);

// Statistics over latencies in milliseconds.
struct Latency {
  double min_ms = 0, median_ms = 0, p90_ms = 0, mean_ms = 0;
};
Latency Summarize(std::vector<double> ms);

std::string FormatBytes(int64_t bytes);  // "13.4 MiB"

// A compact fingerprint of a tensor's values: sum and sum of |x|.
std::string Checksum(const Tensor& t);

// Subcommands: each registers itself on the app and returns the exit code
// through `exit_code` when it runs.
void AddRunCommand(CLI::App& app, int& exit_code);
void AddCheckCommand(CLI::App& app, int& exit_code);
void AddShowCommand(CLI::App& app, int& exit_code);
void AddCompileCommand(CLI::App& app, int& exit_code);
void AddBenchCommand(CLI::App& app, int& exit_code);
void AddConformanceCommand(CLI::App& app, int& exit_code);
void AddPlanCommand(CLI::App& app, int& exit_code);
void AddTuneCommand(CLI::App& app, int& exit_code);
void AddTuneCacheCommand(CLI::App& app, int& exit_code);

// Prints "tessel: error: <message>" and returns 2.
int ReportError(const Status& status);

}  // namespace tessel::cli
