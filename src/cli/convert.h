// `feedline convert IN OUT`: a CSV or Parquet file rewritten as CSV or Parquet, with its integer columns narrowed
// and its feature columns packed into one row-major column when asked. No LibTorch.
#pragma once

#include "cli/commands.h"

namespace feedline::cli {

// Reads the input a block at a time (a Parquet row group, or about 64 MB of CSV, a CSV file of up to 256 MB whole;
// a Parquet file with --narrow-ints twice, the first pass for the integer columns' ranges, which a CSV reader's
// typing pass finds), transforms each block and writes the output through a temporary file and a rename; prints
// what it read, changed and wrote. Checks the output's path before reading anything.
int run_convert(const ConvertArgs& args);

}  // namespace feedline::cli
