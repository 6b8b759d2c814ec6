// Internal to the loader. Puts results back into sequence order (PyTorch's detail::sequencers::OrderedSequencer).
//
// Workers finish batches in any order; the consumer asks for batch 0, 1, 2, ... and the sequencer keeps the
// ones that arrived early until their turn. It holds at most as many results as are in flight, which the
// loader bounds, so the buffer is bounded too.
//
// Thread-safety: none; only the consumer uses it. The threads meet in the queue that `pull` reads.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>

namespace feedline {
namespace detail {

// Result: any movable type with an `int64_t sequence_number`.
template <typename Result>
class OrderedSequencer {
 public:
  // Returns the result numbered expected(), calling pull() (blocking; nullopt when nothing more can come)
  // until it has arrived. Returns nullopt if pull() runs dry first.
  template <typename Pull>
  std::optional<Result> next(Pull&& pull) {
    std::optional<Result> out;
    auto it = early_.find(expected_);
    if (it != early_.end()) {
      out = std::move(it->second);
      early_.erase(it);
    } else {
      for (;;) {
        std::optional<Result> r = pull();
        if (!r) return std::nullopt;
        if (r->sequence_number == expected_) {
          out = std::move(r);
          break;
        }
        const int64_t n = r->sequence_number;
        early_.emplace(n, std::move(*r));
      }
    }
    ++expected_;
    return out;
  }

  int64_t expected() const { return expected_; }
  // Starts the count at `first` (a resumed epoch's first batch). Only before the first next().
  void start_at(int64_t first) { expected_ = first; }
  size_t buffered() const { return early_.size(); }
  void clear() { early_.clear(); }

 private:
  int64_t expected_ = 0;
  std::map<int64_t, Result> early_;  // arrived before their turn
};

}  // namespace detail
}  // namespace feedline
