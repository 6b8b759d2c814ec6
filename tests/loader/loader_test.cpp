// The loader's hard cases, provoked on purpose: out-of-order completion, exceptions in workers and in the
// consumer, leaving an epoch early, the prefetch bound, threads left behind. Where a broken loader would hang,
// the test is written so that ctest's timeout catches it rather than a timed assertion.
// The sampler and resuming are in loader_sampler_test.cpp, transforms and device-resident datasets in
// loader_transform_test.cpp.
#include "feedline/loader/loader.h"

#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "feedline/io/error.h"
#include "loader/blocking_queue.h"
#include "loader/loader_support.h"
#include "loader/sequencer.h"

namespace feedline {
namespace {

using std::chrono::milliseconds;
using feedline::testing::drain;
using feedline::testing::drain_until_failure;
using feedline::testing::flatten;
using feedline::testing::IndexDataset;
using feedline::testing::iota;
using feedline::testing::SampleError;

// ----------------------------------------------------------------------------------- the internal pieces

TEST(LoaderQueue, PushBlocksWhileFullAndPopFreesASlot) {
  detail::BoundedQueue<int> q(2);
  ASSERT_TRUE(q.push(1));
  ASSERT_TRUE(q.push(2));
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    EXPECT_TRUE(q.push(3));
    pushed = true;
  });
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_FALSE(pushed.load());  // still blocked: the queue is full
  EXPECT_EQ(q.pop(), 1);
  producer.join();  // a lost wake-up would hang here
  EXPECT_TRUE(pushed.load());
  EXPECT_EQ(q.pop(), 2);
  EXPECT_EQ(q.pop(), 3);
}

TEST(LoaderQueue, CloseWakesBothSidesAndDrainsWhatIsLeft) {
  detail::BoundedQueue<int> empty(1);
  std::thread consumer([&] { EXPECT_FALSE(empty.pop().has_value()); });
  detail::BoundedQueue<int> full(1);
  ASSERT_TRUE(full.push(7));
  std::thread producer([&] { EXPECT_FALSE(full.push(8)); });
  std::this_thread::sleep_for(milliseconds(10));
  empty.close();
  full.close();
  consumer.join();
  producer.join();
  EXPECT_EQ(full.pop(), 7);  // items pushed before close() still come out
  EXPECT_FALSE(full.pop().has_value());
  EXPECT_FALSE(full.push(9));
}

TEST(LoaderQueue, ClearSaysHowManyItDropped) {
  detail::BoundedQueue<int> q(4);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(q.push(i));
  EXPECT_EQ(q.clear(), 3u);
  EXPECT_EQ(q.clear(), 0u);
  ASSERT_TRUE(q.push(5));
  EXPECT_EQ(q.pop(), 5);
}

struct Numbered {
  int64_t sequence_number;
};

TEST(LoaderSequencer, HandsResultsBackInSequenceOrder) {
  detail::OrderedSequencer<Numbered> seq;
  std::vector<int64_t> arrivals{2, 0, 3, 1, 4};
  size_t pulled = 0;
  auto pull = [&]() -> std::optional<Numbered> {
    if (pulled == arrivals.size()) return std::nullopt;
    return Numbered{arrivals[pulled++]};
  };
  for (int64_t k = 0; k < 5; ++k) {
    auto r = seq.next(pull);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->sequence_number, k);
  }
  EXPECT_EQ(seq.buffered(), 0u);
  EXPECT_FALSE(seq.next(pull).has_value());  // the source ran dry
}

// ------------------------------------------------------------------------------------------- batch fetch

TEST(Loader, UsesBatchFetchWhenOfferedAndAllowed) {
  for (int64_t workers : {0, 2}) {
    auto fetch = std::make_shared<IndexDataset>(64, /*batch_fetch=*/true);
    Loader a(fetch, LoaderOptions(16).num_workers(workers));
    EXPECT_EQ(drain(a), iota(64));
    EXPECT_EQ(fetch->batch_calls.load(), 4);  // one gather per batch...
    EXPECT_EQ(fetch->gets.load(), 64);        // ...which here happens to call get() itself
    Loader b(fetch, LoaderOptions(16).batch_fetch(false).num_workers(workers));
    EXPECT_EQ(drain(b), iota(64));
    EXPECT_EQ(fetch->batch_calls.load(), 4);  // per-sample path: get_batch not called again
    EXPECT_EQ(fetch->gets.load(), 128);
    auto plain = std::make_shared<IndexDataset>(64, /*batch_fetch=*/false);
    Loader c(plain, LoaderOptions(16).num_workers(workers));
    EXPECT_EQ(drain(c), iota(64));
    EXPECT_EQ(plain->batch_calls.load(), 0);
    EXPECT_EQ(plain->gets.load(), 64);
  }
}

