// RowGroupCache (src/dataset/row_group_cache.h) on its own, with a read function the test controls: one read for
// many callers at once, the least recently used row group evicted (while it is read, too), a failed read rethrown
// and read again by the next call.
#include "dataset/row_group_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace feedline::detail {
namespace {

struct Block {
  int64_t row_group = -1;
};

std::shared_ptr<const Block> block_of(int64_t row_group) { return std::make_shared<const Block>(Block{row_group}); }

TEST(RowGroupCache, KeepsTheRowGroupsUsedLastAndCountsEachRead) {
  std::vector<int64_t> reads;
  RowGroupCache<Block> cache(2, [&](int64_t g) {
    reads.push_back(g);
    return block_of(g);
  });
  EXPECT_EQ(cache.get(0)->row_group, 0);
  EXPECT_EQ(cache.get(1)->row_group, 1);
  EXPECT_EQ(cache.get(0)->row_group, 0);  // held: 0 is now the most recently used
  EXPECT_EQ(cache.get(2)->row_group, 2);  // evicts 1, the least recently used
  EXPECT_EQ(cache.get(0)->row_group, 0);
  EXPECT_EQ(cache.get(1)->row_group, 1);  // read again
  EXPECT_EQ(reads, (std::vector<int64_t>{0, 1, 2, 1}));
  EXPECT_EQ(cache.reads(), 4);
}

TEST(RowGroupCache, CallersAskingAtOnceWaitForOneRead) {
  std::mutex mutex;
  std::condition_variable cv;
  bool release = false;
  std::atomic<int> reads{0};
  RowGroupCache<Block> cache(4, [&](int64_t g) {
    ++reads;
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return release; });
    return block_of(g);
  });
  std::vector<std::shared_ptr<const Block>> got(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i) threads.emplace_back([&, i] { got[i] = cache.get(5); });
  // Most of them ask while the read waits; one that asks later finds the block held: one read either way.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  {
    std::lock_guard<std::mutex> lock(mutex);
    release = true;
  }
  cv.notify_all();
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(reads.load(), 1);
  for (const auto& block : got) EXPECT_EQ(block, got[0]);  // the one block, shared
  EXPECT_EQ(cache.reads(), 1);
}

TEST(RowGroupCache, AFailedReadReachesItsCallersAndIsNotKept) {
  std::atomic<bool> failing{true};
  std::atomic<int> attempts{0};
  RowGroupCache<Block> cache(4, [&](int64_t g) -> std::shared_ptr<const Block> {
    ++attempts;
    if (failing) throw std::runtime_error("row group " + std::to_string(g) + " is corrupt");
    return block_of(g);
  });
  // However the callers meet (waiting on one read, or each reading after the last failed), each gets the error.
  std::vector<std::string> errors(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < errors.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        cache.get(3);
      } catch (const std::runtime_error& e) {
        errors[i] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "row group 3 is corrupt");
  EXPECT_EQ(cache.reads(), 0);  // a failed read is no read
  const int failed = attempts.load();
  failing = false;
  EXPECT_EQ(cache.get(3)->row_group, 3);  // read again, not the error kept
  EXPECT_EQ(attempts.load(), failed + 1);
  EXPECT_EQ(cache.reads(), 1);
}

TEST(RowGroupCache, EvictingARowGroupStillBeingReadLeavesItsCallerTheBlock) {
  std::mutex mutex;
  std::condition_variable cv;
  bool reading = false, release = false;
  RowGroupCache<Block> cache(1, [&](int64_t g) {
    if (g == 0) {
      std::unique_lock<std::mutex> lock(mutex);
      reading = true;
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
    }
    return block_of(g);
  });
  std::shared_ptr<const Block> slow;
  std::thread reader([&] { slow = cache.get(0); });
  {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return reading; });
  }
  EXPECT_EQ(cache.get(1)->row_group, 1);  // evicts 0 while it is read
  {
    std::lock_guard<std::mutex> lock(mutex);
    release = true;
  }
  cv.notify_all();
  reader.join();
  EXPECT_EQ(slow->row_group, 0);
  EXPECT_EQ(cache.get(0)->row_group, 0);  // evicted, so read again
  EXPECT_EQ(cache.reads(), 3);
}

}  // namespace
}  // namespace feedline::detail
