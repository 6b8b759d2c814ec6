// How the process's allocator treats the memory a training step frees. Process-wide settings, for the program
// that trains (the feedline tool applies them at start); a library never changes them by itself.
#pragma once

#include <cstddef>

namespace feedline {

// glibc's malloc gives each block above its mmap threshold (128 KiB, rising with use to at most 32 MiB) a mapping
// of its own and unmaps it on free, and gives the top of the heap back to the kernel once 128 KiB of it is free.
// A training step on the CPU frees and allocates tensors of megabytes (SimpleCNN at batch 512: 25 MB for the
// first activation alone), so every step faults the same pages in again, a large share of a CPU epoch (what the
// setting is worth: docs/BENCHMARKS.md, "CPU settings"). keep_freed_memory() makes such blocks come from the heap
// (no mappings of their own) and keeps up to `trim_bytes` of freed heap for the next step. Call it once, before other
// threads start. Returns false, changing nothing, where the C library is not glibc.
bool keep_freed_memory(size_t trim_bytes = size_t{1} << 30);

}  // namespace feedline
