// Samples that are still encoded (image files, tar members, Parquet cells of any size), made whole one batch at a
// time by a per-sample transform on the loader's worker threads:
//   EncodedSample   - one sample's bytes, its label and a name for messages;
//   SampleSource    - where they come from: size() and get(i);
//   SampleTransform - decodes (and crops, resizes, augments) one sample straight into its slot of the batch,
//                     drawing its randomness from a SampleRng seeded from (seed, epoch, sample index);
//   EncodedDataset  - the two as a Dataset: it allocates each batch once, [batch, transform's sizes...] of the
//                     transform's dtype (page-locked when the loader pins), and has every sample written in place,
//                     so that no per-sample tensor is made and no stack copies them.
// Thread-safety: sources and transforms are called from several worker threads at once and must be safe so
// (immutable after construction, or locked); an EncodedDataset adds no state of its own.
//
// SampleRng: the random generator of one sample's transform, seeded from (seed, epoch, sample index) alone. A
// counter-based scheme (SplitMix64 over the three), so that a sample's draws do not depend on which worker makes
// it, in which batch, or after which other samples: the same seed gives the same augmented epoch for any worker
// count, and a resumed epoch makes exactly the samples the uninterrupted one would have.
// Thread-safety: a SampleRng is a small value owned by the thread that made it; mix64() is a pure function.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "feedline/dataset/dataset.h"

