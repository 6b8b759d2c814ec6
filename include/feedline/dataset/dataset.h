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
