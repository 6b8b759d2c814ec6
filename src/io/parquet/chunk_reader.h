// Internal to the Parquet reader: one column chunk's reader (ChunkReader) and what its parts share. The reader is
// split by job, one file each: chunk_reader.h (this: the class, the page and level types), levels.cpp (definition
// and repetition levels, nulls spread), pages.h / pages.cpp (the walk over a chunk's page headers, CRCs,
// decompression, dictionary pages), values.h (a data page's values, by encoding), flat_column.cpp (a flat column's
// chunk, its pages decoded on several threads when large), list_column.cpp (list columns), reader.cpp (the
// footer, the row groups and columns of a read, and their threads).
//
// A ChunkReader reads one (row group, column) chunk and is used by one thread; the pages of a large chunk may be
// decoded on several (see read_apart and read_list), each with this thread's scratch().
#pragma once

#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "io/memory.h"
#include "io/parquet/codec.h"
#include "io/parquet/metadata.h"
#include "io/parquet/rle.h"
#include "io/parquet/schema.h"

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

// Rethrows the current feedline::Error with `prefix` in front, keeping its type.
[[noreturn]] void rethrow_with(const std::string& prefix);

struct ParsedFile {
  std::string path;
  std::unique_ptr<RandomAccessFile> file;
  int64_t size = 0;
  int64_t footer_start = 0;  // where the Thrift FileMetaData begins: column data must end before it
  format::FileMetaData md;
  std::vector<Leaf> leaves;
  bool old_parquet_mr = false;  // written by parquet-mr 1.2.8 or older, or one that does not say its version
};

// ---------------------------------------------------------------------------------------------------------
// One column chunk.

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
  // different types reuse its room (ChunkReader keeps the count of the chunk's values); variable-length byte
  // arrays have their own.
  ScratchVector<uint8_t> dict;
  ByteArrays dict_bytes;
  // Gives back what grew past kMaxScratchBytes, so that one large chunk does not stay with the thread for life.
  void trim();
};

Scratch& scratch();

// Bytes past the end of the chunk and page buffers, so that fixed-width unpacking may read a little beyond.
constexpr size_t kPadding = 16;

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
};

// Moves `present` packed values at out[0..present) to their slots, zeroing null slots, back to front in place.
template <class T>
void spread(T* out, const uint8_t* validity, int64_t n, int64_t present) {
  // Eight slots at a time where all eight hold values (validity bytes of 1), one at a time elsewhere; done once
  // every slot left holds its value.
  constexpr uint64_t kEightValues = 0x0101010101010101ull;
  int64_t k = present, i = n;
  while (k < i) {
    uint64_t eight = 0;
    if (i >= 8) std::memcpy(&eight, validity + i - 8, 8);
    if (eight == kEightValues) {
      i -= 8;
      k -= 8;
      // Through registers: a fixed-size memcpy is inlined, where a memmove of the overlapping slots is a call.
      T eight_values[8];
      std::memcpy(eight_values, out + k, sizeof eight_values);
      std::memcpy(out + i, eight_values, sizeof eight_values);
    } else {
      --i;
      if (validity[i]) {
        out[i] = out[--k];
      } else {
        out[i] = T{};
      }
    }
  }
}

void spread_byte_arrays(ByteArrays* out, size_t base, const uint8_t* validity, int64_t n, int64_t present);

// Fills out[0..n) with the levels (each at most max_level) at p, encoded as a v1 data page encodes them, and
// moves p past them. For max_level 1, returns how many levels are 1 (values present); above 1, nothing useful.
int64_t read_levels(int32_t encoding, const uint8_t*& p, const uint8_t* end, int64_t n, int max_level, uint8_t* out);

// v2 levels: RLE / bit-packed hybrid without a length prefix. Returns what read_levels returns.
int64_t read_levels_v2(const uint8_t* p, size_t size, int64_t n, int max_level, uint8_t* out);

int64_t count_present(const uint8_t* validity, int64_t n);

// A list column's validity vectors (the rows' and each inner level's) emptied where they hold no null, as Column
// keeps them.
void drop_validity_without_nulls(Column* col);

// A chunk as its level entries, for putting nested values back together (VARIANT): each entry's repetition and
// definition levels, and in `values` (a flat column's vector) its value, zero or empty where the entry holds none.
struct RawChunk {
  std::vector<uint8_t> rep, def;
  Column values;
};

