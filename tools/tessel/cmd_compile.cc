// tessel compile MODEL -o FILE: compiles an ONNX model and saves the result.
// --dump-snippets prints every fused subgraph and the bytes walked before and
// after fusion.
#include <chrono>
#include <iostream>

#include "common.h"
#include "ir/printer.h"
#include "memory_options.h"
#include "model/model_file.h"
#include "snippets/statistics.h"
#include "target.h"
#include "targets/registry.h"

namespace tessel::cli {

namespace {

struct CompileArgs {
  std::string model;
  std::string output;
  std::string dump_after;
  bool dump_snippets = false;
  bool dump_kernels = false;
  ModelOptions model_options;
  MemoryCliOptions memory;
  TargetOptions target;
};

Status RunCompile(const CompileArgs& args) {
  TESSEL_ASSIGN_OR_RETURN(CompilerOptions copts, MakeCompileOptions(args.model_options));
  TESSEL_RETURN_IF_ERROR(ApplyMemoryOptions(args.memory, &copts.memory));
  if (!args.dump_after.empty()) {
    const auto& names = StageNames();
    if (std::find(names.begin(), names.end(), args.dump_after) == names.end()) {
      std::string all;
      for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
      return InvalidArgument("--dump-after '" + args.dump_after +
                             "': no such stage (stages: " + all + ")");
    }
  }
  // Bytes walked before fuse-conv, fuse-shuffle and the snippets, for
  // --dump-snippets: what every fusion stage saves together.
  int64_t unfused_bytes = -1;
  copts.after_stage = [&](const std::string& stage, const ir::Graph& g) {
    if (stage == "eliminate-dead-nodes" && (args.dump_snippets || args.dump_kernels)) {
      unfused_bytes = snippets::ReportSnippets(g).model_bytes_before;
    }
    if (stage != args.dump_after) return;
    std::cout << "--- after " << stage << " ---\n";
    ir::PrintGraph(g, std::cout);
  };
  TESSEL_ASSIGN_OR_RETURN(std::unique_ptr<targets::Target> target,
                          MakeRequestedTarget(args.target, /*compile_only=*/true));
  const auto t0 = std::chrono::steady_clock::now();
  StatusOr<CompiledModel> loaded = Compile(args.model, *target, copts);
  EndSearchProgressBar();
  TESSEL_ASSIGN_OR_RETURN(CompiledModel model, std::move(loaded));
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  TESSEL_RETURN_IF_ERROR(WriteCompiledModel(model, args.output));
  const ir::GraphStats stats = ir::ComputeStats(*model.graph);
  std::printf("compiled %s -> %s in %.0f ms: %lld nodes, weights %s\n", args.model.c_str(),
              args.output.c_str(), ms, static_cast<long long>(stats.num_nodes),
              FormatBytes(stats.parameter_bytes).c_str());
  std::printf("target   %s\n", model.target.ToString().c_str());
  for (const ir::MemoryPool& pool : model.memory.pools) {
    std::printf("pool %s '%s': %s (planner %s)\n", pool.read_only ? "ro" : "rw", pool.name.c_str(),
                FormatBytes(pool.size_bytes).c_str(), model.memory.algorithm.c_str());
  }
  if (args.dump_snippets || args.dump_kernels) {
    snippets::SnippetReport report = snippets::ReportSnippets(*model.graph);
    report.unfused_model_bytes = unfused_bytes;
    snippets::PrintSnippetReport(report, std::cout, args.dump_kernels);
  }
  return Status::Ok();
}

}  // namespace

void AddCompileCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* cmd = app.add_subcommand("compile", "Compile an ONNX model into a tessel model file");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("-o,--output", args->output, "Compiled model file to write")->required();
  cmd->add_option("--dump-after", args->dump_after, "Print the graph after this stage");
  cmd->add_flag("--dump-snippets", args->dump_snippets,
                "Print every fused subgraph (ops, shapes, registers) and the bytes walked "
                "before and after fusion");
  cmd->add_flag("--dump-kernels", args->dump_kernels,
                "As --dump-snippets, with each snippet's lowered kernel IR");
  AddModelOptions(*cmd, args->model_options);
  AddMemoryOptions(*cmd, args->memory, /*time_limit=*/true);
  AddTargetOptions(*cmd, args->target, /*profile=*/false);
  cmd->callback([args, &exit_code] {
    Status s = RunCompile(*args);
    exit_code = s.ok() ? 0 : ReportError(s);
  });
}

}  // namespace tessel::cli
