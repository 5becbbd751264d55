// TESSEL_CHECK: internal invariants. A failed check is a bug in tessel, never
// the user's fault; it prints the invariant and where, then aborts. Bad user
// input goes through Status (core/status.h) instead.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace tessel::internal {
[[noreturn]] inline void CheckFailed(const char* condition, const char* message, const char* file,
                                     int line) {
  std::fprintf(stderr, "tessel: internal error: check '%s' failed at %s:%d%s%s\n", condition, file,
               line, message[0] ? ": " : "", message);
  std::abort();
}
}  // namespace tessel::internal

#define TESSEL_CHECK(cond) \
  ((cond) ? (void)0 : ::tessel::internal::CheckFailed(#cond, "", __FILE__, __LINE__))
#define TESSEL_CHECK_MSG(cond, msg) \
  ((cond) ? (void)0 : ::tessel::internal::CheckFailed(#cond, msg, __FILE__, __LINE__))
