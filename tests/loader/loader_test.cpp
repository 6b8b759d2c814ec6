#include "feedline/loader.h"

#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

#include "feedline/error.h"

namespace feedline {
namespace {

// Each sample's data is its own index, so a batch shows exactly which indices it holds.
class IndexDataset : public Dataset {
 public:
  explicit IndexDataset(int64_t n, bool batch_fetch = false, int jitter_ms = 0)
      : n_(n), batch_fetch_(batch_fetch), jitter_ms_(jitter_ms) {}
  int64_t size() const override { return n_; }
  Example get(int64_t index) const override {
    ++gets;
    if (jitter_ms_ > 0) {
      // Random per-sample delays make workers finish out of order.
      thread_local std::mt19937 gen(std::hash<std::thread::id>{}(std::this_thread::get_id()));
      std::this_thread::sleep_for(std::chrono::microseconds(gen() % (jitter_ms_ * 1000)));
    }
    if (index == throw_at) throw std::out_of_range("bad sample " + std::to_string(index));
    return {torch::full({1}, index, torch::kInt64), torch::tensor(index % 10, torch::kInt64)};
  }
  bool has_batch_fetch() const override { return batch_fetch_; }
  Example get_batch(const std::vector<int64_t>& indices) const override {
    ++batch_calls;
    const int now = ++outstanding;
    int seen = max_outstanding.load();
    while (now > seen && !max_outstanding.compare_exchange_weak(seen, now)) {
    }
    Example e = Dataset::get_batch(indices);
    --outstanding;
    return e;
  }

  mutable std::atomic<int64_t> gets{0}, batch_calls{0};
  mutable std::atomic<int> outstanding{0}, max_outstanding{0};
  int64_t throw_at = -1;

