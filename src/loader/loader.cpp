// The loader's pieces, each with one job:
//   Sampler     - the epoch's index order, from (seed, epoch) by our own generator;
//   BatchMaker  - turns a list of indices into a batch (batch fetch or get + collate), pinning if asked;
//   Run         - one epoch's shared state: which batch workers claim next, finished batches keyed by
//                 number (the sequencer), and the bound on how far workers may run ahead (the queue bound);
//   WorkerPool  - threads that claim batches from the current Run; per epoch, or kept across epochs.
#include "feedline/loader.h"

#include <torch/cuda.h>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "feedline/error.h"

namespace feedline {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// SplitMix64: spreads (seed, epoch) over the generator's seed space so neighbouring epochs are unrelated.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

std::vector<int64_t> sample_indices(int64_t n, bool shuffle, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) idx[static_cast<size_t>(i)] = i;
  if (shuffle && n > 1) {
    std::mt19937_64 gen(mix(seed ^ mix(static_cast<uint64_t>(epoch))));
    // Fisher-Yates with our own bounded draw: std::uniform_int_distribution differs between libraries.
    for (int64_t i = n - 1; i > 0; --i) {
      const uint64_t bound = static_cast<uint64_t>(i) + 1;
      const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
      uint64_t r;
      do {
        r = gen();
      } while (r >= limit);
      std::swap(idx[static_cast<size_t>(i)], idx[static_cast<size_t>(r % bound)]);
    }
  }
  return idx;
}

}  // namespace

namespace detail {

// --------------------------------------------------------------------------------------------- BatchMaker

struct BatchMaker {
  std::shared_ptr<const Dataset> dataset;
  bool batch_fetch;
  bool pin;

  Example make(const std::vector<int64_t>& indices) const {
    Example b = batch_fetch ? dataset->get_batch(indices) : dataset->Dataset::get_batch(indices);
    if (pin) {
      b.data = b.data.pin_memory();
      b.target = b.target.pin_memory();
    }
    return b;
  }
};

// ------------------------------------------------------------------------------------------------- Run

// One epoch's work. Guarded by the owning pool's mutex.
struct Run {
  std::vector<int64_t> indices;
  int64_t batch_size = 1;
  int64_t batches = 0;
  int64_t window = 1;         // batches claimed ahead of the consumer, at most
  int64_t next_to_claim = 0;  // the next batch a worker will build
  int64_t next_to_return = 0;
  bool cancelled = false;
  int64_t in_flight = 0;
  struct Result {
    std::optional<Example> batch;
    std::exception_ptr error;
  };
  std::map<int64_t, Result> ready;  // the sequencer: finished batches by number

  bool claimable() const { return !cancelled && next_to_claim < batches && next_to_claim < next_to_return + window; }
  std::vector<int64_t> batch_indices(int64_t k) const {
    const int64_t begin = k * batch_size;
    const int64_t end = std::min<int64_t>(begin + batch_size, static_cast<int64_t>(indices.size()));
    return std::vector<int64_t>(indices.begin() + begin, indices.begin() + end);
  }
};

// -------------------------------------------------------------------------------------------- WorkerPool

struct WorkerPool {
  std::mutex mutex;
  std::condition_variable work_cv;    // workers wait here for claimable batches
  std::condition_variable result_cv;  // the consumer waits here for its next batch
  std::shared_ptr<Run> run;
  bool shutdown = false;
  BatchMaker maker;
  std::vector<std::thread> threads;

  WorkerPool(BatchMaker m, int64_t workers) : maker(std::move(m)) {
    threads.reserve(static_cast<size_t>(workers));
    for (int64_t i = 0; i < workers; ++i) threads.emplace_back([this] { work(); });
  }

  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      shutdown = true;
      if (run) run->cancelled = true;
    }
    work_cv.notify_all();
    for (auto& t : threads) t.join();
  }

  void start(std::shared_ptr<Run> r) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      run = std::move(r);
    }
    work_cv.notify_all();
  }

  void work() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      work_cv.wait(lock, [this] { return shutdown || (run && run->claimable()); });
      if (shutdown) return;
      std::shared_ptr<Run> r = run;  // keeps the run alive while this worker builds its batch
      const int64_t k = r->next_to_claim++;
      ++r->in_flight;
      const auto indices = r->batch_indices(k);
      lock.unlock();
      Run::Result result;
      try {
        result.batch = maker.make(indices);
      } catch (...) {
        result.error = std::current_exception();
      }
      lock.lock();
      --r->in_flight;
      if (!r->cancelled) r->ready.emplace(k, std::move(result));
      result_cv.notify_all();
    }
  }
};

}  // namespace detail

// ------------------------------------------------------------------------------------------------- Epoch

