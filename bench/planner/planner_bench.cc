// planner_bench: every planning algorithm on the shared models, the shared
// planning instances and random instances of 100 to 20,000 buffers, as
// markdown tables of size / lower bound and planning time (docs/benchmarks.md);
// then `optimal` and the opt-in `perfect` (built with
// -DTESSEL_WITH_PERFECT_PLANNER=ON) on generated guillotine instances (zero
// slack: packed at the capacity or not), six seeds per size; then the 2D
// texture planner (memory/texture_plan.h) against its lower bound.
//
//   build/planner_bench [--shared DIR] [--time-limit SECONDS] [--node-limit N]
//                       [--sizes 100,1000,...] [--guillotine 400,600,...]
//                       [--textures-only]
//
// Times are wall-clock milliseconds of MakePlan (conflict graph included);
// `optimal`, `perfect` and hill_climb stop at --time-limit (default 1 s), or
// with --node-limit after N search nodes (PlannerOptions::node_limit). Plans
// are not verified here (the tests do that), so the times are the algorithms'
// own.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "ir/texture.h"
#include "memory/conflict_graph.h"
#include "memory/instance_csv.h"
#include "memory/lower_bound.h"
#include "memory/planner.h"
#if TESSEL_WITH_PERFECT_PLANNER
#include "memory/perfect/perfect_planner.h"
#endif
#include "memory/testing/random_instance.h"
#include "memory/testing/texture_instance.h"
#include "targets/reference/planned_memory.h"
#include "targets/reference/target.h"
#include "targets/registry.h"

namespace tessel {
namespace {

namespace fs = std::filesystem;

struct Options {
  fs::path shared = fs::path(TESSEL_SHARED_DIR);
  double time_limit_s = 1.0;
  int64_t node_limit = 0;
  std::vector<int32_t> sizes = {100, 1000, 5000, 20000};
  std::vector<int32_t> guillotine_sizes = {400, 600, 800, 1000, 2000, 4000};
  bool textures_only = false;
};

// "1.0 s" or "20000 nodes": what stops the searches.
std::string Limit(const Options& options) {
  char text[64];
  if (options.node_limit > 0) {
    std::snprintf(text, sizeof text, "%lld nodes", static_cast<long long>(options.node_limit));
  } else {
    std::snprintf(text, sizeof text, "%.1f s", options.time_limit_s);
  }
  return text;
}

int64_t PeakRssKiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss);
}

// One row per problem, one "ratio / ms" cell per algorithm (the ratio is the
// total size over the total of the pools' lower bounds).
void Row(const std::string& name, const memory::Problem& problem, const Options& options,
         const std::string& extra = "") {
  memory::PlannerOptions planner;
  planner.time_limit_s = options.time_limit_s;
  planner.node_limit = options.node_limit;
  planner.verify = false;
  std::string line = "| " + name + " | " + std::to_string(problem.buffers.size()) + " |";
  for (const std::string& algo : memory::AlgorithmNames()) {
    StatusOr<memory::Plan> plan = memory::MakePlan(problem, algo, planner);
    if (!plan.ok()) {
      line += " failed: " + plan.status().message() + " |";
      continue;
    }
    int64_t bound = 0;
    for (int64_t b : memory::PoolLowerBounds(problem, plan->placements)) bound += b;
    char cell[96];
    std::snprintf(cell, sizeof cell, " %.4f%s / %.1f |",
                  bound > 0
                      ? static_cast<double>(plan->total_used_bytes()) / static_cast<double>(bound)
                      : 1.0,
                  plan->proven_optimal ? "*" : "", plan->planning_ms);
    line += cell;
  }
  std::printf("%s%s\n", line.c_str(), extra.c_str());
  std::fflush(stdout);
}

void Header(const std::string& first, const std::string& extra = "") {
  std::string h = "| " + first + " | buffers |", rule = "|---|---:|";
  for (const std::string& algo : memory::AlgorithmNames()) {
    h += " " + algo + " |";
    rule += "---:|";
  }
  if (!extra.empty()) {
    h += " " + extra + " |";
    rule += "---:|";
  }
  std::printf("%s\n%s\n", h.c_str(), rule.c_str());
}

