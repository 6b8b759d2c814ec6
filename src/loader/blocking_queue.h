// Internal to the loader. A bounded blocking FIFO (PyTorch's detail::Queue, with a capacity and a close()).
//
// push() blocks while the queue is full, pop() while it is empty; close() wakes both sides for good: push()
// then drops the item and returns false, pop() drains what is left and then returns nothing. clear() removes
// the waiting items and says how many, so an owner that counts work in flight can subtract them.
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace feedline {
namespace detail {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}
  BoundedQueue(const BoundedQueue&) = delete;
  BoundedQueue& operator=(const BoundedQueue&) = delete;

  bool push(T item) {
    std::unique_lock<std::mutex> lock(mutex_);
    not_full_.wait(lock, [this] { return closed_ || items_.size() < capacity_; });
    if (closed_) return false;
    items_.push_back(std::move(item));
    lock.unlock();
    not_empty_.notify_one();
    return true;
  }

  std::optional<T> pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    not_empty_.wait(lock, [this] { return closed_ || !items_.empty(); });
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    lock.unlock();
    not_full_.notify_one();
    return item;
  }

  size_t clear() {
    std::deque<T> dropped;  // destroyed outside the lock
    {
      std::lock_guard<std::mutex> lock(mutex_);
      dropped.swap(items_);
    }
    not_full_.notify_all();
    return dropped.size();
  }

  void close() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
    }
    not_full_.notify_all();
    not_empty_.notify_all();
  }

  size_t capacity() const { return capacity_; }

 private:
  const size_t capacity_;
  std::mutex mutex_;
  std::condition_variable not_full_, not_empty_;
  std::deque<T> items_;
  bool closed_ = false;
};

}  // namespace detail
}  // namespace feedline
