// Internal: the Parquet reader's one tuning knob, for tests and the fuzzer.
#pragma once

#include <atomic>

namespace feedline::parquet::internal {

// How many threads decode the pages of a list column's chunk. 0 (the default): a chunk of at least 1 MiB
// (compressed; smaller ones decode faster than threads start) gets its share of the read's threads, by its
// share of the bytes read; others decode on the thread that reads them. N > 0: every list chunk's pages decode
// on N threads, whatever the read's own thread count, so that tests and the fuzzer reach that path with small
// files.
extern std::atomic<int> list_page_threads;

}  // namespace feedline::parquet::internal