void Models(const Options& options) {
  std::printf("\n### Models (workspace and constants pools)\n\n");
  Header("model", "reference peak");
  std::vector<fs::path> models;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(options.shared / "models", ec)) {
    if (fs::exists(e.path() / "model.onnx")) models.push_back(e.path() / "model.onnx");
  }
  std::sort(models.begin(), models.end());
  // The buffers as the CPU target's kernels need them.
  StatusOr<std::unique_ptr<targets::Target>> cpu = targets::MakeTarget({"cpu", {}});
  if (!cpu.ok()) {
    std::printf("| (no cpu target: %s) |\n", cpu.status().message().c_str());
    return;
  }
  for (const fs::path& path : models) {
    CompilerOptions copts;
    copts.memory.algorithm = "none";
    StatusOr<CompiledModel> model = Compile(path, **cpu, copts);
    if (!model.ok()) {
      std::printf("| %s | compile failed: %s |\n", path.string().c_str(),
                  model.status().message().c_str());
      continue;
    }
    StatusOr<targets::KernelDecisions> kernels = (*cpu)->SelectKernels(*model->graph);
    if (!kernels.ok()) continue;
    StatusOr<GraphMemoryProblem> buffers =
        BuildMemoryProblem(*model->graph, kernels->nodes, MemoryOptions{});
    if (!buffers.ok()) continue;
    char extra[64];
    std::snprintf(
        extra, sizeof extra, " %.2f MiB |",
        static_cast<double>(targets::PredictPeakActivationBytes(*model->graph)) / (1 << 20));
    Row(path.parent_path().filename().string(), buffers->problem, options, extra);
  }
}

void Instances(const Options& options) {
  std::printf(
      "\n### Shared planning instances (ratio to the capacity, which is the lower bound)\n\n");
  Header("instance");
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(options.shared / "planning", ec)) {
    if (e.path().extension() == ".csv") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    StatusOr<memory::Instance> inst = memory::ReadInstanceCsv(f);
    if (!inst.ok()) continue;
    Row(f.filename().string(), inst->problem, options);
  }
}

void Random(const Options& options) {
  std::printf("\n### Random instances (64-byte aligned, lifetimes up to 64 steps)\n\n");
  Header("random", "conflicting pairs, peak RSS");
  for (int32_t n : options.sizes) {
    const memory::Problem p =
        memory::RandomInstance({.num_buffers = n, .seed = 1, .alignment = 64});
    const int64_t pairs = memory::ConflictGraph::Build(p).num_pairs();
    Row("n=" + std::to_string(n), p, options,
        " " + std::to_string(pairs) + ", " + std::to_string(PeakRssKiB() / 1024) + " MiB |");
  }
}

void Guillotine(const Options& options) {
  constexpr uint64_t kSeeds = 6;
  std::printf(
      "\n### Generated guillotine instances (%s limit; %llu seeds each)\n\n"
      "| algorithm | buffers | packed at capacity | worst ratio | time per instance, ms (median / "
      "max) |\n"
      "|---|---:|---:|---:|---:|\n",
      Limit(options).c_str(), static_cast<unsigned long long>(kSeeds));
  memory::PlannerOptions planner;
  planner.time_limit_s = options.time_limit_s;
  planner.node_limit = options.node_limit;
  planner.verify = false;
  for (const char* algo : {"optimal", "perfect"}) {
    if (!memory::PlannerRegistry::Global().Find(algo)) continue;  // perfect: opt-in
    for (int32_t n : options.guillotine_sizes) {
      int packed = 0;
      double worst = 1.0;
      std::vector<double> ms;
      for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
        const memory::GuillotineInstanceOptions g{.num_buffers = n, .seed = seed};
        StatusOr<memory::Plan> plan =
            memory::MakePlan(memory::GuillotineInstance(g), algo, planner);
        if (!plan.ok()) continue;
        const double ratio =
            static_cast<double>(plan->total_used_bytes()) / static_cast<double>(g.capacity_bytes);
        packed += plan->total_used_bytes() == g.capacity_bytes;
        worst = std::max(worst, ratio);
        ms.push_back(plan->planning_ms);
      }
      std::sort(ms.begin(), ms.end());
      std::printf("| %s | %d | %d of %llu | %.4f | %.1f / %.1f |\n", algo, n, packed,
                  static_cast<unsigned long long>(kSeeds), worst,
                  ms.empty() ? 0.0 : ms[ms.size() / 2], ms.empty() ? 0.0 : ms.back());
      std::fflush(stdout);
    }
  }
}

