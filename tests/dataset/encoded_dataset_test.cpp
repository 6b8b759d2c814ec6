// EncodedDataset: samples of different sizes made into fixed-shape batches in place by a transform, each sample's
// randomness its own (seed, epoch, index); errors name the sample. SampleRng's stream is checked here too.
#include "feedline/dataset/encoded.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "dataset/encoded_support.h"
#include "feedline/io/error.h"

namespace feedline {
namespace {

using testing::expected_window;
using testing::varying_dataset;
using testing::WindowTransform;

std::vector<uint8_t> row(const torch::Tensor& batch, int64_t i) {
  const torch::Tensor r = batch[i].contiguous();
  return std::vector<uint8_t>(r.data_ptr<uint8_t>(), r.data_ptr<uint8_t>() + r.numel());
}

TEST(SampleRng, SameKeySameStreamAndNeighbouringKeysDiffer) {
  SampleRng a(42, 3, 1000), b(42, 3, 1000);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(a(), b());
  std::set<uint64_t> firsts;
  for (const auto& [seed, epoch, index] : std::vector<std::tuple<uint64_t, int64_t, int64_t>>{
           {42, 3, 1000}, {43, 3, 1000}, {42, 4, 1000}, {42, 3, 1001}, {0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {1, 0, 0}}) {
    firsts.insert(SampleRng(seed, epoch, index)());
  }
  EXPECT_EQ(firsts.size(), 8u);
}

TEST(SampleRng, DrawsStayInRangeAndCoverIt) {
  SampleRng rng(7, 0, 0);
  std::set<uint64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    const uint64_t v = rng.below(10);
    ASSERT_LT(v, 10u);
    seen.insert(v);
    const double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_EQ(rng.below(0), 0u);
}

TEST(EncodedDataset, MakesSamplesOfDifferentSizesIntoOneBatchInPlace) {
  const auto dataset = varying_dataset(30);
  const std::vector<int64_t> indices{0, 29, 5, 13, 13};
  const Example batch = dataset->make_batch(indices, BatchContext{9, 2, false});
  ASSERT_EQ(batch.data.sizes(), (std::vector<int64_t>{5, WindowTransform::kHeight, WindowTransform::kWidth}));
  EXPECT_EQ(batch.data.dtype(), torch::kUInt8);
  EXPECT_TRUE(batch.data.is_contiguous());
  ASSERT_EQ(batch.target.sizes(), (std::vector<int64_t>{5}));
  EXPECT_EQ(batch.target.dtype(), torch::kInt64);
  for (size_t i = 0; i < indices.size(); ++i) {
    EXPECT_EQ(row(batch.data, static_cast<int64_t>(i)), expected_window(indices[i], 9, 2)) << "index " << indices[i];
    EXPECT_EQ(batch.target[static_cast<int64_t>(i)].item<int64_t>(), indices[i] % 7);
  }
  // The same index twice in a batch is the same draw: randomness follows the sample, not its place.
  EXPECT_TRUE(torch::equal(batch.data[3], batch.data[4]));
}

TEST(EncodedDataset, RandomnessFollowsSeedAndEpoch) {
  const auto dataset = varying_dataset(200);
  std::vector<int64_t> all(200);
  for (int64_t i = 0; i < 200; ++i) all[static_cast<size_t>(i)] = i;
  const torch::Tensor a = dataset->make_batch(all, BatchContext{1, 0, false}).data;
  EXPECT_TRUE(torch::equal(a, dataset->make_batch(all, BatchContext{1, 0, false}).data));
  EXPECT_FALSE(torch::equal(a, dataset->make_batch(all, BatchContext{1, 1, false}).data));
  EXPECT_FALSE(torch::equal(a, dataset->make_batch(all, BatchContext{2, 0, false}).data));
}

TEST(EncodedDataset, GetAndGetBatchAreEpochZeroOfSeedZero) {
  const auto dataset = varying_dataset(20);
  EXPECT_EQ(dataset->size(), 20);
  const Example one = dataset->get(17);
  EXPECT_EQ(one.data.sizes(), (std::vector<int64_t>{WindowTransform::kHeight, WindowTransform::kWidth}));
  EXPECT_EQ(one.target.item<int64_t>(), 17 % 7);
  const Example batch = dataset->get_batch({4, 17});
  EXPECT_EQ(row(batch.data, 1), expected_window(17, 0, 0));
  EXPECT_TRUE(torch::equal(batch.data[1], one.data));
}

TEST(EncodedDataset, ATransformErrorNamesTheSampleAndKeepsItsType) {
  // Sample 8 is the first of 11 bytes (3 + 8 % 11).
  const auto dataset = varying_dataset(20, /*refuse_length=*/11);
  try {
    dataset->get_batch({1, 2, 8, 3});
    FAIL() << "a refused sample made a batch";
  } catch (const InvalidFile& e) {
    EXPECT_NE(std::string(e.what()).find("shard.tar:8.bin: corrupt image data"), std::string::npos) << e.what();
  }
}

TEST(EncodedDataset, RefusesAnIndexOutsideAndAMissingPiece) {
  const auto dataset = varying_dataset(5);
  EXPECT_THROW(dataset->get_batch({0, 5}), InvalidArgument);
  EXPECT_THROW(dataset->get(-1), InvalidArgument);
  EXPECT_THROW(EncodedDataset(nullptr, std::make_shared<WindowTransform>()), InvalidArgument);
  EXPECT_THROW(EncodedDataset(std::make_shared<testing::VaryingSource>(3), nullptr), InvalidArgument);
}

}  // namespace
}  // namespace feedline
