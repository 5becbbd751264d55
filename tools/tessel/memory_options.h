// The memory-plan options that `compile`, `run` and `plan` share.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/compiled_model.h"
#include "model/graph_memory.h"

namespace tessel::cli {

struct MemoryCliOptions {
  std::string planner = std::string(memory::kDefaultAlgorithm);  // or "none"
  std::vector<std::string> pools;                                // name=...,size=...
  std::string io = "caller";                                     // or "workspace"
  double time_limit_s = memory::PlannerOptions{}.time_limit_s;
  int64_t node_limit = 0;  // > 0: search nodes instead of seconds
};

// --planner, --pool, --io (and --time-limit, --node-limit when `time_limit`).
void AddMemoryOptions(CLI::App& app, MemoryCliOptions& opts, bool time_limit);

// Parses the pool specs and fills `memory` (with a progress bar for the
// exact search; call EndSearchProgressBar after planning); bad specs and
// unknown planners are InvalidArgument naming the option.
Status ApplyMemoryOptions(const MemoryCliOptions& opts, MemoryOptions* memory);

// Whether the command line set any of the options above.
bool MemoryOptionsGiven(const CLI::App& app);

// A progress bar for the exact search on stderr, when stderr is a terminal;
// an empty function otherwise.
std::function<void(const memory::SearchProgress&)> SearchProgressBar();
// Ends the bar's line (if one was drawn).
void EndSearchProgressBar();

}  // namespace tessel::cli