// One row: the RFC's plan, the best start of kBest (no swaps) and kBest,
// each as total area / lower bound (planning ms).
void TextureRow(const std::string& name, const memory::TextureProblem& problem) {
  const int64_t bound = memory::TextureLowerBound(problem);
  std::string line = "| " + name + " | " + std::to_string(problem.tokens.size()) + " | " +
                     std::to_string(bound) + " |";
  const memory::TexturePlannerOptions strategies[] = {
      {.strategy = memory::TextureStrategy::kRfc},
      {.climb_steps = 0},
      {},
  };
  for (const memory::TexturePlannerOptions& o : strategies) {
    const auto start = std::chrono::steady_clock::now();
    StatusOr<memory::TexturePlan> plan = memory::PlanTextures(problem, o);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!plan.ok()) {
      line += " failed: " + plan.status().message() + " |";
      continue;
    }
    char cell[64];
    std::snprintf(
        cell, sizeof cell, " %.4f / %.1f |",
        bound > 0 ? static_cast<double>(plan->total_area()) / static_cast<double>(bound) : 1.0, ms);
    line += cell;
  }
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

// `graph`'s values in textures as the OpenCL target would put them if every
// op had an image kernel: float rank-4 activations between nodes in NCHW4c,
// the weights of ungrouped and depthwise convolutions in OIHW4o and OHW4o,
// each within the image extents every device offers.
void UseTexturesEverywhere(ir::Graph& graph) {
  std::vector<bool> boundary(graph.values().size(), false);
  for (const ir::Value* v : graph.inputs()) boundary[static_cast<size_t>(v->id)] = true;
  for (const ir::Value* v : graph.outputs()) boundary[static_cast<size_t>(v->id)] = true;
  auto fits = [](const std::optional<ir::TextureExtent>& e) {
    return e && e->width <= ir::kMinImage2dExtent && e->height <= ir::kMinImage2dExtent;
  };
  for (const auto& node : graph.nodes()) {
    for (ir::Value* v : node->outputs) {
      if (!v || boundary[static_cast<size_t>(v->id)] || v->dtype != DType::kFloat32 ||
          !fits(ir::TextureExtentOf(v->shape, ir::Layout::kNCHW4c))) {
        continue;
      }
      v->scope = ir::StorageScope::kTexture;
      v->layout = ir::Layout::kNCHW4c;
    }
    ir::Value* w = node->input(1);
    if ((node->op_type != "Conv" && node->op_type != "FusedConv") || !w || !w->is_constant() ||
        w->shape.size() != 4) {
      continue;
    }
    const int64_t group = node->attrs.Int("group", 1);
    const ir::Layout layout = group == 1                                 ? ir::Layout::kOIHW4o
                              : group == w->shape[0] && w->shape[1] == 1 ? ir::Layout::kOHW4o
                                                                         : ir::Layout::kPlain;
    if (layout == ir::Layout::kPlain || !fits(ir::TextureExtentOf(w->shape, layout))) continue;
    w->scope = ir::StorageScope::kTextureWeight;
    w->layout = layout;
  }
}

