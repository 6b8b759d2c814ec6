#include "io/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

namespace feedline {
namespace {

// How long a thread that waits for the pool's work keeps looking before it sleeps: parallel_for is called in tight
// loops (a batch gather each step, often microseconds apart), where a wake-up costs more than the work; OpenMP
// runtimes spin for the same reason.
constexpr std::chrono::microseconds kSpin{200};

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until done() holds or kSpin has passed; returns done().
template <class Done>
bool spin_until(Done done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int k = 0; k < 64; ++k) {
      if (done()) return true;
      relax();
    }
    if (std::chrono::steady_clock::now() >= until) return done();
  }
}

// One parallel_for call: its indices, handed out in order to whichever threads join it.
class Job {
 public:
  Job(size_t n, const std::function<void(size_t)>& f) : n_(n), f_(f) {}

  // Takes indices until none are left or one has failed.
  void run() {
    while (!failed_.load(std::memory_order_relaxed)) {
      const size_t i = next_.fetch_add(1);
      if (i >= n_) break;
      try {
        f_(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (i < first_index_) {
          first_ = std::current_exception();
          first_index_ = i;
        }
        failed_ = true;
      }
    }
  }

  // A helper joins, unless the caller has finished with the job already (a ticket taken late).
  bool join() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return false;
    helpers_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  void leave() {
    if (helpers_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    std::lock_guard<std::mutex> lock(mutex_);  // the caller is either before its check or waiting: not lost
    done_.notify_all();
  }

  // The caller, its own run() over: no helper joins from now on; waits for those inside (a short spin first, as
  // they are usually about to finish), then rethrows.
  void close_and_wait() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
    }
    spin_until([&] { return helpers_.load(std::memory_order_acquire) == 0; });
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return helpers_.load(std::memory_order_acquire) == 0; });
    if (first_) std::rethrow_exception(first_);
  }

 private:
  const size_t n_;
  const std::function<void(size_t)>& f_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> failed_{false};
  std::mutex mutex_;
  std::condition_variable done_;
  std::exception_ptr first_;
  size_t first_index_ = SIZE_MAX;
  std::atomic<int> helpers_{0};  // helpers inside run()
  bool closed_ = false;
};

// The process-wide helpers: threads that wait for tickets (a job to join) and run them. Never destroyed, so that a
// job posted while the process exits finds its pool; the threads end with the process.
class Pool {
 public:
  static Pool& instance() {
    static Pool* pool = new Pool;
    return *pool;
  }

  // Asks `count` helpers to join `job`, starting threads up to `count` (at most kMaxThreads); returns how many
  // tickets were posted (fewer when the system refuses a thread and none are running).
  size_t post(const std::shared_ptr<Job>& job, size_t count) {
    std::lock_guard<std::mutex> lock(mutex_);
    while (threads_ < std::min(count, kMaxThreads)) {
      try {
        std::thread([this] { work(); }).detach();
      } catch (const std::system_error&) {
        break;  // fewer threads than asked: the ones there are (and the caller) do the work
      }
      ++threads_;
    }
    count = std::min(count, threads_);
    for (size_t k = 0; k < count; ++k) tickets_.push_back(job);
    pending_.fetch_add(count, std::memory_order_release);
    // Helpers still spinning take the tickets without a wake-up; only sleeping ones need one.
    if (sleepers_ == 1 || (sleepers_ > 1 && count == 1)) {
      wake_.notify_one();
    } else if (sleepers_ > 1) {
      wake_.notify_all();
    }
    return count;
  }

  // Drops the tickets of `job` that no helper has taken.
  void withdraw(const std::shared_ptr<Job>& job) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto stale = std::remove(tickets_.begin(), tickets_.end(), job);
    pending_.fetch_sub(static_cast<size_t>(tickets_.end() - stale), std::memory_order_relaxed);
    tickets_.erase(stale, tickets_.end());
  }

 private:
  static constexpr size_t kMaxThreads = 256;

  void work() {
    for (;;) {
      const bool seen = spin_until([&] { return pending_.load(std::memory_order_acquire) != 0; });
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        if (tickets_.empty()) {
          if (seen) continue;  // another helper took it first: look again before sleeping
          ++sleepers_;
          wake_.wait(lock, [&] { return !tickets_.empty(); });
          --sleepers_;
        }
        job = std::move(tickets_.front());
        tickets_.pop_front();
        pending_.fetch_sub(1, std::memory_order_relaxed);
      }
      if (!job->join()) continue;
      job->run();
      job->leave();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> tickets_;
  std::atomic<size_t> pending_{0};  // tickets_.size(), for spinning helpers to read without the lock
  int sleepers_ = 0;                // helpers waiting on wake_
  size_t threads_ = 0;
};

}  // namespace

int resolve_threads(int requested) {
  if (requested > 0) return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

void parallel_for(size_t n, int threads, const std::function<void(size_t)>& f) {
  const size_t helpers = std::min(n, static_cast<size_t>(std::max(threads, 1))) - (n > 0 ? 1 : 0);
  if (helpers == 0) {
    for (size_t i = 0; i < n; ++i) f(i);
    return;
  }
  const auto job = std::make_shared<Job>(n, f);
  Pool& pool = Pool::instance();
  pool.post(job, helpers);
  job->run();
  pool.withdraw(job);
  job->close_and_wait();
}

void parallel_for_blocks(int64_t first, int64_t last, int64_t grain, int threads,
                         const std::function<void(int64_t, int64_t)>& f) {
  if (last <= first) return;
  const int64_t range = last - first;
  const int64_t most = std::max(threads, 1);
  const int64_t size = std::max<int64_t>(std::max<int64_t>(grain, 1), (range + most - 1) / most);
  const int64_t blocks = (range + size - 1) / size;
  parallel_for(static_cast<size_t>(blocks), threads, [&](size_t b) {
    const int64_t begin = first + static_cast<int64_t>(b) * size;
    const int64_t end = std::min(last, begin + size);
    if (begin < end) f(begin, end);
  });
}

}  // namespace feedline
