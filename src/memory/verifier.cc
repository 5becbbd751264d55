#include "memory/verifier.h"

#include <algorithm>

namespace tessel::memory {

namespace {

std::string Range(const Placement& p, int64_t size) {
  return "[" + std::to_string(p.offset_bytes) + ", " + std::to_string(p.offset_bytes + size) + ")";
}

Status CheckDisjoint(const Problem& problem, const Plan& plan, size_t a, size_t b) {
  const Placement& pa = plan.placements[a];
  const Placement& pb = plan.placements[b];
  const BufferInfo& ba = problem.buffers[a];
  const BufferInfo& bb = problem.buffers[b];
  if (pa.pool != pb.pool || ba.size_bytes == 0 || bb.size_bytes == 0) return Status::Ok();
  if (pa.offset_bytes < pb.offset_bytes + bb.size_bytes &&
      pb.offset_bytes < pa.offset_bytes + ba.size_bytes) {
    return Internal("plan '" + plan.algorithm + "': conflicting buffers '" + ba.name + "' " +
                    Range(pa, ba.size_bytes) + " and '" + bb.name + "' " +
                    Range(pb, bb.size_bytes) + " overlap in pool '" +
                    problem.pools[static_cast<size_t>(pa.pool)].name + "'");
  }
  return Status::Ok();
}

}  // namespace

Status VerifyPlan(const Problem& problem, const Plan& plan) {
  const std::string where = "plan '" + plan.algorithm + "': ";
  if (plan.placements.size() != problem.buffers.size()) {
    return Internal(where + std::to_string(plan.placements.size()) + " placements for " +
                    std::to_string(problem.buffers.size()) + " buffers");
  }
  std::vector<int64_t> used(problem.pools.size(), 0);
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const BufferInfo& b = problem.buffers[i];
    const Placement& p = plan.placements[i];
    const std::string who = where + "buffer '" + b.name + "'";
    if (std::find(b.pool_candidates.begin(), b.pool_candidates.end(), p.pool) ==
        b.pool_candidates.end()) {
      return Internal(who + " is in pool " + std::to_string(p.pool) +
                      ", not one of its candidates");
    }
    const PoolInfo& pool = problem.pools[static_cast<size_t>(p.pool)];
    if (p.offset_bytes < 0 || p.offset_bytes % b.alignment != 0) {
      return Internal(who + " is at offset " + std::to_string(p.offset_bytes) +
                      ", not a non-negative multiple of " + std::to_string(b.alignment));
    }
    if (b.fixed_offset_bytes &&
        (p.pool != b.pool_candidates.front() || p.offset_bytes != *b.fixed_offset_bytes)) {
      return Internal(who + " was pinned at offset " + std::to_string(*b.fixed_offset_bytes) +
                      " of pool '" +
                      problem.pools[static_cast<size_t>(b.pool_candidates.front())].name +
                      "' but is placed elsewhere");
    }
    const int64_t end = p.offset_bytes + b.size_bytes;
    if (pool.size_limit_bytes && end > *pool.size_limit_bytes) {
      return Internal(who + " ends at " + std::to_string(end) + ", past the limit " +
                      std::to_string(*pool.size_limit_bytes) + " of pool '" + pool.name + "'");
    }
    used[static_cast<size_t>(p.pool)] = std::max(used[static_cast<size_t>(p.pool)], end);
  }
  if (plan.pool_used_bytes != used) {
    return Internal(where + "the reported pool sizes differ from what the placements use");
  }
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    for (BufferIndex c : problem.buffers[i].conflicts) {
      if (static_cast<size_t>(c) != i) {
        TESSEL_RETURN_IF_ERROR(CheckDisjoint(problem, plan, i, static_cast<size_t>(c)));
      }
    }
  }
  // Buffers by start time; `active` holds those started and not yet ended.
  std::vector<size_t> order;
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    if (!problem.buffers[i].live.empty()) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return problem.buffers[a].live.first_use < problem.buffers[b].live.first_use;
  });
  std::vector<size_t> active;
  for (size_t b : order) {
    const int64_t start = problem.buffers[b].live.first_use;
    std::erase_if(active, [&](size_t a) { return problem.buffers[a].live.last_use <= start; });
    for (size_t a : active) TESSEL_RETURN_IF_ERROR(CheckDisjoint(problem, plan, a, b));
    active.push_back(b);
  }
  return Status::Ok();
}

}  // namespace tessel::memory
