// Internal to the Parquet reader: the scratch each thread decodes a column chunk into (Scratch), kept with the
// thread between chunks so that its memory is not faulted in again for each, and given back where it grew large.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "feedline/io/table.h"
#include "io/memory.h"

namespace feedline::parquet::detail {

struct Scratch {
  ScratchVector<uint8_t> chunk;  // the chunk's bytes as read from the file
  ScratchVector<uint8_t> page;   // decompressed page
  std::vector<uint8_t> levels; // a list page's repetition and definition levels and element slots
  // The lists a page of lists of lists begins at each inner level (room for one an entry), before they join the
  // column's: the column then grows by what the page used.
  std::vector<int64_t> inner_offsets;
  std::vector<uint8_t> inner_valid;
  // A flat column chunk's validity, a byte a row, copied into the column only when the chunk has nulls.
  std::vector<uint8_t> validity;
  // The chunk's dictionary. A thread reads one chunk at a time, and the threads that help it decode pages read
  // the dictionary of the thread that owns the chunk. Fixed-width values of any type (a byte a BOOLEAN, INT32,
  // INT64, FLOAT, DOUBLE, or a FIXED_LEN_BYTE_ARRAY's values back to back) share one buffer, so that chunks of
  // different types reuse its room (DictionaryPage keeps the count of the chunk's values); variable-length byte
  // arrays have their own.
  ScratchVector<uint8_t> dict;
  ByteArrays dict_bytes;
  // A window's pages of byte arrays, each decoded into its own (by any thread) before they join the column.
  std::vector<ByteArrays> page_values;
  // Gives back what grew past kMaxScratchBytes, so that one large chunk does not stay with the thread for life;
  // except the chunk buffer, kept while the process's threads keep no more than kKeptScratchBytes of them, so that
  // a file of large chunks faults a thread's buffer in once rather than once a chunk.
  void trim();
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch();

 private:
  size_t kept_ = 0;  // the chunk buffer's bytes counted against kKeptScratchBytes
};

// What the process's threads may keep of chunk buffers larger than kMaxScratchBytes, together; and what they keep.
constexpr size_t kKeptScratchBytes = size_t{512} << 20;
size_t kept_scratch_bytes();

// The calling thread's scratch.
Scratch& scratch();

// Bytes past the end of the chunk and page buffers, so that fixed-width unpacking may read a little beyond.
constexpr size_t kPadding = 16;

}  // namespace feedline::parquet::detail
