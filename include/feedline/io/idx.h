// IDX files (the MNIST format): a big-endian header of magic, element type and dimensions, then raw values.
// Reads gzip-compressed (.gz) and plain files alike. Pure functions: safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "feedline/io/table.h"

namespace feedline {

struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;  // row-major, product(dims) bytes
};

// Reads an unsigned-byte IDX file. Throws InvalidFile naming the path when the magic, the type, the
// dimensions or the size is wrong (truncated or trailing data), Unsupported for other element types.
IdxArray read_idx(const std::string& path);

// Images and labels of one split, checked against each other: N images of rows x cols and N labels.
struct ImageSplit {
  int64_t count = 0, rows = 0, cols = 0;
  std::vector<uint8_t> images;  // count * rows * cols
  std::vector<uint8_t> labels;  // count
};
ImageSplit read_idx_split(const std::string& images_path, const std::string& labels_path);

// How a split becomes a table. Every layout starts with `label`, INT32 annotated INT(8, unsigned), except
// kPixelColumnsInt64's.
enum class ImageTableLayoutKind {
  // `label`, then `pixel1..pixelP` (P = rows * cols), every column INT32 annotated INT(8, unsigned).
  kPixelColumnsUInt8,
  // The same columns as plain INT64 without annotation: what pandas (through pyarrow) writes.
  kPixelColumnsInt64,
  // `label` and `image`: FIXED_LEN_BYTE_ARRAY(rows * cols), each image's pixels in row-major order.
  kRowMajor,
};

// The experiment's table layout, kPixelColumnsUInt8.
Table image_split_to_table(const ImageSplit& split);
// Throws InvalidArgument when the split's sizes disagree or rows * cols exceeds INT32_MAX.
Table image_split_to_table(const ImageSplit& split, ImageTableLayoutKind layout);

}  // namespace feedline
