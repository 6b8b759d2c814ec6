// The loader over encoded samples (EncodedDataset): the per-sample transform runs on the workers with randomness of
// each sample's own, so that any worker count gives the same batches, a resumed epoch gives exactly the rest of the
// uninterrupted one, and a transform's error reaches the consumer naming the sample.
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <vector>

#include "dataset/encoded_support.h"
#include "feedline/io/error.h"
#include "feedline/loader/loader.h"

namespace feedline {
namespace {

using testing::expected_window;
using testing::varying_dataset;

std::vector<Example> rest_of(Epoch epoch) {
  std::vector<Example> out;
  while (auto batch = epoch.next()) out.push_back(std::move(*batch));
  return out;
}

void expect_same(const std::vector<Example>& a, const std::vector<Example>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_TRUE(torch::equal(a[k].data, b[k].data)) << what << ", batch " << k;
    EXPECT_TRUE(torch::equal(a[k].target, b[k].target)) << what << ", batch " << k;
  }
}

LoaderOptions shuffled(int64_t batch, int64_t workers) {
  return LoaderOptions(batch).shuffle(true).seed(5).num_workers(workers).prefetch_factor(3);
}

TEST(EncodedLoader, EveryRowIsItsSampleTransformedWithItsOwnDraw) {
  const auto dataset = varying_dataset(37);
  Loader loader(dataset, shuffled(8, 2));
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    const std::vector<int64_t> order = loader.epoch_indices(epoch);
    const std::vector<Example> batches = rest_of(loader.epoch());
    ASSERT_EQ(static_cast<int64_t>(batches.size()), loader.batches_per_epoch());
    size_t at = 0;
    for (const Example& b : batches) {
      for (int64_t i = 0; i < b.data.size(0); ++i, ++at) {
        const int64_t index = order[at];
        const torch::Tensor r = b.data[i].contiguous();
        EXPECT_EQ(std::vector<uint8_t>(r.data_ptr<uint8_t>(), r.data_ptr<uint8_t>() + r.numel()),
                  expected_window(index, 5, epoch))
            << "epoch " << epoch << ", sample " << index;
        EXPECT_EQ(b.target[i].item<int64_t>(), index % 7);
      }
    }
    EXPECT_EQ(at, order.size());
  }
}

TEST(EncodedLoader, OneTwoAndFourWorkersGiveTheSameBatches) {
  const auto dataset = varying_dataset(103);
  Loader reference(dataset, shuffled(8, 0));
  const std::vector<Example> epoch0 = rest_of(reference.epoch()), epoch1 = rest_of(reference.epoch());
  for (const int64_t workers : {1, 2, 4}) {
    Loader loader(dataset, shuffled(8, workers).persistent_workers(workers == 4));
    expect_same(rest_of(loader.epoch()), epoch0, std::to_string(workers) + " workers, epoch 0");
    expect_same(rest_of(loader.epoch()), epoch1, std::to_string(workers) + " workers, epoch 1");
  }
  // The epochs' draws differ, not only their order: sample 0's window in each.
  EXPECT_NE(expected_window(0, 5, 0), expected_window(0, 5, 1));
}

TEST(EncodedLoader, AResumedEpochGivesExactlyTheRestOfTheUninterruptedOne) {
  const auto dataset = varying_dataset(61);
  Loader uninterrupted(dataset, shuffled(4, 2));
  rest_of(uninterrupted.epoch());
  const std::vector<Example> whole = rest_of(uninterrupted.epoch());  // epoch 1

  LoaderState state;
  {
    Loader first(dataset, shuffled(4, 2));
    rest_of(first.epoch());
    Epoch epoch = first.epoch();
    for (int k = 0; k < 5; ++k) ASSERT_TRUE(epoch.next().has_value());
    state = first.state_dict();  // batches beyond the fifth were prefetched, never handed out
  }
  EXPECT_EQ(state.epoch, 1);
  EXPECT_EQ(state.batch, 5);
  for (const int64_t workers : {0, 4}) {
    Loader resumed(dataset, shuffled(4, workers));
    resumed.load_state_dict(state);
    expect_same(rest_of(resumed.epoch()), std::vector<Example>(whole.begin() + 5, whole.end()),
                "resumed with " + std::to_string(workers) + " workers");
  }
}

TEST(EncodedLoader, ATransformErrorReachesTheConsumerNamingTheSample) {
  // Samples 8, 19 and 30 are 11 bytes long, which the transform refuses; unshuffled, batch 2 holds sample 8.
  const auto dataset = varying_dataset(40, /*refuse_length=*/11);
  for (const int64_t workers : {0, 2}) {
    Loader loader(dataset, LoaderOptions(4).num_workers(workers));
    Epoch epoch = loader.epoch();
    ASSERT_TRUE(epoch.next().has_value());
    ASSERT_TRUE(epoch.next().has_value());
    try {
      epoch.next();
      FAIL() << "the batch holding a refused sample was handed out (" << workers << " workers)";
    } catch (const InvalidFile& e) {
      EXPECT_NE(std::string(e.what()).find("shard.tar:8.bin: corrupt image data"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(epoch.next().has_value());  // the epoch is over after a failure
  }
}

TEST(EncodedLoader, ABatchTransformStillAppliesAfterTheSamplesAreMade) {
  const auto dataset = varying_dataset(10);
  const BatchTransform widen = [](Example b, const BatchInfo&) {
    b.data = b.data.to(torch::kInt32) + 1000;
    return b;
  };
  Loader plain(dataset, LoaderOptions(5).num_workers(2));
  Loader widened(dataset, LoaderOptions(5).num_workers(2).transform(widen));
  const auto a = rest_of(plain.epoch()), b = rest_of(widened.epoch());
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) EXPECT_TRUE(torch::equal(a[k].data.to(torch::kInt32) + 1000, b[k].data));
}

TEST(EncodedLoader, PinnedBatchesAreMadePageLocked) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "pinned memory needs CUDA";
  Loader loader(varying_dataset(20), LoaderOptions(6).num_workers(2).pin_memory(true));
  ASSERT_TRUE(loader.pin_memory_active());
  for (const Example& b : rest_of(loader.epoch())) {
    EXPECT_TRUE(b.data.is_pinned());
    EXPECT_TRUE(b.target.is_pinned());
  }
}

}  // namespace
}  // namespace feedline
