// Internal to the Parquet reader: a column chunk's pages (PageWalk): its bytes read from the file, its page headers
// walked in order (a window of them at a time, so that their pages may decode on several threads), each page
// checked against its CRC and decompressed, and the chunk's dictionary page decoded on the way. The readers of
// each column shape (chunk_reader.h) take their data pages from it.
#pragma once

#include <exception>
#include <vector>

#include "io/memory.h"
#include "io/parquet/chunk_reader.h"
#include "io/parquet/dictionary.h"
#include "io/parquet/plain.h"

namespace feedline::parquet::detail {

// A data page found by the walk over the chunk's page headers.
struct PageRef {
  int64_t offset = 0;  // of its header, in the file
  format::PageHeader header;
  const uint8_t* data = nullptr;  // its stored bytes (after the header) in the chunk's buffer
  int64_t num_values = 0;         // level entries (for a flat column, rows)
};

// The chunk's dictionary, once its dictionary page is read: fixed-width values (a FIXED_LEN_BYTE_ARRAY's bytes)
// `count` of them at `fixed`, with kShortCopyBytes readable past them; variable-length byte arrays in `bytes`.
struct ChunkDictionary {
  bool present = false;
  const uint8_t* fixed = nullptr;
  size_t count = 0;
  const ByteArrays* bytes = nullptr;
};

class PageWalk {
 public:
  explicit PageWalk(const ChunkSource& source)
      : file_(source.file), leaf_(source.leaf), chunk_(source.chunk), num_rows_(source.num_rows),
        budget_(source.budget) {
    dict_.bytes = &home_.dict_bytes;
  }
  ~PageWalk() { home_.trim(); }
  PageWalk(const PageWalk&) = delete;
  PageWalk& operator=(const PageWalk&) = delete;

  const Leaf& leaf() const { return leaf_; }
  int64_t num_rows() const { return num_rows_; }
  int64_t budget() const { return budget_; }
  const ChunkDictionary& dictionary() const { return dict_; }
  // The file offset of the page header being read, or of the page a reader names with set_page_offset; -1 first.
  int64_t page_offset() const { return page_offset_; }
  void set_page_offset(int64_t offset) { page_offset_ = offset; }

  // Checks the chunk's metadata against the schema and reads its bytes from the file. Returns the number of
  // level entries (values, nulls included) its pages hold: for a flat column the row group's rows, else what the
  // footer declares; 0 for an empty chunk.
  int64_t load();
  // The next window of data pages (at most `window`), their headers read in order (dictionary pages on the way
  // go to read_dictionary_page<T>; index pages are skipped); false when none is left. A header's error is kept
  // for rethrow_header_error() once the pages before it are done, as reading the pages one after another would
  // meet it. T: the type the chunk's values decode as (for its dictionary).
  template <class T>
  bool next_window(std::vector<PageRef>* into, size_t window);
  void rethrow_header_error();
  // Level entries in the data pages the walk has handed out so far.
  int64_t entries_seen() const { return seen_; }
  // Every data page in order, opened, to on_data(page, body, size); throws what the walk meets.
  template <class T, class OnData>
  void walk(OnData on_data);
  // A data page's values (checked against its CRC, and decompressed into this thread's scratch unless stored
  // plain), with what the decoders need of its header in *page. Safe to call from several threads at once.
  // `spare`: the column's byte arrays, when its pages decode in order; a compressed PLAIN page of more than
  // kMaxScratchBytes is then decompressed past the end of their bytes (page->output_base), where its values
  // are decoded in place (ValueDecoder), rather than into a buffer of its own and copied.
  const uint8_t* open_page(const PageRef& ref, PageData* page, size_t* size, ByteArrays* spare = nullptr) const;