namespace feedline {

// SplitMix64's step: the finaliser of x plus the golden-ratio increment. A bijection that spreads neighbouring
// inputs (seeds, epochs, indices) over unrelated outputs.
inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Uniform in [0, bound) from 64 random bits of `gen` at a time, without bias (it draws again above the largest
// multiple of bound); 0 for a bound of 0. Our own draw, never std::uniform_int_distribution, which differs between
// standard libraries: a seed gives the same values everywhere.
template <typename Generator>
uint64_t draw_below(Generator& gen, uint64_t bound) {
  if (bound == 0) return 0;
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t r;
  do {
    r = gen();
  } while (r >= limit);
  return r % bound;
}

class SampleRng {
 public:
  using result_type = uint64_t;

  // The stream of sample `index` in epoch `epoch` of a loader seeded `seed`.
  SampleRng(uint64_t seed, int64_t epoch, int64_t index)
      : state_(mix64(mix64(mix64(seed) + static_cast<uint64_t>(epoch)) + static_cast<uint64_t>(index))) {}

  // The next 64 random bits (a UniformRandomBitGenerator, for code that wants one; the standard distributions
  // differ between libraries, so draws meant to reproduce everywhere use uniform() and below()).
  uint64_t operator()() {
    const uint64_t out = mix64(state_);
    state_ += 0x9E3779B97F4A7C15ULL;
    return out;
  }
  static constexpr uint64_t min() { return 0; }
  static constexpr uint64_t max() { return UINT64_MAX; }

  // Uniform in [0, 1), 53 random bits.
  double uniform() { return static_cast<double>((*this)() >> 11) * 0x1.0p-53; }

  // Uniform in [0, bound); see draw_below().
  uint64_t below(uint64_t bound) { return draw_below(*this, bound); }

 private:
  uint64_t state_;
};

// One sample as stored: the bytes of an image file (JPEG, PNG, WebP, ...) or whatever the transform decodes.
struct EncodedSample {
  std::string bytes;
  int64_t label = 0;  // class number
  std::string name;   // where it came from, for messages: "train/cat/001.jpg", "shard-3.tar:42.png", "f.parquet row 7"
};

// Where encoded samples come from (a folder of class folders, Parquet image columns, tar shards).
// Thread-safety: get() is called from several worker threads at once.
class SampleSource {
 public:
  virtual ~SampleSource() = default;
  virtual int64_t size() const = 0;
  // Sample `index`, in [0, size()). Throws a feedline::Error naming the file when it cannot be read.
  virtual EncodedSample get(int64_t index) const = 0;
  // Every sample's label, in sample order, without reading an image (class counts, the number of classes).
  virtual std::vector<int64_t> labels() const;  // this default reads every sample: sources override it
  // The names of the classes, by class number, where the source has them (folder names, a Parquet file's
  // Hugging Face ClassLabel names); empty where it has only numbers.
  virtual std::vector<std::string> class_names() const { return {}; }
  // The lengths of consecutive runs of samples best read together (Dataset::shuffle_blocks()): a Parquet row
  // group, a tar shard. Empty: any order reads as well as another.
  virtual std::vector<int64_t> shuffle_blocks() const { return {}; }
  // Dataset::will_read(), for a source whose samples are remote.
  virtual void will_read(const std::vector<int64_t>& order, const ReadAhead& ahead) const {
    (void)order;
    (void)ahead;
  }
  // Dataset::mixture(), for a MixtureSource.
  virtual const MixturePlan* mixture() const { return nullptr; }
};

// Sources of encoded samples (class folders, Parquet image files, tar shards) mixed into one (see MixturePlan), for
// one EncodedDataset: every sample is made by the same transform, written in place into its batch. A sample's
// label is its source's, relabelled as its part says; its randomness is drawn from its index in the mixture, so
// two sources' samples never share a stream. The sources must agree on the classes: where two name the same class
// number (class_names(), after relabelling), the names must be the same, or InvalidArgument names both sources,
// the number and the two names (give one of them a label map or an offset). class_names() is then the union.
// Thread-safety: immutable after construction, as its sources are.
class MixtureSource : public SampleSource {
 public:
  // Throws InvalidArgument for no sources, a missing one, classes that disagree, or a plan MixturePlan refuses.
  MixtureSource(std::vector<std::shared_ptr<const SampleSource>> sources, std::vector<MixturePart> parts,
                int64_t epoch_size = 0);
  int64_t size() const override { return plan_.total_size(); }
  EncodedSample get(int64_t index) const override;
  std::vector<int64_t> labels() const override;
  std::vector<std::string> class_names() const override { return class_names_; }
  // None: the loader takes the order from the plan, which keeps each source's blocks together.
  std::vector<int64_t> shuffle_blocks() const override { return {}; }
  void will_read(const std::vector<int64_t>& order, const ReadAhead& ahead) const override;
  const MixturePlan* mixture() const override { return &plan_; }
  const MixturePlan& plan() const { return plan_; }
  const SampleSource& source(size_t s) const { return *sources_[s]; }

 private:
  std::vector<std::shared_ptr<const SampleSource>> sources_;
  MixturePlan plan_;
  std::vector<std::string> class_names_;
};

// What a transform makes of every sample: a tensor of `sizes` and `dtype` (the batch is [batch, sizes...]).
struct SampleLayout {
  std::vector<int64_t> sizes;
  torch::ScalarType dtype = torch::kFloat32;
};

// Makes one encoded sample into a fixed-shape tensor: decode, crop, resize, flip, normalise.
// Thread-safety: apply() runs on several worker threads at once, with no Python and no GIL; it must not change
// shared state unguarded, and must draw its randomness from `rng` alone so that results reproduce.
class SampleTransform {
 public:
  virtual ~SampleTransform() = default;
  // The same for every sample, asked once per batch.
  virtual SampleLayout layout() const = 0;
  // Writes `sample` into `out`: its slot of the batch, a contiguous host tensor of layout()'s sizes and dtype
  // holding garbage, every element of which it must write. Throws for a sample it cannot make (corrupt, too
  // small); the dataset then names the sample in the error.
  virtual void apply(const EncodedSample& sample, SampleRng& rng, const torch::Tensor& out) const = 0;
};

// What a dataset does with a sample it cannot make (a corrupt image, a file gone, a label that is no class).
enum class OnError {
  kRaise,  // the batch fails with the sample's error
  kSkip,   // the sample is left out of its batch, which is one shorter, and counted
};

// "raise" or "skip"; InvalidArgument naming the value otherwise.
OnError parse_on_error(const std::string& name);

// The samples an OnError::kSkip dataset left out.
struct SkippedSamples {
  int64_t count = 0;
  // "<name>: <message>" of the first kMaxNames, in the order they failed.
  std::vector<std::string> first;
  static constexpr size_t kMaxNames = 5;
};

// A SampleSource made whole by a SampleTransform, batch by batch (see the file's comment). Targets are int64
// labels, [batch]. Thread-safety: as its source and transform; its count of skipped samples is locked.
class EncodedDataset : public Dataset {
 public:
  // InvalidArgument for a missing source or transform, or a layout with a negative size.
  EncodedDataset(std::shared_ptr<const SampleSource> source, std::shared_ptr<const SampleTransform> transform,
                 OnError on_error = OnError::kRaise);

  int64_t size() const override { return source_->size(); }
  // Sample `index` as epoch 0 of seed 0 makes it (data: layout()'s sizes; target: a 0-d label). A sample that
  // cannot be made raises, whatever on_error() says.
  Example get(int64_t index) const override;
  bool has_batch_fetch() const override { return true; }
  // make_batch() for epoch 0 of seed 0.
  Example get_batch(const std::vector<int64_t>& indices) const override;
  bool makes_batches() const override { return true; }
  // Sample i of the batch is indices[i], transformed with SampleRng(context.seed, context.epoch, indices[i]). A
  // transform's error is rethrown with its type (feedline's, else Error), its message prefixed by the sample's name
  // ("sample <index>" when the source gave none); a source's passes as it is (the source names its file).
  // With OnError::kSkip, a sample whose read or transform throws a feedline::Error is left out: the batch holds
  // the others, in order (possibly none), and the sample is counted in skipped().
  Example make_batch(const std::vector<int64_t>& indices, const BatchContext& context) const override;
  std::vector<int64_t> shuffle_blocks() const override { return source_->shuffle_blocks(); }
  void will_read(const std::vector<int64_t>& order, const ReadAhead& ahead) const override {
    source_->will_read(order, ahead);
  }
  const MixturePlan* mixture() const override { return source_->mixture(); }

  const SampleSource& source() const { return *source_; }
  const SampleTransform& transform() const { return *transform_; }
  OnError on_error() const { return on_error_; }
  // The samples skipped since construction or the last take_skipped(); take_skipped() also starts the count
  // again (at an epoch's end).
  SkippedSamples skipped() const;
  SkippedSamples take_skipped() const;

 private:
  Example make(const std::vector<int64_t>& indices, const BatchContext& context, OnError on_error) const;
  void skip(const std::string& name, const std::string& message) const;

  std::shared_ptr<const SampleSource> source_;
  std::shared_ptr<const SampleTransform> transform_;
  OnError on_error_;
  mutable std::mutex skipped_mutex_;
  mutable SkippedSamples skipped_;
};

}  // namespace feedline
