// Datasets: what the loader samples from. A dataset maps an index to one example (an image tensor and a label
// tensor); it may also serve a whole batch of indices in one call (batch fetch, PyTorch's __getitems__).
// Every dataset here is immutable after construction, so get() and get_batch() are safe from many threads.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "feedline/io/columns.h"
#include "feedline/io/table.h"

namespace feedline {

// One sample, or a batch of them (data's first dimension is then the batch).
struct Example {
  torch::Tensor data;
  torch::Tensor target;
};

// Where a loader stands when it asks a dataset that makes its own batches (Dataset::makes_batches()) for one:
// what a sample's randomness is seeded from, with the sample's index (see SampleRng), and whether to make the batch
// in page-locked memory, ready for an asynchronous copy to the GPU.
struct BatchContext {
  uint64_t seed = 0;  // LoaderOptions::seed
  int64_t epoch = 0;
  bool pinned = false;
};

// How far a dataset may read ahead of the loader (Dataset::will_read()): the shuffle blocks (tar shards, row
// groups) it may fetch beyond the one being read, or, for a dataset read sample by sample (a folder of images), the
// samples.
struct ReadAhead {
  int64_t blocks = 0;
  int64_t samples = 0;
};

class MixturePlan;
class TensorDataset;

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  virtual Example get(int64_t index) const = 0;
  // True when get_batch() is a real one-gather path; the loader then calls it instead of get() per sample.
  virtual bool has_batch_fetch() const { return false; }
  // Default: get() each index and stack, as PyTorch's default collate does.
  virtual Example get_batch(const std::vector<int64_t>& indices) const;
  // A device-resident dataset names its device: the loader then makes every batch in the consuming thread, one
  // gather each (LoaderOptions::batch_fetch does not apply), with no workers and nothing pinned. On a GPU it
  // uploads each epoch's order there once and calls gather() on a slice of it, so a batch costs no host work and
  // no transfer; in host memory it calls get_batch() with the batch's indices.
  virtual std::optional<torch::Device> resident_device() const { return std::nullopt; }
  // `indices`: int64 on resident_device(). Only for device-resident datasets; the default throws.
  virtual Example gather(const torch::Tensor& indices) const;
  // A dataset that reads its samples a block at a time (a Parquet row group) names the blocks' sizes, in index
  // order, summing to size(). A shuffling loader then shuffles the blocks' order and the samples inside each block,
  // so an epoch reads each block once instead of all of them at random. Empty (the default): one shuffle of all.
  virtual std::vector<int64_t> shuffle_blocks() const { return {}; }
  // The samples the loader will ask for, in the order it will ask (this rank's share of an epoch, from where it
  // starts), so that a dataset whose samples are remote (s3://, https://) fetches them ahead of the reads: its
  // blocks (or samples) in that order, `ahead` of them beyond the one being read, in the background. Called at the
  // start of each epoch, before the first get(); a new call replaces the last. Default: nothing (a local dataset
  // has the page cache).
  virtual void will_read(const std::vector<int64_t>& order, const ReadAhead& ahead) const {
    (void)order;
    (void)ahead;
  }
  // A dataset that makes each batch itself, for the loader's position (an EncodedDataset: samples transformed with
  // randomness of their own, written in place into one batch): the loader's workers then call make_batch() for
  // every batch, never get() or get_batch() (LoaderOptions::batch_fetch does not apply), and pin nothing more.
  virtual bool makes_batches() const { return false; }
  // Only for datasets that make their batches; the default throws.
  virtual Example make_batch(const std::vector<int64_t>& indices, const BatchContext& context) const;
  // A mixture of sources (MixtureDataset, or an EncodedDataset over a MixtureSource) names its plan: the loader
  // then takes each epoch's order from it (MixturePlan::epoch_order(): epoch_length() positions, indices that may
  // repeat), splits it between ranks by stride, never by stretches, and counts the samples each source gave
  // (EpochStats::source_samples). Null (the default): the loader's own permutation of 0..size()-1.
  virtual const MixturePlan* mixture() const { return nullptr; }
};

