#include "memory_options.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "memory/pool_spec.h"

namespace tessel::cli {

namespace {

bool progress_drawn = false;

}  // namespace

void AddMemoryOptions(CLI::App& app, MemoryCliOptions& opts, bool time_limit) {
  std::string names = "none";
  for (const std::string& n : memory::AlgorithmNames()) names += ", " + n;
  app.add_option("--planner", opts.planner,
                 "Memory planning algorithm (" + names + "; default auto)");
  app.add_option(
      "--pool", opts.pools,
      "A memory pool, in order of preference: name=NAME[,size=BYTES][,access=rw|ro]"
      "[,targets=A+B] (repeatable; default: one unbounded workspace and constants pool)");
  app.add_option("--workspace-pool", opts.workspace_pools,
                 "A read-write pool (activations and scratch), as --pool without access: "
                 "name=NAME[,size=BYTES] (repeatable, in order of preference)");
  app.add_option("--constant-pool", opts.constant_pools,
                 "A read-only pool (weights), as --pool without access: name=NAME[,size=BYTES] "
                 "(repeatable, in order of preference; --target c then leaves the weights to the "
                 "caller, one image per pool)");
  app.add_option(
         "--io", opts.io,
         "Graph inputs and outputs: 'caller' (the caller's memory) or 'workspace' (planned)")
      ->check(CLI::IsMember({"caller", "workspace"}));
  if (time_limit) {
    CLI::Option* nodes =
        app.add_option("--node-limit", opts.node_limit,
                       "Search nodes the exact search of 'auto', 'optimal' and 'perfect' may "
                       "visit: the same plan on every machine (default " +
                           std::to_string(memory::PlannerOptions::kDefaultNodeLimit) + ")")
            ->check(CLI::PositiveNumber);
    app.add_option("--time-limit", opts.time_limit_s,
                   "Seconds the exact search may take, in place of the node budget: the plan "
                   "then depends on the machine's speed and load")
        ->check(CLI::Range(0.0, 86400.0))
        ->excludes(nodes);
  }
}

void ApplySearchBudget(const MemoryCliOptions& opts, memory::PlannerOptions* planner) {
  if (opts.time_limit_s) {
    planner->node_limit = 0;  // the clock decides
    planner->time_limit_s = *opts.time_limit_s;
    planner->auto_time_limit_s = *opts.time_limit_s;
  } else {
    planner->node_limit = opts.node_limit;
  }
}

Status ApplyMemoryOptions(const MemoryCliOptions& opts, MemoryOptions* memory) {
  if (opts.planner != "none" && !memory::PlannerRegistry::Global().Find(opts.planner)) {
    std::string names = "none";
    for (const std::string& n : memory::AlgorithmNames()) names += ", " + n;
    return InvalidArgument("--planner '" + opts.planner + "': no such planner (planners: " + names +
                           ")");
  }
  memory->algorithm = opts.planner;
  memory->plan_io = opts.io == "workspace";
  ApplySearchBudget(opts, &memory->planner);
  memory->planner.progress = SearchProgressBar();
  memory->pools.clear();
  for (const std::string& spec : opts.pools) {
    TESSEL_ASSIGN_OR_RETURN(memory::PoolInfo pool, memory::ParsePoolSpec(spec));
    memory->pools.push_back(std::move(pool));
  }
  for (const auto& [flag, specs, read_only] :
       {std::tuple{"--workspace-pool", &opts.workspace_pools, false},
        std::tuple{"--constant-pool", &opts.constant_pools, true}}) {
    for (const std::string& spec : *specs) {
      if (spec.find("access=") != std::string::npos) {
        return InvalidArgument(std::string(flag) + " '" + spec +
                               "': access is implied (use --pool to give it)");
      }
      StatusOr<memory::PoolInfo> pool =
          memory::ParsePoolSpec(spec + (read_only ? ",access=ro" : ",access=rw"));
      if (!pool.ok()) return InvalidArgument(std::string(flag) + " " + pool.status().message());
      memory->pools.push_back(std::move(*pool));
    }
  }
  return Status::Ok();
}

bool ConstantPoolsGiven(const MemoryOptions& memory) {
  return std::any_of(memory.pools.begin(), memory.pools.end(),
                     [](const memory::PoolInfo& p) { return p.read_only; });
}

bool MemoryOptionsGiven(const CLI::App& app) {
  return app.count("--planner") + app.count("--pool") + app.count("--workspace-pool") +
             app.count("--constant-pool") + app.count("--io") >
         0;
}

std::function<void(const memory::SearchProgress&)> SearchProgressBar() {
  if (!isatty(STDERR_FILENO)) return {};
  return [](const memory::SearchProgress& p) {
    constexpr int kWidth = 30;
    const double share =
        p.node_limit > 0
            ? std::min(1.0, static_cast<double>(p.nodes) / static_cast<double>(p.node_limit))
        : p.limit_s > 0 ? std::min(1.0, p.elapsed_s / p.limit_s)
                        : 1.0;
    const int filled = static_cast<int>(share * kWidth);
    char budget[64];
    if (p.node_limit > 0) {
      std::snprintf(budget, sizeof budget, "%lld/%lld nodes", static_cast<long long>(p.nodes),
                    static_cast<long long>(p.node_limit));
    } else {
      std::snprintf(budget, sizeof budget, "%.1f/%.1f s", p.elapsed_s, p.limit_s);
    }
    std::fprintf(stderr, "\r[%.*s%*s] %s, best %lld bytes, bound %lld", filled,
                 "##############################", kWidth - filled, "", budget,
                 static_cast<long long>(p.best_bytes), static_cast<long long>(p.lower_bound_bytes));
    std::fflush(stderr);
    progress_drawn = true;
  };
}

void EndSearchProgressBar() {
  if (!progress_drawn) return;
  std::fprintf(stderr, "\r%80s\r", "");
  progress_drawn = false;
}

}  // namespace tessel::cli