  // What a chunk of variable-length byte arrays of 1 MiB or more (uncompressed) takes, from its page headers (read
  // once the first window is out: its dictionary is read then). `bound`: at most the bytes its values take from
  // the first data page on, a PLAIN or DELTA_LENGTH_BYTE_ARRAY page at most its values' section (a PLAIN page's
  // less the lengths of the values its header says it holds), a dictionary-encoded page its entries times the
  // dictionary's longest value; -1 where a DELTA_BYTE_ARRAY page
  // (its shared prefixes make values longer than the page) or a header that cannot be read (the walk meets its
  // error in turn) leaves it unknown. `exact`: no page is dictionary-encoded, so that the bound is the values'
  // bytes and no more than their lengths and levels over. `huge`: a dictionary or a page's values of more than
  // kMaxScratchBytes.
  struct ByteArraysRoom {
    int64_t bound = -1;
    bool exact = false;
    bool huge = false;
  };
  ByteArraysRoom byte_arrays_room();
  // The reader is done with page `ref`: after the last page that uses it, a huge dictionary (found by
  // byte_arrays_room) is given back.
  void page_done(const PageRef& ref);

 private:
  // Reads page headers from file offset *pos on to the next data page, which it checks against the `total`
  // level entries less the `seen` before it, and returns; moves *pos past it.
  template <class T>
  PageRef next_data_page(int64_t* pos, int64_t seen, int64_t total);
  template <class T>
  void read_dictionary_page(const format::PageHeader& h, const uint8_t* body, size_t size);
  // A compressed dictionary page of fixed-width values whose size is exactly its values' (PLAIN), decompressed
  // straight into the chunk's dictionary rather than into scratch and copied: false, reading nothing, otherwise.
  template <class T>
  bool decompress_dictionary(const format::PageHeader& h, const uint8_t* data);
  // The chunk's fixed-width dictionary made `values` long in home_.dict (for FIXED_LEN_BYTE_ARRAY, their bytes),
  // the room of the thread's chunks before kept; returns where its values go.
  template <class T>
  uint8_t* size_dictionary(size_t values);
  // A compressed PLAIN dictionary page of variable-length byte arrays larger than kMaxScratchBytes, decompressed
  // into the chunk's dictionary and its values moved down in place, rather than decompressed apart and copied:
  // false, reading nothing, for any other page.
  template <class T>
  bool dictionary_in_place(const format::PageHeader& h, const uint8_t* data);
  // Gives the chunk's dictionary of byte arrays back (its pages have used it).
  void release_dictionary();
  // Checks the page's sizes against the limits and its CRC when it has one.
  void check_crc(const format::PageHeader& h, const uint8_t* data) const;
  // The values of a page, decompressed into scratch (into *large past kMaxScratchBytes) unless stored plain (v2
  // pages may say is_compressed false).
  const uint8_t* values_body(std::vector<uint8_t>* large, const uint8_t* data, int64_t compressed,
                             int64_t uncompressed, bool is_compressed, size_t* size) const;
  // check_crc, then values_body of the whole page (data page v1, dictionary page).
  const uint8_t* page_body(std::vector<uint8_t>* large, const format::PageHeader& h, const uint8_t* data,
                           size_t* size) const;

