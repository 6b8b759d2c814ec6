// The loader's pieces, each with one job:
//   epoch_permutation - the sampler: an epoch's index order, from (seed, epoch) by our own generator, block by
//                       block for a dataset that reads in blocks (dataset/permutation.h), or a mixture's plan;
//   BatchMaker        - turns a list of indices into a batch (the dataset's own make_batch, batch fetch, or get +
//                       collate), then pinned staging;
//   WorkerPool        - threads running one task per batch (worker_pool.h), per epoch or kept across epochs;
//   BoundedQueue      - where finished batches travel from the workers to the consumer (blocking_queue.h);
//   OrderedSequencer  - hands batches back in sampler order whatever order they finish in (sequencer.h);
//   EpochRun          - what one epoch's workers share: its indices, its result queue, cancellation and the
//                       count of tasks not yet finished, which an epoch that ends waits to reach zero.
// The bound: the consumer keeps at most num_workers * prefetch_factor batches submitted and not yet handed out
// (PyTorch's prefetch window), submitting one more each time it hands one out, so neither queue nor the
// sequencer can grow past that.
#include "feedline/loader/loader.h"

#include <torch/cuda.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

#include "feedline/dataset/encoded.h"
#include "feedline/io/error.h"
#include "feedline/io/remote.h"
#include "dataset/permutation.h"
#include "loader/blocking_queue.h"
#include "loader/sequencer.h"
#include "loader/worker_pool.h"

namespace feedline {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

}  // namespace

namespace detail {

// Turns indices into a batch. Shared by every worker: it only reads the dataset, which is immutable.
struct BatchMaker {
  std::shared_ptr<const Dataset> dataset;
  bool batch_fetch = false;
  bool pin = false;
  BatchTransform transform;  // may be empty
  bool makes_batches = false;  // the dataset makes each batch itself (Dataset::makes_batches())
  uint64_t seed = 0;           // LoaderOptions::seed, for such a dataset's per-sample randomness

  Example make(const std::vector<int64_t>& indices, const BatchInfo& info) const {
    Example batch;
    if (makes_batches) {
      batch = dataset->make_batch(indices, BatchContext{seed, info.epoch, pin});
      if (!transform) return batch;  // made in place, page-locked already when pinning
    } else {
      // The qualified call forces the per-sample path (get + collate) even when the dataset overrides it.
      batch = batch_fetch ? dataset->get_batch(indices) : dataset->Dataset::get_batch(indices);
    }
    batch = transformed(std::move(batch), info);
    return pin ? stage_pinned(std::move(batch)) : batch;
  }

  Example transformed(Example batch, const BatchInfo& info) const {
    return transform ? transform(std::move(batch), info) : batch;
  }

  // Pinned staging: page-locked host copies, so the consumer's .to(cuda, non_blocking) can overlap the copy.
  // Done in the worker, which is where PyTorch's pin-memory thread would otherwise spend the consumer's time.
  static Example stage_pinned(Example batch) {
    batch.data = batch.data.pin_memory();
    batch.target = batch.target.pin_memory();
    return batch;
  }
};

struct BatchResult {
  int64_t sequence_number = 0;
  std::optional<Example> batch;
  std::exception_ptr error;  // a worker's exception, rethrown by the consumer
};

// What one epoch's tasks share. Outlives the epoch while a task still holds it.
struct EpochRun {
  EpochRun(std::vector<int64_t> order, int64_t batch, BatchMaker m, size_t window, int64_t epoch_number,
           uint64_t seed)
      : indices(std::move(order)),
        batch_size(batch),
        maker(std::move(m)),
        results(window),
        epoch(epoch_number),
        epoch_seed(mix64(seed ^ mix64(~static_cast<uint64_t>(epoch_number)))) {}

  std::vector<int64_t> batch_indices(int64_t k) const {
    const int64_t begin = k * batch_size;
    const int64_t end = std::min<int64_t>(begin + batch_size, static_cast<int64_t>(indices.size()));
    return std::vector<int64_t>(indices.begin() + begin, indices.begin() + end);
  }

  // Batch k: a slice of the uploaded order for a device-resident dataset, else the maker's work.
  Example make_batch(int64_t k) const {
    // The transform's seed: a stream of its own (the sampler's is mix64(seed ^ mix64(epoch))), one value a batch.
    const BatchInfo info{epoch, k, mix64(epoch_seed ^ mix64(static_cast<uint64_t>(k)))};
    if (!device_order.defined()) return maker.make(batch_indices(k), info);
    const int64_t begin = k * batch_size;
    const int64_t end = std::min<int64_t>(begin + batch_size, device_order.size(0));
    return maker.transformed(maker.dataset->gather(device_order.slice(0, begin, end)), info);
  }

