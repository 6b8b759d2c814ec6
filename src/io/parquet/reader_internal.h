// Internal: the part of the Parquet reader's memory limit the file's size sets, for tests and the fuzzer.
#pragma once

#include <cstdint>

namespace feedline::parquet::detail {

// The default ReadOptions::max_output_bytes without its share of the machine's memory: the larger of 1 GiB and
// 1024 x the file's size (the fuzzer reads under it, within libFuzzer's memory limit).
int64_t file_output_budget(int64_t file_size);

}  // namespace feedline::parquet::detail
