// Internal to the dataset layer: fetching a remote dataset's blocks ahead of its reads, in the order the loader will
// read them (Dataset::will_read()). A block is whatever the source fetches as one (a tar shard's samples, a row
// group's chunks, one image file); `fetch` starts it in the background and returns at once.
//
// The blocks are taken in the order their first sample comes in the loader's order. `ahead` of them are fetched
// beyond the furthest block a read has reached (the loader's workers read a few blocks at once, near where the
// epoch stands): as reads reach a new block, the next one is fetched.
// Thread-safe: read() is called from the loader's workers at once.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace feedline::detail {

class ReadAheadFetcher {
 public:
  using Fetch = std::function<void(int64_t block, const std::vector<int64_t>& samples)>;

  ReadAheadFetcher(std::function<int64_t(int64_t)> block_of, Fetch fetch)
      : block_of_(std::move(block_of)), fetch_(std::move(fetch)) {}

  // A new epoch's order; fetches its first block and `ahead` more (none when ahead is 0).
  void start(const std::vector<int64_t>& order, int64_t ahead) {
    std::vector<int64_t> to_fetch;
    {
      std::lock_guard<std::mutex> lock(mu_);
      sequence_.clear();
      position_.clear();
      samples_.clear();
      reached_ = 1;  // the first block is the one being read
      next_ = 0;
      ahead_ = ahead;
      std::unordered_map<int64_t, bool> seen;
      for (const int64_t index : order) {
        const int64_t block = block_of_(index);
        if (position_.emplace(block, sequence_.size()).second) sequence_.push_back(block);
        if (!seen[index]) {
          seen[index] = true;
          samples_[block].push_back(index);
        }
      }
      to_fetch = take();
    }
    fetch_all(to_fetch);
  }

  // Sample `index` is being read: a read that reaches a block further on moves the window.
  void read(int64_t index) {
    std::vector<int64_t> to_fetch;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (sequence_.empty()) return;
      auto it = position_.find(block_of_(index));
      if (it == position_.end() || static_cast<int64_t>(it->second) + 1 <= reached_) return;
      reached_ = static_cast<int64_t>(it->second) + 1;
      to_fetch = take();
    }
    fetch_all(to_fetch);
  }

 private:
  // The blocks now due (under mu_).
  std::vector<int64_t> take() {
    std::vector<int64_t> due;
    if (ahead_ <= 0) return due;
    while (next_ < sequence_.size() && static_cast<int64_t>(next_) < reached_ + ahead_) {
      due.push_back(sequence_[next_++]);
    }
    return due;
  }

  // Outside mu_: a fetch may take a while to start (a request to open a file).
  void fetch_all(const std::vector<int64_t>& blocks) {
    for (const int64_t block : blocks) {
      std::vector<int64_t> samples;
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = samples_.find(block);
        if (it != samples_.end()) samples = it->second;
      }
      fetch_(block, samples);
    }
  }

  std::function<int64_t(int64_t)> block_of_;
  Fetch fetch_;
  std::unordered_map<int64_t, std::vector<int64_t>> samples_;  // each block's samples in the order
  std::mutex mu_;
  std::vector<int64_t> sequence_;
  std::unordered_map<int64_t, size_t> position_;  // of each block in sequence_
  int64_t reached_ = 0;  // blocks of sequence_ up to the furthest a read has reached
  size_t next_ = 0;
  int64_t ahead_ = 0;
};

}  // namespace feedline::detail
