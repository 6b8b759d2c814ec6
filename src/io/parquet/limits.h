// Internal to the Parquet reader: its limits. What a read may allocate (the output budget, which every page's
// decompressed size is held to as well), what a thread's scratch keeps, which chunks decode their pages on several
// threads, and the slack allowed for a dictionary page header that old writers leave out of a chunk's size.
#pragma once

#include <cstdint>

namespace feedline::parquet::detail {

constexpr int64_t kMaxDictionaryHeaderBytes = 100;
// The output budget (ReadOptions::max_output_bytes) by default: the most of these three. Decoded output may exceed
// the file by kMaxExpansion (RLE runs compress without bound), reach kMinOutputBudget, or take
// 1 / kMemoryShare of the machine's memory. A page's decompressed size must be within the budget too.
constexpr int64_t kMaxExpansion = 1024;
constexpr int64_t kMinOutputBudget = int64_t{1} << 30;
constexpr int64_t kMemoryShare = 4;
int64_t default_output_budget(int64_t file_size);
// A page decompressed into more than this goes to a buffer of its own, freed with the page, rather than into the
// thread's scratch (which the thread keeps).
constexpr int64_t kMaxScratchBytes = int64_t{64} << 20;
// A column chunk this large (compressed) may decode its pages on several threads.
constexpr int64_t kMinParallelChunkBytes = int64_t{1} << 20;

}  // namespace feedline::parquet::detail
