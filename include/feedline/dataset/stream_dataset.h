// A Parquet image dataset larger than memory, one file or many (a folder, a pattern or a list, read as
// parquet::DatasetReader reads them, file after file): it reads and decodes a row group when one of its samples is
// asked for, and keeps only the few row groups used last. Its row groups, those of every file, are its shuffle
// blocks (see Dataset::shuffle_blocks()), so a shuffling Loader visits them one at a time and reads each once an
// epoch, and a rank's share is a stretch of them that may span files.
// Remote files (s3://, gs://, http(s)://) are read as local ones; will_read() fetches the column chunks of the row
// groups the loader reads next.
// Thread-safe: the row-group cache is locked, workers that want the same row group wait for one read of it, and
// different row groups are read at once (through parquet::DatasetReader, thread-safe).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "feedline/dataset/dataset.h"
#include "feedline/io/parquet.h"
#include "feedline/io/parquet_dataset.h"

namespace feedline {

namespace detail {
class ReadAheadFetcher;
template <class Block>
class RowGroupCache;
}  // namespace detail

struct ParquetStreamOptions {
  ImageTableLayout layout;
  std::vector<std::string> columns;  // non-empty: nothing outside these exact names is read (DatasetColumns::columns)
  int64_t limit = 0;                 // > 0: only the first `limit` rows
  // Decoded row groups kept at once (the least recently used goes first). A shuffled epoch needs two (a batch may
  // straddle two row groups), plus about one per worker.
  int64_t cached_row_groups = 4;
  bool as_uint8 = false;  // images kept as bytes, for the training step to normalise (4x less memory)
  int num_threads = 1;    // decoding threads for each row group read
  // Files kept open at once (parquet::DatasetReader); a dataset of more opens the others again as they are read.
  size_t max_open_files = parquet::kDefaultMaxOpenFiles;
};

class ParquetStreamDataset : public Dataset {
 public:
  // Reads the footers, once for the dataset's life: every row group read after goes through the files opened here.
  // `path` is a .parquet file or a dataset of them (see parquet::is_dataset_spec()). Throws as DatasetReader,
  // read_table() and read_dataset_table() do (files that disagree, a missing column, a wrong feature count), and
  // InvalidArgument for a path that is not a .parquet file or cached_row_groups below 1.
  ParquetStreamDataset(std::string path, ParquetStreamOptions options);
  ~ParquetStreamDataset() override;

  int64_t size() const override { return size_; }
  Example get(int64_t index) const override;
  bool has_batch_fetch() const override { return true; }
  Example get_batch(const std::vector<int64_t>& indices) const override;
  std::vector<int64_t> shuffle_blocks() const override { return blocks_; }
  // Remote files: fetches `ahead.blocks` row groups in the order's order beyond those read.
  void will_read(const std::vector<int64_t>& order, const ReadAhead& ahead) const override;

  // Row groups read and decoded so far (each read counts, a re-read after eviction too).
  int64_t row_group_reads() const;
  // The Parquet files the dataset reads (1 for a single file).
  size_t num_files() const { return dataset_.num_files(); }

 private:
  struct Block {  // one decoded row group
    torch::Tensor images, labels;
  };
  // The row group's block (counted over every file), read and decoded: what the cache reads.
  std::shared_ptr<const Block> read_block(int64_t row_group) const;
  int64_t group_of(int64_t index) const;
  void fetch(int64_t row_group) const;

  ParquetStreamOptions options_;
  parquet::DatasetReader dataset_;
  parquet::ReadOptions read_options_;  // the dataset's columns, resolved once; row_groups set at each read
  int64_t size_ = 0;
  std::vector<int64_t> blocks_;  // rows of each row group used (the last cut by `limit`)
  std::vector<int64_t> starts_;  // first index of each row group; starts_.back() == size_
  std::unique_ptr<detail::RowGroupCache<Block>> cache_;  // the decoded row groups used last
  std::unique_ptr<detail::ReadAheadFetcher> fetcher_;  // remote files only
};

}  // namespace feedline