class ChunkReader {
 public:
  // threads: how many may decode the chunk's pages (the caller's thread included): flat columns of fixed-width
  // values or FIXED_LEN_BYTE_ARRAY, and one-level lists of fixed-width values.
  ChunkReader(const ParsedFile& file, const Leaf& leaf, const format::ColumnChunk& chunk, int64_t num_rows,
              int64_t output_budget, int threads = 1)
      : file_(file), leaf_(leaf), chunk_(chunk), num_rows_(num_rows), budget_(output_budget), threads_(threads) {}
  ~ChunkReader() { home_.trim(); }
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  // A flat column's chunk: values into `out` (a T* slice of num_rows, or a ByteArrays to append to) and, for
  // optional columns, validity bytes into validity[0..num_rows). Returns the number of nulls.
  template <class T, class Out>
  int64_t read(Out out, uint8_t* validity);

  // A list column's chunk, as a list Column of num_rows rows: read_list for lists of values (max_rep 1),
  // read_nested_list for lists of lists (one level of lists per repetition level).
  template <class T>
  Column read_list();
  template <class T>
  Column read_nested_list();

  // Any column's chunk as its level entries (see RawChunk).
  template <class T>
  RawChunk read_raw();

  int64_t page_offset() const { return page_offset_; }

 private:
  // Decodes a list page's values (after its levels, at p) into `col`: page_slots element slots from first_slot
  // on, slot_valid[i] saying whether slot first_slot + i holds a value (nullptr: every slot does).
  template <class T>
  void append_list_values(int32_t encoding, const uint8_t* p, const uint8_t* end, const uint8_t* slot_valid,
                          int64_t first_slot, int64_t page_slots, Column* col);

  // A list page's repetition and definition levels, one byte an entry in scratch, beside room for a byte an entry
  // (slot_valid) for the page's walk; `values`: where the page's values begin (after a v1 page's levels).
  struct ListPageLevels {
    uint8_t *rep, *def, *slot_valid;
    const uint8_t* values;
  };
  ListPageLevels read_list_levels(const PageData& page, const uint8_t* body, size_t size);

