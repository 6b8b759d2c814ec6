// Internal to the Parquet reader: what the readers of column chunks share. The reader is split by job, one file
// each: reader.cpp (the footer, the row groups and columns of a read, and their threads), chunk_reader.h (this: the
// interface of a chunk's reader, one a column shape, and the page and level types), pages.h / pages.cpp (the walk
// over a chunk's page headers, CRCs, decompression, dictionary pages), values.h (a data page's values, by
// encoding), levels.cpp (definition and repetition levels, nulls spread), and a file a shape: flat_column.cpp,
// list_column.cpp, nested_list_column.cpp, raw_levels.cpp.
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
  // different types reuse its room (the page walk keeps the count of the chunk's values); variable-length byte
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
  // A large PLAIN page of byte arrays decompressed into the column's own bytes (PageWalk::open_page): where the
  // column's bytes ended before it, which its values move down to; -1 for any other page.
  int64_t output_base = -1;
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

// A column chunk's reading, by the shape of its column: flat (a value or null a row), a list of values, lists of
// lists, or any column's raw level entries (VARIANT's leaves). Each shape has a reader of its own (flat_column.cpp,
// list_column.cpp, nested_list_column.cpp, raw_levels.cpp) over a PageWalk (pages.h: the chunk's bytes, its page
// headers walked in order, its dictionary) and a ValueDecoder (values.h: a data page's levels and values).
enum class ChunkShape { kFlat, kList, kNestedList, kRawLevels };

// The shape a leaf's chunks are read as into a Table's column (kRawLevels is asked for by VARIANT's reader).
inline ChunkShape column_shape(const Leaf& leaf) {
  return leaf.max_rep == 0 ? ChunkShape::kFlat : leaf.max_rep == 1 ? ChunkShape::kList : ChunkShape::kNestedList;
}

// The chunk to read: its file, leaf, metadata and row group's rows, the read's output budget, and how many threads
// may decode its pages (the caller's included): flat columns of fixed-width values or FIXED_LEN_BYTE_ARRAY, and
// one-level lists of fixed-width values use them; other shapes and types decode their pages in order.
struct ChunkSource {
  const ParsedFile& file;
  const Leaf& leaf;
  const format::ColumnChunk& chunk;
  int64_t num_rows = 0;
  int64_t budget = 0;
  int page_threads = 1;
};

// Where a chunk is read to, and what it held.
struct ChunkTarget {
  // kFlat: fixed-width values written from `values` on (the column's vector at the chunk's first row, of the
  // type the leaf's physical type reads as), byte arrays appended to `bytes`, and for an optional column a
  // validity byte a row from `validity` on. `nulls` is set to the chunk's count of nulls.
  void* values = nullptr;
  ByteArrays* bytes = nullptr;
  uint8_t* validity = nullptr;
  int64_t nulls = 0;
  // kList, kNestedList: where the chunk goes, as a list Column of its row group's rows.
  Column* list = nullptr;
  // kRawLevels: where its level entries go.
  RawChunk* raw = nullptr;
};

// One column chunk's reader, used by one thread (which pages may be handed to): read() reads the chunk into
// `target` or throws InvalidFile / Unsupported for what it cannot; page_offset() then names the page (the file
// offset of its header; -1 before the first).
class ColumnChunkReader {
 public:
  virtual ~ColumnChunkReader() = default;
  virtual void read(ChunkTarget* target) = 0;
  virtual int64_t page_offset() const = 0;
};

std::unique_ptr<ColumnChunkReader> make_chunk_reader(ChunkShape shape, const ChunkSource& source);

// Each shape's reader (defined beside it), made for the leaf's physical type.
std::unique_ptr<ColumnChunkReader> make_flat_reader(const ChunkSource& source);
std::unique_ptr<ColumnChunkReader> make_list_reader(const ChunkSource& source);
std::unique_ptr<ColumnChunkReader> make_nested_list_reader(const ChunkSource& source);
std::unique_ptr<ColumnChunkReader> make_raw_levels_reader(const ChunkSource& source);

// Reader<T> for the type a leaf's physical type reads as: a byte a BOOLEAN, INT32, INT64, FLOAT, DOUBLE, and
// ByteArrays for BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY.
template <template <class> class Reader>
std::unique_ptr<ColumnChunkReader> make_typed_reader(const ChunkSource& source) {
  switch (source.leaf.schema.type) {
    case PhysicalType::kBoolean: return std::make_unique<Reader<uint8_t>>(source);
    case PhysicalType::kInt32: return std::make_unique<Reader<int32_t>>(source);
    case PhysicalType::kInt64: return std::make_unique<Reader<int64_t>>(source);
    case PhysicalType::kFloat: return std::make_unique<Reader<float>>(source);
    case PhysicalType::kDouble: return std::make_unique<Reader<double>>(source);
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: return std::make_unique<Reader<ByteArrays>>(source);
  }
  throw InvalidFile("unknown physical type");
}

// A VARIANT column's chunk of row group `rg` (leaf.variant set): a STRING column of num_rows JSON texts, with a
// validity vector when the column is nullable. Throws InvalidFile naming the leaf and page for a malformed chunk,
// and the row for a malformed value.
Column read_variant_chunk(const ParsedFile& file, const Leaf& leaf, const format::RowGroup& rg, int64_t output_budget);

}  // namespace feedline::parquet::detail