// ------------------------------------------------------------------------------ out-of-order completion

// Batch 0's fetch waits until batch 1 has been built, so with two workers batch 1 always finishes first.
// Deterministic, no sleeps: a loader that never ran two batches at once would hang here (ctest's timeout).
class GatedDataset : public Dataset {
 public:
  explicit GatedDataset(int64_t n, int64_t batch) : n_(n), batch_(batch) {}
  int64_t size() const override { return n_; }
  Example get(int64_t index) const override {
    return {torch::full({1}, index, torch::kInt64), torch::tensor(int64_t{0})};
  }
  bool has_batch_fetch() const override { return true; }
  Example get_batch(const std::vector<int64_t>& indices) const override {
    const int64_t k = indices.front() / batch_;
    std::unique_lock<std::mutex> lock(mutex_);
    if (k == 0) cv_.wait(lock, [this] { return batch1_done_; });
    lock.unlock();
    Example e = Dataset::get_batch(indices);
    lock.lock();
    completion.push_back(k);
    if (k == 1) batch1_done_ = true;
    cv_.notify_all();
    return e;
  }
  mutable std::vector<int64_t> completion;  // guarded by mutex_; read after the epoch

 private:
  int64_t n_, batch_;
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  mutable bool batch1_done_ = false;
};

TEST(Loader, OutOfOrderCompletionIsHandedBackInOrder) {
  for (bool persistent : {false, true}) {
    auto ds = std::make_shared<GatedDataset>(40, 4);
    Loader loader(ds, LoaderOptions(4).num_workers(2).persistent_workers(persistent));
    EXPECT_EQ(drain(loader), iota(40));
    ASSERT_GE(ds->completion.size(), 2u);
    const auto first = std::find(ds->completion.begin(), ds->completion.end(), 0);
    const auto second = std::find(ds->completion.begin(), ds->completion.end(), 1);
    EXPECT_LT(second, first) << "batch 1 finished before batch 0";
  }
}

TEST(Loader, RandomDelaysStillGiveSamplerOrder) {
  auto ds = std::make_shared<IndexDataset>(300, false, 1000);
  Loader loader(ds, LoaderOptions(5).shuffle(true).seed(5).num_workers(4).prefetch_factor(3));
  EXPECT_EQ(drain(loader), loader.epoch_indices(0));
  EXPECT_EQ(drain(loader), loader.epoch_indices(1));
}

// ------------------------------------------------------------------------------------------- exceptions

TEST(Loader, WorkerExceptionIsRethrownWithItsTypeAndMessage) {
  for (int64_t workers : {0, 3}) {
    for (bool persistent : {false, true}) {
      auto ds = std::make_shared<IndexDataset>(100);
      ds->throw_at = 37;
      Loader loader(ds, LoaderOptions(8).num_workers(workers).persistent_workers(persistent));
      auto epoch = loader.epoch();
      EXPECT_EQ(drain_until_failure(epoch, "bad sample 37", workers), iota(32))
          << "the four batches before the failing one arrived, in order";
      EXPECT_FALSE(epoch.next().has_value());  // poisoned: finished, no hang, no second throw
      EXPECT_FALSE(epoch.next().has_value());
    }
  }
}

TEST(Loader, AfterAWorkerExceptionTheNextEpochWorks) {
  for (int64_t workers : {0, 3}) {
    for (bool persistent : {false, true}) {
      auto ds = std::make_shared<IndexDataset>(100, false, 300);
      Loader loader(ds, LoaderOptions(8).num_workers(workers).persistent_workers(persistent));
      ds->throw_at = 9;
      EXPECT_THROW(drain(loader), SampleError);
      ds->throw_at = -1;
      EXPECT_EQ(drain(loader), iota(100)) << workers << " workers, persistent " << persistent;
    }
  }
}

// ------------------------------------------------------------------------------------------ leaving early

