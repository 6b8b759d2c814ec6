// feedline's one parallel loop: the Parquet and CSV readers and writers, the datasets' batch gathers and PNG
// decoding and the lab run their work on it (the loader's own workers are the one other pool).
//
// parallel_for(n, threads, f) runs f(0), ..., f(n - 1) on up to `threads` threads, the calling thread among them.
// The other threads come from one process-wide pool, started on first use, grown to the largest count asked and
// kept for the process's life, so a call costs microseconds, not a thread start each. Indices are handed out in
// increasing order; after a failure no new index is handed out, and once every started task has ended the
// exception of the lowest failing index is rethrown in the caller: the one a serial loop would have thrown, whatever
// the timing (every index below a failing one had started when it failed).
//
// Call it from any thread, tasks included: a task may call parallel_for again. The caller keeps taking indices
// itself and waits only for tasks that a helper has already started, so nested calls never deadlock, even when
// every helper is busy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace feedline {

// The threads to use for `requested`: itself when above 0, else every core (at least 1).
int resolve_threads(int requested);

// Runs f(i) for every i in [0, n) on up to `threads` threads (the caller's included). threads <= 1, or n <= 1, runs
// every index on the caller's thread, in order.
void parallel_for(size_t n, int threads, const std::function<void(size_t)>& f);

// Runs f(begin, end) over [first, last) cut into contiguous blocks of at least `grain` indices (at most one block
// per thread), on up to `threads` threads; the blocks together cover the range once. Errors as parallel_for.
void parallel_for_blocks(int64_t first, int64_t last, int64_t grain, int threads,
                         const std::function<void(int64_t, int64_t)>& f);

}  // namespace feedline
