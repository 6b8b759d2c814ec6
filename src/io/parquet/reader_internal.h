// Internal: the Parquet reader's tuning knob and the part of its memory limit the file's size sets, for tests and
// the fuzzer.
#pragma once

#include <atomic>
#include <cstdint>

namespace feedline::parquet::detail {

// How many threads decode the pages of one column chunk (of a flat column of fixed-width values or
// FIXED_LEN_BYTE_ARRAY, or a one-level list of fixed-width values). 0 (the default): a chunk of at least 1 MiB
// (compressed; smaller ones decode faster than threads start) gets its share of the read's threads, by its share
// of the bytes read; others decode on the thread that reads them. N > 0: every such chunk's pages decode on N
// threads, whatever the read's own thread count, so that tests and the fuzzer reach that path with small files.
extern std::atomic<int> page_threads;

// While alive, page_threads is `threads`; back to 0 (the default) after.
struct ForcedPageThreads {
  explicit ForcedPageThreads(int threads) { page_threads = threads; }
  ~ForcedPageThreads() { page_threads = 0; }
  ForcedPageThreads(const ForcedPageThreads&) = delete;
  ForcedPageThreads& operator=(const ForcedPageThreads&) = delete;
};

// The default ReadOptions::max_output_bytes without its share of the machine's memory: the larger of 1 GiB and
// 1024 x the file's size (the fuzzer reads under it, within libFuzzer's memory limit).
int64_t file_output_budget(int64_t file_size);

}  // namespace feedline::parquet::detail
