// The loader: PyTorch DataLoader's options over a feedline::Dataset, with threads as workers.
//
// Batch k of epoch e always holds the indices perm_e[k*B, (k+1)*B), where perm_e is a permutation drawn from
// (seed, e) by feedline's own generator (or 0..N-1 without shuffle); for a dataset with shuffle blocks, a
// permutation of the blocks with each block's samples shuffled in place (see Dataset::shuffle_blocks()); for a
// mixture (Dataset::mixture()), its plan's order of epoch e, which may hold an index more than once.
// Batches come back in that order for any num_workers, so the same seed gives the same batches whatever the
// worker count. A dataset that makes its own batches (Dataset::makes_batches(): an EncodedDataset, whose per-sample
// transform decodes and augments samples stored encoded) makes them on the workers, each sample drawing its
// randomness from (seed, epoch, its index) alone: the same holds for its augmented batches, and for a resumed epoch.
//
// Thread-safety: one consumer thread drives a Loader and its Epoch; the workers are internal. An Epoch may
// outlive its Loader safely (it shares the dataset and the workers it uses).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "feedline/io/arg.h"
#include "feedline/dataset/dataset.h"

namespace feedline {

namespace detail {
struct WorkerPool;
}  // namespace detail

// Where a batch stands, for LoaderOptions::transform: its epoch (0, 1, ... as Loader::epoch() counts them), its
// number in the epoch, and a seed for the transform's randomness drawn from (LoaderOptions::seed, epoch, batch)
// alone, so that the same seed gives the same transformed batches for any num_workers.
struct BatchInfo {
  int64_t epoch = 0;
  int64_t batch = 0;
  uint64_t seed = 0;
};

// A batch transform (augmentation, normalisation, ...): takes a batch as the dataset made it and returns the
// batch to hand out. See LoaderOptions::transform.
using BatchTransform = std::function<Example(Example batch, const BatchInfo& info)>;

// MixUp and CutMix over a whole batch, as torchvision's reference classification scripts apply them
// (references/classification: RandomMixup, RandomCutmix, and RandomChoice between the two when both are on; the
// later torchvision.transforms.v2.MixUp and CutMix). The labels become one-hot float targets (batch x num_classes,
// the images' dtype) and each batch is mixed with itself rolled by one: MixUp takes lambda x + (1 - lambda) x.roll(1),
// CutMix pastes the rolled batch's box of area (1 - lambda) about a uniform centre (clamped to the image, and lambda
// then made the box's true share), and the targets mix by the same lambda. lambda ~ Beta(alpha, alpha).
// A batch is mixed with probability p (else only made one-hot). Its draws (which of the two, whether, lambda, the
// box's centre) come from BatchInfo::seed alone, by feedline's own generator (SampleRng), so a seed gives the same
// mixed batches for any num_workers and on any platform.
struct BatchMix {
  FEEDLINE_ARG(int64_t, num_classes) = 0;  // 1 or more; every label must be below it
  FEEDLINE_ARG(double, mixup_alpha) = 0;   // 0: no MixUp
  FEEDLINE_ARG(double, cutmix_alpha) = 0;  // 0: no CutMix; at least one of the two above 0
  FEEDLINE_ARG(double, p) = 1.0;           // in [0, 1]
};

// One batch's draw: which mix (none when the batch is left unmixed), lambda, and CutMix's box, the pixels
// [y1, y2) x [x1, x2) taken from the rolled batch.
struct MixDraw {
  enum class Kind { kNone, kMixUp, kCutMix };
  Kind kind = Kind::kNone;
  double lambda = 1.0;
  int64_t x1 = 0, y1 = 0, x2 = 0, y2 = 0;
};

// Throws InvalidArgument naming the option for num_classes below 1, a negative or non-finite alpha, both alphas 0,
// or p outside [0, 1].
void check_batch_mix(const BatchMix& mix);
// The draw for a batch of height x width images seeded `seed` (BatchInfo::seed).
MixDraw draw_batch_mix(const BatchMix& mix, int64_t height, int64_t width, uint64_t seed);
// Mixes a batch of images (N, C, H, W, floating point) and labels (N, integers in [0, num_classes)) as `draw`
// says, returning new tensors. Throws InvalidArgument for another shape, an integer (uint8) image batch, which
// torchvision refuses too (mix images after ToTensor or ConvertImageDtype), or a label outside [0, num_classes).
Example apply_batch_mix(const BatchMix& mix, const Example& batch, const MixDraw& draw);
// draw_batch_mix then apply_batch_mix: what the loader does to each batch with LoaderOptions::mix.
Example mix_batch(const BatchMix& mix, const Example& batch, uint64_t seed);

struct LoaderOptions {
  LoaderOptions() = default;
  explicit LoaderOptions(int64_t batch_size) : batch_size_(batch_size) {}

