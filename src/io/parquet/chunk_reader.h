// Internal to the Parquet reader: the interface of a column chunk's reader (ColumnChunkReader), one a column shape,
// and what a read hands it and takes back (ChunkSource, ChunkTarget). The reader is split by job, one file each:
// reader.cpp (the footer, the row groups and columns of a read, and their threads); this header; typed_reader.h (a
// shape's reader made for the leaf's physical type); paged_chunk_reader.h (what every shape's reader holds: the
// walk over a chunk's pages and the decoder of their values); pages.h / pages.cpp (the walk over a chunk's page
// headers, CRCs, decompression); dictionary_page.h (the chunk's dictionary); values.h (a data page's values, by
// encoding, into page_data.h's outputs); levels.h (definition and repetition levels, nulls spread);
// byte_arrays_room.h (room for a chunk's byte arrays from its page headers); scratch.h (what each thread decodes
// into); parsed_file.h and limits.h (the file and the read's limits); and a file a shape: flat_column.cpp,
// list_column.cpp, nested_list_column.cpp, raw_levels.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "feedline/io/table.h"
#include "io/parquet/metadata.h"
#include "io/parquet/parsed_file.h"
#include "io/parquet/schema.h"

namespace feedline::parquet::detail {

// A chunk as its level entries, for putting nested values back together (VARIANT): each entry's repetition and
// definition levels, and in `values` (a flat column's vector) its value, zero or empty where the entry holds none.
struct RawChunk {
  std::vector<uint8_t> rep, def;
  Column values;
};

// A column chunk's reading, by the shape of its column: flat (a value or null a row), a list of values, lists of
// lists, or any column's raw level entries (VARIANT's leaves). Each shape has a reader of its own (flat_column.cpp,
// list_column.cpp, nested_list_column.cpp, raw_levels.cpp) on a PagedChunkReader (paged_chunk_reader.h).
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

}  // namespace feedline::parquet::detail
