#include "memory/problem.h"

#include <algorithm>
#include <cstdio>

namespace tessel::memory {

int64_t Plan::total_used_bytes() const {
  int64_t total = 0;
  for (int64_t used : pool_used_bytes) total += used;
  return total;
}

Status ValidateProblem(const Problem& problem) {
  const auto num_buffers = static_cast<int64_t>(problem.buffers.size());
  const auto num_pools = static_cast<int64_t>(problem.pools.size());
  if (num_buffers > INT32_MAX - 1) return InvalidArgument("too many buffers to plan");
  for (const PoolInfo& pool : problem.pools) {
    if (pool.size_limit_bytes && *pool.size_limit_bytes < 0) {
      return InvalidArgument("pool '" + pool.name + "' has a negative size limit");
    }
  }
  for (const BufferInfo& b : problem.buffers) {
    const std::string who = "buffer '" + b.name + "'";
    if (b.size_bytes < 0) return InvalidArgument(who + " has a negative size");
    if (b.alignment < 1 || (b.alignment & (b.alignment - 1)) != 0) {
      return InvalidArgument(who + " has alignment " + std::to_string(b.alignment) +
                             "; alignments are powers of two");
    }
    if (b.pool_candidates.empty()) return InvalidArgument(who + " has no candidate pool");
    for (PoolIndex p : b.pool_candidates) {
      if (p < 0 || p >= num_pools) {
        return InvalidArgument(who + " names pool " + std::to_string(p) + "; there are " +
                               std::to_string(num_pools));
      }
    }
    for (BufferIndex c : b.conflicts) {
      if (c < 0 || c >= num_buffers) {
        return InvalidArgument(who + " conflicts with buffer " + std::to_string(c) +
                               "; there are " + std::to_string(num_buffers));
      }
    }
    if (b.fixed_offset_bytes &&
        (*b.fixed_offset_bytes < 0 || *b.fixed_offset_bytes % b.alignment != 0)) {
      return InvalidArgument(who + " has fixed offset " + std::to_string(*b.fixed_offset_bytes) +
                             ", not a non-negative multiple of its alignment " +
                             std::to_string(b.alignment));
    }
  }
  return Status::Ok();
}

std::vector<int64_t> PoolUsedBytes(const Problem& problem,
                                   const std::vector<Placement>& placements) {
  std::vector<int64_t> used(problem.pools.size(), 0);
  for (size_t i = 0; i < placements.size(); ++i) {
    const Placement& p = placements[i];
    if (p.pool < 0) continue;
    used[static_cast<size_t>(p.pool)] =
        std::max(used[static_cast<size_t>(p.pool)], p.offset_bytes + problem.buffers[i].size_bytes);
  }
  return used;
}

std::string DescribeBytes(int64_t bytes) {
  char buf[64];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(bytes));
  } else if (bytes < (int64_t{1} << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f KiB (%lld bytes)", static_cast<double>(bytes) / 1024,
                  static_cast<long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f MiB (%lld bytes)", static_cast<double>(bytes) / (1 << 20),
                  static_cast<long long>(bytes));
  }
  return buf;
}

int64_t LowestFreeOffset(std::vector<std::pair<int64_t, int64_t>>& taken, int64_t size,
                         int64_t alignment) {
  std::sort(taken.begin(), taken.end());
  int64_t offset = 0;
  for (const auto& [begin, end] : taken) {
    if (offset + size <= begin) break;
    offset = std::max(offset, AlignUp(end, alignment));
  }
  return offset;
}

}  // namespace tessel::memory