  // Checks the chunk's metadata against the schema and reads its bytes from the file. Returns the number of
  // level entries (values, nulls included) the footer declares; 0 for an empty chunk.
  int64_t load();
  // A data page found by the walk over the chunk's page headers.
  struct PageRef {
    int64_t offset = 0;  // of its header, in the file
    format::PageHeader header;
    const uint8_t* data = nullptr;  // its stored bytes (after the header) in the chunk's buffer
    int64_t num_values = 0;         // level entries (for a flat column, rows)
  };
  // Reads page headers from file offset *pos on to the next data page, which it checks against the `total`
  // level entries less the `seen` before it, and returns; moves *pos past it. Dictionary pages on the way go to
  // read_dictionary_page<T>; index pages are skipped.
  template <class T>
  PageRef next_data_page(int64_t* pos, int64_t seen, int64_t total);
  // A data page's values (checked against its CRC, and decompressed into this thread's scratch unless stored
  // plain), with what the decoders need of its header in *page. Safe to call from several threads at once.
  const uint8_t* open_page(const PageRef& ref, PageData* page, size_t* size) const;
  // The next window of data pages (at most `window`) of the chunk's `total` level entries, their headers read in
  // order from file offset *pos (which it moves on), *seen counting the entries before; false when none is left.
  // A header's error is kept for rethrow_header_error() once the pages before it are done, as reading the pages
  // one after another would meet it.
  template <class T>
  bool next_window(std::vector<PageRef>* into, size_t window, int64_t* pos, int64_t* seen, int64_t total);
  void rethrow_header_error();
  // A flat column's chunk (fixed-width, or FIXED_LEN_BYTE_ARRAY into an empty `out`) with its pages decoded on
  // threads_ threads, a window at a time, then joined in order: what read() returns.
  template <class T, class Out>
  int64_t read_apart(Out out, uint8_t* validity);
  // What one page of a one-level list column holds, found page by page (on several threads, for a large chunk)
  // and joined in page order by read_list, which also judges what depends on the pages before.
  struct ListPage {
    int64_t entries_before = 0;  // level entries in the pages before: where the page's values are decoded
    int64_t slots = 0;           // element slots
    int64_t rows = 0;            // rows started; row_starts holds the first num_rows + 1 of them
    std::vector<int32_t> row_starts;  // the page's slot at which each row starts
    std::vector<uint8_t> row_valid;   // (nullable lists) whether each row's list is not null
    std::vector<uint8_t> slot_valid;  // (when some slot is a null element) each slot's validity
    bool has_entries = false;
    bool continues = false;   // the first entry has repetition 1: it continues the list open before the page
    bool open_after = false;  // the last entry leaves its list open
    std::exception_ptr levels_error;  // opening the page or reading its levels failed
    enum class Malformed { kNone, kDefinition, kRepetition, kOther } malformed = Malformed::kNone;
    int64_t malformed_at = -1;   // the entry
    int malformed_level = 0;     // kDefinition: the level
    std::exception_ptr values_error;  // decoding the values failed
  };
  // Reads one data page of a one-level list column into *out and its values into *col (see ListPage): byte
  // arrays appended; fixed-width values at values + out->entries_before, where `values` is the column's, sized
  // for them, or nullptr to make room in it first (only when no other page decodes at the same time).
  template <class T>
  void read_list_page(const PageRef& ref, T* values, Column* col, ListPage* out);
  // A one-level list page's rows and element slots, from its n level entries, into *out (with each slot's
  // validity in levels.slot_valid). Returns how many slots hold a value; a malformed entry is noted in *out.
  int64_t find_list_rows(const ListPageLevels& levels, int64_t n, ListPage* out) const;
  // Finds the first malformed entry of a page for its message (ListPage::malformed and what follows it).
  void note_malformed_list_page(const ListPageLevels& levels, int64_t n, ListPage* out) const;
  // Decodes a list page's `present` values into their slots (see read_list_page); a failure goes to
  // out->values_error.
  template <class T>
  void decode_list_page_values(const PageData& page, const ListPageLevels& levels, const uint8_t* end,
                               int64_t present, T* values, Column* col, ListPage* out);
  // Checks a list chunk's `entries` level entries against the budget, and makes the room read_list fills.
  template <class T>
  void reserve_list_values(int64_t entries, int threads, Column* col) const;
  // Reads a window of a one-level list chunk's pages into `parts`: on `threads` threads when they decode apart,
  // while one of them grows the values to `next_end` entries.
  template <class T>
  void read_list_window(const std::vector<PageRef>& pages, bool apart, int threads, int64_t next_end, Column* col,
                        std::vector<ListPage>* parts);
  // Where read_list's join of its pages has come to.
  struct ListJoin {
    int64_t row = -1;   // the last row started
    int64_t slots = 0;  // element slots joined
    bool open = false;  // the current row's list has elements (a repetition level of 1 may continue it)
    bool any_null_element = false;
  };
  // Throws the error of a page, if it has one, as reading the pages one after another would meet it.
  void check_list_page(const ListPage& part, const ListJoin& join) const;
  // Joins the next page in order into `col`: its values moved down to follow the slots before, its rows' offsets
  // and validity, its slots' validity.
  template <class T>
  void join_list_page(const ListPage& part, ListJoin* join, Column* col);
  // Lists of lists (read_nested_list): the walk over their level entries, page by page.
  struct NestedWalk;
  NestedWalk start_nested_walk() const;
  // Checks a chunk's `entries` level entries against the budget, and reserves room for its lists and values.
  template <class T>
  void reserve_nested_list(int64_t entries, Column* col) const;
  // Reads one data page into `col`: its levels walked, the lists they begin joined, its values appended.
  template <class T>
  void read_nested_page(const PageData& page, const uint8_t* body, size_t size, NestedWalk* w, Column* col);
  // Walks a page's n level entries: two levels of lists (walk_lists_of_lists, with its state in locals), or any
  // depth. Rows go to `col`, the inner lists to the page's scratch in *w; returns whether an entry is malformed.
  bool walk_lists_of_lists(NestedWalk& w, const ListPageLevels& levels, int64_t n, Column* col) const;
  bool walk_nested_lists(NestedWalk& w, const ListPageLevels& levels, int64_t n, Column* col) const;
  // The inner lists a page began, from its scratch into the column's levels.
  void join_inner_lists(const NestedWalk& w, Column* col) const;
  // The first malformed entry of a page's levels, given the lists open and the row before it, as an error.
  [[noreturn]] void throw_malformed_nested(const NestedWalk& w, const uint8_t* rep, const uint8_t* def, int64_t n,
                                           int open_at, int64_t row_at) const;
  // Hands each dictionary page to read_dictionary_page<T> and each data page to on_data(page, body, size),
  // which returns the level entries it consumed, until `total` entries have been read.
  template <class T, class OnData>
  void walk_pages(int64_t total, OnData on_data);
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
  template <class T, class Out>
  int64_t read_data_page(const PageData& h, const uint8_t* body, size_t size, Out out, int64_t row,
                         uint8_t* validity);
  // Decodes `present` values of the page's encoding from p[0..remaining) into `out` (dst: where a fixed-width
  // column's values go).
  template <class T, class Out>
  void decode_values(int32_t encoding, const uint8_t* p, size_t remaining, int64_t present, Out out, T* dst);
  // decode_values for the dictionary encodings: the page's indices gathered from the chunk's dictionary.
  template <class T, class Out>
  void decode_dictionary_indices(const uint8_t* p, size_t remaining, int64_t present, Out out, T* dst);
  // decode_values for BYTE_STREAM_SPLIT FIXED_LEN_BYTE_ARRAY values, appended to `out`.
  void append_byte_stream_split_fixed(const uint8_t* p, size_t remaining, int64_t present, ByteArrays* out);
  // The same for FixedBytesOut: `present` FIXED_LEN_BYTE_ARRAY values to dst, for the encodings that
  // decodes_fixed_bytes accepts.
  void decode_fixed_bytes(int32_t encoding, const uint8_t* p, size_t remaining, int64_t present, char* dst);
  static bool decodes_fixed_bytes(int32_t encoding) {
    return encoding == format::encoding::kPlain || encoding == format::encoding::kPlainDictionary ||
           encoding == format::encoding::kRleDictionary || encoding == format::encoding::kByteStreamSplit ||
           encoding == format::encoding::kDeltaByteArray;
  }
  // A dictionary-encoded page's indices (their bit width, then RLE / bit-packed runs), checked as far as they can
  // be before decoding: the width is there and at most 32.
  RleBitPackedDecoder dictionary_indices(const uint8_t* p, size_t remaining) const {
    if (remaining < 1) throw InvalidFile("dictionary indices missing");
    const int bit_width = p[0];
    if (bit_width > 32) throw InvalidFile("dictionary index bit width " + std::to_string(bit_width));
    return RleBitPackedDecoder(p + 1, remaining - 1, bit_width);
  }
  // Checks the page's sizes against the limits and its CRC when it has one.
  void check_crc(const format::PageHeader& h, const uint8_t* data) const;
  // The values of a page, decompressed into scratch (into *large past kMaxScratchBytes) unless stored plain (v2
  // pages may say is_compressed false).
  const uint8_t* values_body(std::vector<uint8_t>* large, const uint8_t* data, int64_t compressed, int64_t uncompressed,
                             bool is_compressed, size_t* size) const;
  // check_crc, then values_body of the whole page (data page v1, dictionary page).
  const uint8_t* page_body(std::vector<uint8_t>* large, const format::PageHeader& h, const uint8_t* data,
                           size_t* size) const;

