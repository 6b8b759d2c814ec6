// Room for a chunk's byte arrays from its page headers: a bound on their bytes, page by page.
#include "io/parquet/byte_arrays_room.h"

#include <algorithm>
#include <cstdint>

#include "io/memory.h"
#include "io/parquet/dictionary_page.h"
#include "io/parquet/limits.h"
#include "io/parquet/metadata.h"
#include "io/parquet/scratch.h"

namespace feedline::parquet::detail {

namespace {

// What a chunk of byte arrays takes, from its page headers. `bound`: at most the bytes its values take from the
// first data page on, a PLAIN or DELTA_LENGTH_BYTE_ARRAY page at most its values' section (a PLAIN page's less
// the lengths of the values its header says it holds), a dictionary-encoded page its entries times the
// dictionary's longest value; -1 where it is unknown. `exact`: no page is dictionary-encoded, so that the bound
// is the values' bytes and no more than their lengths and levels over. `huge`: a dictionary or a page's values of
// more than kMaxScratchBytes.
struct ByteArraysRoom {
  int64_t bound = -1;
  bool exact = false;
  bool huge = false;
  int64_t last_dictionary_page = -1;  // the file offset of the last dictionary-encoded data page's header
};

// The longest of the dictionary's values.
int64_t longest_value(const ByteArrays& dict) {
  int64_t longest = 0;
  for (size_t i = 1; i < dict.offsets.size(); ++i) longest = std::max(longest, dict.offsets[i] - dict.offsets[i - 1]);
  return longest;
}

ByteArraysRoom byte_arrays_room(const PageWalk& walk) {
  ByteArraysRoom room;
  if (walk.leaf().schema.type_length > 0 || walk.metadata().total_uncompressed_size < kMinParallelChunkBytes) {
    return room;
  }
  const ChunkDictionary& dict = walk.dictionary().view();
  const int64_t longest = dict.present ? longest_value(*dict.bytes) : 0;
  bool huge = dict.present && static_cast<int64_t>(dict.bytes->bytes.size()) > kMaxScratchBytes, exact = true;
  int64_t bound = 0, last_dictionary_page = -1, prefixes = 0;
  const bool read = walk.each_page_header([&](int64_t at, const format::PageHeader& h) {
    int32_t encoding = 0, entries = 0;
    int64_t values = h.uncompressed_page_size, present = 0;  // present: values known to be in the page
    if (h.type == format::page_type::kDataPage && h.data_page_header) {
      encoding = h.data_page_header->encoding;
      entries = h.data_page_header->num_values;
      if (walk.leaf().max_def == 0) present = entries;  // (a required flat column: a value an entry)
    } else if (h.type == format::page_type::kDataPageV2 && h.data_page_header_v2) {
      const format::DataPageHeaderV2& v2 = *h.data_page_header_v2;
      encoding = v2.encoding;
      entries = v2.num_values;
      present = std::max(v2.num_values - v2.num_nulls, 0);
      values -= v2.repetition_levels_byte_length + v2.definition_levels_byte_length;
    } else {
      return true;
    }
    if (encoding == format::encoding::kRleDictionary || encoding == format::encoding::kPlainDictionary) {
      last_dictionary_page = at;
      exact = false;
      values = entries > 0 && longest > INT64_MAX / entries ? INT64_MAX : entries * longest;
    } else if (encoding == format::encoding::kPlain) {
      const int64_t lengths = std::min(4 * present, values);  // (each value's length before it)
      values -= lengths;
      prefixes = std::max(prefixes, lengths);
    } else if (encoding != format::encoding::kDeltaLengthByteArray) {
      return false;
    }
    huge |= values > kMaxScratchBytes;
    bound = values > INT64_MAX - bound ? INT64_MAX : bound + values;
    return true;
  });
  if (!read) return room;
  // A huge PLAIN page decompresses past the column's bytes with its lengths (open_page): room for one page's.
  if (huge) bound = prefixes > INT64_MAX - bound ? INT64_MAX : bound + prefixes;
  return ByteArraysRoom{bound, exact, huge, last_dictionary_page};
}

}  // namespace

bool make_room_from_headers(PageWalk& walk, ByteArrays* out) {
  const ByteArraysRoom room = byte_arrays_room(walk);
  if (room.bound < 0) return false;
  if (room.huge && walk.dictionary().present()) walk.dictionary().release_after(room.last_dictionary_page);
  const int64_t budget = walk.budget();
  const auto have = static_cast<int64_t>(out->bytes.size());
  if (room.bound < 0 || (!room.huge && !room.exact) || (!room.huge && room.bound > budget - have)) return false;
  const int64_t bytes = std::min(room.bound, std::max<int64_t>(budget - have, 0)) + static_cast<int64_t>(kPadding);
  if (room.huge) {
    out->bytes.reserve(static_cast<size_t>(have + bytes));
  } else {
    reserve_populated(out->bytes, static_cast<size_t>(have + bytes));
  }
  return true;
}

}  // namespace feedline::parquet::detail