  // A worker's task for batch k. Never throws: a failure travels to the consumer as an exception_ptr.
  void build(int64_t k) noexcept {
    if (!cancelled.load()) {
      BatchResult r;
      r.sequence_number = k;
      try {
        r.batch = make_batch(k);
      } catch (...) {
        r.error = std::current_exception();
      }
      // Never blocks: at most `window` results exist, and the queue holds that many; after a cancel the
      // queue is closed and drops the result.
      results.push(std::move(r));
    }
    finished(1);
  }

  void submitted() {
    std::lock_guard<std::mutex> lock(mutex);
    ++unfinished;
  }
  void finished(int64_t n) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      unfinished -= n;
    }
    idle.notify_all();
  }
  void wait_idle() {
    std::unique_lock<std::mutex> lock(mutex);
    idle.wait(lock, [this] { return unfinished == 0; });
  }

  const std::vector<int64_t> indices;
  torch::Tensor device_order;  // the indices on a device-resident dataset's device; undefined otherwise
  const int64_t batch_size;
  const BatchMaker maker;
  BoundedQueue<BatchResult> results;
  const int64_t epoch;
  const uint64_t epoch_seed;
  std::atomic<bool> cancelled{false};

 private:
  std::mutex mutex;
  std::condition_variable idle;
  int64_t unfinished = 0;  // tasks submitted and neither finished nor discarded
};

}  // namespace detail

// ------------------------------------------------------------------------------------------------- Epoch

struct Epoch::State {
  std::shared_ptr<detail::EpochRun> run;     // null once the epoch is over
  std::shared_ptr<detail::WorkerPool> pool;  // null when num_workers == 0: the consumer builds batches itself
  detail::OrderedSequencer<detail::BatchResult> sequencer;
  int64_t batches = 0;
  int64_t window = 1;
  int64_t submitted = 0;  // batches handed to the pool
  int64_t returned = 0;   // batches handed to the caller
  bool finished = false;
  std::shared_ptr<std::atomic<bool>> live;
  std::shared_ptr<std::atomic<int64_t>> handed_out;  // the loader's view of `returned`
  const MixturePlan* plan = nullptr;  // a mixture's, for its counts by source; read only while `run` (which
                                      // holds the dataset) lives
  EpochStats stats;
  double fetch_wait_at_start = 0;  // RemoteStats::wait_seconds when the epoch began
  std::optional<Clock::time_point> last_return;

  ~State() {
    stop();
    // Joins per-epoch workers, and a persistent pool whose Loader is already gone.
    pool.reset();
    if (live) live->store(false);
  }

  // Keeps the prefetch window full.
  void submit_ahead() {
    while (submitted < batches && submitted < returned + window) {
      const int64_t k = submitted++;
      run->submitted();
      auto task_run = run;
      if (!pool->submit([task_run, k] { task_run->build(k); })) {
        run->finished(1);  // the pool is shutting down; nothing will run it
        throw std::logic_error("feedline::Loader: worker pool shut down during an epoch");
      }
    }
  }

  // Stops outstanding work and waits for the tasks already running, so that no worker touches this epoch
  // afterwards and a persistent pool starts the next epoch quiet. Idempotent.
  void stop() noexcept {
    finished = true;
    if (!run || !pool) {
      run.reset();
      return;
    }
    run->cancelled.store(true);
    run->results.close();
    run->finished(static_cast<int64_t>(pool->discard_pending()));
    run->wait_idle();
    sequencer.clear();
    run.reset();
  }