  const ParsedFile& file_;
  const Leaf& leaf_;
  const format::ColumnChunk& chunk_;
  int64_t num_rows_;
  int64_t budget_;
  int threads_;
  Codec codec_ = Codec::kUncompressed;
  int64_t start_ = 0, end_ = 0;  // the chunk's bytes in the file; home_.chunk holds them
  int64_t page_offset_ = -1;
  std::exception_ptr header_error_;  // see next_window
  int64_t header_error_offset_ = -1;
  bool have_dictionary_ = false;
  // The chunk's dictionary of fixed-width values (see size_dictionary), with kShortCopyBytes readable past them:
  // in home_.dict, or, a FIXED_LEN_BYTE_ARRAY page stored uncompressed, where it lies in home_.chunk.
  const uint8_t* dict_ = nullptr;
  size_t dict_values_ = 0;
  // The scratch of the thread that made the reader: its chunk buffer and the chunk's dictionary, kept between
  // chunks so that their memory is not faulted in again for each.
  Scratch& home_ = scratch();

  // The chunk's dictionary of fixed-width values, as their type.
  template <class T>
  struct DictionaryView {
    const T* values;
    size_t count;
    const T* data() const { return values; }
    size_t size() const { return count; }
  };
  template <class T>
  DictionaryView<T> dictionary() const {
    static_assert(!std::is_same_v<T, ByteArrays>, "byte arrays keep their dictionary in home_.dict_bytes");
    return {reinterpret_cast<const T*>(dict_), dict_values_};
  }
};

// A VARIANT column's chunk of row group `rg` (leaf.variant set): a STRING column of num_rows JSON texts, with a
// validity vector when the column is nullable. Throws InvalidFile naming the leaf and page for a malformed chunk,
// and the row for a malformed value.
Column read_variant_chunk(const ParsedFile& file, const Leaf& leaf, const format::RowGroup& rg, int64_t output_budget);

}  // namespace feedline::parquet::detail
