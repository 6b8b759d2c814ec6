// Internal to the Parquet reader: a file open for reading, its footer parsed (ParsedFile), which the readers of its
// column chunks share, read-only, from any thread; and how their errors come to name where in it they were met.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "feedline/io/file.h"
#include "io/parquet/metadata.h"
#include "io/parquet/schema.h"

namespace feedline::parquet::detail {

struct ParsedFile {
  std::string path;
  std::unique_ptr<RandomAccessFile> file;
  int64_t size = 0;
  int64_t footer_start = 0;  // where the Thrift FileMetaData begins: column data must end before it
  format::FileMetaData md;
  std::vector<Leaf> leaves;
  bool old_parquet_mr = false;  // written by parquet-mr 1.2.8 or older, or one that does not say its version
};

// Rethrows the current feedline::Error with `prefix` in front, keeping its type.
[[noreturn]] void rethrow_with(const std::string& prefix);

}  // namespace feedline::parquet::detail
