// The opt-in `perfect` planning algorithm: zero-waste packings for pools
// without slack (pack_perfectly.h), then the exact search of `optimal`.
//
// Only synthetic instances (../shared/planning, the guillotine instances of
// memory/testing/random_instance.h) have pools without slack, so it is not in
// the product: its library is built with -DTESSEL_WITH_PERFECT_PLANNER=ON,
// and a program that wants it calls, before it lists or runs algorithms,
//
//   #if TESSEL_WITH_PERFECT_PLANNER
//     memory::RegisterPerfectPlanner();
//   #endif
#pragma once

namespace tessel::memory {

// Adds `perfect` to PlannerRegistry::Global(); a second call does nothing.
// Not thread-safe: call it before planning starts.
void RegisterPerfectPlanner();

}  // namespace tessel::memory
