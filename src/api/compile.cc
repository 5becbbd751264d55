// Compile, Check, PlanInstance (include/tessel/tessel.h): the half of the
// API that needs the ONNX importer and the compiler (libtessel).
#include "compiler/compile.h"

#include <unistd.h>

#include <filesystem>
#include <set>

#include "api/bridge.h"
#include "core/file_io.h"
#include "core/process.h"
#include "memory/instance_csv.h"
#include "memory/lower_bound.h"
#include "memory/planner.h"
#include "memory/report.h"
#include "model/model_file.h"
#include "model/prepare.h"
#include "onnx/tensor_io.h"
#include "onnx/test_data.h"
#include "targets/registry.h"

namespace tessel {

namespace {

// The spec a TargetOptions asks for, before the target resolves it.
targets::TargetSpec SpecOf(const TargetOptions& target) {
  if (const auto* cpu = std::get_if<CpuOptions>(&target)) {
    targets::TargetSpec spec{"cpu", {}};
    if (!cpu->isa.empty()) spec.options["isa"] = cpu->isa;
    if (!cpu->winograd.empty()) spec.options["winograd"] = cpu->winograd;
    if (cpu->threads < 0) {
      throw Error(ErrorCode::kInvalidArgument,
                  "CpuOptions::threads " + std::to_string(cpu->threads) + " is negative");
    }
    if (cpu->threads > 0) spec.options["threads"] = std::to_string(cpu->threads);
    return spec;
  }
  if (const auto* cl = std::get_if<OpenClOptions>(&target)) {
    targets::TargetSpec spec{"opencl", {}};
    if (!cl->device.empty()) spec.options["device"] = cl->device;
    if (cl->queue_window < 0) {
      throw Error(
          ErrorCode::kInvalidArgument,
          "OpenClOptions::queue_window " + std::to_string(cl->queue_window) + " is negative");
    }
    return spec;
  }
  return {"reference", {}};
}

OpenClOptions OpenClOf(const TargetOptions& target) {
  const auto* cl = std::get_if<OpenClOptions>(&target);
  return cl ? *cl : OpenClOptions{};
}

CompilerOptions CompilerOptionsOf(const CompileOptions& options) {
  CompilerOptions c;
  c.fusion = options.fusion;
  for (const auto& [name, shape] : options.input_shapes) c.import.input_shapes[name] = shape;
  if (options.planner != "none" && !memory::PlannerRegistry::Global().Find(options.planner)) {
    std::string names = "none";
    for (const std::string& n : memory::AlgorithmNames()) names += ", " + n;
    throw Error(ErrorCode::kInvalidArgument, "CompileOptions::planner '" + options.planner +
                                                 "': no such planner (planners: " + names + ")");
  }
  c.memory.algorithm = options.planner;
  for (const PoolOptions& p : options.pools) {
    if (p.name.empty() || p.size_limit_bytes < 0) {
      throw Error(ErrorCode::kInvalidArgument, "CompileOptions::pools: pool '" + p.name +
                                                   "' needs a name and a size limit >= 0");
    }
    memory::PoolInfo pool;
    pool.name = p.name;
    pool.read_only = p.read_only;
    if (p.size_limit_bytes > 0) pool.size_limit_bytes = p.size_limit_bytes;
    c.memory.pools.push_back(std::move(pool));
  }
  if (!(options.planner_time_limit_seconds >= 0)) {
    throw Error(ErrorCode::kInvalidArgument,
                "CompileOptions::planner_time_limit_seconds is negative or not a number");
  }
  if (options.planner_time_limit_seconds > 0) {
    c.memory.planner.node_limit = 0;  // the clock decides
    c.memory.planner.time_limit_s = options.planner_time_limit_seconds;
    c.memory.planner.auto_time_limit_s = options.planner_time_limit_seconds;
  }
  if (options.max_memory_bytes < 0) {
    throw Error(ErrorCode::kInvalidArgument, "CompileOptions::max_memory_bytes is negative");
  }
  if (options.max_memory_bytes > 0) c.limits.max_memory_bytes = options.max_memory_bytes;
  return c;
}

// A file in the temporary folder, removed when it goes.
struct TemporaryFile {
  std::filesystem::path path;
  ~TemporaryFile() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove(path, ec);
  }
};

}  // namespace

Model Compile(const std::string& onnx_path, const TargetOptions& target,
              const CompileOptions& options) {
  ConfigureAllocatorOnce();
  const CompilerOptions compiler = CompilerOptionsOf(options);
  targets::HostOptions host;
  host.compile_only = true;
  host.progress = options.progress;
  auto made = api::Unwrap(targets::MakeTarget(SpecOf(target), host));
  const bool compiled = api::Unwrap(IsCompiledModelFile(onnx_path));
  if (compiled) {
    throw Error(ErrorCode::kInvalidArgument,
                "'" + onnx_path + "' is a compiled tessel model already: tessel::Load it");
  }
  return api::MakeModel(api::Unwrap(tessel::Compile(onnx_path, *made, compiler)), OpenClOf(target),
                        true);
}

