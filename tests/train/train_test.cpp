#include "feedline/train.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <memory>

#include "feedline/error.h"
#include "feedline/idx.h"

namespace feedline {
namespace {

// FashionMNIST's packaged test split (Debian's dataset-fashion-mnist), as pre-decoded tensors.
const ImageTensors& fashion_test_split() {
  static const ImageTensors t = [] {
    const std::string dir = "/usr/share/datasets/fashion-mnist";
    const ImageSplit s = read_idx_split(dir + "/t10k-images-idx3-ubyte.gz", dir + "/t10k-labels-idx1-ubyte.gz");
    return decode_image_table(image_split_to_table(s));
  }();
  return t;
}

std::shared_ptr<const Dataset> slice(int64_t start, int64_t count) {
  const auto& t = fashion_test_split();
  return std::make_shared<TensorDataset>(t.images.narrow(0, start, count), t.labels.narrow(0, start, count));
}

TEST(Model, SimpleCnnMatchesTheExperimentsArchitecture) {
  SimpleCNN model;
  // conv1 16*(1*9)+16, conv2 32*(16*9)+32, fc1 128*1568+128, fc2 10*128+10
  const int64_t expected = (16 * 9 + 16) + (32 * 16 * 9 + 32) + (128 * 32 * 7 * 7 + 128) + (10 * 128 + 10);
  EXPECT_EQ(parameter_count(*model), expected);
  EXPECT_EQ(expected, 206922);
  const auto out = model->forward(torch::zeros({5, 1, 28, 28}));
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{5, 10}));
}

TEST(Train, OneEpochOnASubsetBeatsChanceByAWideMargin) {
  torch::manual_seed(42);
  SimpleCNN model;
  Loader train(slice(0, 8000), LoaderOptions(64).shuffle(true).seed(42));
  Loader test(slice(8000, 2000), LoaderOptions(500));
  const auto before = evaluate(model, test, torch::kCPU);
  const auto results = train_model(model, train, test, TrainOptions{1, 1e-3, torch::kCPU});
  ASSERT_EQ(results.size(), 1u);
  const EpochResult& r = results[0];
  EXPECT_GT(r.test_accuracy, 0.60) << "chance is 0.10; an untrained model scored " << before.second;
  EXPECT_LT(r.test_loss, before.first);
  EXPECT_EQ(r.train_stats.samples, 8000);
  EXPECT_EQ(r.test_stats.samples, 2000);
  EXPECT_GT(r.train_seconds, 0);
  EXPECT_GE(r.data_wait_share(), 0);
  EXPECT_LE(r.data_wait_share(), 1);
}

TEST(Train, SameSeedGivesTheSameModelForAnyWorkerCount) {
  std::vector<torch::Tensor> reference;
  for (int64_t workers : {0, 2}) {
    torch::manual_seed(7);
    SimpleCNN model;
    Loader train(slice(0, 640), LoaderOptions(64).shuffle(true).seed(3).num_workers(workers).persistent_workers(true));
    Loader test(slice(640, 128), LoaderOptions(64));
    train_model(model, train, test, TrainOptions{2, 1e-3, torch::kCPU});
    const auto params = model->parameters();
    if (reference.empty()) {
      for (const auto& p : params) reference.push_back(p.detach().clone());
      continue;
    }
    ASSERT_EQ(params.size(), reference.size());
    for (size_t i = 0; i < params.size(); ++i) EXPECT_TRUE(torch::equal(params[i], reference[i])) << "parameter " << i;
  }
}

TEST(Train, Uint8BatchesAreNormalisedOnTheDevice) {
  const auto& t = fashion_test_split();
  auto u8 = (t.images.narrow(0, 0, 256) * 255).round().to(torch::kUInt8);
  auto ds_u8 = std::make_shared<TensorDataset>(u8, t.labels.narrow(0, 0, 256));
  auto ds_f32 = std::make_shared<TensorDataset>(t.images.narrow(0, 0, 256), t.labels.narrow(0, 0, 256));
  torch::manual_seed(1);
  SimpleCNN model;
  Loader a(ds_u8, LoaderOptions(128));
  Loader b(ds_f32, LoaderOptions(128));
  const auto ra = evaluate(model, a, torch::kCPU);
  const auto rb = evaluate(model, b, torch::kCPU);
  EXPECT_NEAR(ra.first, rb.first, 1e-5);
  EXPECT_EQ(ra.second, rb.second);
}

TEST(Train, ComputeFloorTrainsOnSyntheticBatchesWithoutALoader) {
  torch::manual_seed(1);
  SimpleCNN model;
  TrainOptions options;
  options.epochs = 2;
  int64_t steps_seen = 0;
  TrainCallbacks callbacks;
  callbacks.on_train_step = [&](int64_t, int64_t, int64_t steps, double loss) {
    ++steps_seen;
    EXPECT_EQ(steps, 3);
    EXPECT_TRUE(std::isfinite(loss));
  };
  const auto before = model->parameters()[0].clone();
  const auto results = train_compute_floor(model, 70, 20, 32, options, callbacks);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(steps_seen, 6);
  for (const auto& r : results) {
    EXPECT_EQ(r.train_stats.samples, 70);
    EXPECT_EQ(r.train_stats.wait_seconds, 0.0);
    EXPECT_GT(r.train_seconds, 0.0);
    EXPECT_TRUE(std::isfinite(r.train_loss) && std::isfinite(r.test_loss));
    EXPECT_GE(r.test_accuracy, 0.0);
    EXPECT_LE(r.test_accuracy, 1.0);
  }
  EXPECT_FALSE(torch::equal(before, model->parameters()[0])) << "the optimizer never stepped";
  EXPECT_THROW(train_compute_floor(model, 0, 10, 32, options), InvalidArgument);
}

TEST(Train, RejectsBadDevicesAndOptions) {
  EXPECT_THROW(resolve_device("tpu"), InvalidArgument);
  EXPECT_EQ(resolve_device("cpu"), torch::Device(torch::kCPU));
  if (!torch::cuda::is_available()) {
    EXPECT_THROW(resolve_device("cuda"), InvalidArgument);
    EXPECT_EQ(resolve_device("auto"), torch::Device(torch::kCPU));
  } else {
    EXPECT_TRUE(resolve_device("auto").is_cuda());
  }
  SimpleCNN model;
  Loader l(slice(0, 64), LoaderOptions(64));
  EXPECT_THROW(train_model(model, l, l, TrainOptions{0, 1e-3, torch::kCPU}), InvalidArgument);
  EXPECT_THROW(train_model(model, l, l, TrainOptions{1, -1.0, torch::kCPU}), InvalidArgument);
}

}  // namespace
}  // namespace feedline