// Mixtures: several sources read as one, each giving its share of every epoch.
//
// Each source gives exactly one of: a proportion of the epoch (relative: 0.7 and 0.3, or 7 and 3, say the same), a
// repeat (its samples an epoch over its size: 0.5 = half of them, the other half the next epoch; 2 = each twice),
// or a count of samples an epoch. Proportions go with proportions only; repeats and counts mix. The samples an
// epoch from each source are fixed: a proportion's by the epoch size (the mixture's epoch_size, or by default the
// sum of the sources' sizes), split by largest remainders; a repeat's round(repeat x size); a count's the count,
// all rescaled to the epoch size when one is given.
//
// The order (MixturePlan::epoch_order) is a function of (shuffle, seed, epoch) alone, as MosaicML Streaming and
// torchdata's weighted samplers draw it: an epoch's positions take their sources in a shuffled order holding each
// source's count (unshuffled: spread evenly, the sources taking turns by their shares), and each source deals its
// samples from an endless stream of passes, without replacement within a pass: pass q is a permutation of the
// source drawn from (seed, source, q), block by block for a source read in blocks (row groups, tar shards), so a
// pass reads each block once. Epoch e takes the source's stream from position e x count on: a repeat of 1 gives
// every sample once an epoch, a repeat of 0.5 half of a pass, and the next epoch the rest. Unshuffled, a pass is
// the source's own order.
//
// A mixture's index space is its sources' one after another: source s's sample i is index offset(s) + i.
struct MixturePart {
  enum class Kind { kRepeat, kProportion, kCount };
  Kind kind = Kind::kRepeat;
  double value = 1.0;  // the proportion, the repeat, or the count
  // Labels: class number l of this source becomes label_map[l] (empty: no map), then l + label_offset. Without
  // either, each source keeps its own labels.
  int64_t label_offset = 0;
  std::vector<int64_t> label_map;
  std::string name;  // for messages and reports: the source's path, say (see MixturePlan::name())

  static MixturePart proportion(double p);
  static MixturePart repeat(double r);
  static MixturePart count(int64_t n);
};

// The arithmetic of a mixture, shared by MixtureDataset and MixtureSource. Immutable: safe from any thread.
class MixturePlan {
 public:
  // `sizes`: each source's samples; `parts`: one for each; `epoch_size`: 0 for the default; `blocks`: each source's
  // shuffle blocks (Dataset::shuffle_blocks(); empty, or an empty entry: none). Throws InvalidArgument naming the
  // source for an empty source, a proportion or repeat that is not above 0 and finite, a count below 1 or not whole,
  // a repeat that rounds to no samples, proportions mixed with repeats or counts, a label map with an entry below 0,
  // blocks that do not sum to the source's size; and for a negative epoch size or an epoch of no samples.
  MixturePlan(std::vector<int64_t> sizes, std::vector<MixturePart> parts, int64_t epoch_size = 0,
              std::vector<std::vector<int64_t>> blocks = {});

  size_t sources() const { return sizes_.size(); }
  const MixturePart& part(size_t source) const { return parts_[source]; }
  std::string name(size_t source) const;  // "source <number from 1>", then " (<part's name>)" when it has one
  int64_t size(size_t source) const { return sizes_[source]; }
  int64_t offset(size_t source) const { return offsets_[source]; }
  int64_t total_size() const { return offsets_.back(); }  // every source's samples
  int64_t epoch_length() const { return epoch_length_; }
  const std::vector<int64_t>& counts() const { return counts_; }  // each source's samples an epoch
  // The source index `index` (in [0, total_size())) belongs to.
  size_t source_of(int64_t index) const;
  // A label of `source` as the mixture gives it (its label map, then its offset). InvalidArgument naming the
  // source for a label the map does not hold.
  int64_t label(size_t source, int64_t label) const;
  bool relabels(size_t source) const { return parts_[source].label_offset != 0 || !parts_[source].label_map.empty(); }
  // Epoch `epoch`'s order: epoch_length() indices of the mixture's space (see above).
  std::vector<int64_t> epoch_order(bool shuffle, uint64_t seed, int64_t epoch) const;
  // Splits `order` (indices of the mixture's space) into each source's own indices, in order.
  std::vector<std::vector<int64_t>> split(const std::vector<int64_t>& order) const;

 private:
  std::vector<int64_t> sizes_;
  std::vector<MixturePart> parts_;
  std::vector<std::vector<int64_t>> blocks_;
  std::vector<int64_t> offsets_;  // sources() + 1 entries
  std::vector<int64_t> counts_;
  int64_t epoch_length_ = 0;
};

