#include "core/process.h"

#include <mutex>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tessel {

void ConfigureAllocatorOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
  });
}

}  // namespace tessel