  std::optional<Example> next() {
    const auto enter = Clock::now();
    stats.fetch_wait_seconds = remote::stats().wait_seconds - fetch_wait_at_start;
    if (last_return) stats.step_seconds += seconds_between(*last_return, enter);
    last_return.reset();
    if (finished) return std::nullopt;
    if (returned >= batches) {
      stop();  // the call that ends the epoch waits too: for the workers to go quiet
      stats.wait_seconds += seconds_between(enter, Clock::now());
      return std::nullopt;
    }
    detail::BatchResult result;
    if (!pool) {
      try {
        result.batch = run->make_batch(returned);
      } catch (...) {
        result.error = std::current_exception();
      }
    } else {
      auto r = sequencer.next([this] { return run->results.pop(); });
      if (!r) {
        stop();
        throw std::logic_error("feedline::Loader: result queue closed during an epoch");
      }
      result = std::move(*r);
    }
    ++returned;
    if (result.error) {
      // A failed batch stays unconsumed: a resume makes it again.
      stop();  // poisoned: the remaining batches are not wanted
      stats.wait_seconds += seconds_between(enter, Clock::now());
      std::rethrow_exception(result.error);
    }
    if (pool) submit_ahead();
    const auto leave = Clock::now();
    stats.wait_seconds += seconds_between(enter, leave);
    last_return = leave;
    stats.batches += 1;
    stats.samples += result.batch->data.size(0);
    if (plan != nullptr) {
      // The positions of the batch, whatever a dataset that skips samples made of them.
      const auto& order = run->indices;
      const auto end = std::min(order.size(), static_cast<size_t>(returned * run->batch_size));
      for (auto i = static_cast<size_t>((returned - 1) * run->batch_size); i < end; ++i) {
        ++stats.source_samples[plan->source_of(order[i])];
      }
    }
    handed_out->store(returned);
    return std::move(result.batch);
  }
};

Epoch::Epoch(std::unique_ptr<State> state) : state_(std::move(state)) {}
Epoch::~Epoch() = default;
Epoch::Epoch(Epoch&&) noexcept = default;

// A moved-from Epoch is an empty, finished one.
std::optional<Example> Epoch::next() { return state_ ? state_->next() : std::nullopt; }
const EpochStats& Epoch::stats() const {
  static const EpochStats kNone;
  return state_ ? state_->stats : kNone;
}

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
    : dataset_(std::move(dataset)),
      options_(options),
      live_(std::make_shared<std::atomic<bool>>(false)),
      handed_out_(std::make_shared<std::atomic<int64_t>>(0)) {
  if (!dataset_) throw InvalidArgument("Loader: no dataset");
  if (options_.batch_size() < 1) {
    throw InvalidArgument("Loader: batch_size must be at least 1, got " + std::to_string(options_.batch_size()));
  }
  if (options_.num_workers() < 0) {
    throw InvalidArgument("Loader: num_workers must not be negative, got " + std::to_string(options_.num_workers()));
  }
  if (options_.prefetch_blocks() < 0) {
    throw InvalidArgument("Loader: prefetch_blocks must be 0 or more, got " +
                          std::to_string(options_.prefetch_blocks()));
  }
  if (options_.prefetch_factor() < 1) {
    throw InvalidArgument("Loader: prefetch_factor must be at least 1, got " +
                          std::to_string(options_.prefetch_factor()));
  }
  if (options_.world_size() < 1 || options_.rank() < 0 || options_.rank() >= options_.world_size()) {
    throw InvalidArgument("Loader: rank must be in [0, world_size), got rank " + std::to_string(options_.rank()) +
                          " of world_size " + std::to_string(options_.world_size()));
  }
  batch_transform_ = options_.transform();
  if (options_.mix()) {
    check_batch_mix(*options_.mix());
    // The mix runs last, on the finished batch: composed with the caller's transform here, once.
    batch_transform_ = [mix = *options_.mix(), before = options_.transform()](Example batch, const BatchInfo& info) {
      if (before) batch = before(std::move(batch), info);
      return mix_batch(mix, batch, info.seed);
    };
  }
  // Decided once: a run-time check, so the same code serves CPU-only and CUDA builds of LibTorch.
  pin_memory_active_ = options_.pin_memory() && !dataset_->resident_device() && torch::cuda::is_available();
}

// A persistent pool is joined here, unless an Epoch still shares it (then when that Epoch goes).
Loader::~Loader() = default;

namespace {

// The samples each rank sees an epoch (DistributedSampler's num_samples): the epoch padded up to a multiple of the
// world size, or cut down to one with drop_last.
int64_t rank_samples(int64_t n, int64_t world, bool drop_last) {
  return drop_last ? n / world : (n + world - 1) / world;
}

// Uneven shares (LoaderOptions::even_shards false): positions rank, rank + world, ... below n, or the stretch
// [rank * n / world, (rank + 1) * n / world) for a dataset read in blocks; as many samples either way.
int64_t uneven_samples(int64_t n, int64_t world, int64_t rank, bool stretches) {
  if (stretches) return (rank + 1) * n / world - rank * n / world;
  return n > rank ? (n - rank + world - 1) / world : 0;
}

// The positions of an epoch: a mixture's epoch length, else the dataset's size.
int64_t epoch_length(const Dataset& dataset) {
  const MixturePlan* plan = dataset.mixture();
  return plan != nullptr ? plan->epoch_length() : dataset.size();
}

// Whether ranks take stretches of the epoch's order (a dataset read in blocks) rather than strides. A mixture's
// sources keep their blocks together in its order by themselves, and it is split by stride.
bool split_by_stretches(const Dataset& dataset) {
  return dataset.mixture() == nullptr && !dataset.shuffle_blocks().empty();
}

}  // namespace