void Textures(const Options& options) {
  std::printf(
      "\n### Textures (2D): total area / 2D lower bound / planning ms\n\n"
      "| problem | tokens | lower bound (texels) | rfc | regions, no swaps | default (%d swaps) "
      "|\n|---|---:|---:|---:|---:|---:|\n",
      memory::TexturePlannerOptions{}.climb_steps);
  std::vector<fs::path> models;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(options.shared / "models", ec)) {
    if (fs::exists(e.path() / "model.onnx")) models.push_back(e.path() / "model.onnx");
  }
  std::sort(models.begin(), models.end());
  StatusOr<std::unique_ptr<targets::Target>> reference = targets::MakeTarget({"reference", {}});
  for (const fs::path& path : models) {
    if (!reference.ok()) break;
    CompilerOptions copts;
    copts.memory.algorithm = "none";
    StatusOr<CompiledModel> model = Compile(path, **reference, copts);
    if (!model.ok()) continue;
    UseTexturesEverywhere(*model->graph);
    StatusOr<GraphMemoryProblem> buffers = BuildMemoryProblem(
        *model->graph, targets::ReferenceKernels(*model->graph), MemoryOptions{});
    if (!buffers.ok() || buffers->textures.tokens.empty()) continue;
    TextureRow(path.parent_path().filename().string() + " (every rank-4 activation)",
               buffers->textures);
  }
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    for (int32_t stages : {4, 5}) {
      TextureRow("CNN-shaped, " + std::to_string(stages) + " stages, seed " + std::to_string(seed),
                 memory::CnnTextureProblem({.seed = seed, .stages = stages}));
    }
  }
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    TextureRow(
        "tiled (optimum = bound), seed " + std::to_string(seed),
        memory::TiledTextureProblem({.seed = seed, .phases = 4, .tiles_per_phase = 10}).problem);
  }
  for (int32_t n : {100, 400}) {
    for (double aspect : {1.0, 8.0}) {
      memory::RandomTextureOptions o{.num_tokens = n, .seed = 3};
      o.max_aspect = aspect;
      char name[64];
      std::snprintf(name, sizeof name, "random n=%d, aspect up to %.0f", n, aspect);
      TextureRow(name, memory::RandomTextureProblem(o));
    }
  }
}

}  // namespace
}  // namespace tessel

int main(int argc, char** argv) {
#if TESSEL_WITH_PERFECT_PLANNER
  tessel::memory::RegisterPerfectPlanner();
#endif
  tessel::Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--shared" && has_value) {
      options.shared = argv[++i];
    } else if (arg == "--time-limit" && has_value) {
      options.time_limit_s = std::atof(argv[++i]);
    } else if (arg == "--node-limit" && has_value) {
      options.node_limit = std::atoll(argv[++i]);
    } else if (arg == "--textures-only") {
      options.textures_only = true;
    } else if ((arg == "--sizes" || arg == "--guillotine") && has_value) {
      std::vector<int32_t>& sizes = arg == "--sizes" ? options.sizes : options.guillotine_sizes;
      sizes.clear();
      for (const char* p = argv[++i]; *p;) {
        sizes.push_back(static_cast<int32_t>(std::strtol(p, const_cast<char**>(&p), 10)));
        if (*p == ',') ++p;
      }
    } else {
      std::fprintf(stderr,
                   "usage: planner_bench [--shared DIR] [--time-limit SECONDS] "
                   "[--node-limit N] [--sizes N,N,...] [--guillotine N,N,...] [--textures-only]\n");
      return 2;
    }
  }
  std::printf(
      "Cells: size / lower bound (* = proven optimal) / planning time in ms; %s.\n",
      options.node_limit > 0
          ? ("auto, optimal and perfect limited to " + tessel::Limit(options) +
             ", hill_climb to its attempts")
                .c_str()
          : ("optimal, perfect and hill_climb limited to " + tessel::Limit(options)).c_str());
  if (options.textures_only) {
    tessel::Textures(options);
    return 0;
  }
  // Random instances first: the peak RSS column then measures planning alone.
  tessel::Random(options);
  tessel::Models(options);
  tessel::Instances(options);
  tessel::Guillotine(options);
  tessel::Textures(options);
  return 0;
}