 private:
  int64_t n_;
  bool batch_fetch_;
  int jitter_ms_;
};

std::vector<int64_t> drain(Loader& loader) {
  std::vector<int64_t> out;
  auto epoch = loader.epoch();
  for (auto& batch : epoch) {
    const auto flat = batch.data.flatten();
    for (int64_t i = 0; i < flat.size(0); ++i) out.push_back(flat[i].item<int64_t>());
  }
  return out;
}

TEST(Loader, SameSeedSameBatchesForAnyWorkerCount) {
  auto ds = std::make_shared<IndexDataset>(203, false, 2);
  std::vector<std::vector<int64_t>> reference;
  for (int64_t workers : {0, 1, 2, 4}) {
    for (bool persistent : {false, true}) {
      Loader loader(ds, LoaderOptions(16).shuffle(true).seed(11).num_workers(workers).persistent_workers(persistent));
      std::vector<std::vector<int64_t>> epochs{drain(loader), drain(loader)};
      if (reference.empty()) {
        reference = epochs;
        continue;
      }
      EXPECT_EQ(epochs, reference) << workers << " workers, persistent " << persistent;
    }
  }
  // Each epoch is a permutation, and the two epochs differ.
  std::vector<int64_t> sorted = reference[0];
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 203; ++i) ASSERT_EQ(sorted[i], i);
  EXPECT_NE(reference[0], reference[1]);
  // The loader's batches follow its sampler.
  Loader loader(ds, LoaderOptions(16).shuffle(true).seed(11));
  EXPECT_EQ(loader.epoch_indices(0), reference[0]);
  EXPECT_EQ(loader.epoch_indices(1), reference[1]);
  Loader other_seed(ds, LoaderOptions(16).shuffle(true).seed(12));
  EXPECT_NE(other_seed.epoch_indices(0), reference[0]);
}

TEST(Loader, WithoutShuffleIndicesAreInOrderAndDropLastCounts) {
  auto ds = std::make_shared<IndexDataset>(10);
  Loader keep(ds, LoaderOptions(4));
  EXPECT_EQ(keep.batches_per_epoch(), 3);
  EXPECT_EQ(drain(keep), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  Loader drop(ds, LoaderOptions(4).drop_last(true).num_workers(2));
  EXPECT_EQ(drop.batches_per_epoch(), 2);
  auto epoch = drop.epoch();
  int64_t batches = 0;
  for (auto& b : epoch) {
    EXPECT_EQ(b.data.size(0), 4);
    ++batches;
  }
  EXPECT_EQ(batches, 2);
  EXPECT_EQ(epoch.stats().batches, 2);
  EXPECT_EQ(epoch.stats().samples, 8);
}

TEST(Loader, UsesBatchFetchWhenOfferedAndAllowed) {
  auto fetch = std::make_shared<IndexDataset>(64, /*batch_fetch=*/true);
  Loader a(fetch, LoaderOptions(16));
  drain(a);
  EXPECT_EQ(fetch->batch_calls.load(), 4);
  Loader b(fetch, LoaderOptions(16).batch_fetch(false));
  drain(b);
  EXPECT_EQ(fetch->batch_calls.load(), 4);  // per-sample path: get_batch not called again
  EXPECT_EQ(fetch->gets.load(), 128);
  auto plain = std::make_shared<IndexDataset>(64, /*batch_fetch=*/false);
  Loader c(plain, LoaderOptions(16));
  drain(c);
  EXPECT_EQ(plain->batch_calls.load(), 0);
}

TEST(Loader, WorkerExceptionIsRethrownWithItsTypeAndMessage) {
  for (int64_t workers : {0, 3}) {
    auto ds = std::make_shared<IndexDataset>(100);
    ds->throw_at = 37;
    Loader loader(ds, LoaderOptions(8).num_workers(workers));
    auto epoch = loader.epoch();
    int64_t good = 0;
    try {
      for (auto& b : epoch) good += b.data.size(0);
      FAIL() << "no exception with " << workers << " workers";
    } catch (const std::out_of_range& e) {
      EXPECT_STREQ(e.what(), "bad sample 37");
    }
    EXPECT_EQ(good, 32);  // the four batches before the failing one arrived, in order
    EXPECT_FALSE(epoch.next().has_value());
  }
}

TEST(Loader, LeavingEarlyThenRunningAFullEpochWorks) {
  for (bool persistent : {false, true}) {
    auto ds = std::make_shared<IndexDataset>(500, false, 1);
    Loader loader(ds, LoaderOptions(10).num_workers(3).persistent_workers(persistent).shuffle(true));
    {
      auto epoch = loader.epoch();
      auto first = epoch.next();
      ASSERT_TRUE(first.has_value());
    }  // destroyed early: must not hang
    const auto full = drain(loader);
    EXPECT_EQ(full.size(), 500u);
    EXPECT_EQ(full, loader.epoch_indices(1));
  }
}

TEST(Loader, OnlyOneLiveEpochAtATime) {
  auto ds = std::make_shared<IndexDataset>(20);
  Loader loader(ds, LoaderOptions(5).num_workers(1));
  auto epoch = loader.epoch();
  EXPECT_THROW(loader.epoch(), InvalidArgument);
}

TEST(Loader, QueueIsBounded) {
  // A consumer that never asks for more: workers may run ahead by at most num_workers * prefetch_factor.
  auto ds = std::make_shared<IndexDataset>(1000, /*batch_fetch=*/true);
  Loader loader(ds, LoaderOptions(4).num_workers(2).prefetch_factor(3));
  auto epoch = loader.epoch();
  ASSERT_TRUE(epoch.next().has_value());
  // Give the workers every chance to overrun the bound.
  for (int i = 0; i < 50 && ds->batch_calls.load() < 7; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(ds->batch_calls.load(), 1 + 2 * 3);
  EXPECT_LE(ds->max_outstanding.load(), 2);
}

TEST(Loader, RejectsInvalidOptions) {
  auto ds = std::make_shared<IndexDataset>(10);
  EXPECT_THROW(Loader(ds, LoaderOptions(0)), InvalidArgument);
  EXPECT_THROW(Loader(ds, LoaderOptions(4).num_workers(-1)), InvalidArgument);
  EXPECT_THROW(Loader(ds, LoaderOptions(4).prefetch_factor(0)), InvalidArgument);
  EXPECT_THROW(Loader(nullptr, LoaderOptions(4)), InvalidArgument);
}

TEST(Loader, PinMemoryIsANoOpWithoutCuda) {
  auto ds = std::make_shared<IndexDataset>(8);
  Loader loader(ds, LoaderOptions(4).pin_memory(true).num_workers(1));
  EXPECT_EQ(loader.pin_memory_active(), torch::cuda::is_available());
  auto epoch = loader.epoch();
  auto b = epoch.next();
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->data.is_pinned(), torch::cuda::is_available());
}

TEST(Loader, StatsSplitWaitingFromStepping) {
  auto ds = std::make_shared<IndexDataset>(40);
  Loader loader(ds, LoaderOptions(10));
  auto epoch = loader.epoch();
  for (auto& b : epoch) {
    (void)b;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the consumer's "step"
  }
  EXPECT_EQ(epoch.stats().batches, 4);
  EXPECT_GE(epoch.stats().step_seconds, 4 * 0.020);  // slept 20 ms after each of 4 batches
  EXPECT_GT(epoch.stats().wait_seconds, 0.0);
}

}  // namespace
}  // namespace feedline
