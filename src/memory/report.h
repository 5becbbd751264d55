// Reports on plans: a text table and an SVG drawing.
//
//   algorithm            pool       used        lower bound  ratio   optimal  time
//   greedy_by_size       workspace  1.2 MiB     1.1 MiB      1.043   no       0.4 ms
//
// The SVG draws each pool as a band: time runs across, addresses run down,
// and every buffer is one rectangle (hover for its name, size and offset).
#pragma once

#include <string>
#include <vector>

#include "memory/problem.h"

namespace tessel::memory {

// One row per algorithm and non-empty pool; bounds come from the plan's own
// assignment of buffers to pools.
std::string FormatPlanTable(const Problem& problem, const std::vector<Plan>& plans);

std::string PlanSvg(const Problem& problem, const Plan& plan, const std::string& title);

// "1.2 MiB", "512 B": short sizes for tables.
std::string ShortBytes(int64_t bytes);

}  // namespace tessel::memory