struct Epoch::State {
  std::shared_ptr<detail::WorkerPool> pool;  // null when the consumer thread loads (num_workers == 0)
  std::shared_ptr<detail::Run> run;
  detail::BatchMaker maker;
  std::shared_ptr<std::atomic<bool>> live;
  bool finished = false;
  EpochStats stats;
  std::optional<Clock::time_point> last_return;

  ~State() {
    if (pool) {
      {
        std::unique_lock<std::mutex> lock(pool->mutex);
        run->cancelled = true;
        run->ready.clear();
        // Workers of a persistent pool may still be building one batch of this run; wait for them so the
        // next epoch starts from a quiet pool.
        pool->result_cv.wait(lock, [this] { return run->in_flight == 0; });
        if (pool->run == run) pool->run.reset();
      }
      pool->work_cv.notify_all();
    }
    if (live) live->store(false);
  }

  std::optional<Example> next() {
    const auto enter = Clock::now();
    if (last_return) stats.step_seconds += seconds_between(*last_return, enter);
    if (finished || run->next_to_return >= run->batches) {
      finished = true;
      return std::nullopt;
    }
    detail::Run::Result result;
    if (!pool) {
      try {
        result.batch = maker.make(run->batch_indices(run->next_to_return));
      } catch (...) {
        result.error = std::current_exception();
      }
      ++run->next_to_return;
    } else {
      std::unique_lock<std::mutex> lock(pool->mutex);
      pool->result_cv.wait(lock, [this] { return run->ready.count(run->next_to_return) > 0; });
      auto it = run->ready.find(run->next_to_return);
      result = std::move(it->second);
      run->ready.erase(it);
      ++run->next_to_return;
      lock.unlock();
      pool->work_cv.notify_all();  // a slot in the window opened
    }
    const auto leave = Clock::now();
    stats.wait_seconds += seconds_between(enter, leave);
    last_return = leave;
    if (result.error) {
      finished = true;
      std::rethrow_exception(result.error);
    }
    stats.batches += 1;
    stats.samples += result.batch->target.size(0);
    return std::move(result.batch);
  }
};

Epoch::Epoch(std::unique_ptr<State> state) : state_(std::move(state)) {}
Epoch::~Epoch() = default;
Epoch::Epoch(Epoch&&) noexcept = default;

std::optional<Example> Epoch::next() { return state_->next(); }
const EpochStats& Epoch::stats() const { return state_->stats; }

Epoch::Iterator::Iterator(Epoch* epoch, bool end) : epoch_(epoch), done_(end) {
  if (!end) {
    current_ = epoch_->next();
    done_ = !current_;
  }
}

Epoch::Iterator& Epoch::Iterator::operator++() {
  current_ = epoch_->next();
  done_ = !current_;
  return *this;
}

// ------------------------------------------------------------------------------------------------ Loader

Loader::Loader(std::shared_ptr<const Dataset> dataset, LoaderOptions options)
    : dataset_(std::move(dataset)), options_(options), live_(std::make_shared<std::atomic<bool>>(false)) {
  if (!dataset_) throw InvalidArgument("Loader: no dataset");
  if (options_.batch_size() < 1) throw InvalidArgument("Loader: batch_size must be at least 1");
  if (options_.num_workers() < 0) throw InvalidArgument("Loader: num_workers must not be negative");
  if (options_.prefetch_factor() < 1) throw InvalidArgument("Loader: prefetch_factor must be at least 1");
  pin_memory_active_ = options_.pin_memory() && torch::cuda::is_available();
}

Loader::~Loader() = default;

int64_t Loader::batches_per_epoch() const {
  const int64_t n = dataset_->size(), b = options_.batch_size();
  return options_.drop_last() ? n / b : (n + b - 1) / b;
}

std::vector<int64_t> Loader::epoch_indices(int64_t epoch) const {
  return sample_indices(dataset_->size(), options_.shuffle(), options_.seed(), epoch);
}

Epoch Loader::epoch() {
  if (live_->exchange(true)) throw InvalidArgument("Loader: an epoch is still live; finish or destroy it first");
  auto state = std::make_unique<Epoch::State>();
  state->live = live_;
  auto run = std::make_shared<detail::Run>();
  run->indices = epoch_indices(next_epoch_++);
  run->batch_size = options_.batch_size();
  run->batches = batches_per_epoch();
  run->window = std::max<int64_t>(1, options_.num_workers() * options_.prefetch_factor());
  state->run = run;
  state->maker = detail::BatchMaker{dataset_, options_.batch_fetch() && dataset_->has_batch_fetch(), pin_memory_active_};
  if (options_.num_workers() > 0) {
    if (options_.persistent_workers()) {
      if (!pool_) pool_ = std::make_shared<detail::WorkerPool>(state->maker, options_.num_workers());
      state->pool = pool_;
    } else {
      state->pool = std::make_shared<detail::WorkerPool>(state->maker, options_.num_workers());
    }
    state->pool->start(run);
  }
  return Epoch(std::move(state));
}

}  // namespace feedline
