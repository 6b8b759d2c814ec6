// A file's images as a dataset: the label and feature columns that a ColumnChoice names, read (and nothing
// else) and made into one of the dataset modes that `feedline train` and the bench lab offer. Plain functions
// without state: safe from any thread; the datasets they return are as thread-safe as their classes say.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "feedline/dataset/dataset.h"
#include "feedline/dataset/dataset_mode.h"
#include "feedline/io/columns.h"
#include "feedline/io/table.h"

namespace feedline {

// The table made into a dataset of the given mode (see DatasetMode): a RowDataset, a float or uint8 TensorDataset,
// or a DeviceDataset on `device`. InvalidArgument for kStream, which reads a file, not a table (see
// load_image_file()).
std::shared_ptr<const Dataset> make_table_dataset(std::shared_ptr<const Table> table, DatasetMode mode,
                                                  const ImageTableLayout& layout = {},
                                                  torch::Device device = torch::kCPU);

// The image layout and the columns to read that `choice` and `shape` make.
ImageTableLayout image_layout(const ColumnChoice& choice, const ImageShape& shape);

// Reads the label and feature columns of `path` (.parquet or .csv) and nothing else, keeping its first `limit` rows
// (0: all); errors name the file.
Table load_image_table(const std::string& path, const ColumnChoice& choice, const ImageShape& shape, int64_t limit,
                       int threads);

// The largest class number in the table's label column (-1 when it has no rows); InvalidArgument naming `path` for
// a label that is no class number.
int64_t max_label(const Table& table, const std::string& label_column, const std::string& path);

// The largest class number in the label column of `path` (.parquet: of the chosen row groups; its first `limit`
// rows when above 0), reading that column alone; -1 for a file without rows.
int64_t max_label_in(const std::string& path, const ColumnChoice& choice, int64_t limit, int threads);

struct ImageFile {
  std::shared_ptr<const Dataset> dataset;
  int64_t max_label = -1;  // the largest class number; -1 for an empty file
};

// What load_image_file() reads of a file and what it makes of it.
struct ImageFileOptions {
  ColumnChoice columns;  // the label and feature columns, the columns and row groups read
  ImageShape shape;      // channels x height x width values a sample
  DatasetMode mode = DatasetMode::kTensor;
  int64_t limit = 0;  // > 0: only the first `limit` rows
  int threads = 1;    // decoding threads
  torch::Device device = torch::kCPU;  // kDevice: where the images go
  // kStream: decoded row groups kept at once (see ParquetStreamOptions::cached_row_groups).
  int64_t cached_row_groups = 4;
};

// Reads only the chosen columns of `path` (.parquet or .csv), keeps its first `limit` rows (0: all) and makes
// the dataset; every problem with the columns or the labels is an InvalidArgument that names the file. Mode
// kStream (Parquet only, no row-group choice) reads nothing but the footer, its first row group and the labels:
// a ParquetStreamDataset of uint8 images.
ImageFile load_image_file(const std::string& path, const ImageFileOptions& options);

}  // namespace feedline
