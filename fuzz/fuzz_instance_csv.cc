// libFuzzer's entry for FuzzInstanceCsv (entry_points.h).
#include "entry_points.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tessel::fuzz::FuzzInstanceCsv(data, size);
  return 0;
}
