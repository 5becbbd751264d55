// tessel compile MODEL -o FILE: compiles an ONNX model and saves the result.
#include <chrono>
#include <iostream>

#include "common.h"
#include "compiler/model_file.h"
#include "ir/printer.h"

namespace tessel::cli {

namespace {

struct CompileArgs {
  std::string model;
  std::string output;
  std::string dump_after;
  ModelOptions model_options;
};

Status RunCompile(const CompileArgs& args) {
  TESSEL_ASSIGN_OR_RETURN(CompileOptions copts, MakeCompileOptions(args.model_options));
  if (!args.dump_after.empty()) {
    const auto& names = StageNames();
    if (std::find(names.begin(), names.end(), args.dump_after) == names.end()) {
      std::string all;
      for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
      return InvalidArgument("--dump-after '" + args.dump_after + "': no such stage (stages: " +
                             all + ")");
    }
    copts.after_stage = [&](const std::string& stage, const ir::Graph& g) {
      if (stage != args.dump_after) return;
      std::cout << "--- after " << stage << " ---\n";
      ir::PrintGraph(g, std::cout);
    };
  }
  const auto t0 = std::chrono::steady_clock::now();
  TESSEL_ASSIGN_OR_RETURN(CompiledModel model, Compile(args.model, copts));
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  TESSEL_RETURN_IF_ERROR(WriteCompiledModel(model, args.output));
  const ir::GraphStats stats = ir::ComputeStats(*model.graph);
  std::printf("compiled %s -> %s in %.0f ms: %lld nodes, weights %s\n", args.model.c_str(),
              args.output.c_str(), ms, static_cast<long long>(stats.num_nodes),
              FormatBytes(stats.parameter_bytes).c_str());
  return Status::Ok();
}

}  // namespace

void AddCompileCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* cmd = app.add_subcommand("compile", "Compile an ONNX model into a tessel model file");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("-o,--output", args->output, "Compiled model file to write")->required();
  cmd->add_option("--dump-after", args->dump_after, "Print the graph after this stage");
  AddModelOptions(*cmd, args->model_options);
  cmd->callback([args, &exit_code] {
    Status s = RunCompile(*args);
    exit_code = s.ok() ? 0 : ReportError(s);
  });
}

}  // namespace tessel::cli
