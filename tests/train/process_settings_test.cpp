#include "feedline/train/train.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "feedline/io/error.h"
#include "train/blas.h"

namespace feedline {
namespace {

// Process-wide, so each runs in its own process (CTest runs each test alone).
TEST(ProcessSettings, TheEnvironmentChoosesAndAWrongAllocatorChoiceIsRefusedByName) {
  ::setenv("FEEDLINE_MALLOC", "jemalloc", 1);
  try {
    apply_process_settings();
    ADD_FAILURE() << "FEEDLINE_MALLOC=jemalloc was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("FEEDLINE_MALLOC must be 'feedline' (the default) or 'system', not 'jemalloc'"),
              std::string::npos)
        << e.what();
  }
  ::setenv("FEEDLINE_MALLOC", "system", 1);
  ::setenv("OPENBLAS_NUM_THREADS", "2", 1);
  const ProcessSettings chosen = apply_process_settings();
  EXPECT_EQ(chosen.allocator, "the system's malloc settings (FEEDLINE_MALLOC=system)");
  if (blas_description().empty()) GTEST_SKIP() << "LibTorch's BLAS here is not OpenBLAS";
  EXPECT_NE(chosen.blas.find("(OPENBLAS_NUM_THREADS=2)"), std::string::npos) << chosen.blas;
}

TEST(ProcessSettings, ByDefaultOpenBlasRunsOneThreadACallAndMallocKeepsFreedMemory) {
  ::unsetenv("FEEDLINE_MALLOC");
  ::unsetenv("OPENBLAS_NUM_THREADS");
  if (set_blas_threads(2)) {
    const ProcessSettings settings = apply_process_settings();
    EXPECT_NE(settings.blas.find(", 1 thread per call"), std::string::npos) << settings.blas;
    EXPECT_NE(settings.blas.find("feedline's default"), std::string::npos) << settings.blas;
    EXPECT_NE(settings.allocator.find("keeps freed memory"), std::string::npos) << settings.allocator;
  } else {
    const ProcessSettings settings = apply_process_settings();
    EXPECT_EQ(settings.blas, "not OpenBLAS (feedline's setting does not apply)");
  }
}

}  // namespace
}  // namespace feedline