// Datasets of samples made whole (tables, tensors, streamed Parquet) mixed into one (see MixturePlan). The sources
// must agree on a sample: data of the same shape and dtype, targets of the same shape and dtype (their first
// samples are compared); a source that relabels must have integer class targets. A dataset that makes its own
// batches (an EncodedDataset) mixes by its SampleSource instead: MixtureSource, under one EncodedDataset.
// TensorDatasets (every source one) are joined at construction into one, relabelled: a copy of their tensors, which
// the mixture then holds instead of its sources, so that a batch is one gather, as from a single source.
// Thread-safety: immutable after construction, as its sources are.
class MixtureDataset : public Dataset {
 public:
  // Throws InvalidArgument, naming the source and what differs, for sources that disagree, a missing or
  // device-resident source, a source that makes its own batches, no sources, or a plan MixturePlan refuses.
  MixtureDataset(std::vector<std::shared_ptr<const Dataset>> sources, std::vector<MixturePart> parts,
                 int64_t epoch_size = 0);
  int64_t size() const override { return plan_.total_size(); }
  Example get(int64_t index) const override;
  bool has_batch_fetch() const override { return true; }
  // Each source's samples in one call of its get_batch(), put in place.
  Example get_batch(const std::vector<int64_t>& indices) const override;
  void will_read(const std::vector<int64_t>& order, const ReadAhead& ahead) const override;
  const MixturePlan* mixture() const override { return &plan_; }
  const MixturePlan& plan() const { return plan_; }

 private:
  torch::Tensor relabelled(size_t source, torch::Tensor target) const;

  std::vector<std::shared_ptr<const Dataset>> sources_;  // empty once joined
  MixturePlan plan_;
  std::shared_ptr<const TensorDataset> joined_;  // TensorDatasets' samples, one after another, relabelled
};

// Stacks examples into one batch (default collate). Throws InvalidArgument on an empty list.
Example collate(const std::vector<Example>& examples);

// How an image table is laid out: a label column and either channels x height x width feature columns, one
// value a pixel, taken in the table's column order (`label,pixel1..pixel784`), or one row-major column of byte
// strings of that many bytes each (Parquet FIXED_LEN_BYTE_ARRAY(784)) or of lists of that many numbers each
// (Parquet list<uint8>, list<float>), or of PNG files (8-bit grayscale, decoded by io's codec): the `image`
// column when the table has it (or `image.bytes`: a Hugging Face image struct's PNG field, as the Parquet
// reader flattens it), or the feature patterns' only match when that holds byte strings or lists.
struct ImageTableLayout {
  std::string label_column = "label";
  std::vector<std::string> feature_columns{"pixel*"};  // exact names or globs, see match_columns()
  std::string image_column = "image";                   // used when the table has it; empty: never
  int64_t channels = 1, height = 28, width = 28;
};

// The columns of a file that make the layout's dataset: its label, feature patterns and image column, and
// channels x height x width features (DatasetColumns::columns and row_groups left empty, for the caller).
DatasetColumns layout_columns(const ImageTableLayout& layout);

// The experiment's naive dataset (its v1, pandas `df.iloc[idx]`): keeps the table as loaded and, for every
// sample, gathers the row's values one by one, converts each to float, builds a tensor and divides by 255.
class RowDataset : public Dataset {
 public:
  RowDataset(std::shared_ptr<const Table> table, ImageTableLayout layout = {});
  int64_t size() const override { return table_->num_rows; }
  Example get(int64_t index) const override;

 private:
  std::shared_ptr<const Table> table_;
  ImageTableLayout layout_;
  size_t label_index_;
  std::vector<size_t> pixel_indices_;  // the feature columns, in table order
};

// The experiment's pre-decoded dataset (its v2): one [N, C, H, W] tensor and one int64 label tensor, built
// once at load. get() is an index; get_batch() is one gather (index_select) for the whole batch.
class TensorDataset : public Dataset {
 public:
  // images: [N, C, H, W] (float32, or uint8 to be normalised later on the device); labels: [N] class numbers,
  // made int64. With `class_labels` false, images may be [N, ...] of any dtype and labels [N, ...] keep their
  // dtype (regression targets, several labels a sample). Contiguous tensors are kept as they are, never copied.
  TensorDataset(torch::Tensor images, torch::Tensor labels, bool class_labels = true);
  int64_t size() const override { return labels_.size(0); }
  Example get(int64_t index) const override;
  bool has_batch_fetch() const override { return true; }
  Example get_batch(const std::vector<int64_t>& indices) const override;
  const torch::Tensor& images() const { return images_; }
  const torch::Tensor& labels() const { return labels_; }

