// Internal: runs f(0..n-1) on up to `threads` threads (the caller's included), handing out indices in order.
// The first failure stops further work; the exception of the lowest failing index is rethrown in the caller.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace feedline::parquet {

inline int resolve_threads(int requested) {
  if (requested > 0) return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

template <class F>
void parallel_for(size_t n, int threads, F&& f) {
  threads = static_cast<int>(std::min<size_t>(static_cast<size_t>(std::max(threads, 1)), n));
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) f(i);
    return;
  }
  // Tasks start in index order, so once task i fails every task before it has started: the exception kept is
  // that of the lowest failing index, the one a serial loop would throw, whatever the timing.
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first;
  size_t first_index = SIZE_MAX;
  std::mutex mutex;
  auto worker = [&] {
    while (!failed.load(std::memory_order_relaxed)) {
      const size_t i = next.fetch_add(1);
      if (i >= n) break;
      try {
        f(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (i < first_index) {
          first = std::current_exception();
          first_index = i;
        }
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads - 1));
  for (int t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {
      break;  // fewer threads than asked: the ones we have finish the work
    }
  }
  worker();
  for (std::thread& t : pool) t.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace feedline::parquet
