// The dataset modes: how a file's images are made into a dataset (see load_image_file()). An enum, named once here
// and parsed once at the front ends' edge (command line, Python), so that no layer compares names. No LibTorch and
// nothing to link: the command-line tool, which starts without LibTorch, checks its flags against these names.
// Plain constants and functions without state: safe from any thread.
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "feedline/io/error.h"

namespace feedline {

enum class DatasetMode {
  kRow,          // "row": the naive RowDataset over the table, each sample converted as it is asked for
  kTensor,       // "tensor": decoded once into a float TensorDataset
  kTensorUint8,  // "tensor-uint8": decoded once and kept as uint8 (the training step normalises it on the device)
  kDevice,       // "device": uint8 too, and copied to the device once (a DeviceDataset)
  kStream,       // "stream": a Parquet file read a row group at a time (a ParquetStreamDataset), never whole
};

inline constexpr std::array<DatasetMode, 5> kDatasetModes{DatasetMode::kRow, DatasetMode::kTensor,
                                                          DatasetMode::kTensorUint8, DatasetMode::kDevice,
                                                          DatasetMode::kStream};

// The mode's name, as the command line and Python spell it.
inline const char* dataset_mode_name(DatasetMode mode) {
  switch (mode) {
    case DatasetMode::kRow: return "row";
    case DatasetMode::kTensor: return "tensor";
    case DatasetMode::kTensorUint8: return "tensor-uint8";
    case DatasetMode::kDevice: return "device";
    case DatasetMode::kStream: return "stream";
  }
  return "?";
}

// The mode that `name` spells; InvalidArgument naming it and the modes there are for any other.
inline DatasetMode parse_dataset_mode(const std::string& name) {
  std::string known;
  for (size_t i = 0; i < kDatasetModes.size(); ++i) {
    if (name == dataset_mode_name(kDatasetModes[i])) return kDatasetModes[i];
    const char* separator = i == 0 ? "" : i + 1 < kDatasetModes.size() ? ", " : " or ";
    known += std::string(separator) + dataset_mode_name(kDatasetModes[i]);
  }
  throw InvalidArgument("unknown dataset mode '" + name + "' (use " + known + ")");
}

}  // namespace feedline