  FEEDLINE_ARG(int64_t, batch_size) = 1;
  FEEDLINE_ARG(bool, shuffle) = false;
  FEEDLINE_ARG(bool, drop_last) = false;
  // Worker threads; 0 loads in the calling thread (always so for a device-resident dataset).
  FEEDLINE_ARG(int64_t, num_workers) = 0;
  // Keep workers alive across epochs; without it they start and stop every epoch, as in PyTorch.
  FEEDLINE_ARG(bool, persistent_workers) = false;
  // Page-locked host batches when CUDA is available; otherwise, and for a device-resident dataset, a no-op
  // (see Loader::pin_memory_active()).
  FEEDLINE_ARG(bool, pin_memory) = false;
  // Batches in flight per worker (the queue bound is num_workers * prefetch_factor).
  FEEDLINE_ARG(int64_t, prefetch_factor) = 2;
  // For a remote dataset (s3://, https://): its shuffle blocks (tar shards, row groups) fetched ahead of the reads,
  // in the sampler's order, beyond the one being read; a dataset read file by file (a folder of images) fetches
  // prefetch_blocks x batch_size files ahead. 0: none, each sample is fetched when it is read. See
  // Dataset::will_read(); the requests in flight are bounded by RemoteOptions::max_in_flight.
  FEEDLINE_ARG(int64_t, prefetch_blocks) = 4;
  FEEDLINE_ARG(uint64_t, seed) = 0;
  // Data-parallel training: this process is rank `rank` of `world_size`, and sees its share of every epoch, as
  // PyTorch's DistributedSampler gives it. Every rank draws the same global permutation (the same seed), pads it
  // by wrapping to a multiple of world_size (or, with drop_last, cuts it to one) and takes every world_size-th
  // index from position `rank` on: the ranks' shares are disjoint, cover the epoch, and are equally long, so every
  // rank makes the same number of batches. For a dataset read in blocks (Dataset::shuffle_blocks(), a streamed
  // Parquet file's row groups), rank r takes the r-th stretch of the padded permutation instead, which keeps the
  // blocks together: a rank reads about 1/world_size of the row groups, plus at most one at each end of its
  // stretch. A mixture is split by stride: each source's blocks come one after another in its order, so the ranks
  // read the same few blocks at a time. world_size 1 (the default): the whole epoch.
  FEEDLINE_ARG(int64_t, rank) = 0;
  FEEDLINE_ARG(int64_t, world_size) = 1;
  // false: no padding and no cut, for evaluation: rank r takes positions r, r + world_size, ... of the global
  // order and no more (for a dataset read in blocks, its stretch of the unpadded order), so that the ranks' shares
  // hold every sample exactly once (and counts summed over the ranks equal one process's), at the price of shares
  // that differ by one sample.
  FEEDLINE_ARG(bool, even_shards) = true;
  // Use the dataset's get_batch() when it offers one (has_batch_fetch()); false forces per-sample get + stack
  // (except for a device-resident dataset, always gathered in one call, and a dataset that makes its batches).
  FEEDLINE_ARG(bool, batch_fetch) = true;
  // Applied to every batch by the thread that made it (a worker; the consumer with no workers or a
  // device-resident dataset, whose batches are then on its device), after the dataset and before pinning. It
  // may run in several workers at once, so it must not change shared state unguarded; its exception reaches
  // the consumer as a dataset's does. For randomness, a generator of its own seeded with info.seed (say
  // at::detail::createCPUGenerator(info.seed)), never torch's global one, whose draws depend on which worker runs
  // first. Empty (the default): none. Work on each sample of samples stored encoded (decoding, cropping) belongs in
  // an EncodedDataset's SampleTransform, which writes each sample in place.
  FEEDLINE_ARG(BatchTransform, transform);
  // MixUp / CutMix (BatchMix), applied by the same thread to the finished batch, after `transform`: the batches'
  // targets are then soft (batch x num_classes). Empty (the default): none.
  FEEDLINE_ARG(std::optional<BatchMix>, mix);
};

// Where an epoch's wall time went, seen from the consumer.
struct EpochStats {
  int64_t batches = 0;
  int64_t samples = 0;
  double wait_seconds = 0;  // inside next(): waiting for a batch
  double step_seconds = 0;  // between a batch handed out and the next call to next(): the consumer's work
  // The loader's threads waiting for a remote dataset's bytes (remote::RemoteStats::wait_seconds over the epoch:
  // the process's remote reads, whichever loader made them). Part of wait_seconds only where it held a batch up.
  double fetch_wait_seconds = 0;
  // A mixture's (Dataset::mixture()): the positions of the batches handed out that each source gave, by source
  // (this rank's; summed over the ranks, the epoch's counts). Empty for any other dataset.
  std::vector<int64_t> source_samples;
};

class Loader;

// Where a loader stands, to resume from (Loader::state_dict()): the epoch and how many of its batches were handed
// out, and what that position means (the seed, the world size, the batch size and the dataset's size, which a
// resumed loader must share). Small and plain: it names the position, never the data, and holds for any
// num_workers (batches prefetched but not handed out are made again).
struct LoaderState {
  static constexpr int64_t kVersion = 1;
  int64_t version = kVersion;
  int64_t epoch = 0;    // the epoch in progress (or the next, when `batch` is 0)
  int64_t batch = 0;    // batches of it handed out; the resumed epoch starts at this batch
  uint64_t seed = 0;
  int64_t world_size = 1;
  int64_t batch_size = 1;
  int64_t samples = 0;  // the dataset's size (a mixture's: its epoch length)
};

// One pass over the dataset. Iterate with range-for or call next() until it returns nothing. Destroying an
// epoch early stops its work without hanging or leaking threads. A worker's exception is rethrown from next()
// with its original type and message.
class Epoch {
 public:
  ~Epoch();
  Epoch(Epoch&&) noexcept;
  Epoch& operator=(Epoch&&) = delete;
  Epoch(const Epoch&) = delete;