TEST(Loader, LeavingEarlyThenRunningAFullEpochWorks) {
  for (int64_t workers : {0, 1, 3}) {
    for (bool persistent : {false, true}) {
      auto ds = std::make_shared<IndexDataset>(200, false, 300);
      Loader loader(ds, LoaderOptions(10).num_workers(workers).persistent_workers(persistent).shuffle(true));
      {
        auto epoch = loader.epoch();
        ASSERT_TRUE(epoch.next().has_value());
      }  // destroyed after one batch: stops the prefetched work; a hang here fails by ctest's timeout
      {
        auto epoch = loader.epoch();
        for (auto& b : epoch) {
          (void)b;
          break;  // leaving a range-for early
        }
      }
      try {
        auto epoch = loader.epoch();
        for (auto& b : epoch) {
          (void)b;
          throw std::runtime_error("consumer failed");
        }
      } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "consumer failed");
      }
      EXPECT_EQ(drain(loader), loader.epoch_indices(3)) << workers << " workers, persistent " << persistent;
    }
  }
}

TEST(Loader, AnEpochMayOutliveItsLoader) {
  auto ds = std::make_shared<IndexDataset>(60, false, 300);
  std::optional<Epoch> epoch;
  std::vector<int64_t> expected;
  {
    Loader loader(ds, LoaderOptions(6).shuffle(true).num_workers(2).persistent_workers(true));
    expected = loader.epoch_indices(0);
    epoch.emplace(loader.epoch());
  }
  std::vector<int64_t> got;
  for (auto& b : *epoch) {
    const auto v = flatten(b);
    got.insert(got.end(), v.begin(), v.end());
  }
  EXPECT_EQ(got, expected);
  epoch.reset();  // joins the pool the Loader left behind
}

TEST(Loader, OnlyOneLiveEpochAtATime) {
  auto ds = std::make_shared<IndexDataset>(20);
  Loader loader(ds, LoaderOptions(5).num_workers(1));
  {
    auto epoch = loader.epoch();
    EXPECT_THROW(loader.epoch(), InvalidArgument);
  }
  EXPECT_EQ(drain(loader), iota(20));  // the refused call did not spoil the next one
}

TEST(Loader, AMovedEpochCarriesOnAndTheMovedFromOneIsEmpty) {
  auto ds = std::make_shared<IndexDataset>(20);
  Loader loader(ds, LoaderOptions(5).num_workers(2));
  auto a = loader.epoch();
  ASSERT_TRUE(a.next().has_value());
  Epoch b(std::move(a));
  EXPECT_FALSE(a.next().has_value());  // NOLINT(bugprone-use-after-move): the documented moved-from state
  EXPECT_EQ(a.stats().batches, 0);
  int64_t rest = 0;
  while (b.next()) ++rest;
  EXPECT_EQ(rest, 3);
  EXPECT_EQ(b.stats().batches, 4);
}

size_t thread_count() {
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    (void)entry;
    ++n;
  }
  return n;
}

TEST(Loader, LeavesNoThreadBehind) {
  if (!std::filesystem::exists("/proc/self/task")) GTEST_SKIP() << "needs Linux's /proc";
  auto ds = std::make_shared<IndexDataset>(200, false, 300);
  const size_t before = thread_count();
  {
    Loader per_epoch(ds, LoaderOptions(10).num_workers(3));
    Loader persistent(ds, LoaderOptions(10).num_workers(4).persistent_workers(true));
    {
      auto e = persistent.epoch();
      ASSERT_TRUE(e.next().has_value());
      EXPECT_GE(thread_count(), before + 4);  // the count does see our workers
    }
    {
      auto e = per_epoch.epoch();
      ASSERT_TRUE(e.next().has_value());
    }
    ds->throw_at = 55;
    EXPECT_THROW(drain(per_epoch), SampleError);
    EXPECT_THROW(drain(persistent), SampleError);
    ds->throw_at = -1;
    EXPECT_EQ(drain(per_epoch).size(), 200u);
    EXPECT_EQ(drain(persistent).size(), 200u);
  }
  // join() returns as the thread exits; the kernel may list it a moment longer. Wait it out (generously).
  for (int i = 0; i < 1000 && thread_count() > before; ++i) std::this_thread::sleep_for(milliseconds(10));
  EXPECT_EQ(thread_count(), before);
}

