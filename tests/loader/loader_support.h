// What the loader's tests share: a dataset whose samples are their own indices (with delays, failures and counters
// of how far the workers run ahead), and ways to drain an epoch into those indices.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "feedline/loader/loader.h"

namespace feedline::testing {

// A failure type of the dataset's own, to check that the consumer sees the type and not a copy or wrapper.
struct SampleError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Each sample's data is its own index, so a batch shows exactly which indices it holds.
class IndexDataset : public Dataset {
 public:
  explicit IndexDataset(int64_t n, bool batch_fetch = false, int jitter_us = 0)
      : n_(n), batch_fetch_(batch_fetch), jitter_us_(jitter_us) {}
  int64_t size() const override { return n_; }
  Example get(int64_t index) const override {
    ++gets;
    if (jitter_us_ > 0) {
      // Random per-sample delays make workers finish out of order.
      thread_local std::mt19937 gen(std::hash<std::thread::id>{}(std::this_thread::get_id()));
      std::this_thread::sleep_for(std::chrono::microseconds(gen() % jitter_us_));
    }
    if (index == throw_at.load()) throw SampleError("bad sample " + std::to_string(index));
    return {torch::full({1}, index, torch::kInt64), torch::tensor(index % 10, torch::kInt64)};
  }
  bool has_batch_fetch() const override { return batch_fetch_; }
  Example get_batch(const std::vector<int64_t>& indices) const override {
    const int64_t started = ++batch_calls;
    // How far the workers run ahead of the consumer: batches started minus batches the test has received.
    const int64_t ahead = started - consumed.load();
    int64_t seen = max_ahead.load();
    while (ahead > seen && !max_ahead.compare_exchange_weak(seen, ahead)) {
    }
    const int now = ++outstanding;
    int most = max_outstanding.load();
    while (now > most && !max_outstanding.compare_exchange_weak(most, now)) {
    }
    Example e = Dataset::get_batch(indices);
    --outstanding;
    return e;
  }

  mutable std::atomic<int64_t> gets{0}, batch_calls{0}, max_ahead{0};
  mutable std::atomic<int> outstanding{0}, max_outstanding{0};
  std::atomic<int64_t> consumed{0};  // advanced by the test as it receives batches
  std::atomic<int64_t> throw_at{-1};

 private:
  int64_t n_;
  bool batch_fetch_;
  int jitter_us_;
};

inline std::vector<int64_t> flatten(const Example& batch) {
  std::vector<int64_t> out;
  const auto flat = batch.data.flatten();
  for (int64_t i = 0; i < flat.size(0); ++i) out.push_back(flat[i].item<int64_t>());
  return out;
}

inline std::vector<int64_t> drain(Loader& loader) {
  std::vector<int64_t> out;
  auto epoch = loader.epoch();
  for (auto& batch : epoch) {
    const auto v = flatten(batch);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

// Drains `epoch`, which must fail with a SampleError saying `message` (its type and words, not a copy or wrapper);
// returns the indices of the batches handed out before the failure.
inline std::vector<int64_t> drain_until_failure(Epoch& epoch, const char* message, int64_t workers) {
  std::vector<int64_t> good;
  try {
    for (auto& b : epoch) {
      const auto v = flatten(b);
      good.insert(good.end(), v.begin(), v.end());
    }
    ADD_FAILURE() << "no exception with " << workers << " workers";
  } catch (const SampleError& e) {
    EXPECT_STREQ(e.what(), message);
  }
  return good;
}

inline std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

}  // namespace feedline::testing
