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
//
// Texture plans (texture_plan.h) get a table of the images of the plan in
// use, then one row per plan against the 2D lower bound (bytes: 16 a texel):
//
//   image     kind     width x height  area (texels)  bytes
//   texture0  texture  48 x 32         1536           24.0 KiB
//   weight0   weight   72 x 2          144            2.2 KiB
//
//   strategy                               images  area (texels)  bytes     lower bound  ratio
//   texture: regions, schedule order; ...  2       1680           26.2 KiB  1680         1.0000
//   rfc                                    4       1680           26.2 KiB  1680         1.0000
//
// and the SVG draws each image below the pools, x across and y down, with
// every token's region outlined (regions of tokens live at different times
// overlap; hover for the token's extent, corner and lifespan).
#pragma once

#include <string>
#include <vector>

#include "memory/problem.h"
#include "memory/texture_plan.h"

namespace tessel::memory {

// One row per algorithm and non-empty pool; the lower bound comes from the
// plan's own assignment of buffers to pools. When some buffer has a choice of
// pools, two more columns give each pool's bound given the earlier pools'
// limits and its bound alone (lower_bound.h: FallbackBounds).
std::string FormatPlanTable(const Problem& problem, const std::vector<Plan>& plans);

std::string PlanSvg(const Problem& problem, const Plan& plan, const std::string& title);
// The same, and the texture plan's images below the pools.
std::string PlanSvg(const Problem& problem, const Plan& plan, const TextureProblem& textures,
                    const TexturePlan& texture_plan, const std::string& title);

// The images of plans.front() (the plan in use), then a row per plan; empty
// when the problem has no token.
std::string FormatTextureTable(const TextureProblem& problem,
                               const std::vector<TexturePlan>& plans);

// "1.2 MiB", "512 B": short sizes for tables.
std::string ShortBytes(int64_t bytes);

}  // namespace tessel::memory
