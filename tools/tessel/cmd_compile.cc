// tessel compile MODEL -o FILE: compiles an ONNX model and saves the result.
// --dump-snippets prints every fused subgraph and the bytes walked before and
// after fusion. With --target c, -o names a folder that receives the model as
// C99 sources (targets/c/emit.h), optionally with a self-check program.
#include <cctype>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "common.h"
#include "ir/printer.h"
#include "memory/texture_plan.h"
#include "memory_options.h"
#include "model/model_file.h"
#include "onnx/test_data.h"
#include "snippets/statistics.h"
#include "target.h"
#include "targets/c/emit.h"
#include "targets/registry.h"

namespace tessel::cli {

namespace {

struct CompileArgs {
  std::string model;
  std::string output;
  std::string dump_after;
  bool dump_snippets = false;
  bool dump_kernels = false;
  // --target c
  std::string name;
  std::string check_data;
  bool check = false;
  double atol = 1e-4, rtol = 1e-3;
  ModelOptions model_options;
  MemoryCliOptions memory;
  TargetOptions target;
};

// The model's name for --target c: --name, else the file's stem made a C
// identifier ("mobilenet_v2" from mobilenet-v2.onnx).
std::string ModelName(const CompileArgs& args) {
  if (!args.name.empty()) return args.name;
  std::string stem = std::filesystem::path(args.model).stem().string();
  for (char& ch : stem) {
    ch = std::isalnum(static_cast<unsigned char>(ch))
             ? static_cast<char>(std::tolower(static_cast<unsigned char>(ch)))
             : '_';
  }
  if (stem.empty() || std::isdigit(static_cast<unsigned char>(stem[0]))) stem = "model_" + stem;
  return stem.substr(0, 48);
}

// --target c: writes the sources, with NAME_check.c when asked.
Status EmitSources(const CompileArgs& args, const targets::Target& target,
                   const CompilerOptions& copts, const CompiledModel& model) {
  targets::EmitRequest request{.directory = args.output,
                               .name = ModelName(args),
                               .constants_in_pools = ConstantPoolsGiven(copts.memory),
                               .atol = args.atol,
                               .rtol = args.rtol};
  if (!args.check_data.empty()) {
    TESSEL_ASSIGN_OR_RETURN(auto sets, onnx_io::ReadTestDataSets(args.check_data));
    if (sets.empty()) {
      return InvalidArgument("--check-data '" + args.check_data + "': no test_data_set_* in it");
    }
    for (auto& in : sets[0].inputs) request.check_inputs.push_back(std::move(in.tensor));
    for (auto& out : sets[0].outputs) request.check_outputs.push_back(std::move(out.tensor));
  } else if (args.check) {
    // Seeded random inputs, and what the reference target computes of them.
    request.check_inputs = RandomInputs(*model.graph, /*seed=*/1);
    TESSEL_ASSIGN_OR_RETURN(auto reference, targets::MakeTarget({"reference", {}}));
    CompilerOptions ref_options = copts;
    ref_options.memory = {};
    ref_options.after_stage = nullptr;
    TESSEL_ASSIGN_OR_RETURN(CompiledModel ref, Compile(args.model, *reference, ref_options));
    TESSEL_ASSIGN_OR_RETURN(auto exe, reference->Prepare(ref));
    TESSEL_ASSIGN_OR_RETURN(request.check_outputs, exe->Run(request.check_inputs));
  }
  TESSEL_ASSIGN_OR_RETURN(const targets::EmitReport report, target.Emit(model, request));
  for (const auto& file : report.files) {
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(file, ec);
    std::printf("wrote    %s (%s)\n", file.string().c_str(),
                FormatBytes(static_cast<int64_t>(ec ? 0 : bytes)).c_str());
  }
  for (const auto& pool : report.pools) {
    std::printf("pool %s '%s': %lld bytes, provided by the caller\n", pool.read_only ? "ro" : "rw",
                pool.name.c_str(), static_cast<long long>(pool.bytes));
  }
  if (report.constant_bytes > 0) {
    std::printf("weights  %s compiled in (%s_constants.c)\n",
                FormatBytes(report.constant_bytes).c_str(), request.name.c_str());
  }
  std::printf("one run  %lld multiply-accumulates, %s read and written by kernels\n",
              static_cast<long long>(report.macs), FormatBytes(report.bytes_moved).c_str());
  return Status::Ok();
}

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
  if (target->emits_sources()) TESSEL_RETURN_IF_ERROR(ctarget::CheckModelName(ModelName(args)));
  const auto t0 = std::chrono::steady_clock::now();
  StatusOr<CompiledModel> loaded = Compile(args.model, *target, copts);
  EndSearchProgressBar();
  TESSEL_ASSIGN_OR_RETURN(CompiledModel model, std::move(loaded));
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!target->emits_sources()) {
    if (!args.name.empty() || args.check || !args.check_data.empty()) {
      return InvalidArgument(std::string(!args.name.empty() ? "--name" : "--check") +
                             " is an option of --target c");
    }
    TESSEL_RETURN_IF_ERROR(WriteCompiledModel(model, args.output));
  }
  const ir::GraphStats stats = ir::ComputeStats(*model.graph);
  std::printf("compiled %s -> %s in %.0f ms: %lld nodes, weights %s\n", args.model.c_str(),
              args.output.c_str(), ms, static_cast<long long>(stats.num_nodes),
              FormatBytes(stats.parameter_bytes).c_str());
  std::printf("target   %s\n", model.target.ToString().c_str());
  for (const ir::MemoryPool& pool : model.memory.pools) {
    std::printf("pool %s '%s': %s (planner %s)\n", pool.read_only ? "ro" : "rw", pool.name.c_str(),
                FormatBytes(pool.size_bytes).c_str(), model.memory.algorithm.c_str());
  }
  for (const ir::TexturePool& image : model.memory.textures) {
    std::printf("texture %s '%s': %lld x %lld texels, %s\n", image.read_only ? "ro" : "rw",
                image.name.c_str(), static_cast<long long>(image.width),
                static_cast<long long>(image.height),
                FormatBytes(image.width * image.height * memory::kTexelBytes).c_str());
  }
  if (target->emits_sources()) TESSEL_RETURN_IF_ERROR(EmitSources(args, *target, copts, model));
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
  cmd->add_option("-o,--output", args->output,
                  "Compiled model file to write (--target c: the folder for the C sources)")
      ->required();
  cmd->add_option("--name", args->name,
                  "--target c: the model's name in files and symbols (NAME.h, tessel_NAME_run; "
                  "default: the model file's name)");
  cmd->add_flag("--check", args->check,
                "--target c: also write NAME_check.c, a program that runs seeded random inputs "
                "and compares with the reference target's outputs");
  cmd->add_option("--check-data", args->check_data,
                  "--target c: as --check, on the first data set of an ONNX test folder "
                  "(DIR/test_data_set_0/{input,output}_K.pb)");
  cmd->add_option("--atol", args->atol, "--target c: NAME_check.c's absolute tolerance (1e-4)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--rtol", args->rtol, "--target c: NAME_check.c's relative tolerance (1e-3)")
      ->check(CLI::NonNegativeNumber);
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
