#include "train/memory.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace feedline {
namespace {

long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// A training step's pattern: several blocks of megabytes allocated, written and all freed again. Returns the
// page faults of the last `measured` of `rounds` rounds.
long faults_of_steps(int rounds, int measured) {
  constexpr size_t kBlock = 8 << 20;
  long faults = 0;
  for (int r = 0; r < rounds; ++r) {
    const long before = minor_faults();
    std::vector<void*> blocks;
    for (int b = 0; b < 8; ++b) {
      void* p = std::malloc(kBlock);
      if (p == nullptr) return -1;
      std::memset(p, r + b, kBlock);
      blocks.push_back(p);
    }
    for (void* p : blocks) std::free(p);
    if (r >= rounds - measured) faults += minor_faults() - before;
  }
  return faults;
}

// Process-wide, so it runs in its own process (CTest runs each test alone).
TEST(Memory, KeepFreedMemorySparesEveryStepItsPageFaults) {
  // 64 MB a round is 16,384 pages: glibc's defaults give the top of the heap back on free and fault it in again.
  const long before = faults_of_steps(6, 3);
  if (before < 3 * 8000) GTEST_SKIP() << "this allocator keeps freed memory already (" << before << " faults)";
  ASSERT_TRUE(keep_freed_memory()) << "glibc refused the settings";
  const long after = faults_of_steps(6, 3);
  RecordProperty("faults_before", static_cast<int>(before));
  RecordProperty("faults_after", static_cast<int>(after));
  EXPECT_LT(after, before / 10) << "faults in 3 rounds: " << before << " before, " << after << " after";
}

}  // namespace
}  // namespace feedline
