// libFuzzer's entry for FuzzOps (entry_points.h).
#include "entry_points.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tessel::fuzz::FuzzOps(data, size);
  return 0;
}
