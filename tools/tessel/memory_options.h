// The memory-plan options that `compile`, `run` and `plan` share.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/compiled_model.h"
#include "model/graph_memory.h"

namespace tessel::cli {

struct MemoryCliOptions {
  std::string planner = std::string(memory::kDefaultAlgorithm);  // or "none"
  std::vector<std::string> pools;                                // name=...,size=...
  // --workspace-pool and --constant-pool: pools read-write and read-only
  // (after --pool's, each kind in the order given).
  std::vector<std::string> workspace_pools, constant_pools;
  std::string io = "caller";  // or "workspace"
  // The search budget: nodes by default (the same plan on every machine);
  // seconds when --time-limit is given.
  std::optional<double> time_limit_s;
  int64_t node_limit = memory::PlannerOptions{}.node_limit;
};

// --planner, --pool, --io (and --time-limit, --node-limit when `time_limit`).
void AddMemoryOptions(CLI::App& app, MemoryCliOptions& opts, bool time_limit);

// Sets the search budget of `planner` from --node-limit or --time-limit.
void ApplySearchBudget(const MemoryCliOptions& opts, memory::PlannerOptions* planner);

// Parses the pool specs and fills `memory` (with a progress bar for the
// exact search; call EndSearchProgressBar after planning); bad specs and
// unknown planners are InvalidArgument naming the option.
Status ApplyMemoryOptions(const MemoryCliOptions& opts, MemoryOptions* memory);

// Whether the options place constants in pools the user named (a read-only
// --pool or a --constant-pool): the c target then leaves them to the caller.
bool ConstantPoolsGiven(const MemoryOptions& memory);
// Whether the command line set any of the options above.
bool MemoryOptionsGiven(const CLI::App& app);

// A progress bar for the exact search on stderr, when stderr is a terminal;
// an empty function otherwise.
std::function<void(const memory::SearchProgress&)> SearchProgressBar();
// Ends the bar's line (if one was drawn).
void EndSearchProgressBar();

}  // namespace tessel::cli
