// Internal to the Parquet reader: a data page as the value decoder takes it (PageData, which the page walk fills
// as it opens the page), and where its decoded values go (FixedOut, FixedBytesOut, or a ByteArrays to append to).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace feedline::parquet::detail {

// Where decoded values go: fixed-width columns write into a preallocated slice, byte arrays append.
template <class T>
struct FixedOut {
  T* values;
};

// Where a FIXED_LEN_BYTE_ARRAY page's values go when its first row's place in the column is known (pages decoded
// apart): their bytes back to back from `bytes`, a null taking none; the column's offsets follow from the
// validity. Pages of every encoding FIXED_LEN_BYTE_ARRAY may have decode so (see decodes_fixed_bytes).
struct FixedBytesOut {
  char* bytes;
};

// A data page, v1 or v2, as the value decoder needs it.
struct PageData {
  int64_t num_values = 0;  // level entries (for a flat column, rows)
  int64_t num_rows = -1;   // v2 only
  int32_t encoding = 0;
  int32_t definition_level_encoding = 0;  // v1: how the levels at the start of the body are encoded
  int32_t repetition_level_encoding = 0;
  bool v2 = false;  // v2: levels are RLE without a length prefix, outside the body
  const uint8_t* v2_rep_levels = nullptr;
  size_t v2_rep_size = 0;
  const uint8_t* v2_def_levels = nullptr;
  size_t v2_def_size = 0;
  // The decompressed values of a page larger than kMaxScratchBytes: freed with the page, not kept in the thread's
  // scratch for the process's life.
  std::vector<uint8_t> large;
  // A large PLAIN page of byte arrays decompressed into the column's own bytes (PageWalk::open_page): where the
  // column's bytes ended before it, which its values move down to; -1 for any other page.
  int64_t output_base = -1;
};

}  // namespace feedline::parquet::detail
