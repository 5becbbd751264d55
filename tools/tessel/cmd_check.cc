// tessel check DIR: runs a model in the ONNX test format on every data set and
// compares with the expected outputs. Exit 0: all match; 1: a mismatch;
// 2: bad input.
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common.h"
#include "memory_options.h"
#include "onnx/test_data.h"
#include "target.h"

namespace tessel::cli {

namespace {

struct CheckArgs {
  std::string dir;
  double rtol = 1e-3;
  double atol = 1e-4;
  bool json = false;
  ModelOptions model_options;
  TargetOptions target;
};

StatusOr<bool> Check(const CheckArgs& args) {
  TESSEL_ASSIGN_OR_RETURN(CompilerOptions copts, MakeCompileOptions(args.model_options));
  const std::filesystem::path dir(args.dir);
  TESSEL_ASSIGN_OR_RETURN(auto sets, onnx_io::ReadTestDataSets(dir));
  if (sets.empty()) return NotFound("'" + args.dir + "' has no test_data_set_* folder");
  TESSEL_ASSIGN_OR_RETURN(LoadedModel lm,
                          LoadModel((dir / "model.onnx").string(), args.target, copts));
  CompiledModel& model = lm.model;
  std::set<std::string> bound;
  for (const auto& [input, value] : copts.import.constant_inputs) bound.insert(input);
  TESSEL_ASSIGN_OR_RETURN(std::unique_ptr<targets::Executable> executor,
                          Prepare(model, *lm.target));
  bool all_ok = true;
  nlohmann::json report;
  report["model"] = (dir / "model.onnx").string();
  report["rtol"] = args.rtol;
  report["atol"] = args.atol;
  report["target"] = executor->Describe();
  for (const auto& set : sets) {
    const std::string name = set.dir.filename().string();
    TESSEL_ASSIGN_OR_RETURN(std::vector<Tensor> inputs,
                            OrderInputs(*model.graph, set.inputs, name, bound));
    const auto t0 = std::chrono::steady_clock::now();
    TESSEL_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, executor->Run(inputs));
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (set.outputs.size() != outputs.size()) {
      return InvalidArgument(name + " has " + std::to_string(set.outputs.size()) +
                             " expected outputs; the model has " + std::to_string(outputs.size()));
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      const auto c =
          onnx_io::CompareTensors(outputs[k], set.outputs[k].tensor, args.rtol, args.atol);
      all_ok = all_ok && c.ok;
      const std::string out_name = model.graph->outputs()[k]->name;
      report["results"].push_back({{"data_set", name},
                                   {"output", out_name},
                                   {"ok", c.ok},
                                   {"max_abs_error", c.max_abs_error},
                                   {"max_rel_error", c.max_rel_error},
                                   {"mismatches", c.mismatches},
                                   {"problem", c.problem},
                                   {"ms", ms}});
      if (args.json) continue;
      if (!c.problem.empty()) {
        std::printf("%s  output '%s': %s  FAIL\n", name.c_str(), out_name.c_str(),
                    c.problem.c_str());
      } else {
        std::printf(
            "%s  output '%s' %s %s: max abs err %.3g, max rel err %.3g%s  %s\n", name.c_str(),
            out_name.c_str(), DTypeName(outputs[k].dtype()),
            ShapeToString(outputs[k].shape()).c_str(), c.max_abs_error, c.max_rel_error,
            c.mismatches ? (", " + std::to_string(c.mismatches) + " elements off").c_str() : "",
            c.ok ? "ok" : "FAIL");
      }
    }
  }
  report["ok"] = all_ok;
  if (args.json) {
    std::cout << report.dump(2) << "\n";
  } else {
    std::printf("%s: %zu data set(s), %s (rtol %g, atol %g, target %s)\n", args.dir.c_str(),
                sets.size(), all_ok ? "all outputs match" : "MISMATCH", args.rtol, args.atol,
                executor->Describe().c_str());
  }
  return all_ok;
}

}  // namespace

void AddCheckCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "check", "Run a model directory in the ONNX test format and compare with expected outputs");
  cmd->add_option("dir", args->dir, "Directory with model.onnx and test_data_set_N/")->required();
  cmd->add_option("--rtol", args->rtol, "Relative tolerance")->check(CLI::NonNegativeNumber);
  cmd->add_option("--atol", args->atol, "Absolute tolerance")->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", args->json, "Print the results as JSON");
  AddModelOptions(*cmd, args->model_options);
  AddTargetOptions(*cmd, args->target, /*profile=*/false);
  AddTuningOptions(*cmd, args->target);
  cmd->callback([args, &exit_code] {
    StatusOr<bool> ok = Check(*args);
    exit_code = !ok.ok() ? ReportError(ok.status()) : (*ok ? 0 : 1);
  });
}

}  // namespace tessel::cli
