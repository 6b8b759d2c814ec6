#include "train/blas.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace feedline {
namespace {

// Process-wide, so it runs in its own process (CTest runs each test alone).
TEST(Blas, SetBlasThreadsChangesOpenBlasThreadsAndMatmulStillAgrees) {
  const auto a = torch::rand({300, 200}, torch::kDouble);
  const auto b = torch::rand({200, 100}, torch::kDouble);
  const auto expected = (a.unsqueeze(2) * b.unsqueeze(0)).sum(1);  // no BLAS: broadcast and sum
  if (!set_blas_threads(2)) {
    EXPECT_EQ(blas_description(), "");
    GTEST_SKIP() << "LibTorch's BLAS here is not OpenBLAS";
  }
  EXPECT_NE(blas_description().find("2 threads per call"), std::string::npos) << blas_description();
  EXPECT_TRUE(torch::allclose(a.mm(b), expected));
  ASSERT_TRUE(set_blas_threads(1));
  const std::string one = blas_description();
  EXPECT_NE(one.find("OpenBLAS"), std::string::npos) << one;
  EXPECT_NE(one.find(", 1 thread per call"), std::string::npos) << one;
  EXPECT_TRUE(torch::allclose(a.mm(b), expected));
  EXPECT_FALSE(set_blas_threads(0));
  EXPECT_NE(blas_description().find(", 1 thread per call"), std::string::npos) << "a refused count changed nothing";
}

}  // namespace
}  // namespace feedline