int64_t Loader::batches_per_epoch() const {
  const int64_t length = epoch_length(*dataset_);
  const int64_t n = options_.even_shards()
                        ? rank_samples(length, options_.world_size(), options_.drop_last())
                        : uneven_samples(length, options_.world_size(), options_.rank(), split_by_stretches(*dataset_));
  const int64_t b = options_.batch_size();
  return options_.drop_last() ? n / b : (n + b - 1) / b;
}

void Loader::set_epoch(int64_t epoch) {
  if (epoch < 0) throw InvalidArgument("Loader: set_epoch takes an epoch of 0 or more, got " + std::to_string(epoch));
  next_epoch_ = epoch;
  next_batch_ = 0;
}

LoaderState Loader::state_dict() const {
  LoaderState s;
  if (live_->load()) {
    s.epoch = current_epoch_;
    s.batch = handed_out_->load();
  } else {
    s.epoch = next_epoch_;
    s.batch = next_batch_;
  }
  s.seed = options_.seed();
  s.world_size = options_.world_size();
  s.batch_size = options_.batch_size();
  s.samples = epoch_length(*dataset_);
  return s;
}

void Loader::load_state_dict(const LoaderState& state) {
  if (live_->load()) throw InvalidArgument("Loader: load_state_dict while an epoch is live; finish or destroy it first");
  const auto differs = [](const char* what, auto saved, auto here) {
    throw InvalidArgument(std::string("Loader: the saved state is for ") + what + " " + std::to_string(saved) +
                          ", and this loader's is " + std::to_string(here));
  };
  if (state.version != LoaderState::kVersion) differs("state version", state.version, LoaderState::kVersion);
  if (state.seed != options_.seed()) differs("seed", state.seed, options_.seed());
  if (state.world_size < 1 || state.batch_size < 1) {
    throw InvalidArgument("Loader: the saved state has world size " + std::to_string(state.world_size) +
                          " and batch size " + std::to_string(state.batch_size) + "; both must be at least 1");
  }
  if (state.world_size == options_.world_size()) {
    if (state.batch_size != options_.batch_size()) differs("batch size", state.batch_size, options_.batch_size());
  } else {
    const int64_t saved = state.world_size * state.batch_size;
    const int64_t here = options_.world_size() * options_.batch_size();
    if (saved != here) {
      throw InvalidArgument("Loader: the saved state is for a global batch of " + std::to_string(saved) + " (" +
                            std::to_string(state.world_size) + " ranks x " + std::to_string(state.batch_size) +
                            "), and this loader's is " + std::to_string(here) + " (" +
                            std::to_string(options_.world_size()) + " x " + std::to_string(options_.batch_size()) +
                            "); another number of ranks resumes with the same global batch");
    }
    if (split_by_stretches(*dataset_)) {
      throw InvalidArgument("Loader: the saved state is for world size " + std::to_string(state.world_size) +
                            ", and this loader's is " + std::to_string(options_.world_size()) +
                            ": a dataset read in blocks is split into one stretch of blocks per rank, so its batches "
                            "depend on the world size; resume it on " + std::to_string(state.world_size) + " ranks");
    }
  }
  if (state.samples != epoch_length(*dataset_)) {
    differs(dataset_->mixture() != nullptr ? "an epoch of" : "a dataset of size", state.samples,
            epoch_length(*dataset_));
  }
  if (state.epoch < 0 || state.batch < 0 || state.batch > batches_per_epoch()) {
    throw InvalidArgument("Loader: the saved position (epoch " + std::to_string(state.epoch) + ", batch " +
                          std::to_string(state.batch) + ") is outside an epoch of " +
                          std::to_string(batches_per_epoch()) + " batches");
  }
  next_epoch_ = state.epoch;
  next_batch_ = state.batch;
}

