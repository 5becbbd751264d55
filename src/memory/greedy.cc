#include "memory/greedy.h"

#include <algorithm>

namespace tessel::memory {

GreedyPlacer::GreedyPlacer(const Problem& problem, const ConflictGraph& conflicts)
    : problem_(problem), conflicts_(conflicts) {}

int64_t GreedyPlacer::LowestFit(BufferIndex b, PoolIndex pool,
                                const std::vector<Placement>& placements) {
  const BufferInfo& info = problem_.buffers[static_cast<size_t>(b)];
  taken_.clear();
  for (BufferIndex n : conflicts_.neighbors(b)) {
    const Placement& p = placements[static_cast<size_t>(n)];
    const int64_t size = problem_.buffers[static_cast<size_t>(n)].size_bytes;
    if (p.pool == pool && size > 0) taken_.emplace_back(p.offset_bytes, p.offset_bytes + size);
  }
  return LowestFreeOffset(taken_, info.size_bytes, info.alignment);
}

bool GreedyPlacer::Place(std::span<const BufferIndex> order, std::vector<Placement>* placements) {
  failed_ = clash_ = -1;
  placements->assign(problem_.buffers.size(), Placement{});
  std::vector<BufferIndex> pinned;
  for (size_t i = 0; i < problem_.buffers.size(); ++i) {
    const BufferInfo& b = problem_.buffers[i];
    if (!b.fixed_offset_bytes) continue;
    const PoolIndex pool = b.pool_candidates.front();
    const auto& limit = problem_.pools[static_cast<size_t>(pool)].size_limit_bytes;
    if (limit && *b.fixed_offset_bytes + b.size_bytes > *limit) {
      failed_ = static_cast<BufferIndex>(i);
      return false;
    }
    (*placements)[i] = {pool, *b.fixed_offset_bytes};
    pinned.push_back(static_cast<BufferIndex>(i));
  }
  for (BufferIndex b : pinned) {
    const Placement& pb = (*placements)[static_cast<size_t>(b)];
    const int64_t size_b = problem_.buffers[static_cast<size_t>(b)].size_bytes;
    for (BufferIndex n : conflicts_.neighbors(b)) {
      const Placement& pn = (*placements)[static_cast<size_t>(n)];
      const int64_t size_n = problem_.buffers[static_cast<size_t>(n)].size_bytes;
      if (n < b && problem_.buffers[static_cast<size_t>(n)].fixed_offset_bytes &&
          pn.pool == pb.pool && size_b > 0 && size_n > 0 &&
          pn.offset_bytes < pb.offset_bytes + size_b &&
          pb.offset_bytes < pn.offset_bytes + size_n) {
        failed_ = b;
        clash_ = n;
        return false;
      }
    }
  }
  for (BufferIndex b : order) {
    const BufferInfo& info = problem_.buffers[static_cast<size_t>(b)];
    if (info.fixed_offset_bytes) continue;
    bool placed = false;
    for (PoolIndex pool : info.pool_candidates) {
      const int64_t offset = LowestFit(b, pool, *placements);
      const auto& limit = problem_.pools[static_cast<size_t>(pool)].size_limit_bytes;
      if (limit && offset + info.size_bytes > *limit) continue;
      (*placements)[static_cast<size_t>(b)] = {pool, offset};
      placed = true;
      break;
    }
    if (!placed) {
      failed_ = b;
      return false;
    }
  }
  return true;
}

namespace {

std::vector<BufferIndex> Unpinned(const Problem& problem) {
  std::vector<BufferIndex> order;
  order.reserve(problem.buffers.size());
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    if (!problem.buffers[i].fixed_offset_bytes) order.push_back(static_cast<BufferIndex>(i));
  }
  return order;
}

}  // namespace

std::vector<BufferIndex> OrderBySize(const Problem& problem, const ConflictGraph& conflicts) {
  std::vector<BufferIndex> order = Unpinned(problem);
  std::sort(order.begin(), order.end(), [&](BufferIndex a, BufferIndex b) {
    const int64_t sa = problem.buffers[static_cast<size_t>(a)].size_bytes;
    const int64_t sb = problem.buffers[static_cast<size_t>(b)].size_bytes;
    if (sa != sb) return sa > sb;
    if (conflicts.degree(a) != conflicts.degree(b))
      return conflicts.degree(a) > conflicts.degree(b);
    return a < b;
  });
  return order;
}

std::vector<BufferIndex> OrderByConflicts(const Problem& problem, const ConflictGraph& conflicts) {
  std::vector<BufferIndex> order = Unpinned(problem);
  std::sort(order.begin(), order.end(), [&](BufferIndex a, BufferIndex b) {
    if (conflicts.degree(a) != conflicts.degree(b))
      return conflicts.degree(a) > conflicts.degree(b);
    const int64_t sa = problem.buffers[static_cast<size_t>(a)].size_bytes;
    const int64_t sb = problem.buffers[static_cast<size_t>(b)].size_bytes;
    if (sa != sb) return sa > sb;
    return a < b;
  });
  return order;
}

Status PlacementFailure(const Problem& problem, const ConflictGraph& conflicts,
                        std::span<const BufferIndex> order, const GreedyPlacer& failed) {
  const BufferInfo& b = problem.buffers[static_cast<size_t>(failed.failed_buffer())];
  if (failed.pinned_clash() >= 0) {
    return InvalidArgument("pinned buffers '" + b.name + "' and '" +
                           problem.buffers[static_cast<size_t>(failed.pinned_clash())].name +
                           "' conflict and overlap at their fixed offsets");
  }
  // The last candidate is where the buffer gave up: lift its limit and see
  // what that pool would need.
  const PoolIndex pool =
      b.fixed_offset_bytes ? b.pool_candidates.front() : b.pool_candidates.back();
  const PoolInfo& info = problem.pools[static_cast<size_t>(pool)];
  Problem unbounded = problem;
  unbounded.pools[static_cast<size_t>(pool)].size_limit_bytes.reset();
  GreedyPlacer placer(unbounded, conflicts);
  std::vector<Placement> placements;
  std::string need = "more";
  if (placer.Place(order, &placements)) {
    need = DescribeBytes(PoolUsedBytes(unbounded, placements)[static_cast<size_t>(pool)]);
  }
  return ResourceExhausted("pool '" + info.name + "' is too small: limit " +
                           DescribeBytes(info.size_limit_bytes.value_or(0)) + ", the plan needs " +
                           need + " (buffer '" + b.name + "' of " + DescribeBytes(b.size_bytes) +
                           " fits in none of its pools)");
}

}  // namespace tessel::memory
