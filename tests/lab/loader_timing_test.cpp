#include "lab/loader_timing.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <vector>

namespace feedline::lab {
namespace {

// n samples whose data is their index.
std::shared_ptr<Dataset> numbered(int64_t n) {
  const auto index = torch::arange(n, torch::kInt64);
  return std::make_shared<TensorDataset>(index.reshape({n, 1}).to(torch::kFloat32), index);
}

TEST(LoaderTiming, OneWarmUpThenTheTimedEpochsWithTheirSamples) {
  Loader loader(numbered(100), LoaderOptions(10).shuffle(true).seed(3));
  std::vector<std::pair<int64_t, int64_t>> calls;  // (epoch, batch) per progress call
  int64_t consumed = 0;
  LoaderTimingHooks hooks;
  hooks.consume = [&](Example& batch) {
    consumed += batch.data.size(0);
    return batch.target.size(0);
  };
  int64_t ends = 0;
  hooks.end_epoch = [&] { ++ends; };
  hooks.progress = [&](int64_t e, int64_t k) { calls.emplace_back(e, k); };
  const LoaderTiming t = time_loader_epochs(loader, 3, 0.0, hooks);
  ASSERT_EQ(t.epoch_seconds.size(), 3u);
  EXPECT_EQ(t.epoch_wait_seconds.size(), 3u);
  EXPECT_EQ(t.samples_per_epoch, 100);
  EXPECT_EQ(t.samples, 300) << "the warm-up epoch is not counted";
  EXPECT_EQ(consumed, 400) << "but it is consumed";
  EXPECT_EQ(ends, 4);
  ASSERT_EQ(calls.size(), 40u);
  EXPECT_EQ(calls.front(), std::make_pair(int64_t{-1}, int64_t{1}));
  EXPECT_EQ(calls[10], std::make_pair(int64_t{0}, int64_t{1}));
  EXPECT_EQ(calls.back(), std::make_pair(int64_t{2}, int64_t{10}));
  double sum = 0;
  for (double s : t.epoch_seconds) sum += s;
  EXPECT_DOUBLE_EQ(t.seconds, sum);
  EXPECT_DOUBLE_EQ(t.samples_per_second(), 300 / sum);
  EXPECT_GE(t.wait_share(), 0.0);
  EXPECT_LE(t.wait_share(), 1.0);
}

TEST(LoaderTiming, RunsMoreEpochsUntilTheMinimumTime) {
  Loader loader(numbered(20), LoaderOptions(10));
  const LoaderTiming t = time_loader_epochs(loader, 1, 0.02, {});
  EXPECT_GE(t.seconds, 0.02);
  EXPECT_EQ(t.samples, 20 * static_cast<int64_t>(t.epoch_seconds.size()));
}

TEST(LoaderTiming, AnEmptyLoaderStopsAfterTheMinimumEpochs) {
  Loader loader(numbered(0), LoaderOptions(10));
  const LoaderTiming t = time_loader_epochs(loader, 2, 3600.0, {});  // would never reach an hour
  EXPECT_EQ(t.epoch_seconds.size(), 2u);
  EXPECT_EQ(t.samples, 0);
  EXPECT_EQ(t.samples_per_second(), 0.0);
}

}  // namespace
}  // namespace feedline::lab