std::vector<int64_t> Loader::epoch_indices(int64_t epoch) const {
  const MixturePlan* plan = dataset_->mixture();
  std::vector<int64_t> order =
      plan != nullptr ? plan->epoch_order(options_.shuffle(), options_.seed(), epoch)
                      : detail::epoch_permutation(dataset_->size(), options_.shuffle(), options_.seed(), epoch,
                                                  dataset_->shuffle_blocks());
  const int64_t world = options_.world_size();
  if (world == 1 || order.empty()) return order;
  const int64_t n = static_cast<int64_t>(order.size());
  const int64_t rank = options_.rank();
  // A dataset read in blocks (row groups) is split into stretches of the global order, which keep its blocks
  // together: rank r reads about 1/world of them. Any other is split by stride, as DistributedSampler does.
  const bool stretches = split_by_stretches(*dataset_);
  std::vector<int64_t> mine;
  if (!options_.even_shards()) {
    if (stretches) return std::vector<int64_t>(order.begin() + rank * n / world, order.begin() + (rank + 1) * n / world);
    for (int64_t i = rank; i < n; i += world) mine.push_back(order[static_cast<size_t>(i)]);
    return mine;
  }
  // Equal shares, padded by wrapping around the global order (or cut to a multiple of world with drop_last).
  const int64_t share = rank_samples(n, world, options_.drop_last());
  mine.resize(static_cast<size_t>(share));
  for (int64_t i = 0; i < share; ++i) {
    const int64_t at = stretches ? rank * share + i : rank + i * world;
    mine[static_cast<size_t>(i)] = order[static_cast<size_t>(at % n)];
  }
  return mine;
}

Epoch Loader::epoch() {
  if (live_->exchange(true)) throw InvalidArgument("Loader: an epoch is still live; finish or destroy it first");
  auto state = std::make_unique<Epoch::State>();  // from here on its destructor clears live_
  state->live = live_;
  state->batches = batches_per_epoch();
  state->plan = dataset_->mixture();
  if (state->plan != nullptr) state->stats.source_samples.assign(state->plan->sources(), 0);
  const auto resident = dataset_->resident_device();
  // A device-resident dataset is gathered where it lives, by the consumer: no workers, nothing to pin. Its order
  // goes to the device once an epoch; one resident in host memory takes its batches straight from the host
  // order (a tensor slice a batch would cost more than the gather's own overhead).
  const int64_t workers = resident ? 0 : options_.num_workers();
  const bool upload_order = resident && !resident->is_cpu();
  state->window = std::max<int64_t>(1, workers * options_.prefetch_factor());
  const auto window = static_cast<size_t>(state->window);
  detail::BatchMaker maker{dataset_,
                           (options_.batch_fetch() || resident.has_value()) && dataset_->has_batch_fetch(),
                           pin_memory_active_,
                           batch_transform_,
                           dataset_->makes_batches(),
                           options_.seed()};
  const int64_t epoch = next_epoch_++;
  current_epoch_ = epoch;
  // A resumed epoch starts where its state said: the batches before are neither made nor handed out.
  state->returned = state->submitted = std::exchange(next_batch_, 0);
  state->sequencer.start_at(state->returned);
  state->handed_out = handed_out_;
  handed_out_->store(state->returned);
  state->run = std::make_shared<detail::EpochRun>(epoch_indices(epoch), options_.batch_size(), std::move(maker),
                                                  window, epoch, options_.seed());
  // A remote dataset fetches ahead in this order, from the first batch to be made.
  state->fetch_wait_at_start = remote::stats().wait_seconds;
  if (options_.prefetch_blocks() > 0) {
    const auto& order = state->run->indices;
    const auto from = std::min(order.size(), static_cast<size_t>(state->returned * options_.batch_size()));
    dataset_->will_read(std::vector<int64_t>(order.begin() + static_cast<std::ptrdiff_t>(from), order.end()),
                        ReadAhead{options_.prefetch_blocks(), options_.prefetch_blocks() * options_.batch_size()});
  }
  if (upload_order) {
    const auto& order = state->run->indices;
    // One upload per epoch (a copy, so the tensor never aliases the host vector).
    state->run->device_order =
        torch::from_blob(const_cast<int64_t*>(order.data()), {static_cast<int64_t>(order.size())}, torch::kInt64)
            .to(*resident, /*non_blocking=*/false, /*copy=*/true);
  }
  if (workers == 0) return Epoch(std::move(state));
  if (options_.persistent_workers()) {
    if (!pool_) pool_ = std::make_shared<detail::WorkerPool>(workers, window);
    state->pool = pool_;
  } else {
    state->pool = std::make_shared<detail::WorkerPool>(workers, window);  // started now, joined at the end
  }
  state->submit_ahead();  // prefetch starts with the epoch, as PyTorch's iterator does
  return Epoch(std::move(state));
}

}  // namespace feedline
