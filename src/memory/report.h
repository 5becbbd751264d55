// Reports on plans: a text table and an SVG drawing.
//
//   algorithm            pool       used        lower bound  ratio   optimal  time
//   greedy_by_size       workspace  1.2 MiB     1.1 MiB      1.043   no       0.4 ms
//
// and with a choice of pools (--pool name=sram,size=1MiB --pool name=dram):
//
//   algorithm  pool  used      lower bound  ...  bound given earlier pools  bound alone
//   auto       sram  1.00 MiB  1.00 MiB     ...  1.00 MiB                   1.00 MiB
//   auto       dram  4.20 MiB  4.20 MiB     ...  4.20 MiB                   5.20 MiB
//
// The SVG draws each pool as a band: time runs across, addresses run down,
// and every buffer is one rectangle (hover for its name, size and offset).
#pragma once

#include <string>
#include <vector>

#include "memory/problem.h"

namespace tessel::memory {

// One row per algorithm and non-empty pool; the lower bound comes from the
// plan's own assignment of buffers to pools. When some buffer has a choice of
// pools, two more columns give each pool's bound given the earlier pools'
// limits and its bound alone (lower_bound.h: FallbackBounds).
std::string FormatPlanTable(const Problem& problem, const std::vector<Plan>& plans);

std::string PlanSvg(const Problem& problem, const Plan& plan, const std::string& title);

// "1.2 MiB", "512 B": short sizes for tables.
std::string ShortBytes(int64_t bytes);

}  // namespace tessel::memory
