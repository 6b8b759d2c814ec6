// libFuzzer entry point for the csv reader (see fuzz_targets.h).
#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  feedline::fuzz::csv(data, size);
  return 0;
}
