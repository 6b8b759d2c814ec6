// `feedline convert IN OUT`: a CSV or Parquet file rewritten as CSV or Parquet, with its integer columns narrowed
// and its feature columns packed into one row-major column when asked. No LibTorch.
#pragma once

#include "cli/commands.h"

namespace feedline::cli {

// Runs convert_file() (feedline/io/convert.h) with the command's flags, showing its progress, and prints what it
// read, changed and wrote.
int run_convert(const ConvertArgs& args);

}  // namespace feedline::cli
