// Internal to the loader. A fixed set of threads running tasks from one bounded queue.
//
// The pool knows nothing about batches: the loader submits one task per batch, and each task catches its own
// exceptions and reports its own result (a task must not throw). discard_pending() drops the tasks no thread
// has started, so an epoch that ends early stops its outstanding work; the caller then waits for the tasks
// already running. Destruction drops the queued tasks and joins every thread after its current task.
//
// Thread-safety: submit() and discard_pending() may be called from any thread, but the loader calls them only
// from its consumer thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "loader/blocking_queue.h"

namespace feedline {
namespace detail {

class WorkerPool {
 public:
  WorkerPool(int64_t threads, size_t queue_capacity) : tasks_(queue_capacity) {
    threads_.reserve(static_cast<size_t>(threads));
    try {
      for (int64_t i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
    } catch (...) {
      // The system refused a thread: join the ones already started rather than let them terminate us.
      shut_down();
      throw;
    }
  }
  ~WorkerPool() { shut_down(); }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Blocks while the queue is full; returns false once the pool is shutting down.
  bool submit(std::function<void()> task) { return tasks_.push(std::move(task)); }
  // Drops the queued tasks that no thread has started; returns how many.
  size_t discard_pending() { return tasks_.clear(); }
  size_t size() const { return threads_.size(); }

 private:
  void work() {
    while (auto task = tasks_.pop()) (*task)();
  }
  void shut_down() {
    tasks_.close();
    tasks_.clear();
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
  }

  BoundedQueue<std::function<void()>> tasks_;
  std::vector<std::thread> threads_;
};

}  // namespace detail
}  // namespace feedline