  const ParsedFile& file_;
  const Leaf& leaf_;
  const format::ColumnChunk& chunk_;
  int64_t num_rows_;
  int64_t budget_;
  Codec codec_ = Codec::kUncompressed;
  int64_t start_ = 0, end_ = 0;  // the chunk's bytes in the file; home_.chunk holds them
  int64_t pos_ = 0;              // the next page header's file offset
  int64_t seen_ = 0, total_ = 0;  // level entries handed out, and in the chunk
  int64_t page_offset_ = -1;
  int64_t first_data_page_ = -1;      // the file offset of the first data page's header
  int64_t last_dictionary_page_ = -1;  // of the last dictionary-encoded data page's, once byte_arrays_room knows
  std::exception_ptr header_error_;  // see next_window
  int64_t header_error_offset_ = -1;
  // The scratch of the thread that made the walk: its chunk buffer and the chunk's dictionary, kept between
  // chunks so that their memory is not faulted in again for each.
  Scratch& home_ = scratch();
  // In home_.dict or home_.dict_bytes, or, a FIXED_LEN_BYTE_ARRAY page stored uncompressed, where it lies in
  // home_.chunk.
  ChunkDictionary dict_;
};

// Room for the rest of a chunk's byte arrays made once from its page headers (PageWalk::byte_arrays_room), within
// the budget: for huge values, not faulted in, so that its pages neither move the bytes before them as they grow
// nor take more memory than their values; for pages of exact sizes, populated for writing. Returns whether it was
// made (else the reader projects the room from the bytes its pages take, as they come).
inline bool make_room_from_headers(const PageWalk::ByteArraysRoom& room, ByteArrays* out, int64_t budget) {
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

static_assert(kPadding >= kShortCopyBytes, "page buffers must end with what copy_byte_array may read past");

template <class T>
PageRef PageWalk::next_data_page(int64_t* pos, int64_t seen, int64_t total) {
  const uint8_t* base = home_.chunk.data();  // the byte at file offset start_
  for (;;) {
    page_offset_ = *pos;
    if (*pos >= end_) {
      throw InvalidFile("chunk ends after " + std::to_string(seen) + " of " + std::to_string(total) + " values");
    }
    thrift::CompactReader in(base + (*pos - start_), static_cast<size_t>(end_ - *pos), *pos);
    PageRef ref;
    ref.offset = *pos;
    ref.header = format::read_page_header(in);
    const format::PageHeader& h = ref.header;
    *pos += static_cast<int64_t>(in.position());
    if (h.compressed_page_size < 0 || h.compressed_page_size > end_ - *pos) {
      throw InvalidFile("page of " + std::to_string(h.compressed_page_size) + " bytes runs past the chunk");
    }
    ref.data = base + (*pos - start_);
    *pos += h.compressed_page_size;
    switch (h.type) {
      case format::page_type::kDictionaryPage: {
        if (!h.dictionary_page_header) throw InvalidFile("dictionary page without its header");
        if (dict_.present) throw InvalidFile("second dictionary page");
        if (seen > 0) throw InvalidFile("dictionary page after data pages");
        if (dictionary_in_place<T>(h, ref.data) || decompress_dictionary<T>(h, ref.data)) break;
        size_t size;
        std::vector<uint8_t> large;
        const uint8_t* body = page_body(&large, h, ref.data, &size);
        read_dictionary_page<T>(h, body, size);
        break;
      }
      case format::page_type::kDataPage: {
        if (!h.data_page_header) throw InvalidFile("data page without its header");
        const int32_t n = h.data_page_header->num_values;
        if (n < 0 || n > total - seen) {
          throw InvalidFile("data page of " + std::to_string(n) + " values where " + std::to_string(total - seen) +
                            " remain");
        }
        ref.num_values = n;
        if (first_data_page_ < 0) first_data_page_ = ref.offset;
        return ref;
      }
      case format::page_type::kDataPageV2: {
        if (!h.data_page_header_v2) throw InvalidFile("data page v2 without its header");
        const format::DataPageHeaderV2& v2 = *h.data_page_header_v2;
        const int32_t n = v2.num_values;
        if (n < 0 || n > total - seen || v2.num_rows < 0 || v2.num_rows > n ||
            (leaf_.max_rep == 0 && v2.num_rows != n)) {
          throw InvalidFile("data page v2 of " + std::to_string(n) + " values and " + std::to_string(v2.num_rows) +
                            " rows where " + std::to_string(total - seen) + " values remain");
        }
        const int64_t rep = v2.repetition_levels_byte_length, def = v2.definition_levels_byte_length;
        // A flat column's page may still declare repetition-level bytes (some writers always write both
        // sections): they are skipped, as DuckDB and Arrow skip them (open_page reads past them).
        if (rep < 0 || def < 0 || rep + def > h.compressed_page_size || rep + def > h.uncompressed_page_size ||
            (leaf_.max_def == 0 && def != 0)) {
          throw InvalidFile("data page v2 levels of " + std::to_string(rep) + " + " + std::to_string(def) + " bytes");
        }
        ref.num_values = n;
        if (first_data_page_ < 0) first_data_page_ = ref.offset;
        return ref;
      }
      case format::page_type::kIndexPage:
        break;  // nothing we need
      default:
        throw InvalidFile("unknown page type " + std::to_string(h.type));
    }
  }
}

template <class T, class OnData>
void PageWalk::walk(OnData on_data) {
  std::vector<PageRef> pages;
  while (next_window<T>(&pages, 1)) {
    PageData page;
    size_t size;
    const uint8_t* body = open_page(pages[0], &page, &size);
    on_data(page, body, size);
  }
  rethrow_header_error();
}

template <class T>
bool PageWalk::next_window(std::vector<PageRef>* into, size_t window) {
  into->clear();
  while (into->size() < window && seen_ < total_ && !header_error_) {
    try {
      into->push_back(next_data_page<T>(&pos_, seen_, total_));
    } catch (const Error&) {
      header_error_ = std::current_exception();
      header_error_offset_ = page_offset_;
      break;
    }
    seen_ += into->back().num_values;
  }
  return !into->empty();
}

template <class T>
bool PageWalk::decompress_dictionary(const format::PageHeader& h, const uint8_t* data) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    return false;  // (booleans are bit-packed)
  } else {
    const format::DictionaryPageHeader& d = *h.dictionary_page_header;
    const bool fixed_bytes = std::is_same_v<T, ByteArrays>;
    const uint64_t width = fixed_bytes ? static_cast<uint64_t>(std::max(leaf_.schema.type_length, 0)) : sizeof(T);
    if (codec_ == Codec::kUncompressed || width == 0 || d.num_values <= 0 ||
        (d.encoding != format::encoding::kPlain && d.encoding != format::encoding::kPlainDictionary) ||
        h.uncompressed_page_size < 0 || static_cast<uint64_t>(h.uncompressed_page_size) / width !=
        static_cast<uint64_t>(d.num_values) || static_cast<uint64_t>(h.uncompressed_page_size) % width != 0) {
      return false;
    }
    check_crc(h, data);
    uint8_t* dst = size_dictionary<T>(static_cast<size_t>(d.num_values));
    decompress(codec_, data, static_cast<size_t>(h.compressed_page_size), dst,
               static_cast<size_t>(h.uncompressed_page_size));
    dict_.present = true;
    return true;
  }
}

