// hill_climb: TVM's hill climbing over placement orders.
//
// Starts from greedy_by_size's order. Each attempt picks, at random, a buffer
// that reaches the top of its pool, swaps two buffers that come before it in
// the order (a conflicting neighbour and, three times in four, a neighbour of
// a neighbour), places the new order greedily (greedy.h) and keeps the swap
// when the total used size does not grow, or otherwise with a probability that
// shrinks with the loss and the attempt count. Deterministic for a seed; stops
// after PlannerOptions::hill_climb_attempts attempts, at time_limit_s (unless
// node_limit asks for a deterministic budget), or at the lower bound.
#pragma once

#include "memory/planner.h"

namespace tessel::memory {

StatusOr<AlgorithmResult> HillClimb(const PlanContext& ctx);

}  // namespace tessel::memory
