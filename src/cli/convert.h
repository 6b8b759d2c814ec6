// `feedline convert IN OUT`: a CSV or Parquet file rewritten as CSV or Parquet, with its integer columns narrowed
// and its feature columns packed into one row-major column when asked.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace feedline::cli {

struct ConvertArgs {
  std::string input, output;          // .csv or .parquet each
  std::vector<std::string> columns;   // names or globs; empty: every column
  int64_t limit = 0;                  // first N rows; 0: all
  std::vector<std::string> packs;     // NAME=PATTERN[,PATTERN...], applied in order
  std::string pack_as = "bytes";      // bytes or list
  bool narrow_ints = false;
  std::string codec = "zstd";
  int level = 0;
  bool level_given = false;
  int64_t row_group_rows = 0;        // 0: up to 2^20, fewer to keep one row group near 256 MB in memory
  bool dictionary = true;
  int threads = 1;
};

// Reads the input a block at a time (a Parquet row group, or about 64 MB of CSV, a CSV file of up to 256 MB whole;
// a Parquet file with --narrow-ints twice, the first pass for the integer columns' ranges, which a CSV reader's
// typing pass finds), transforms each block and writes the output through a temporary file and a rename; prints
// what it read, changed and wrote. Checks the output's path before reading anything.
int run_convert(const ConvertArgs& args);

}  // namespace feedline::cli
