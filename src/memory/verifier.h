// VerifyPlan: the brute-force checker every planning algorithm answers to.
//
// Checks, naming the buffers and pools involved: one placement per buffer;
// each in one of its candidate pools; offsets non-negative and aligned;
// pinned buffers where they were pinned; every buffer under its pool's limit;
// the reported used sizes equal to what the placements use; and no two
// conflicting buffers sharing a byte of the same pool. It shares no code with
// the algorithms: overlaps through time are found by its own sweep.
#pragma once

#include "core/status.h"
#include "memory/problem.h"

namespace tessel::memory {

Status VerifyPlan(const Problem& problem, const Plan& plan);

}  // namespace tessel::memory