// ------------------------------------------------------------------------------------------------ bound

TEST(Loader, PrefetchIsBounded) {
  struct Case {
    int64_t workers, prefetch;
    bool persistent;
  };
  for (const Case c : {Case{2, 3, false}, Case{3, 1, true}, Case{1, 2, false}}) {
    const int64_t window = c.workers * c.prefetch;
    auto ds = std::make_shared<IndexDataset>(400, /*batch_fetch=*/true);
    Loader loader(ds, LoaderOptions(4).num_workers(c.workers).prefetch_factor(c.prefetch).persistent_workers(c.persistent));
    auto epoch = loader.epoch();
    ASSERT_TRUE(epoch.next().has_value());
    ds->consumed = 1;
    // A consumer that stops asking: the workers fill the window (waiting for that cannot fail, only hang)...
    while (ds->batch_calls.load() < 1 + window) std::this_thread::sleep_for(milliseconds(1));
    // ...and must then stop. Sleeping can only miss an overrun, never invent one.
    std::this_thread::sleep_for(milliseconds(30));
    EXPECT_EQ(ds->batch_calls.load(), 1 + window);
    // A slow consumer for the rest of the epoch.
    while (auto b = epoch.next()) {
      ++ds->consumed;
      if (ds->consumed.load() % 10 == 0) std::this_thread::sleep_for(milliseconds(2));
    }
    EXPECT_EQ(ds->consumed.load(), 100);
    // The test counts a batch as consumed just after next() returns it, while next() has already asked for
    // the following one: one batch of slack, within the bound the spec allows (window + num_workers).
    EXPECT_LE(ds->max_ahead.load(), window + 1);
    EXPECT_LE(ds->max_outstanding.load(), c.workers);  // never more batches at once than workers
  }
}

// -------------------------------------------------------------------------------------- options, pinning

TEST(Loader, RejectsInvalidOptions) {
  auto ds = std::make_shared<IndexDataset>(10);
  EXPECT_THROW(Loader(ds, LoaderOptions(0)), InvalidArgument);
  EXPECT_THROW(Loader(ds, LoaderOptions(-3)), InvalidArgument);
  EXPECT_THROW(Loader(ds, LoaderOptions(4).num_workers(-1)), InvalidArgument);
  EXPECT_THROW(Loader(ds, LoaderOptions(4).prefetch_factor(0)), InvalidArgument);
  EXPECT_THROW(Loader(nullptr, LoaderOptions(4)), InvalidArgument);
  EXPECT_NO_THROW(Loader(ds, LoaderOptions(4).num_workers(0).prefetch_factor(1)));
}

TEST(Loader, PinMemoryIsPinnedWithCudaAndANoOpWithout) {
  auto ds = std::make_shared<IndexDataset>(8);
  for (int64_t workers : {0, 2}) {
    Loader loader(ds, LoaderOptions(4).pin_memory(true).num_workers(workers));
    EXPECT_EQ(loader.pin_memory_active(), torch::cuda::is_available());
    auto epoch = loader.epoch();
    auto b = epoch.next();
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->data.is_pinned(), torch::cuda::is_available());
    EXPECT_EQ(b->target.is_pinned(), torch::cuda::is_available());
    EXPECT_EQ(flatten(*b), (std::vector<int64_t>{0, 1, 2, 3}));
  }
  Loader off(ds, LoaderOptions(4).pin_memory(false));
  EXPECT_FALSE(off.pin_memory_active());
}

// ------------------------------------------------------------------------------------------------ stats

TEST(Loader, StatsSplitWaitingFromStepping) {
  for (int64_t workers : {0, 2}) {
    auto ds = std::make_shared<IndexDataset>(40);
    Loader loader(ds, LoaderOptions(10).num_workers(workers));
    auto epoch = loader.epoch();
    for (auto& b : epoch) {
      (void)b;
      std::this_thread::sleep_for(milliseconds(5));  // the consumer's "step"
    }
    EXPECT_EQ(epoch.stats().batches, 4);
    EXPECT_EQ(epoch.stats().samples, 40);
    // sleep_for sleeps at least that long, so this lower bound cannot flake.
    EXPECT_GE(epoch.stats().step_seconds, 4 * 0.005);
    EXPECT_GT(epoch.stats().wait_seconds, 0.0);
  }
}

}  // namespace
}  // namespace feedline