template <class T>
bool PageWalk::dictionary_in_place(const format::PageHeader& h, const uint8_t* data) {
  if constexpr (!std::is_same_v<T, ByteArrays>) {
    return false;
  } else {
    const format::DictionaryPageHeader& d = *h.dictionary_page_header;
    if (leaf_.schema.type_length > 0 || codec_ == Codec::kUncompressed || h.uncompressed_page_size <= kMaxScratchBytes ||
        (d.encoding != format::encoding::kPlain && d.encoding != format::encoding::kPlainDictionary)) {
      return false;
    }
    check_crc(h, data);
    const auto size = static_cast<size_t>(h.uncompressed_page_size);
    ByteArrays& dict = home_.dict_bytes;
    dict.offsets.assign(1, 0);
    dict.bytes.clear();
    dict.bytes.resize(size + kShortCopyBytes);  // (see ByteArrayDictionaryGather)
    uint8_t* at = reinterpret_cast<uint8_t*>(dict.bytes.data());
    decompress(codec_, data, static_cast<size_t>(h.compressed_page_size), at, size);
    const size_t bytes = compact_plain_byte_arrays(at, size, d.num_values, dict.bytes.data(), 0, &dict.offsets, size);
    dict.bytes.resize(bytes + kShortCopyBytes);
    dict_.present = true;
    return true;
  }
}

