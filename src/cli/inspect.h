// `feedline inspect FILE` and `feedline cat FILE`: what a Parquet or CSV file holds, and its rows as text. No
// LibTorch.
#pragma once

#include "cli/commands.h"

namespace feedline::cli {

// A Parquet file's schema, logical types, row groups, per-column codecs, encodings, sizes and statistics and its
// key-value metadata; a CSV file's size, rows and columns with the types `train` would read them as; as text, or
// as one JSON document with --json.
int run_inspect(const InspectArgs& args);

// The rows as CSV (a header, nulls empty) or JSON lines (nulls as null). Floats in shortest round-trip form,
// binary as hex, strings as text.
int run_cat(const CatArgs& args);

}  // namespace feedline::cli
