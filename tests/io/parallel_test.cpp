#include "io/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace feedline {
namespace {

TEST(ParallelFor, RunsEveryIndexOnce) {
  for (const size_t n : {0, 1, 2, 7, 100, 10000}) {
    for (const int threads : {1, 2, 3, 8, 64}) {
      std::vector<std::atomic<int>> runs(n);
      parallel_for(n, threads, [&](size_t i) { runs[i].fetch_add(1); });
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(runs[i].load(), 1) << "n " << n << ", threads " << threads << ", i " << i;
    }
  }
}

TEST(ParallelFor, UsesSeveralThreadsAndTheCallers) {
  const std::thread::id caller = std::this_thread::get_id();
  std::mutex mutex;
  std::set<std::thread::id> seen;
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  parallel_for(64, 4, [&](size_t) {
    const int now = inside.fetch_add(1) + 1;
    int was = most.load();
    while (now > was && !most.compare_exchange_weak(was, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    inside.fetch_sub(1);
    std::lock_guard<std::mutex> lock(mutex);
    seen.insert(std::this_thread::get_id());
  });
  EXPECT_TRUE(seen.count(caller));
  EXPECT_GE(seen.size(), 2u);
  EXPECT_LE(most.load(), 4);
}

TEST(ParallelFor, OneThreadRunsInOrderOnTheCaller) {
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<size_t> order;
  parallel_for(50, 1, [&](size_t i) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    order.push_back(i);
  });
  ASSERT_EQ(order.size(), 50u);
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], i);
}

TEST(ParallelFor, NothingToRunCallsNothing) {
  int calls = 0;
  parallel_for(0, 8, [&](size_t) { ++calls; });
  parallel_for_blocks(10, 10, 1, 8, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ParallelFor, OneIndexRunsOnTheCaller) {
  const std::thread::id caller = std::this_thread::get_id();
  std::thread::id ran;
  parallel_for(1, 16, [&](size_t) { ran = std::this_thread::get_id(); });
  EXPECT_EQ(ran, caller);
}

// More threads than cores (and than the pool has yet) still runs every index once.
TEST(ParallelFor, MoreThreadsThanCores) {
  const int threads = 4 * resolve_threads(0) + 3;
  const size_t n = static_cast<size_t>(threads) * 5;
  std::vector<std::atomic<int>> runs(n);
  parallel_for(n, threads, [&](size_t i) { runs[i].fetch_add(1); });
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(runs[i].load(), 1) << i;
}

// The exception a serial loop would throw: the lowest failing index's, even when a higher one fails first.
TEST(ParallelFor, RethrowsTheLowestFailingIndex) {
  for (int round = 0; round < 20; ++round) {
    try {
      parallel_for(40, 4, [&](size_t i) {
        if (i == 3) {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          throw std::runtime_error("index 3");
        }
        if (i >= 4) throw std::runtime_error("index " + std::to_string(i));
      });
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "index 3");
    }
  }
}

// The other indices each pause 20 microseconds, so that running them all (seconds) would outlast even a slow throw (under
// AddressSanitizer the first one takes milliseconds): without the pause, the second thread could finish them all
// before the failure is recorded.
TEST(ParallelFor, StopsHandingOutIndicesAfterAFailure) {
  std::atomic<size_t> ran{0};
  EXPECT_THROW(parallel_for(100000, 2,
                            [&](size_t i) {
                              ran.fetch_add(1);
                              if (i == 0) throw std::invalid_argument("first");
                              std::this_thread::sleep_for(std::chrono::microseconds(20));
                            }),
               std::invalid_argument);
  EXPECT_LT(ran.load(), 100000u);
}

// A task that calls parallel_for again, with every helper busy, still finishes: the caller takes its own indices.
TEST(ParallelFor, NestedCallsFinish) {
  std::atomic<int> total{0};
  parallel_for(8, 8, [&](size_t) {
    parallel_for(8, 8, [&](size_t) {
      parallel_for(4, 4, [&](size_t) { total.fetch_add(1); });
    });
  });
  EXPECT_EQ(total.load(), 8 * 8 * 4);
}

// A failure inside a nested call reaches the outer caller as the lowest failing index's, level by level.
TEST(ParallelFor, NestedFailuresReachTheCaller) {
  for (int round = 0; round < 10; ++round) {
    try {
      parallel_for(6, 4, [&](size_t i) {
        parallel_for(6, 4, [&](size_t j) {
          if (i == 1 && j == 2) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            throw std::runtime_error("1.2");
          }
          if (i >= 2 && j == 0) throw std::runtime_error(std::to_string(i) + ".0");
        });
      });
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "1.2");
    }
  }
}

TEST(ParallelFor, CallsFromManyThreadsAtOnce) {
  std::vector<std::thread> callers;
  std::atomic<int> total{0};
  for (int t = 0; t < 6; ++t) {
    callers.emplace_back([&] {
      for (int k = 0; k < 50; ++k) parallel_for(16, 3, [&](size_t) { total.fetch_add(1); });
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 6 * 50 * 16);
}

TEST(ParallelForBlocks, CoversTheRangeOnceInBlocksOfAtLeastTheGrain) {
  for (const int64_t first : {int64_t{0}, int64_t{5}}) {
    for (const int64_t count : {int64_t{0}, int64_t{1}, int64_t{63}, int64_t{64}, int64_t{1000}}) {
      for (const int threads : {1, 2, 5}) {
        std::mutex mutex;
        std::vector<int> hits(static_cast<size_t>(count), 0);
        int blocks = 0;
        parallel_for_blocks(first, first + count, 64, threads, [&](int64_t begin, int64_t end) {
          std::lock_guard<std::mutex> lock(mutex);
          ++blocks;
          EXPECT_LT(begin, end);
          EXPECT_TRUE(end == first + count || end - begin >= 64) << begin << ".." << end;
          for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i - first)]++;
        });
        for (int h : hits) ASSERT_EQ(h, 1);
        EXPECT_LE(blocks, threads);
        EXPECT_EQ(blocks == 0, count == 0);
      }
    }
  }
}

TEST(ParallelFor, ResolvesThreadCounts) {
  EXPECT_EQ(resolve_threads(3), 3);
  EXPECT_GE(resolve_threads(0), 1);
  EXPECT_GE(resolve_threads(-1), 1);
}

}  // namespace
}  // namespace feedline