 private:
  torch::Tensor images_;
  torch::Tensor labels_;
};

// The device-resident dataset: images and labels copied to `device` once (keep images uint8 there to hold 4x
// less; the training step normalises them). Shuffled and gathered where it lives by the consuming thread: the
// loader runs no workers and pins nothing for it (see Dataset::resident_device()).
class DeviceDataset : public Dataset {
 public:
  DeviceDataset(const torch::Tensor& images, const torch::Tensor& labels, torch::Device device);
  int64_t size() const override { return labels_.size(0); }
  Example get(int64_t index) const override;
  bool has_batch_fetch() const override { return true; }
  Example get_batch(const std::vector<int64_t>& indices) const override;
  std::optional<torch::Device> resident_device() const override { return images_.device(); }
  Example gather(const torch::Tensor& indices) const override;

 private:
  torch::Tensor images_;
  torch::Tensor labels_;
};

// Image and label tensors decoded once from a table: float32 in [0, 1] (divided by 255), or the raw uint8
// values when `as_uint8` is true. Throws InvalidArgument when the table lacks the layout's columns or holds
// another number of features than channels x height x width.
struct ImageTensors {
  torch::Tensor images;  // [N, C, H, W]
  torch::Tensor labels;  // [N] int64
};
ImageTensors decode_image_table(const Table& table, const ImageTableLayout& layout = {}, bool as_uint8 = false);

// A label column as int64 class numbers, [rows]. InvalidArgument naming the column and the row for a null, a value
// that is not a whole number or is negative, and for a column of lists or byte strings.
torch::Tensor label_tensor(const Column& column);

// How list_column_tensor and list_column_tensors take nulls. kRefuse: InvalidArgument naming the first row that
// is null, holds a null element or (a list of lists) a null list. kZero: a null element is 0, a null row is zeros
// of the other rows' shape (list_column_tensor) or an empty tensor (list_column_tensors), and a null inner list
// holds no entries, as an empty one (so that a list of lists holding one is irregular).
enum class ListNulls { kRefuse, kZero };

// A list column (Parquet list<float>, list<uint8>, ...: how embeddings and images are stored) as tensors. The
// dtype follows the elements: BOOLEAN bool; INT(8) uint8 / int8; INT(16) int16 (unsigned: int32); INT32 int32
// (unsigned: int64); INT64 int64; FLOAT float32; DOUBLE float64; FLOAT16 float16; DECIMAL float64 (each value
// scaled). Byte strings throw InvalidArgument naming the column.
// One [rows, n] tensor when every row holds n elements (every row not null, under kZero); InvalidArgument naming
// the column and the first row that differs in length from the first, or holds a null `nulls` refuses. A list of
// lists (Parquet list<list<...>>, bounding boxes as list<list<float>>) makes one [rows, n, m, ...] tensor when
// every list at each level holds as many entries as that level's first; otherwise InvalidArgument naming the
// first row that holds an irregular one.
torch::Tensor list_column_tensor(const Column& column, ListNulls nulls = ListNulls::kRefuse);
// One 1-D tensor per row (views of one buffer), for lists of any length; InvalidArgument for a null `nulls`
// refuses, naming the row, and for a list of lists.
std::vector<torch::Tensor> list_column_tensors(const Column& column, ListNulls nulls = ListNulls::kRefuse);
// Every element of a list column (of any depth), in order, as one 1-D tensor of the dtype above; InvalidArgument
// for a null `nulls` refuses, naming the row, and for byte strings.
torch::Tensor list_column_elements(const Column& column, ListNulls nulls = ListNulls::kRefuse);

// FLOAT16 values stored as two-byte strings (a FIXED_LEN_BYTE_ARRAY(2) column's values, or a list column's
// elements) as a float16 tensor, one entry a value; a null's bytes are missing (empty), and it reads as 0.
torch::Tensor float16_tensor(const ByteArrays& values);

}  // namespace feedline
