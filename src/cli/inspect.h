// `feedline inspect FILE` and `feedline cat FILE`: what a Parquet file holds, and its rows as text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace feedline::cli {

struct InspectArgs {
  std::string path;
  bool json = false;
};

// Schema, logical types, row groups, per-column codecs, encodings, sizes and statistics, key-value metadata;
// as text, or as one JSON document with --json.
int run_inspect(const InspectArgs& args);

struct CatArgs {
  std::string path;
  std::vector<std::string> columns;  // empty: all, in file order
  int64_t limit = -1;                // rows; -1: all
  std::string format = "csv";        // csv or jsonl
  int threads = 0;
};

// The rows as CSV (a header, nulls empty) or JSON lines (nulls as null). Floats in shortest round-trip
// form, binary as hex, strings as text.
int run_cat(const CatArgs& args);

}  // namespace feedline::cli
