// tessel plan MODEL | --instance FILE.csv: plans memory with one or every
// algorithm and reports pool sizes against the lower bound; a model's values
// in a texture scope (--target opencl --storage texture) get their images
// against the 2D lower bound, with the RFC's plan beside the one in use.
//
//   tessel plan model.onnx --algo all --pool name=sram,size=256KiB --svg plan.svg
//   tessel plan --instance guillotine_00_40.1048576.csv --out plan.csv
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common.h"
#include "core/file_io.h"
#include "memory/instance_csv.h"
#include "memory/lower_bound.h"
#include "memory/report.h"
#include "memory/texture_plan.h"
#include "memory/verifier.h"
#include "memory_options.h"
#include "model/plan_memory.h"
#include "onnx/tensor_io.h"
#include "target.h"
#include "targets/reference/planned_memory.h"

namespace tessel::cli {

namespace {

struct PlanArgs {
  std::string model;
  std::string instance;
  std::string algo = std::string(memory::kDefaultAlgorithm);
  int64_t capacity = -1;
  std::string out_csv;
  std::string json;
  std::string svg;
  MemoryCliOptions memory;
  ModelOptions model_options;
  TargetOptions target;
};

// Runs the requested algorithms (every registered one for "all"), each plan
// checked by the verifier.
StatusOr<std::vector<memory::Plan>> PlanAll(const memory::Problem& problem, const PlanArgs& args,
                                            const memory::PlannerOptions& base) {
  std::vector<std::string> algos;
  if (args.algo == "all") {
    algos = memory::AlgorithmNames();
  } else {
    algos.push_back(args.algo);
  }
  memory::PlannerOptions options = base;
  options.verify = true;
  options.progress = SearchProgressBar();
  std::vector<memory::Plan> plans;
  for (const std::string& algo : algos) {
    StatusOr<memory::Plan> plan = memory::MakePlan(problem, algo, options);
    EndSearchProgressBar();
    if (!plan.ok()) return plan.status();
    plans.push_back(std::move(*plan));
  }
  return plans;
}

// The smallest total; the first on a tie.
const memory::Plan& Best(const std::vector<memory::Plan>& plans) {
  const memory::Plan* best = &plans.front();
  for (const memory::Plan& p : plans) {
    if (p.total_used_bytes() < best->total_used_bytes()) best = &p;
  }
  return *best;
}

Status WriteText(const std::string& path, const std::string& text) {
  return WriteFileAtomically(path, text);
}

nlohmann::json PlanJson(const memory::Problem& problem, const memory::Plan& plan) {
  const std::vector<int64_t> bounds = memory::PoolLowerBounds(problem, plan.placements);
  const std::vector<memory::FallbackBound> fallback =
      memory::FallbackBounds(problem, plan.placements);
  nlohmann::json j;
  j["algorithm"] = plan.algorithm;
  j["planning_ms"] = plan.planning_ms;
  j["proven_optimal"] = plan.proven_optimal;
  for (size_t p = 0; p < problem.pools.size(); ++p) {
    j["pools"].push_back({{"name", problem.pools[p].name},
                          {"used_bytes", plan.pool_used_bytes[p]},
                          {"lower_bound_bytes", bounds[p]},
                          {"lower_bound_given_earlier_bytes", fallback[p].given_earlier_bytes},
                          {"lower_bound_alone_bytes", fallback[p].alone_bytes}});
  }
  j["buffers"] = nlohmann::json::array();
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const memory::Placement& pl = plan.placements[i];
    j["buffers"].push_back({{"name", problem.buffers[i].name},
                            {"size_bytes", problem.buffers[i].size_bytes},
                            {"first_use", problem.buffers[i].live.first_use},
                            {"last_use", problem.buffers[i].live.last_use},
                            {"pool", problem.pools[static_cast<size_t>(pl.pool)].name},
                            {"offset_bytes", pl.offset_bytes}});
  }
  return j;
}

// The plan in use, then the RFC's, each verified.
StatusOr<std::vector<memory::TexturePlan>> PlanTextureStrategies(
    const memory::TextureProblem& problem, const memory::TexturePlannerOptions& base) {
  std::vector<memory::TexturePlan> plans;
  for (memory::TextureStrategy strategy : {base.strategy, memory::TextureStrategy::kRfc}) {
    memory::TexturePlannerOptions options = base;
    options.strategy = strategy;
    TESSEL_ASSIGN_OR_RETURN(memory::TexturePlan plan, memory::PlanTextures(problem, options));
    if (Status s = memory::VerifyTexturePlan(problem, plan); !s.ok()) return Internal(s.message());
    plans.push_back(std::move(plan));
    if (strategy == memory::TextureStrategy::kRfc) break;
  }
  return plans;
}

nlohmann::json TexturesJson(const memory::TextureProblem& problem,
                            const std::vector<memory::TexturePlan>& plans) {
  const int64_t bound = memory::TextureLowerBound(problem);
  nlohmann::json j;
  j["lower_bound_texels"] = bound;
  j["tokens"] = nlohmann::json::array();
  for (const memory::TextureToken& t : problem.tokens) {
    j["tokens"].push_back({{"name", t.name},
                           {"kind", problem.kinds[static_cast<size_t>(t.kind)].name},
                           {"width", t.width},
                           {"height", t.height},
                           {"first_use", t.live.first_use},
                           {"last_use", t.live.last_use}});
  }
  for (const memory::TexturePlan& plan : plans) {
    nlohmann::json p;
    p["algorithm"] = plan.algorithm;
    p["area_texels"] = plan.total_area();
    p["bytes"] = plan.total_area() * memory::kTexelBytes;
    p["ratio"] =
        bound > 0 ? static_cast<double>(plan.total_area()) / static_cast<double>(bound) : 1.0;
    p["images"] = nlohmann::json::array();
    for (const memory::TextureImage& image : plan.images) {
      p["images"].push_back({{"name", image.name},
                             {"kind", problem.kinds[static_cast<size_t>(image.kind)].name},
                             {"width", image.width},
                             {"height", image.height},
                             {"area_texels", image.area()},
                             {"bytes", image.area() * memory::kTexelBytes}});
    }
    p["positions"] = nlohmann::json::array();  // by token
    for (const memory::TexturePosition& pos : plan.positions) {
      p["positions"].push_back({{"image", plan.images[static_cast<size_t>(pos.image)].name},
                                {"x", pos.x},
                                {"y", pos.y}});
    }
    j["plans"].push_back(std::move(p));
  }
  return j;
}

// `texture_plans` (the one in use first) only when `textures` has tokens.
Status WriteReports(const memory::Problem& problem, const std::vector<memory::Plan>& plans,
                    const memory::TextureProblem& textures,
                    const std::vector<memory::TexturePlan>& texture_plans, const PlanArgs& args,
                    const std::string& title, nlohmann::json json) {
  if (!args.json.empty()) {
    for (const memory::Plan& p : plans) json["plans"].push_back(PlanJson(problem, p));
    if (!texture_plans.empty()) json["textures"] = TexturesJson(textures, texture_plans);
    TESSEL_RETURN_IF_ERROR(WriteText(args.json, json.dump(2) + "\n"));
  }
  if (!args.svg.empty()) {
    const memory::Plan& best = Best(plans);
    const std::string heading = title + ", " + best.algorithm;
    TESSEL_RETURN_IF_ERROR(WriteText(
        args.svg, texture_plans.empty()
                      ? memory::PlanSvg(problem, best, heading)
                      : memory::PlanSvg(problem, best, textures, texture_plans.front(), heading)));
  }
  return Status::Ok();
}

StatusOr<int> PlanInstance(const PlanArgs& args) {
  if (!args.model.empty()) return InvalidArgument("give a MODEL or --instance, not both");
  TESSEL_ASSIGN_OR_RETURN(memory::Instance inst, memory::ReadInstanceCsv(args.instance));
  std::optional<int64_t> capacity = inst.capacity_bytes;
  if (args.capacity >= 0) capacity = args.capacity;
  memory::PlannerOptions options;
  ApplySearchBudget(args.memory, &options);
  if (capacity) options.target_bytes = *capacity;
  TESSEL_ASSIGN_OR_RETURN(std::vector<memory::Plan> plans, PlanAll(inst.problem, args, options));
  const std::string name = std::filesystem::path(args.instance).filename().string();
  std::printf("instance %s: %zu buffers, capacity %s\n", name.c_str(), inst.problem.buffers.size(),
              capacity ? (std::to_string(*capacity) + " bytes").c_str() : "unknown");
  std::cout << memory::FormatPlanTable(inst.problem, plans);
  int fitting = 0;
  for (const memory::Plan& p : plans) {
    const int64_t peak = p.pool_used_bytes[0];
    const bool fits = capacity && peak <= *capacity;
    fitting += fits;
    const int64_t bound = memory::PoolLowerBounds(inst.problem, p.placements)[0];
    std::printf(
        "%s: peak %lld bytes%s; lower bound %lld, gap %.2f%%, %s\n", p.algorithm.c_str(),
        static_cast<long long>(peak),
        !capacity ? ""
        : fits    ? ", fits"
                  : ", does not fit",
        static_cast<long long>(bound),
        bound > 0 ? 100.0 * static_cast<double>(peak - bound) / static_cast<double>(bound) : 0.0,
        p.proven_optimal ? "proven optimal" : "not proven optimal");
  }
  if (!args.out_csv.empty()) {
    TESSEL_RETURN_IF_ERROR(
        WriteText(args.out_csv, memory::FormatInstanceCsv(inst.problem, Best(plans))));
  }
  nlohmann::json json;
  json["instance"] = args.instance;
  if (capacity) json["capacity_bytes"] = *capacity;
  TESSEL_RETURN_IF_ERROR(WriteReports(inst.problem, plans, {}, {}, args, name, json));
  return capacity && fitting == 0 ? 1 : 0;
}

StatusOr<int> PlanModel(const PlanArgs& args) {
  TESSEL_ASSIGN_OR_RETURN(CompilerOptions copts, MakeCompileOptions(args.model_options));
  TESSEL_RETURN_IF_ERROR(ApplyMemoryOptions(args.memory, &copts.memory));
  MemoryOptions memory = copts.memory;
  copts.memory.algorithm = "none";  // the plans below are this command's
  TESSEL_ASSIGN_OR_RETURN(LoadedModel lm, LoadModel(args.model, args.target, copts));
  const CompiledModel& model = lm.model;
  TESSEL_ASSIGN_OR_RETURN(targets::KernelDecisions decisions,
                          lm.target->SelectKernels(*model.graph));
  TESSEL_ASSIGN_OR_RETURN(GraphMemoryProblem buffers,
                          BuildMemoryProblem(*model.graph, decisions.nodes, memory));
  TESSEL_ASSIGN_OR_RETURN(std::vector<memory::Plan> plans,
                          PlanAll(buffers.problem, args, memory.planner));
  std::vector<memory::TexturePlan> texture_plans;
  if (!buffers.textures.tokens.empty()) {
    TESSEL_ASSIGN_OR_RETURN(texture_plans,
                            PlanTextureStrategies(buffers.textures, memory.textures));
  }
  int64_t tensors = 0, scratch = 0, constants = 0;
  for (const GraphMemoryProblem::Origin& o : buffers.origins) {
    if (o.node >= 0) {
      ++scratch;
    } else if (model.graph->values()[static_cast<size_t>(o.value_id)]->is_constant()) {
      ++constants;
    } else {
      ++tensors;
    }
  }
  const int64_t reference = targets::PredictPeakActivationBytes(*model.graph);
  std::printf("model    %s: %zu nodes; %lld tensor, %lld scratch and %lld constant buffers\n",
              args.model.c_str(), model.graph->nodes().size(), static_cast<long long>(tensors),
              static_cast<long long>(scratch), static_cast<long long>(constants));
  std::printf("reference executor peak (sum of live tensors): %s\n",
              memory::DescribeBytes(reference).c_str());
  std::cout << memory::FormatPlanTable(buffers.problem, plans);
  if (!texture_plans.empty()) {
    std::printf("\n%zu values in textures (texels of %lld bytes), planned in 2D:\n",
                buffers.textures.tokens.size(), static_cast<long long>(memory::kTexelBytes));
    std::cout << memory::FormatTextureTable(buffers.textures, texture_plans);
  }
  nlohmann::json json;
  json["model"] = args.model;
  json["reference_peak_activation_bytes"] = reference;
  TESSEL_RETURN_IF_ERROR(WriteReports(buffers.problem, plans, buffers.textures, texture_plans, args,
                                      std::filesystem::path(args.model).filename().string(), json));
  return 0;
}

}  // namespace

void AddPlanCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand(
      "plan", "Plan the memory of a model or of a bare instance (CSV) and compare algorithms");
  cmd->add_option("model", args->model, "ONNX model or compiled model file");
  cmd->add_option("--instance", args->instance,
                  "A planning instance: CSV with id,lower,upper,size[,alignment][,offset]");
  std::string algos = "all";
  for (const std::string& n : memory::AlgorithmNames()) algos += ", " + n;
  cmd->add_option("--algo", args->algo, "Algorithm: " + algos + " (default auto)");
  cmd->add_option("--capacity", args->capacity,
                  "With --instance: the capacity in bytes (default: the number before .csv)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--out", args->out_csv, "With --instance: write the best plan as CSV");
  cmd->add_option("--json", args->json, "Write every plan as JSON");
  cmd->add_option("--svg", args->svg,
                  "Draw the best plan: time across, address down; and any texture images");
  AddMemoryOptions(*cmd, args->memory, /*time_limit=*/true);
  AddModelOptions(*cmd, args->model_options);
  AddTargetOptions(*cmd, args->target, /*profile=*/false);
  cmd->callback([args, &exit_code] {
    StatusOr<int> code = InvalidArgument("give a MODEL or --instance FILE.csv");
    if (args->algo != "all" && !memory::PlannerRegistry::Global().Find(args->algo)) {
      std::string known = "all";
      for (const std::string& n : memory::AlgorithmNames()) known += ", " + n;
      code = InvalidArgument("--algo '" + args->algo +
                             "': no such algorithm (algorithms: " + known + ")");
    } else if (!args->instance.empty()) {
      code = PlanInstance(*args);
    } else if (!args->model.empty()) {
      code = PlanModel(*args);
    }
    exit_code = code.ok() ? *code : ReportError(code.status());
  });
}

}  // namespace tessel::cli
