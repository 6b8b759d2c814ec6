// Which columns of a file make an image dataset, and the shape of its images: what `feedline train` and the
// Python DataLoader are told about a file, parsed before anything is read. No LibTorch here: the command-line tool
// parses its flags into these before it knows whether it will load LibTorch. Plain data and a function without
// state: safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace feedline {

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

}  // namespace feedline