  std::optional<Example> next();
  const EpochStats& stats() const;

  class Iterator {
   public:
    Iterator(Epoch* epoch, bool end);
    Example& operator*() { return *current_; }
    Example* operator->() { return &*current_; }
    Iterator& operator++();
    bool operator!=(const Iterator& other) const { return done_ != other.done_; }

   private:
    Epoch* epoch_;
    std::optional<Example> current_;
    bool done_;
  };
  Iterator begin() { return Iterator(this, false); }
  Iterator end() { return Iterator(this, true); }

 private:
  friend class Loader;
  struct State;
  explicit Epoch(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

class Loader {
 public:
  // Throws InvalidArgument for a non-positive batch size, negative workers, prefetch factor < 1, or a rank
  // outside [0, world_size).
  Loader(std::shared_ptr<const Dataset> dataset, LoaderOptions options);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // Starts the next epoch (0, 1, 2, ...). Only one epoch may be live at a time.
  Epoch epoch();
  // The number the next epoch() takes, as DistributedSampler::set_epoch sets it: every rank calls it with the same
  // number to draw the same permutation (and a resumed run to continue where it stopped). Throws InvalidArgument
  // for a negative epoch.
  void set_epoch(int64_t epoch);
  int64_t batches_per_epoch() const;
  // The position after the batches handed out so far: the live epoch's, else the next epoch's start.
  LoaderState state_dict() const;
  // Continues from `state`: the next epoch() is state.epoch, starting at batch state.batch (the ones before it
  // are skipped, never made). The rank may differ (every rank of a job stands at the same position). So may the
  // world size, when the global batch (world size x batch size) is the same and the dataset is split by stride:
  // global batch k then holds the samples of positions [k x global batch, (k + 1) x global batch) of the epoch's
  // order for any world size, so a job resumed on another number of ranks sees the batches the saved one would
  // have (only an epoch's padded last batch, which wraps around the order, may differ). A dataset read in blocks
  // is split into stretches that depend on the world size, and refuses another one. Throws InvalidArgument, naming
  // what differs, when the seed, global batch or dataset size do, when the world size does where it may not,
  // when the position is past the epoch's end, or while an epoch is live.
  void load_state_dict(const LoaderState& state);
  const LoaderOptions& options() const { return options_; }
  const Dataset& dataset() const { return *dataset_; }
  // Whether pin_memory() took effect (it needs CUDA); callers may tell the user once when it did not.
  bool pin_memory_active() const { return pin_memory_active_; }
  // The sampler: the dataset indices of epoch `epoch` that this rank sees, in order (exposed for tests and the
  // benchmark).
  std::vector<int64_t> epoch_indices(int64_t epoch) const;

 private:
  std::shared_ptr<const Dataset> dataset_;
  LoaderOptions options_;
  BatchTransform batch_transform_;  // options_.transform(), then options_.mix() when set
  std::shared_ptr<std::atomic<bool>> live_;  // an epoch is running
  bool pin_memory_active_ = false;
  int64_t next_epoch_ = 0;
  int64_t next_batch_ = 0;     // the batch the next epoch() starts at (load_state_dict)
  int64_t current_epoch_ = 0;  // the epoch last started
  std::shared_ptr<std::atomic<int64_t>> handed_out_;  // batches of the live epoch handed to the caller
  std::shared_ptr<detail::WorkerPool> pool_;  // persistent workers
};

}  // namespace feedline
