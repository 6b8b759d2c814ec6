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
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "feedline/dataset/dataset.h"
#include "feedline/dataset/sample_rng.h"

namespace feedline {

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

// A SampleSource made whole by a SampleTransform, batch by batch (see the file's comment). Targets are int64
// labels, [batch]. Thread-safety: as its source and transform; it holds nothing else.
class EncodedDataset : public Dataset {
 public:
  // InvalidArgument for a missing source or transform, or a layout with a negative size.
  EncodedDataset(std::shared_ptr<const SampleSource> source, std::shared_ptr<const SampleTransform> transform);

  int64_t size() const override { return source_->size(); }
  // Sample `index` as epoch 0 of seed 0 makes it (data: layout()'s sizes; target: a 0-d label).
  Example get(int64_t index) const override;
  bool has_batch_fetch() const override { return true; }
  // make_batch() for epoch 0 of seed 0.
  Example get_batch(const std::vector<int64_t>& indices) const override;
  bool makes_batches() const override { return true; }
  // Sample i of the batch is indices[i], transformed with SampleRng(context.seed, context.epoch, indices[i]). A
  // transform's error is rethrown with its type (feedline's, else Error), its message prefixed by the sample's name
  // ("sample <index>" when the source gave none); a source's passes as it is (the source names its file).
  Example make_batch(const std::vector<int64_t>& indices, const BatchContext& context) const override;

  const SampleSource& source() const { return *source_; }
  const SampleTransform& transform() const { return *transform_; }

 private:
  std::shared_ptr<const SampleSource> source_;
  std::shared_ptr<const SampleTransform> transform_;
};

}  // namespace feedline
