// libFuzzer's entry for FuzzTuneCache (entry_points.h).
#include "entry_points.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tessel::fuzz::FuzzTuneCache(data, size);
  return 0;
}
