// Batch transforms (run once a batch, seeded by where the batch stands, the same for any worker count, their
// exceptions reaching the consumer) and device-resident datasets, gathered by the consumer as the host dataset's
// batches are.
#include "feedline/loader/loader.h"

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <set>

#include "feedline/io/error.h"
#include "loader/loader_support.h"

namespace feedline {
namespace {

using feedline::testing::drain;
using feedline::testing::drain_until_failure;
using feedline::testing::flatten;
using feedline::testing::IndexDataset;
using feedline::testing::iota;
using feedline::testing::SampleError;

// A device-resident dataset (on the CPU here, so its batches come from the host order) is gathered by the
// consumer: the same batches as the host tensor dataset for the same seed, whatever num_workers says, and nothing
// is pinned.
// ------------------------------------------------------------------------------------------------ transforms

// A random augmentation as a user would write it: flips each sample along its last dimension with probability
// one half, drawn from a generator of its own seeded with the batch's seed.
Example random_flip(Example batch, const BatchInfo& info) {
  auto gen = at::detail::createCPUGenerator(info.seed);
  const auto flip = torch::rand({batch.data.size(0)}, gen) < 0.5;
  std::vector<int64_t> shape(static_cast<size_t>(batch.data.dim()), 1);
  shape[0] = -1;
  batch.data = torch::where(flip.view(shape).to(batch.data.device()), batch.data.flip({-1}), batch.data);
  return batch;
}

// Sample i is the pair (2i, 2i + 1); flipped, (2i + 1, 2i).
std::shared_ptr<TensorDataset> pairs_dataset(int64_t n) {
  return std::make_shared<TensorDataset>(torch::arange(2 * n, torch::kInt64).view({n, 2}),
                                         torch::arange(n, torch::kInt64).remainder(10));
}

TEST(LoaderTransform, RunsOnceABatchAndKnowsWhereTheBatchStands) {
  for (int64_t workers : {0, 3}) {
    auto ds = std::make_shared<IndexDataset>(100, false, 200);
    std::mutex mutex;
    std::vector<std::pair<int64_t, int64_t>> seen;
    std::set<uint64_t> seeds;
    const auto options = LoaderOptions(8).shuffle(true).seed(5).num_workers(workers).transform(
        [&](Example batch, const BatchInfo& info) {
          {
            std::lock_guard<std::mutex> lock(mutex);
            seen.emplace_back(info.epoch, info.batch);
            seeds.insert(info.seed);
          }
          batch.target = torch::full({batch.data.size(0)}, info.epoch * 1000 + info.batch, torch::kInt64);
          return batch;
        });
    Loader loader(ds, options);
    for (int64_t e = 0; e < 2; ++e) {
      auto epoch = loader.epoch();
      std::vector<int64_t> indices;
      int64_t k = 0;
      for (auto& batch : epoch) {
        EXPECT_TRUE(torch::equal(batch.target, torch::full({batch.data.size(0)}, e * 1000 + k, torch::kInt64)))
            << workers << " workers, epoch " << e << ", batch " << k;
        const auto v = flatten(batch);
        indices.insert(indices.end(), v.begin(), v.end());
        ++k;
      }
      EXPECT_EQ(k, 13);
      EXPECT_EQ(indices, loader.epoch_indices(e)) << "the data as the dataset made it, in sampler order";
    }
    std::sort(seen.begin(), seen.end());
    std::vector<std::pair<int64_t, int64_t>> expected;
    for (int64_t e = 0; e < 2; ++e) {
      for (int64_t k = 0; k < 13; ++k) expected.emplace_back(e, k);
    }
    EXPECT_EQ(seen, expected) << "each batch transformed exactly once; " << workers << " workers";
    EXPECT_EQ(seeds.size(), expected.size()) << "a seed of its own for every batch of every epoch";
  }
}

TEST(LoaderTransform, RandomTransformsAreTheSameForAnyWorkerCount) {
  const int64_t n = 123;
  auto ds = pairs_dataset(n);
  auto run = [&](uint64_t seed, int64_t workers, bool persistent) {
    Loader loader(ds, LoaderOptions(16).shuffle(true).seed(seed).num_workers(workers).persistent_workers(persistent)
                          .transform(random_flip));
    std::vector<torch::Tensor> epochs;
    for (int e = 0; e < 3; ++e) {
      std::vector<torch::Tensor> batches;
      for (auto& batch : loader.epoch()) batches.push_back(batch.data);
      epochs.push_back(torch::cat(batches));
    }
    return epochs;
  };
  const auto reference = run(11, 0, false);
  for (int64_t workers : {1, 2, 4}) {
    for (bool persistent : {false, true}) {
      const auto epochs = run(11, workers, persistent);
      for (size_t e = 0; e < epochs.size(); ++e) {
        EXPECT_TRUE(torch::equal(epochs[e], reference[e])) << workers << " workers, persistent " << persistent
                                                           << ", epoch " << e;
      }
    }
  }
  // Every sample is there once, in sampler order, whole or flipped; about half are flipped, and which ones
  // changes from epoch to epoch and with the seed.
  Loader sampler(ds, LoaderOptions(16).shuffle(true).seed(11));
  std::vector<torch::Tensor> flips;
  for (size_t e = 0; e < reference.size(); ++e) {
    const auto order = torch::tensor(sampler.epoch_indices(static_cast<int64_t>(e)), torch::kInt64);
    const auto low = std::get<0>(reference[e].min(1));
    EXPECT_TRUE(torch::equal(low, 2 * order)) << "epoch " << e;
    EXPECT_TRUE(torch::equal(std::get<0>(reference[e].max(1)), 2 * order + 1));
    // Flipped samples, by sample index (so that epochs compare sample for sample).
    flips.push_back(torch::zeros({n}, torch::kBool).index_put_({order}, reference[e].select(1, 0) > low));
    const int64_t flipped = flips.back().sum().item<int64_t>();
    EXPECT_GT(flipped, n / 4) << "epoch " << e;
    EXPECT_LT(flipped, 3 * n / 4) << "epoch " << e;
  }
  EXPECT_FALSE(torch::equal(flips[0], flips[1]));
  EXPECT_FALSE(torch::equal(flips[1], flips[2]));
  Loader no_flip(ds, LoaderOptions(16).shuffle(true).seed(11));
  std::vector<torch::Tensor> plain;
  for (auto& batch : no_flip.epoch()) plain.push_back(batch.data);
  EXPECT_FALSE(torch::equal(torch::cat(plain), reference[0]));
  const auto other_seed = run(12, 2, false);
  EXPECT_FALSE(torch::equal(other_seed[0], reference[0]));
}

TEST(LoaderTransform, AnExceptionReachesTheConsumerAndTheNextEpochWorks) {
  for (int64_t workers : {0, 3}) {
    auto ds = std::make_shared<IndexDataset>(100, false, 200);
    Loader loader(ds, LoaderOptions(8).num_workers(workers).transform([](Example batch, const BatchInfo& info) {
      if (info.epoch == 0 && info.batch == 3) throw SampleError("bad batch 3");
      return batch;
    }));
    {
      auto epoch = loader.epoch();
      EXPECT_EQ(drain_until_failure(epoch, "bad batch 3", workers), iota(24))
          << "the three batches before the failing one arrived, in order";
      EXPECT_FALSE(epoch.next().has_value());
    }
    EXPECT_EQ(drain(loader), iota(100)) << workers << " workers";
  }
}

TEST(DeviceResident, SameBatchesAsTheHostDatasetAndNoWorkers) {
  const int64_t n = 103;
  auto images = torch::arange(n * 4, torch::kInt64).view({n, 1, 2, 2}).to(torch::kUInt8);
  auto labels = torch::arange(n, torch::kInt64).remainder(10);
  auto host = std::make_shared<TensorDataset>(images, labels);
  auto resident = std::make_shared<DeviceDataset>(images, labels, torch::kCPU);
  ASSERT_TRUE(resident->resident_device().has_value());
  EXPECT_FALSE(host->resident_device().has_value());
  for (const int64_t workers : {0, 3}) {
    const auto options = LoaderOptions(16).shuffle(true).seed(9).num_workers(workers).pin_memory(true);
    Loader a(host, options), b(resident, options);
    EXPECT_FALSE(b.pin_memory_active());
    for (int e = 0; e < 2; ++e) {
      auto ea = a.epoch();
      auto eb = b.epoch();
      int64_t batches = 0;
      while (true) {
        auto x = ea.next();
        auto y = eb.next();
        ASSERT_EQ(x.has_value(), y.has_value());
        if (!x) break;
        ++batches;
        EXPECT_TRUE(torch::equal(x->data, y->data)) << "epoch " << e << " batch " << batches;
        EXPECT_TRUE(torch::equal(x->target, y->target));
        EXPECT_FALSE(y->data.is_pinned());
      }
      EXPECT_EQ(batches, 7);
    }
  }
  // The vector path, the gather of an index tensor (what the loader uses on a GPU) and single gets agree.
  const auto batch = resident->get_batch({5, 0, 102});
  EXPECT_TRUE(torch::equal(batch.data[2], images[102]));
  const auto gathered = resident->gather(torch::tensor({5, 0, 102}, torch::kInt64));
  EXPECT_TRUE(torch::equal(gathered.data, batch.data));
  EXPECT_TRUE(torch::equal(gathered.target, batch.target));
  EXPECT_THROW(resident->gather(torch::tensor({103}, torch::kInt64)), InvalidArgument);
  EXPECT_EQ(resident->get(7).target.item<int64_t>(), 7);
  EXPECT_THROW(resident->get_batch({103}), InvalidArgument);
  EXPECT_THROW(host->gather(torch::zeros({1}, torch::kInt64)), InvalidArgument);
}

// On a device-resident dataset the transform runs in the consumer on the gathered batch, with the same seeds: on
// the CPU through the host order, on a GPU (when there is one) on the slice of the uploaded order.
TEST(DeviceResident, TransformedAsTheHostDatasetsBatchesAre) {
  const int64_t n = 103;
  auto images = torch::arange(n * 4, torch::kInt64).view({n, 1, 2, 2}).to(torch::kUInt8);
  auto labels = torch::arange(n, torch::kInt64).remainder(10);
  auto host = std::make_shared<TensorDataset>(images, labels);
  std::vector<torch::Device> devices{torch::kCPU};
  if (torch::cuda::is_available()) devices.emplace_back(torch::kCUDA);
  for (const torch::Device& device : devices) {
    auto resident = std::make_shared<DeviceDataset>(images, labels, device);
    const auto options = LoaderOptions(16).shuffle(true).seed(9).transform(random_flip);
    Loader a(host, LoaderOptions(options).num_workers(3)), b(resident, options);
    Loader plain(host, LoaderOptions(16).shuffle(true).seed(9));
    int64_t batches = 0, differ = 0;
    for (int e = 0; e < 2; ++e) {
      auto ea = a.epoch();
      auto eb = b.epoch();
      auto ep = plain.epoch();
      while (true) {
        auto x = ea.next();
        auto y = eb.next();
        auto p = ep.next();
        ASSERT_EQ(x.has_value(), y.has_value());
        ASSERT_EQ(x.has_value(), p.has_value());
        if (!x) break;
        ++batches;
        EXPECT_EQ(y->data.device().type(), device.type());
        EXPECT_TRUE(torch::equal(x->data, y->data.cpu())) << device << ", epoch " << e << " batch " << batches;
        EXPECT_TRUE(torch::equal(x->target, y->target.cpu()));
        differ += torch::equal(x->data, p->data) ? 0 : 1;
      }
    }
    EXPECT_EQ(batches, 14);
    EXPECT_GT(differ, 0) << "the transform flipped something";
  }
}
// batch_fetch(false) forces per-sample gets on host datasets; a device-resident one is gathered in one call
// whatever it says (on a GPU there is no per-sample path at all).
TEST(DeviceResident, GatheredInOneCallWhateverBatchFetchSays) {
  struct Counting : DeviceDataset {
    using DeviceDataset::DeviceDataset;
    mutable int gets = 0, batches = 0;
    Example get(int64_t index) const override {
      ++gets;
      return DeviceDataset::get(index);
    }
    Example get_batch(const std::vector<int64_t>& indices) const override {
      ++batches;
      return DeviceDataset::get_batch(indices);
    }
  };
  const int64_t n = 103;
  auto ds = std::make_shared<Counting>(torch::zeros({n, 1, 2, 2}, torch::kUInt8), torch::zeros({n}, torch::kInt64),
                                       torch::kCPU);
  Loader loader(ds, LoaderOptions(16).shuffle(true).batch_fetch(false));
  int64_t samples = 0;
  for (auto& batch : loader.epoch()) samples += batch.target.size(0);
  EXPECT_EQ(samples, n);
  EXPECT_EQ(ds->batches, 7);
  EXPECT_EQ(ds->gets, 0);
}

}  // namespace
}  // namespace feedline
