// Internal to the dataset layer: the few row groups a Parquet dataset used last, each read once and shared
// (ParquetStreamDataset's decoded ones, ParquetImageSource's image bytes). A row group not held is read, by `read`,
// on the thread of the first caller that asks for it; callers that ask meanwhile wait for that read and get its
// block or its error. A failed read is not kept: the next call reads again. Past `capacity` row groups the least
// recently used goes; evicting one still being read is safe, since whoever waits for it holds its shared state.
// Thread-safe: the loader's workers call get() at once; different row groups are read at once.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <utility>

namespace feedline::detail {

template <class Block>
class RowGroupCache {
 public:
  using Read = std::function<std::shared_ptr<const Block>(int64_t row_group)>;

  RowGroupCache(int64_t capacity, Read read) : capacity_(capacity), read_(std::move(read)) {}

  // The row group's block, read by this call or by the one that asked first; rethrows that read's error.
  std::shared_ptr<const Block> get(int64_t row_group) const {
    std::promise<std::shared_ptr<const Block>> promise;
    Pending pending;
    bool mine = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = find(row_group);
      if (it != held_.end()) {
        held_.splice(held_.begin(), held_, it);
        pending = it->second;
      } else {
        pending = promise.get_future().share();
        held_.emplace_front(row_group, pending);
        while (static_cast<int64_t>(held_.size()) > capacity_) held_.pop_back();
        mine = true;
      }
    }
    if (mine) {
      try {
        promise.set_value(read_(row_group));
        ++reads_;
      } catch (...) {
        promise.set_exception(std::current_exception());
        std::lock_guard<std::mutex> lock(mutex_);
        held_.remove_if([&](const auto& e) { return e.first == row_group; });
      }
    }
    return pending.get();
  }

  // Row groups read so far (a re-read after eviction counts again; a failed read does not).
  int64_t reads() const { return reads_.load(); }

 private:
  using Pending = std::shared_future<std::shared_ptr<const Block>>;
  using Held = std::list<std::pair<int64_t, Pending>>;  // most recently used first

  typename Held::iterator find(int64_t row_group) const {
    return std::find_if(held_.begin(), held_.end(), [&](const auto& e) { return e.first == row_group; });
  }

  const int64_t capacity_;
  const Read read_;
  mutable std::mutex mutex_;
  mutable Held held_;
  mutable std::atomic<int64_t> reads_{0};
};

}  // namespace feedline::detail
