// tessel run MODEL: runs a model once or more on given or random inputs.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common.h"
#include "ir/printer.h"
#include "memory_options.h"
#include "model/model_file.h"
#include "onnx/tensor_io.h"
#include "target.h"

namespace tessel::cli {

namespace {

struct RunArgs {
  std::string model;
  std::vector<std::string> inputs;
  std::string output_dir;
  int repeat = 1;
  uint32_t seed = 1;
  bool json = false;
  ModelOptions model_options;
  MemoryCliOptions memory;
  bool replan = false;  // memory options given: plan a compiled model again
  TargetOptions target;
};

Status Run(const RunArgs& args) {
  TESSEL_ASSIGN_OR_RETURN(CompilerOptions copts, MakeCompileOptions(args.model_options));
  TESSEL_RETURN_IF_ERROR(ApplyMemoryOptions(args.memory, &copts.memory));
  TESSEL_ASSIGN_OR_RETURN(const bool precompiled, IsCompiledModelFile(args.model));
  const auto t0 = std::chrono::steady_clock::now();
  StatusOr<LoadedModel> loaded = LoadModel(args.model, args.target, copts);
  EndSearchProgressBar();
  TESSEL_ASSIGN_OR_RETURN(LoadedModel lm, std::move(loaded));
  CompiledModel& model = lm.model;
  const double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  TESSEL_ASSIGN_OR_RETURN(std::vector<Tensor> inputs,
                          LoadInputs(*model.graph, args.inputs, args.seed));
  if (precompiled && args.replan) {
    TESSEL_ASSIGN_OR_RETURN(targets::KernelDecisions decisions,
                            lm.target->SelectKernels(*model.graph));
    StatusOr<ir::MemoryLayout> layout = PlanMemory(*model.graph, decisions.nodes, copts.memory);
    EndSearchProgressBar();
    TESSEL_ASSIGN_OR_RETURN(model.memory, std::move(layout));
  }
  const ir::GraphStats stats = ir::ComputeStats(*model.graph);  // before packing drops any
  TESSEL_ASSIGN_OR_RETURN(std::unique_ptr<targets::Executable> executor,
                          Prepare(model, *lm.target));
  if (args.target.profile) executor->SetProfiling(true);
  std::vector<Tensor> outputs;
  std::vector<double> times;
  for (int i = 0; i < args.repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    TESSEL_ASSIGN_OR_RETURN(outputs, executor->Run(inputs));
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  if (!args.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(args.output_dir, ec);
    if (ec) return Internal("cannot create '" + args.output_dir + "': " + ec.message());
    for (size_t k = 0; k < outputs.size(); ++k) {
      const auto path =
          std::filesystem::path(args.output_dir) / ("output_" + std::to_string(k) + ".pb");
      TESSEL_RETURN_IF_ERROR(
          onnx_io::WriteTensorFile(path, outputs[k], model.graph->outputs()[k]->name));
    }
  }
  const Latency lat = Summarize(times);
  if (args.json) {
    nlohmann::json j;
    j["model"] = args.model;
    j["load_ms"] = load_ms;
    j["runs"] = args.repeat;
    j["latency_ms"] = {{"min", lat.min_ms}, {"median", lat.median_ms}, {"p90", lat.p90_ms}};
    j["weights_bytes"] = stats.parameter_bytes;
    j["peak_activation_bytes"] = executor->stats().peak_activation_bytes;
    j["planner"] = model.memory.algorithm;
    j["workspace_bytes"] = executor->stats().workspace_bytes;
    j["target"] = executor->Describe();
    for (size_t k = 0; k < outputs.size(); ++k) {
      const Tensor& t = outputs[k];
      double sum = 0;
      for (int64_t i = 0; i < t.num_elements(); ++i) sum += t.GetAsDouble(i);
      j["outputs"].push_back({{"name", model.graph->outputs()[k]->name},
                              {"dtype", DTypeName(t.dtype())},
                              {"shape", t.shape()},
                              {"sum", sum}});
    }
    std::cout << j.dump(2) << "\n";
    return Status::Ok();
  }
  std::printf("model   %s (%s in %.0f ms, %lld nodes)\n", args.model.c_str(),
              precompiled ? "loaded" : "compiled", load_ms,
              static_cast<long long>(stats.num_nodes));
  for (size_t k = 0; k < outputs.size(); ++k) {
    std::printf("output  '%s': %s %s  %s\n", model.graph->outputs()[k]->name.c_str(),
                DTypeName(outputs[k].dtype()), ShapeToString(outputs[k].shape()).c_str(),
                Checksum(outputs[k]).c_str());
  }
  std::printf("latency min %.3f ms, median %.3f ms (%d run%s)\n", lat.min_ms, lat.median_ms,
              args.repeat, args.repeat == 1 ? "" : "s");
  std::printf("memory  weights %s, peak activations %s", FormatBytes(stats.parameter_bytes).c_str(),
              FormatBytes(executor->stats().peak_activation_bytes).c_str());
  std::printf(", planned workspace %s (%s)\n",
              FormatBytes(executor->stats().workspace_bytes).c_str(),
              model.memory.algorithm.c_str());
  std::printf("target  %s\n", executor->Describe().c_str());
  if (args.target.profile) std::printf("%s", executor->ProfileReport().c_str());
  if (!args.output_dir.empty())
    std::printf("wrote   %zu output(s) to %s\n", outputs.size(), args.output_dir.c_str());
  return Status::Ok();
}

}  // namespace

void AddRunCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd =
      app.add_subcommand("run", "Run a model (ONNX or compiled) on given or random inputs");
  cmd->add_option("model", args->model, "Model file: .onnx or compiled by 'tessel compile'")
      ->required();
  cmd->add_option("--input", args->inputs,
                  "Input tensor: NAME=FILE.pb (repeatable; others are random)");
  cmd->add_option("--output-dir", args->output_dir, "Write outputs there as output_K.pb");
  cmd->add_option("--repeat", args->repeat, "Number of runs (latency statistics)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--seed", args->seed, "Seed for random inputs");
  cmd->add_flag("--json", args->json, "Print the results as JSON");
  AddModelOptions(*cmd, args->model_options);
  AddMemoryOptions(*cmd, args->memory, /*time_limit=*/true);
  AddTargetOptions(*cmd, args->target, /*profile=*/true);
  AddTuningOptions(*cmd, args->target);
  cmd->callback([cmd, args, &exit_code] {
    args->replan = MemoryOptionsGiven(*cmd);
    Status s = Run(*args);
    exit_code = s.ok() ? 0 : ReportError(s);
  });
}

}  // namespace tessel::cli