template <class T>
uint8_t* PageWalk::size_dictionary(size_t values) {
  const size_t width = std::is_same_v<T, ByteArrays> ? static_cast<size_t>(leaf_.schema.type_length) : sizeof(T);
  // (Callers check the count against the page's bytes first.) The buffer, from operator new or whole pages, is
  // aligned for any of the types; the room past the values is for FixedBytesDictionaryGather.
  size_scratch(home_.dict, values * width + kShortCopyBytes);
  dict_.fixed = home_.dict.data();
  dict_.count = values;
  return home_.dict.data();
}

template <class T>
void PageWalk::read_dictionary_page(const format::PageHeader& h, const uint8_t* body, size_t size) {
  const format::DictionaryPageHeader& d = *h.dictionary_page_header;
  if (d.encoding != format::encoding::kPlain && d.encoding != format::encoding::kPlainDictionary) {
    throw Unsupported(std::string("dictionary page encoding ") + format::encoding_name(d.encoding));
  }
  if (d.num_values < 0) throw InvalidFile("negative dictionary size");
  if constexpr (std::is_same_v<T, ByteArrays>) {
    if (leaf_.schema.type_length > 0) {
      // FIXED_LEN_BYTE_ARRAY: the values back to back as PLAIN stores them, which is all the gather needs.
      const auto width = static_cast<uint64_t>(leaf_.schema.type_length);
      if (static_cast<uint64_t>(d.num_values) > size / width) {
        throw InvalidFile("PLAIN data holds " + std::to_string(size / width) + " values of " + std::to_string(width) +
                          " bytes, page declares " + std::to_string(d.num_values));
      }
      const auto values = static_cast<size_t>(d.num_values);
      const size_t bytes = values * static_cast<size_t>(width);
      // A page stored uncompressed lies in the chunk's bytes, which end with kPadding (at least kShortCopyBytes)
      // to spare: the gather reads it there.
      const auto chunk = reinterpret_cast<uintptr_t>(home_.chunk.data()), at = reinterpret_cast<uintptr_t>(body);
      const size_t chunk_bytes = static_cast<size_t>(end_ - start_) + kPadding;
      static_assert(kPadding >= kShortCopyBytes);
      if (at >= chunk && at - chunk <= chunk_bytes && chunk_bytes - (at - chunk) >= bytes + kShortCopyBytes) {
        dict_.fixed = body;
        dict_.count = values;
      } else {
        uint8_t* dst = size_dictionary<T>(values);
        if (bytes > 0) std::memcpy(dst, body, bytes);
      }
    } else {
      ByteArrays& dict = home_.dict_bytes;
      dict.offsets.assign(1, 0);  // (room kept from the thread's chunk before)
      dict.bytes.clear();
      decode_plain_byte_arrays(body, size, d.num_values, &dict, size, leaf_.schema.type_length);
      dict.bytes.append(kShortCopyBytes, '\0');  // (see ByteArrayDictionaryGather)
    }
  } else {
    // Each value takes at least sizeof(T) bytes (a bit for booleans), so the page bounds the count.
    const uint64_t max_values = std::is_same_v<T, uint8_t> ? uint64_t{size} * 8 : size / sizeof(T);
    if (static_cast<uint64_t>(d.num_values) > max_values) {
      throw InvalidFile("dictionary of " + std::to_string(d.num_values) + " values in " + std::to_string(size) +
                        " bytes");
    }
    T* dict = reinterpret_cast<T*>(size_dictionary<T>(static_cast<size_t>(d.num_values)));
    if constexpr (std::is_same_v<T, uint8_t>) {
      decode_plain_bool(body, size, d.num_values, dict);
    } else {
      decode_plain(body, size, d.num_values, dict);
    }
  }
  dict_.present = true;
}

}  // namespace feedline::parquet::detail