Model CompileBytes(std::string_view onnx_bytes, const TargetOptions& target,
                   const CompileOptions& options) {
  TemporaryFile file;
  file.path = std::filesystem::temp_directory_path() /
              ("tessel-model-" + std::to_string(getpid()) + "-" +
               std::to_string(reinterpret_cast<uintptr_t>(&file)) + ".onnx");
  api::ThrowIfError(WriteFileAtomically(file.path, std::string(onnx_bytes)));
  return Compile(file.path.string(), target, options);
}

std::vector<std::string> PlannerAlgorithms() { return memory::AlgorithmNames(); }

InstancePlan PlanInstance(const std::string& csv_path, const std::string& algorithm,
                          double time_limit_seconds) {
  memory::Instance inst = api::Unwrap(memory::ReadInstanceCsv(csv_path));
  if (!(time_limit_seconds >= 0)) {
    throw Error(ErrorCode::kInvalidArgument,
                "PlanInstance: time_limit_seconds is negative or not a number");
  }
  memory::PlannerOptions options;
  options.verify = true;
  if (time_limit_seconds > 0) {
    options.node_limit = 0;
    options.time_limit_s = time_limit_seconds;
    options.auto_time_limit_s = time_limit_seconds;
  }
  if (inst.capacity_bytes) options.target_bytes = *inst.capacity_bytes;
  memory::Plan plan = api::Unwrap(memory::MakePlan(inst.problem, algorithm, options));
  InstancePlan out;
  out.algorithm = plan.algorithm;
  out.pool_bytes = plan.pool_used_bytes.empty() ? 0 : plan.pool_used_bytes[0];
  const std::vector<int64_t> bounds = memory::PoolLowerBounds(inst.problem, plan.placements);
  out.lower_bound_bytes = bounds.empty() ? 0 : bounds[0];
  out.buffers = static_cast<int>(inst.problem.buffers.size());
  for (const memory::Placement& p : plan.placements) out.offsets.push_back(p.offset_bytes);
  out.svg =
      memory::PlanSvg(inst.problem, plan,
                      std::filesystem::path(csv_path).filename().string() + ", " + plan.algorithm);
  return out;
}

CheckReport Check(const std::string& dir_name, const TargetOptions& target, double rtol,
                  double atol) {
  if (!(rtol >= 0) || !(atol >= 0)) {
    throw Error(ErrorCode::kInvalidArgument, "Check: rtol and atol must be >= 0");
  }
  const std::filesystem::path dir(dir_name);
  const std::vector<onnx_io::TestDataSet> sets = api::Unwrap(onnx_io::ReadTestDataSets(dir));
  if (sets.empty()) {
    throw Error(ErrorCode::kNotFound, "'" + dir_name + "' has no test_data_set_* folder");
  }
  Model model = Compile((dir / "model.onnx").string(), target);
  Session session = model.Prepare();
  CheckReport report;
  report.ok = true;
  report.target = session.Describe();
  for (const onnx_io::TestDataSet& set : sets) {
    const std::string name = set.dir.filename().string();
    NamedArrays feeds;
    for (size_t i = 0; i < set.inputs.size(); ++i) {
      std::string input = set.inputs[i].name;
      if (input.empty() && i < model.inputs().size()) input = model.inputs()[i].name;
      feeds[input] = api::ArrayOf(set.inputs[i].tensor);
    }
    NamedArrays outputs = session.Run(feeds);
    if (set.outputs.size() != model.outputs().size()) {
      throw Error(ErrorCode::kInvalidArgument, name + " has " + std::to_string(set.outputs.size()) +
                                                   " expected outputs; the model has " +
                                                   std::to_string(model.outputs().size()));
    }
    for (size_t k = 0; k < model.outputs().size(); ++k) {
      const std::string& out = model.outputs()[k].name;
      const auto c =
          onnx_io::CompareTensors(api::ViewOf(outputs.at(out)), set.outputs[k].tensor, rtol, atol);
      report.ok = report.ok && c.ok;
      report.results.push_back(
          {name, out, c.ok, c.max_abs_error, c.max_rel_error, c.mismatches, c.problem});
    }
  }
  return report;
}

Array ReadTensorFile(const std::string& path) {
  return api::ArrayOf(api::Unwrap(onnx_io::ReadTensorFile(path)));
}

}  // namespace tessel
