// Reads flat Parquet files into a Table: footer, schema, then every (row group, column) chunk decoded on a
// pool of threads straight into the Table's vectors.
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "io/parquet/codec.h"
#include "io/parquet/delta.h"
#include "io/parquet/dictionary.h"
#include "io/parquet/metadata.h"
#include "feedline/io/parallel.h"
#include "io/parquet/plain.h"
#include "io/parquet/reader_internal.h"
#include "io/parquet/rle.h"
#include "io/parquet/schema.h"

namespace feedline::parquet {

std::atomic<int> internal::page_threads{0};

namespace {

namespace fmt = format;

constexpr int64_t kMaxPageBytes = int64_t{1} << 30;
constexpr int64_t kMaxDictionaryHeaderBytes = 100;
// Decoded output may exceed the file by this factor (RLE runs compress without bound), or reach kMinBudget.
constexpr int64_t kMaxExpansion = 1024;
constexpr int64_t kMinOutputBudget = int64_t{1} << 30;
// A column chunk this large (compressed) may decode its pages on several threads.
constexpr int64_t kMinParallelChunkBytes = int64_t{1} << 20;

// Rethrows the current feedline::Error with `prefix` in front, keeping its type.
[[noreturn]] void rethrow_with(const std::string& prefix) {
  try {
    throw;
  } catch (const Unsupported& e) {
    throw Unsupported(prefix + e.what());
  } catch (const InvalidFile& e) {
    throw InvalidFile(prefix + e.what());
  }
}

struct ParsedFile {
  std::string path;
  std::unique_ptr<RandomAccessFile> file;
  int64_t size = 0;
  int64_t footer_start = 0;  // where the Thrift FileMetaData begins: column data must end before it
  fmt::FileMetaData md;
  std::vector<Leaf> leaves;
  bool old_parquet_mr = false;  // written by parquet-mr 1.2.8 or older, or one that does not say its version
};

// "parquet-mr version 1.2.8 (build ...)" or plain "parquet-mr": whether that version is below 1.2.9.
bool is_old_parquet_mr(const std::string& created_by) {
  const std::string prefix = "parquet-mr";
  if (created_by.compare(0, prefix.size(), prefix) != 0) return false;
  const size_t v = created_by.find("version ");
  if (v == std::string::npos) return true;
  int major = 0, minor = 0, patch = 0;
  if (std::sscanf(created_by.c_str() + v + 8, "%d.%d.%d", &major, &minor, &patch) < 1) return true;
  if (major != 1) return major < 1;
  if (minor != 2) return minor < 2;
  return patch < 9;
}

// Reads the footer (and only the footer: column data is read per chunk, for the columns asked for).
ParsedFile parse(const std::string& path) {
  ParsedFile f;
  f.path = path;
  f.file = std::make_unique<RandomAccessFile>(path);
  const int64_t size = f.size = f.file->size();
  if (size < 12) throw InvalidFile(path + ": not a Parquet file (" + std::to_string(size) + " bytes)");
  uint8_t head[4], tail[8];
  f.file->read_at(0, 4, head);
  f.file->read_at(size - 8, 8, tail);
  if (std::memcmp(head, "PAR1", 4) != 0 && std::memcmp(head, "PARE", 4) != 0) {
    throw InvalidFile(path + ": not a Parquet file (no PAR1 magic at offset 0)");
  }
  if (std::memcmp(tail + 4, "PARE", 4) == 0) {
    throw Unsupported(path + ": encrypted footer (PARE) is not supported");
  }
  if (std::memcmp(tail + 4, "PAR1", 4) != 0) {
    throw InvalidFile(path + ": no PAR1 magic at the end (offset " + std::to_string(size - 4) + "): truncated?");
  }
  uint32_t footer_len;
  std::memcpy(&footer_len, tail, 4);
  if (footer_len > static_cast<uint64_t>(size - 12)) {
    throw InvalidFile(path + ": footer length " + std::to_string(footer_len) + " exceeds the file (" +
                      std::to_string(size) + " bytes)");
  }
  f.footer_start = size - 8 - footer_len;
  try {
    std::vector<uint8_t> footer(footer_len);
    f.file->read_at(f.footer_start, footer_len, footer.data());
    thrift::CompactReader in(footer.data(), footer_len, f.footer_start);
    f.md = fmt::read_file_metadata(in);
  } catch (const Error&) {
    rethrow_with(path + ": footer: ");
  }
  if (f.md.encrypted) throw Unsupported(path + ": encrypted files are not supported");
  f.old_parquet_mr = is_old_parquet_mr(f.md.created_by.value_or(""));
  try {
    f.leaves = schema_leaves(f.md);
  } catch (const Error&) {
    rethrow_with(path + ": ");
  }
  // Row groups must agree with the schema and with each other.
  int64_t rows = 0;
  for (size_t g = 0; g < f.md.row_groups.size(); ++g) {
    const fmt::RowGroup& rg = f.md.row_groups[g];
    const std::string where = path + ": row group " + std::to_string(g) + ": ";
    if (rg.num_rows < 0) throw InvalidFile(where + "negative row count " + std::to_string(rg.num_rows));
    if (rg.columns.size() != f.leaves.size()) {
      throw InvalidFile(where + std::to_string(rg.columns.size()) + " column chunks for " +
                        std::to_string(f.leaves.size()) + " schema columns");
    }
    if (rg.num_rows > INT64_MAX - rows) throw InvalidFile(where + "row count overflows");
    rows += rg.num_rows;
  }
  // Some writers leave the footer's row count at 0 (the corpus' repeated_no_annotation.parquet): the row
  // groups, which the column data must match, are then the count. Any other disagreement is an error.
  if (f.md.num_rows == 0) f.md.num_rows = rows;
  if (rows != f.md.num_rows) {
    throw InvalidFile(path + ": footer declares " + std::to_string(f.md.num_rows) + " rows, row groups hold " +
                      std::to_string(rows));
  }
  return f;
}

// ---------------------------------------------------------------------------------------------------------
// One column chunk.

struct Scratch {
  std::vector<uint8_t> chunk;  // the chunk's bytes as read from the file
  std::vector<uint8_t> page;   // decompressed page
  std::vector<uint8_t> levels; // a list page's repetition and definition levels and element slots
};

Scratch& scratch() {
  static thread_local Scratch s;
  return s;
}

// Bytes past the end of the chunk and page buffers, so that fixed-width unpacking may read a little beyond.
constexpr size_t kPadding = 16;

// Where decoded values go: fixed-width columns write into a preallocated slice, byte arrays append.
template <class T>
struct FixedOut {
  T* values;
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
};

// Moves `present` packed values at out[0..present) to their slots, zeroing null slots, back to front in place.
template <class T>
void spread(T* out, const uint8_t* validity, int64_t n, int64_t present) {
  int64_t k = present;
  for (int64_t i = n - 1; i >= 0; --i) {
    if (validity[i]) {
      out[i] = out[--k];
    } else {
      out[i] = T{};
    }
  }
}

void spread_byte_arrays(ByteArrays* out, size_t base, const uint8_t* validity, int64_t n, int64_t present) {
  // offsets[base - 1] is where the page's first value starts; offsets[base .. base + present) end each value.
  auto& off = out->offsets;
  off.resize(base + static_cast<size_t>(n));
  int64_t k = present;
  for (int64_t i = n - 1; i >= 0; --i) {
    off[base + static_cast<size_t>(i)] = off[base - 1 + static_cast<size_t>(k)];
    if (validity[i]) --k;
  }
}

// Fills out[0..n) with the levels (each at most max_level) at p, encoded as a v1 data page encodes them, and
// moves p past them. For max_level 1, returns how many levels are 1 (values present); above 1, nothing useful.
int64_t read_levels(int32_t encoding, const uint8_t*& p, const uint8_t* end, int64_t n, int max_level, uint8_t* out) {
  const int width = bit_width_for(static_cast<uint64_t>(max_level));
  if (encoding == fmt::encoding::kRle) {
    if (end - p < 4) throw InvalidFile("levels truncated");
    uint32_t len;
    std::memcpy(&len, p, 4);
    p += 4;
    if (len > static_cast<uint64_t>(end - p)) throw InvalidFile("levels run past the page");
    RleBitPackedDecoder dec(p, len, width);
    LevelSink sink{out};
    dec.decode(n, sink);
    p += len;
    return sink.present;
  }
  if (encoding == fmt::encoding::kBitPacked) {
    // Deprecated BIT_PACKED: most significant bit first, no length prefix.
    const uint64_t bits = static_cast<uint64_t>(n) * static_cast<uint64_t>(width);
    const size_t bytes = static_cast<size_t>((bits + 7) / 8);
    if (bytes > static_cast<size_t>(end - p)) throw InvalidFile("levels truncated");
    uint64_t bit = 0;
    int64_t sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      int v = 0;
      for (int b = 0; b < width; ++b, ++bit) v = (v << 1) | ((p[bit / 8] >> (7 - bit % 8)) & 1);
      out[i] = static_cast<uint8_t>(v);
      sum += v;
    }
    p += bytes;
    return sum;
  }
  throw Unsupported(std::string("level encoding ") + fmt::encoding_name(encoding));
}

// v2 levels: RLE / bit-packed hybrid without a length prefix. Returns what read_levels returns.
int64_t read_levels_v2(const uint8_t* p, size_t size, int64_t n, int max_level, uint8_t* out) {
  RleBitPackedDecoder dec(p, size, bit_width_for(static_cast<uint64_t>(max_level)));
  LevelSink sink{out};
  dec.decode(n, sink);
  return sink.present;
}

int64_t count_present(const uint8_t* validity, int64_t n) {
  int64_t present = 0;
  for (int64_t i = 0; i < n; ++i) present += validity[i] != 0;
  return present;
}

class ChunkReader {
 public:
  // threads: how many may decode the chunk's pages (the caller's thread included): flat columns of fixed-width
  // values or FIXED_LEN_BYTE_ARRAY, and one-level lists of fixed-width values.
  ChunkReader(const ParsedFile& file, const Leaf& leaf, const fmt::ColumnChunk& chunk, int64_t num_rows,
              int64_t output_budget, int threads = 1)
      : file_(file), leaf_(leaf), chunk_(chunk), num_rows_(num_rows), budget_(output_budget), threads_(threads) {}

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
    fmt::PageHeader header;
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
    int64_t declared_rows = -1;  // a v2 page's row count, when its levels start another
    std::exception_ptr values_error;  // decoding the values failed
  };
  // Reads one data page of a one-level list column into *out and its values into *col (see ListPage): byte
  // arrays appended; fixed-width values at values + out->entries_before, where `values` is the column's, sized
  // for them, or nullptr to make room in it first (only when no other page decodes at the same time).
  template <class T>
  void read_list_page(const PageRef& ref, T* values, Column* col, ListPage* out);
  // Hands each dictionary page to read_dictionary_page<T> and each data page to on_data(page, body, size),
  // which returns the level entries it consumed, until `total` entries have been read.
  template <class T, class OnData>
  void walk_pages(int64_t total, OnData on_data);
  template <class T>
  void read_dictionary_page(const fmt::PageHeader& h, const uint8_t* body, size_t size);
  template <class T, class Out>
  int64_t read_data_page(const PageData& h, const uint8_t* body, size_t size, Out out, int64_t row,
                         uint8_t* validity);
  // Decodes `present` values of the page's encoding from p[0..remaining) into `out` (dst: where a fixed-width
  // column's values go).
  template <class T, class Out>
  void decode_values(int32_t encoding, const uint8_t* p, size_t remaining, int64_t present, Out out, T* dst);
  // Checks the page's sizes against the limits and its CRC when it has one.
  void check_crc(const fmt::PageHeader& h, const uint8_t* data) const;
  // The values of a page, decompressed into scratch unless stored plain (v2 pages may say is_compressed false).
  const uint8_t* values_body(const uint8_t* data, int64_t compressed, int64_t uncompressed, bool is_compressed,
                             size_t* size) const;
  // check_crc, then values_body of the whole page (data page v1, dictionary page).
  const uint8_t* page_body(const fmt::PageHeader& h, const uint8_t* data, size_t* size) const;

  const ParsedFile& file_;
  const Leaf& leaf_;
  const fmt::ColumnChunk& chunk_;
  int64_t num_rows_;
  int64_t budget_;
  int threads_;
  Codec codec_ = Codec::kUncompressed;
  int64_t start_ = 0, end_ = 0;  // the chunk's bytes in the file; scratch().chunk holds them
  int64_t page_offset_ = -1;
  std::exception_ptr header_error_;  // see next_window
  int64_t header_error_offset_ = -1;
  bool have_dictionary_ = false;
  // Only one of these is used, per the column's type.
  std::vector<uint8_t> dict_u8_;
  std::vector<int32_t> dict_i32_;
  std::vector<int64_t> dict_i64_;
  std::vector<float> dict_f32_;
  std::vector<double> dict_f64_;
  ByteArrays dict_bytes_;

  template <class T>
  auto& dictionary() {
    if constexpr (std::is_same_v<T, uint8_t>) return dict_u8_;
    else if constexpr (std::is_same_v<T, int32_t>) return dict_i32_;
    else if constexpr (std::is_same_v<T, int64_t>) return dict_i64_;
    else if constexpr (std::is_same_v<T, float>) return dict_f32_;
    else if constexpr (std::is_same_v<T, double>) return dict_f64_;
    else return dict_bytes_;
  }
};

void ChunkReader::check_crc(const fmt::PageHeader& h, const uint8_t* data) const {
  if (h.compressed_page_size < 0 || h.uncompressed_page_size < 0) throw InvalidFile("negative page size");
  if (h.uncompressed_page_size > kMaxPageBytes) {
    throw InvalidFile("page of " + std::to_string(h.uncompressed_page_size) + " bytes exceeds the limit of " +
                      std::to_string(kMaxPageBytes));
  }
  if (h.crc) {
    const uint32_t crc = static_cast<uint32_t>(
        crc32(crc32(0L, Z_NULL, 0), data, static_cast<uInt>(h.compressed_page_size)));
    if (crc != static_cast<uint32_t>(*h.crc)) throw InvalidFile("page checksum mismatch");
  }
}

const uint8_t* ChunkReader::values_body(const uint8_t* data, int64_t compressed, int64_t uncompressed,
                                        bool is_compressed, size_t* size) const {
  *size = static_cast<size_t>(uncompressed);
  if (codec_ == Codec::kUncompressed || !is_compressed) {
    if (compressed != uncompressed) {
      throw InvalidFile("uncompressed page sizes differ (" + std::to_string(compressed) + " vs " +
                        std::to_string(uncompressed) + ")");
    }
    return data;  // no copy
  }
  std::vector<uint8_t>& buf = scratch().page;
  if (buf.size() < *size + kPadding) buf.resize(*size + kPadding);
  decompress(codec_, data, static_cast<size_t>(compressed), buf.data(), *size);
  return buf.data();
}

const uint8_t* ChunkReader::page_body(const fmt::PageHeader& h, const uint8_t* data, size_t* size) const {
  check_crc(h, data);
  return values_body(data, h.compressed_page_size, h.uncompressed_page_size, true, size);
}

int64_t ChunkReader::load() {
  if (chunk_.file_path) throw Unsupported("column data in another file ('" + *chunk_.file_path + "')");
  if (chunk_.encrypted && !chunk_.meta_data) throw Unsupported("encrypted column");
  if (!chunk_.meta_data) throw InvalidFile("column chunk lacks its metadata");
  const fmt::ColumnMetaData& md = *chunk_.meta_data;
  if (md.type != leaf_.physical_type) {
    throw InvalidFile(std::string("chunk type ") + fmt::type_name(md.type) + " differs from the schema's " +
                      fmt::type_name(leaf_.physical_type));
  }
  codec_ = codec_from_thrift(md.codec);
  // A flat column has one entry per row; a list column one per element, and one per null or empty list.
  if (leaf_.max_rep == 0 ? md.num_values != num_rows_ : md.num_values < num_rows_) {
    throw InvalidFile("chunk holds " + std::to_string(md.num_values) + " values for " + std::to_string(num_rows_) +
                      " rows");
  }
  if (num_rows_ == 0) return 0;  // some writers leave the offsets of empty chunks at 0
  // Where the chunk starts: the dictionary page if there is one before the data pages. Writers disagree on
  // dictionary_page_offset (absent, 0, or pointing at the data page), so pages are told apart by their type.
  int64_t start = md.data_page_offset;
  if (md.dictionary_page_offset && *md.dictionary_page_offset > 0 && *md.dictionary_page_offset < start) {
    start = *md.dictionary_page_offset;
  }
  const int64_t limit = file_.footer_start;
  if (start < 4 || start >= limit) throw InvalidFile("chunk offset " + std::to_string(start) + " outside the file");
  if (md.total_compressed_size < 0) throw InvalidFile("negative chunk size");
  int64_t length = md.total_compressed_size;
  // parquet-mr up to 1.2.8 left the dictionary page header out of total_compressed_size (PARQUET-816,
  // IMPALA-694): allow for one such header.
  if (file_.old_parquet_mr) length += kMaxDictionaryHeaderBytes;
  start_ = start;
  end_ = length > limit - start ? limit : start + length;
  std::vector<uint8_t>& buf = scratch().chunk;
  const auto bytes = static_cast<size_t>(end_ - start_);
  if (buf.size() < bytes + kPadding) buf.resize(bytes + kPadding);
  file_.file->read_at(start_, bytes, buf.data());
  return md.num_values;
}

template <class T>
ChunkReader::PageRef ChunkReader::next_data_page(int64_t* pos, int64_t seen, int64_t total) {
  const uint8_t* base = scratch().chunk.data();  // the byte at file offset start_
  for (;;) {
    page_offset_ = *pos;
    if (*pos >= end_) {
      throw InvalidFile("chunk ends after " + std::to_string(seen) + " of " + std::to_string(total) + " values");
    }
    thrift::CompactReader in(base + (*pos - start_), static_cast<size_t>(end_ - *pos), *pos);
    PageRef ref;
    ref.offset = *pos;
    ref.header = fmt::read_page_header(in);
    const fmt::PageHeader& h = ref.header;
    *pos += static_cast<int64_t>(in.position());
    if (h.compressed_page_size < 0 || h.compressed_page_size > end_ - *pos) {
      throw InvalidFile("page of " + std::to_string(h.compressed_page_size) + " bytes runs past the chunk");
    }
    ref.data = base + (*pos - start_);
    *pos += h.compressed_page_size;
    switch (h.type) {
      case fmt::page_type::kDictionaryPage: {
        if (!h.dictionary_page_header) throw InvalidFile("dictionary page without its header");
        if (have_dictionary_) throw InvalidFile("second dictionary page");
        if (seen > 0) throw InvalidFile("dictionary page after data pages");
        size_t size;
        const uint8_t* body = page_body(h, ref.data, &size);
        read_dictionary_page<T>(h, body, size);
        break;
      }
      case fmt::page_type::kDataPage: {
        if (!h.data_page_header) throw InvalidFile("data page without its header");
        const int32_t n = h.data_page_header->num_values;
        if (n < 0 || n > total - seen) {
          throw InvalidFile("data page of " + std::to_string(n) + " values where " + std::to_string(total - seen) +
                            " remain");
        }
        ref.num_values = n;
        return ref;
      }
      case fmt::page_type::kDataPageV2: {
        if (!h.data_page_header_v2) throw InvalidFile("data page v2 without its header");
        const fmt::DataPageHeaderV2& v2 = *h.data_page_header_v2;
        const int32_t n = v2.num_values;
        if (n < 0 || n > total - seen || v2.num_rows < 0 || v2.num_rows > n ||
            (leaf_.max_rep == 0 && v2.num_rows != n)) {
          throw InvalidFile("data page v2 of " + std::to_string(n) + " values and " + std::to_string(v2.num_rows) +
                            " rows where " + std::to_string(total - seen) + " values remain");
        }
        const int64_t rep = v2.repetition_levels_byte_length, def = v2.definition_levels_byte_length;
        if (leaf_.max_rep == 0 && rep != 0) throw InvalidFile("repetition levels in a flat column");
        if (rep < 0 || def < 0 || rep + def > h.compressed_page_size || rep + def > h.uncompressed_page_size ||
            (leaf_.max_def == 0 && def != 0)) {
          throw InvalidFile("data page v2 levels of " + std::to_string(rep) + " + " + std::to_string(def) + " bytes");
        }
        ref.num_values = n;
        return ref;
      }
      case fmt::page_type::kIndexPage:
        break;  // nothing we need
      default:
        throw InvalidFile("unknown page type " + std::to_string(h.type));
    }
  }
}

const uint8_t* ChunkReader::open_page(const PageRef& ref, PageData* page, size_t* size) const {
  const fmt::PageHeader& h = ref.header;
  page->num_values = ref.num_values;
  if (h.type == fmt::page_type::kDataPage) {
    page->encoding = h.data_page_header->encoding;
    page->definition_level_encoding = h.data_page_header->definition_level_encoding;
    page->repetition_level_encoding = h.data_page_header->repetition_level_encoding;
    return page_body(h, ref.data, size);
  }
  const fmt::DataPageHeaderV2& v2 = *h.data_page_header_v2;
  const int64_t rep = v2.repetition_levels_byte_length, def = v2.definition_levels_byte_length;
  check_crc(h, ref.data);
  page->num_rows = v2.num_rows;
  page->encoding = v2.encoding;
  page->v2 = true;
  page->v2_rep_levels = ref.data;
  page->v2_rep_size = static_cast<size_t>(rep);
  page->v2_def_levels = ref.data + rep;
  page->v2_def_size = static_cast<size_t>(def);
  return values_body(ref.data + rep + def, h.compressed_page_size - rep - def, h.uncompressed_page_size - rep - def,
                     v2.is_compressed, size);
}

template <class T, class OnData>
void ChunkReader::walk_pages(int64_t total, OnData on_data) {
  int64_t pos = start_;
  int64_t seen = 0;
  while (seen < total) {
    const PageRef ref = next_data_page<T>(&pos, seen, total);
    PageData page;
    size_t size;
    const uint8_t* body = open_page(ref, &page, &size);
    seen += on_data(page, body, size);
  }
}

template <class T>
bool ChunkReader::next_window(std::vector<PageRef>* into, size_t window, int64_t* pos, int64_t* seen, int64_t total) {
  into->clear();
  while (into->size() < window && *seen < total && !header_error_) {
    try {
      into->push_back(next_data_page<T>(pos, *seen, total));
    } catch (const Error&) {
      header_error_ = std::current_exception();
      header_error_offset_ = page_offset_;
      break;
    }
    *seen += into->back().num_values;
  }
  return !into->empty();
}

void ChunkReader::rethrow_header_error() {
  if (!header_error_) return;
  page_offset_ = header_error_offset_;
  std::rethrow_exception(header_error_);
}

template <class T, class Out>
int64_t ChunkReader::read_apart(Out out, uint8_t* validity) {
  // Fixed-width values go straight to their rows. Byte arrays of a fixed length decode into a part of their own,
  // copied to where the page's first row would put them (no earlier than their place: a null takes no bytes),
  // and moved down as the pages join.
  constexpr bool kBytes = std::is_same_v<T, ByteArrays>;
  const auto width = static_cast<size_t>(leaf_.schema.type_length);
  const size_t window = static_cast<size_t>(4 * threads_);
  std::vector<PageRef> pages;
  int64_t pos = start_, seen = 0, first = 0, total_nulls = 0;
  next_window<T>(&pages, window, &pos, &seen, num_rows_);
  if (pages.empty()) rethrow_header_error();  // (the first header's, since num_rows_ > 0)
  if (pages.size() == 1) {  // a chunk of one page (or one before a bad header): decoded as on one thread
    page_offset_ = pages[0].offset;
    PageData page;
    size_t size;
    const uint8_t* body = open_page(pages[0], &page, &size);
    total_nulls = read_data_page<T>(page, body, size, out, 0, validity);
    rethrow_header_error();
    return total_nulls;
  }
  if constexpr (kBytes) {
    out->bytes.resize(static_cast<size_t>(num_rows_) * width);
    out->offsets.reserve(static_cast<size_t>(num_rows_) + 1);
  }
  std::vector<std::exception_ptr> errors;
  std::vector<int64_t> nulls, rows;  // per page of the window: nulls found, first row
  std::vector<ByteArrays> parts;
  size_t bytes = 0;  // joined so far
  for (; !pages.empty(); next_window<T>(&pages, window, &pos, &seen, num_rows_)) {
    const size_t n = pages.size();
    errors.assign(n, nullptr);
    nulls.assign(n, 0);
    if constexpr (kBytes) parts.assign(n, ByteArrays());
    rows.resize(n);
    for (size_t k = 0; k < n; ++k) rows[k] = k == 0 ? first : rows[k - 1] + pages[k - 1].num_values;
    parallel_for(n, threads_, [&](size_t k) {
      const int64_t row = rows[k];
      try {
        PageData page;
        size_t size;
        const uint8_t* body = open_page(pages[k], &page, &size);
        if constexpr (kBytes) {
          nulls[k] = read_data_page<T>(page, body, size, &parts[k], row, validity);
          if (parts[k].bytes.size() > static_cast<size_t>(pages[k].num_values) * width) {  // (the decoders see to it)
            throw InvalidFile("values longer than FIXED_LEN_BYTE_ARRAY(" + std::to_string(width) + ")");
          }
          std::memcpy(out->bytes.data() + static_cast<size_t>(row) * width, parts[k].bytes.data(), parts[k].bytes.size());
          std::string().swap(parts[k].bytes);
        } else {
          nulls[k] = read_data_page<T>(page, body, size, out, row, validity);
        }
      } catch (const Error&) {
        errors[k] = std::current_exception();
      }
    });
    for (size_t k = 0; k < n; ++k) {
      page_offset_ = pages[k].offset;
      if (errors[k]) std::rethrow_exception(errors[k]);
      total_nulls += nulls[k];
      if constexpr (kBytes) {
        const std::vector<int64_t>& offsets = parts[k].offsets;
        const auto part_bytes = static_cast<size_t>(offsets.back());
        const size_t at = static_cast<size_t>(first) * width;
        if (bytes != at && part_bytes > 0) std::memmove(out->bytes.data() + bytes, out->bytes.data() + at, part_bytes);
        for (size_t i = 1; i < offsets.size(); ++i) out->offsets.push_back(static_cast<int64_t>(bytes) + offsets[i]);
        bytes += part_bytes;
      }
      first += pages[k].num_values;
    }
  }
  rethrow_header_error();
  if constexpr (kBytes) out->bytes.resize(bytes);
  return total_nulls;
}

template <class T, class Out>
int64_t ChunkReader::read(Out out, uint8_t* validity) {
  if (load() == 0) return 0;
  if (threads_ > 1) {
    if constexpr (!std::is_same_v<T, ByteArrays>) {
      return read_apart<T, Out>(out, validity);
    } else if (leaf_.schema.type_length > 0 && out->offsets.size() == 1 &&
               num_rows_ <= budget_ / leaf_.schema.type_length) {
      return read_apart<T, Out>(out, validity);
    }
  }
  int64_t row = 0;
  int64_t nulls = 0;
  walk_pages<T>(num_rows_, [&](const PageData& page, const uint8_t* body, size_t size) {
    nulls += read_data_page<T, Out>(page, body, size, out, row, validity);
    row += page.num_values;
    return page.num_values;
  });
  return nulls;
}

ChunkReader::ListPageLevels ChunkReader::read_list_levels(const PageData& page, const uint8_t* body, size_t size) {
  const int64_t n = page.num_values;
  std::vector<uint8_t>& levels = scratch().levels;
  if (levels.size() < static_cast<size_t>(3 * n)) levels.resize(static_cast<size_t>(3 * n));
  ListPageLevels out{levels.data(), levels.data() + n, levels.data() + 2 * n, body};
  if (page.v2) {
    read_levels_v2(page.v2_rep_levels, page.v2_rep_size, n, leaf_.max_rep, out.rep);
    read_levels_v2(page.v2_def_levels, page.v2_def_size, n, leaf_.max_def, out.def);
  } else {
    const uint8_t* end = body + size;
    read_levels(page.repetition_level_encoding, out.values, end, n, leaf_.max_rep, out.rep);
    read_levels(page.definition_level_encoding, out.values, end, n, leaf_.max_def, out.def);
  }
  return out;
}

template <class T>
void ChunkReader::read_list_page(const PageRef& ref, T* values, Column* col, ListPage* out) {
  PageData page;
  size_t size;
  const uint8_t* body;
  ListPageLevels levels;
  try {
    body = open_page(ref, &page, &size);
    levels = read_list_levels(page, body, size);
  } catch (const Error&) {
    out->levels_error = std::current_exception();
    return;
  }
  const int64_t n = page.num_values;
  if (n == 0) return;
  const uint8_t* rep = levels.rep;
  const uint8_t* def = levels.def;
  uint8_t* slot_valid = levels.slot_valid;
  const int list_def = leaf_.list_def, max_def = leaf_.max_def;
  const bool nullable = leaf_.schema.nullable;
  // Enough row starts to find more rows than the row group holds, whichever page this is; no more.
  const int64_t max_starts = num_rows_ + 1;
  const auto start_row = [&](int64_t slot, bool valid) {
    if (out->rows++ >= max_starts) return;
    out->row_starts.push_back(static_cast<int32_t>(slot));
    if (nullable) out->row_valid.push_back(valid);
  };
  out->has_entries = true;
  out->continues = rep[0] != 0;
  // Fast path for pages where every entry is a present element (embeddings, images): rows start at the zeros
  // of the repetition levels, found with memchr, and every slot is valid.
  int64_t elements = 0;
  for (int64_t i = 0; i < n; ++i) elements += def[i] == max_def;
  const bool all_elements = elements == n;
  int64_t slots = 0;
  bool bad = false;
  if (all_elements) {
    for (const uint8_t* z = rep; (z = static_cast<const uint8_t*>(std::memchr(z, 0, static_cast<size_t>(rep + n - z)))) != nullptr; ++z) {
      start_row(z - rep, true);
    }
    slots = n;
    out->open_after = true;
  } else {
    // One pass without early exits: a slot is written before it is known to be an element (the next element
    // overwrites it otherwise). The first entry may continue the page before's list: read_list judges that.
    bool open = true;
    for (int64_t i = 0; i < n; ++i) {
      const int dl = def[i];
      bad |= dl > max_def;
      if (rep[i] == 0) {
        start_row(slots, dl >= list_def);
      } else {
        bad |= !open || dl <= list_def;
      }
      open = dl > list_def;
      slot_valid[slots] = dl == max_def;
      slots += dl > list_def;
    }
    out->open_after = open;
  }
  out->slots = slots;
  if (bad) {  // found again for its message
    bool was_open = true;
    for (int64_t i = 0; i < n && out->malformed == ListPage::Malformed::kNone; ++i) {
      if (def[i] > max_def) {
        out->malformed = ListPage::Malformed::kDefinition;
        out->malformed_level = def[i];
      } else if (rep[i] != 0 && (!was_open || def[i] <= list_def)) {
        out->malformed = ListPage::Malformed::kRepetition;
      }
      out->malformed_at = i;
      was_open = def[i] > list_def;
    }
    if (out->malformed == ListPage::Malformed::kNone) out->malformed = ListPage::Malformed::kOther;
    return;
  }
  if (page.num_rows >= 0 && out->rows != page.num_rows) {
    out->declared_rows = page.num_rows;
    return;
  }
  const int64_t present = all_elements ? n : count_present(slot_valid, slots);
  const uint8_t* p = levels.values;
  const auto remaining = static_cast<size_t>(body + size - p);
  try {
    if constexpr (std::is_same_v<T, ByteArrays>) {
      ByteArrays& arrays = std::get<ByteArrays>(col->values);
      const size_t base = arrays.offsets.size();
      decode_values<T>(page.encoding, p, remaining, present, &arrays, nullptr);
      if (present < slots) spread_byte_arrays(&arrays, base, slot_valid, slots, present);
    } else {
      if (values == nullptr) {
        std::vector<T>& column_values = std::get<std::vector<T>>(col->values);
        column_values.resize(static_cast<size_t>(out->entries_before + n));
        values = column_values.data();
      }
      T* dst = values + out->entries_before;
      decode_values<T>(page.encoding, p, remaining, present, FixedOut<T>{values}, dst);
      if (present < slots) spread(dst, slot_valid, slots, present);
    }
  } catch (const Error&) {
    out->values_error = std::current_exception();
    return;
  }
  if (present < slots) out->slot_valid.assign(slot_valid, slot_valid + slots);
}

template <class T>
Column ChunkReader::read_list() {
  const int64_t entries = load();
  Column col = make_column(leaf_.schema);
  if (entries == 0) return col;
  // At most one value and one row start per level entry, and three scratch bytes (levels, slot) per entry of a
  // page.
  const int64_t width = std::is_same_v<T, ByteArrays> ? 8 : static_cast<int64_t>(sizeof(T));
  if (entries > budget_ / (width + 8)) {
    throw InvalidFile(std::to_string(entries) + " list values would exceed the memory limit");
  }
  // Fixed-width values decode straight to where their page's first level entry would put them (no earlier
  // than their slot: an entry makes at most one slot), so pages decode apart; the join below moves them down
  // when null or empty lists came before. Byte arrays append, so their pages decode in order, on one thread.
  // Room for every entry is reserved, so the values never move while pages decode into them.
  constexpr bool kFixed = !std::is_same_v<T, ByteArrays>;
  if constexpr (kFixed) std::get<std::vector<T>>(col.values).reserve(static_cast<size_t>(entries));
  const int threads = kFixed ? threads_ : 1;
  col.list_offsets.resize(static_cast<size_t>(num_rows_) + 1);
  if (leaf_.schema.nullable) col.validity.resize(static_cast<size_t>(num_rows_));
  int64_t* offsets = col.list_offsets.data();
  uint8_t* row_valid = col.validity.empty() ? nullptr : col.validity.data();
  std::vector<uint8_t>& element_valid = col.element_validity;  // made at the first null element
  bool any_null_element = false;
  int64_t row = -1, slots = 0, seen = 0, pos = start_;
  bool open = false;  // the current row's list has elements (a repetition level of 1 may continue it)
  const auto repetition_error = [&](bool first) {
    return InvalidFile(first && row < 0 ? "repetition level 1 starts the chunk"
                                        : "repetition level 1 on a null or empty list");
  };

  // A window of pages at a time (bounding what is held for a chunk of many pages): their headers in order,
  // then the pages decoded (levels: rows, element slots; values), then joined in order. Every error is thrown
  // as reading the pages one after another would meet it. The next window's headers are read first: with
  // several threads (and pages), one of them makes (and so zeroes) the room for its values while the others
  // decode this window; on one, each page makes its own room as it decodes, which keeps it in cache.
  const size_t window = threads > 1 ? static_cast<size_t>(4 * threads) : 1;
  std::vector<PageRef> pages, next;
  std::vector<ListPage> parts;
  next_window<T>(&pages, window, &pos, &seen, entries);
  const bool apart = pages.size() > 1;  // (a chunk of one page decodes as on one thread)
  if constexpr (kFixed) {
    if (apart) std::get<std::vector<T>>(col.values).resize(static_cast<size_t>(seen));
  }
  int64_t first_entry = 0;  // level entries before the window
  while (!pages.empty()) {
    next_window<T>(&next, window, &pos, &seen, entries);
    parts.assign(pages.size(), ListPage());
    for (size_t k = 0; k < pages.size(); ++k) {
      parts[k].entries_before = first_entry;
      first_entry += pages[k].num_values;
    }
    if (apart) {  // (fixed-width values only: byte arrays have one thread, so a window of one page)
      if constexpr (kFixed) {
        // Task 0 grows the values to the next window's end: room reserved, so they stay where the others write.
        std::vector<T>& values = std::get<std::vector<T>>(col.values);
        T* base = values.data();
        const auto next_end = static_cast<size_t>(seen);
        parallel_for(pages.size() + 1, threads, [&](size_t k) {
          if (k == 0) {
            values.resize(next_end);
          } else {
            read_list_page<T>(pages[k - 1], base, &col, &parts[k - 1]);
          }
        });
      }
    } else {
      for (size_t k = 0; k < pages.size(); ++k) read_list_page<T>(pages[k], nullptr, &col, &parts[k]);
    }

    for (size_t k = 0; k < pages.size(); ++k) {
      const ListPage& part = parts[k];
      page_offset_ = pages[k].offset;
      if (part.levels_error) std::rethrow_exception(part.levels_error);
      // Repetition 0 starts a row; a definition below list_def is a null list, list_def an empty one, above it an
      // element slot, null unless it reaches max_def. A repetition level of 1 continues the current row's list,
      // which must have begun with an element.
      if (row + part.rows >= num_rows_) {
        throw InvalidFile("list levels start more rows than the row group's " + std::to_string(num_rows_));
      }
      const bool continues_closed = part.continues && !open;
      if (part.malformed != ListPage::Malformed::kNone && (part.malformed_at == 0 || !continues_closed)) {
        switch (part.malformed) {
          case ListPage::Malformed::kDefinition:
            throw InvalidFile("definition level " + std::to_string(part.malformed_level) +
                              " above the column's maximum " + std::to_string(leaf_.max_def));
          case ListPage::Malformed::kRepetition: throw repetition_error(part.malformed_at == 0);
          default: throw InvalidFile("malformed list levels");
        }
      }
      if (continues_closed) throw repetition_error(true);
      if (part.declared_rows >= 0) {
        throw InvalidFile("data page v2 declares " + std::to_string(part.declared_rows) + " rows, its levels start " +
                          std::to_string(part.rows));
      }
      if (part.values_error) std::rethrow_exception(part.values_error);
      if constexpr (kFixed) {
        T* values = std::get<std::vector<T>>(col.values).data();
        if (slots != part.entries_before && part.slots > 0) {
          std::memmove(values + slots, values + part.entries_before, static_cast<size_t>(part.slots) * sizeof(T));
        }
      }
      for (size_t j = 0; j < part.row_starts.size(); ++j) {
        offsets[++row] = slots + part.row_starts[j];
        if (row_valid != nullptr) row_valid[row] = part.row_valid.empty() ? 1 : part.row_valid[j];
      }
      const bool page_nulls = !part.slot_valid.empty();
      if (page_nulls && !any_null_element) {
        any_null_element = true;
        element_valid.assign(static_cast<size_t>(slots), 1);
      }
      if (any_null_element && page_nulls) element_valid.insert(element_valid.end(), part.slot_valid.begin(), part.slot_valid.end());
      if (any_null_element && !page_nulls) element_valid.insert(element_valid.end(), static_cast<size_t>(part.slots), 1);
      slots += part.slots;
      if (part.has_entries) open = part.open_after;
    }
    pages.swap(next);
  }
  rethrow_header_error();
  if (row + 1 != num_rows_) {
    throw InvalidFile("list levels start " + std::to_string(row + 1) + " rows, the row group holds " +
                      std::to_string(num_rows_));
  }
  offsets[num_rows_] = slots;
  if constexpr (kFixed) std::get<std::vector<T>>(col.values).resize(static_cast<size_t>(slots));
  if (row_valid != nullptr && count_present(row_valid, num_rows_) == num_rows_) std::vector<uint8_t>().swap(col.validity);
  return col;
}

template <class T>
void ChunkReader::append_list_values(int32_t encoding, const uint8_t* p, const uint8_t* end, const uint8_t* slot_valid,
                                     int64_t first_slot, int64_t page_slots, Column* col) {
  using Values = std::conditional_t<std::is_same_v<T, ByteArrays>, ByteArrays, std::vector<T>>;
  Values& values = std::get<Values>(col->values);
  const int64_t present = slot_valid == nullptr ? page_slots : count_present(slot_valid, page_slots);
  if constexpr (std::is_same_v<T, ByteArrays>) {
    const size_t base = values.offsets.size();
    decode_values<T>(encoding, p, static_cast<size_t>(end - p), present, &values, nullptr);
    if (present < page_slots) spread_byte_arrays(&values, base, slot_valid, page_slots, present);
  } else {
    values.resize(static_cast<size_t>(first_slot + page_slots));
    T* dst = values.data() + first_slot;
    decode_values<T>(encoding, p, static_cast<size_t>(end - p), present, FixedOut<T>{values.data()}, dst);
    if (present < page_slots) spread(dst, slot_valid, page_slots, present);
  }
  // element_validity stays empty until the first null element (and from then on is never empty).
  std::vector<uint8_t>& element_valid = col->element_validity;
  if (present == page_slots && element_valid.empty()) return;
  if (element_valid.empty()) element_valid.assign(static_cast<size_t>(first_slot), 1);
  if (slot_valid == nullptr) {
    element_valid.insert(element_valid.end(), static_cast<size_t>(page_slots), 1);
  } else {
    element_valid.insert(element_valid.end(), slot_valid, slot_valid + page_slots);
  }
}

template <class T>
Column ChunkReader::read_nested_list() {
  const int64_t entries = load();
  Column col = make_column(leaf_.schema);
  if (entries == 0) return col;
  const int depth = leaf_.max_rep;
  // Each level entry begins at most depth - 1 inner lists (an offset and a validity byte each), besides what
  // read_list allows it.
  const int64_t width = (std::is_same_v<T, ByteArrays> ? 8 : static_cast<int64_t>(sizeof(T))) + 4 + 9 * (depth - 1);
  if (entries > budget_ / width) {
    throw InvalidFile(std::to_string(entries) + " list values would exceed the memory limit");
  }
  col.list_offsets.resize(static_cast<size_t>(num_rows_) + 1);
  if (leaf_.schema.nullable) col.validity.resize(static_cast<size_t>(num_rows_));
  // Inner levels collect the start of each list as it begins, and their end once every list has.
  for (ListLevel& level : col.inner_lists) level.offsets.clear();
  // empty_def[k]: the definition level of a present but empty list at level k (0: the rows' lists). Below it
  // the list is null, above it the list holds an element: the next level's list, or a value slot.
  std::vector<int> empty_def{leaf_.list_def};
  empty_def.insert(empty_def.end(), leaf_.inner_list_defs.begin(), leaf_.inner_list_defs.end());
  const std::vector<bool>& nullable = leaf_.schema.inner_list_nullable;
  const int max_def = leaf_.max_def;
  int64_t row = -1, slots = 0;
  int open = 0;  // how many levels, from the rows' lists in, have a current list holding an element

  // Lists begun at level k (0 < k < depth) and at the innermost level index the next level's lists / the slots.
  const auto lists_below = [&](int k) -> int64_t {
    return k + 1 < depth ? static_cast<int64_t>(col.inner_lists[static_cast<size_t>(k)].offsets.size()) : slots;
  };
  walk_pages<T>(entries, [&](const PageData& page, const uint8_t* body, size_t size) {
    const int64_t n = page.num_values;
    const ListPageLevels levels = read_list_levels(page, body, size);
    const uint8_t* rep = levels.rep;
    const uint8_t* def = levels.def;
    uint8_t* slot_valid = levels.slot_valid;
    const uint8_t* p = levels.values;
    const uint8_t* end = body + size;
    const int64_t first_slot = slots, first_row = row;
    // Repetition level r > 0 adds an element to the current list at level r - 1, which must hold one already;
    // r = 0 begins a row. The new element is a list at level r (or a value slot when r = depth), which holds a
    // list at the next level while the definition level reaches past its empty_def, and so on.
    for (int64_t i = 0; i < n; ++i) {
      const int r = rep[i], d = def[i];
      if (r > depth) {
        throw InvalidFile("repetition level " + std::to_string(r) + " above the column's maximum " +
                          std::to_string(depth));
      }
      if (d > max_def) {
        throw InvalidFile("definition level " + std::to_string(d) + " above the column's maximum " +
                          std::to_string(max_def));
      }
      if (r > open) {
        throw InvalidFile("repetition level " + std::to_string(r) +
                          (row < 0 ? " starts the chunk" : " on a null, empty or absent list"));
      }
      if (r > 0 && d <= empty_def[static_cast<size_t>(r - 1)]) {
        throw InvalidFile("repetition level " + std::to_string(r) + " with definition level " + std::to_string(d) +
                          ", which adds no element");
      }
      int k = r;
      if (r == 0) {
        if (++row >= num_rows_) {
          throw InvalidFile("list levels start more rows than the row group's " + std::to_string(num_rows_));
        }
        col.list_offsets[static_cast<size_t>(row)] = lists_below(0);
        if (!col.validity.empty()) col.validity[static_cast<size_t>(row)] = d >= empty_def[0];
      }
      while (true) {
        if (k > 0 && k < depth) {  // a list begins at level k
          ListLevel& level = col.inner_lists[static_cast<size_t>(k - 1)];
          level.offsets.push_back(lists_below(k));
          if (nullable[static_cast<size_t>(k - 1)]) level.validity.push_back(d >= empty_def[static_cast<size_t>(k)]);
        }
        if (k == depth) {  // a value slot, null below the maximum definition level
          slot_valid[slots - first_slot] = d == max_def;
          ++slots;
          break;
        }
        if (d <= empty_def[static_cast<size_t>(k)]) break;  // the list at level k is null or empty
        ++k;
      }
      open = k;
    }
    if (page.num_rows >= 0 && row - first_row != page.num_rows) {
      throw InvalidFile("data page v2 declares " + std::to_string(page.num_rows) + " rows, its levels start " +
                        std::to_string(row - first_row));
    }
    append_list_values<T>(page.encoding, p, end, slot_valid, first_slot, slots - first_slot, &col);
    return n;
  });
  if (row + 1 != num_rows_) {
    throw InvalidFile("list levels start " + std::to_string(row + 1) + " rows, the row group holds " +
                      std::to_string(num_rows_));
  }
  // Outside in, so that each level's end is taken before the level below it gets its own.
  col.list_offsets[static_cast<size_t>(num_rows_)] = lists_below(0);
  for (int k = 1; k < depth; ++k) col.inner_lists[static_cast<size_t>(k - 1)].offsets.push_back(lists_below(k));
  const auto all_present = [](const std::vector<uint8_t>& v) {
    return count_present(v.data(), static_cast<int64_t>(v.size())) == static_cast<int64_t>(v.size());
  };
  if (all_present(col.validity)) std::vector<uint8_t>().swap(col.validity);
  for (ListLevel& level : col.inner_lists) {
    if (all_present(level.validity)) std::vector<uint8_t>().swap(level.validity);
  }
  return col;
}

template <class T>
void ChunkReader::read_dictionary_page(const fmt::PageHeader& h, const uint8_t* body, size_t size) {
  const fmt::DictionaryPageHeader& d = *h.dictionary_page_header;
  if (d.encoding != fmt::encoding::kPlain && d.encoding != fmt::encoding::kPlainDictionary) {
    throw Unsupported(std::string("dictionary page encoding ") + fmt::encoding_name(d.encoding));
  }
  if (d.num_values < 0) throw InvalidFile("negative dictionary size");
  auto& dict = dictionary<T>();
  if constexpr (std::is_same_v<T, ByteArrays>) {
    dict = ByteArrays();
    decode_plain_byte_arrays(body, size, d.num_values, &dict, size, leaf_.schema.type_length);
  } else {
    // Each value takes at least sizeof(T) bytes (a bit for booleans), so the page bounds the count.
    const uint64_t max_values = std::is_same_v<T, uint8_t> ? uint64_t{size} * 8 : size / sizeof(T);
    if (static_cast<uint64_t>(d.num_values) > max_values) {
      throw InvalidFile("dictionary of " + std::to_string(d.num_values) + " values in " + std::to_string(size) +
                        " bytes");
    }
    dict.resize(static_cast<size_t>(d.num_values));
    if constexpr (std::is_same_v<T, uint8_t>) {
      decode_plain_bool(body, size, d.num_values, dict.data());
    } else {
      decode_plain(body, size, d.num_values, dict.data());
    }
  }
  have_dictionary_ = true;
}

template <class T, class Out>
int64_t ChunkReader::read_data_page(const PageData& h, const uint8_t* body, size_t size, Out out, int64_t row,
                                    uint8_t* validity) {
  const int64_t n = h.num_values;
  const uint8_t* p = body;
  const uint8_t* end = body + size;
  int64_t present = n;
  uint8_t* page_validity = nullptr;
  if (leaf_.max_def > 0) {
    // The levels themselves, then (inside optional structs, where they go above 1) whether each reaches the
    // maximum: below it the field or a struct above it is null.
    page_validity = validity + row;
    const int max_def = leaf_.max_def;
    present = h.v2 ? read_levels_v2(h.v2_def_levels, h.v2_def_size, n, max_def, page_validity)
                   : read_levels(h.definition_level_encoding, p, end, n, max_def, page_validity);
    if (max_def > 1) {
      uint8_t bad = 0;
      present = 0;
      for (int64_t i = 0; i < n; ++i) {
        bad |= static_cast<uint8_t>(page_validity[i] > max_def);
        page_validity[i] = page_validity[i] == max_def;
        present += page_validity[i];
      }
      if (bad) throw InvalidFile("definition level above the column's maximum " + std::to_string(max_def));
    }
  }
  size_t bytes_base = 0;
  T* dst = nullptr;
  if constexpr (std::is_same_v<T, ByteArrays>) {
    bytes_base = out->offsets.size();
  } else {
    dst = out.values + row;
  }
  decode_values<T, Out>(h.encoding, p, static_cast<size_t>(end - p), present, out, dst);
  if (present < n) {
    if constexpr (std::is_same_v<T, ByteArrays>) {
      spread_byte_arrays(out, bytes_base, page_validity, n, present);
    } else {
      spread(dst, page_validity, n, present);
    }
  }
  return n - present;
}

template <class T, class Out>
void ChunkReader::decode_values(int32_t encoding, const uint8_t* p, size_t remaining, int64_t present, Out out,
                                T* dst) {
  switch (encoding) {
    case fmt::encoding::kPlain:
      if constexpr (std::is_same_v<T, ByteArrays>) {
        decode_plain_byte_arrays(p, remaining, present, out, static_cast<size_t>(budget_), leaf_.schema.type_length);
      } else if constexpr (std::is_same_v<T, uint8_t>) {
        decode_plain_bool(p, remaining, present, dst);
      } else {
        decode_plain(p, remaining, present, dst);
      }
      break;
    case fmt::encoding::kPlainDictionary:
    case fmt::encoding::kRleDictionary: {
      if (!have_dictionary_) throw InvalidFile("dictionary-encoded page without a dictionary page");
      if (present == 0) break;
      if (remaining < 1) throw InvalidFile("dictionary indices missing");
      const int bit_width = p[0];
      if (bit_width > 32) throw InvalidFile("dictionary index bit width " + std::to_string(bit_width));
      RleBitPackedDecoder dec(p + 1, remaining - 1, bit_width);
      if constexpr (std::is_same_v<T, ByteArrays>) {
        ByteArrayDictionaryGather sink{&dict_bytes_, out, static_cast<size_t>(budget_)};
        out->offsets.reserve(out->offsets.size() + static_cast<size_t>(present));
        dec.decode(present, sink);
      } else {
        const auto& dict = dictionary<T>();
        DictionaryGather<T> sink{dict.data(), static_cast<uint32_t>(dict.size()), dst};
        dec.decode(present, sink);
      }
      break;
    }
    case fmt::encoding::kDeltaBinaryPacked:
      if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
        decode_delta_binary_packed(p, remaining, present, dst);
        break;
      }
      throw InvalidFile("DELTA_BINARY_PACKED on a " + std::string(to_string(leaf_.schema.type)) + " column");
    case fmt::encoding::kDeltaLengthByteArray:
      if constexpr (std::is_same_v<T, ByteArrays>) {
        if (leaf_.schema.type == PhysicalType::kByteArray) {
          decode_delta_length_byte_arrays(p, remaining, present, out, static_cast<size_t>(budget_));
          break;
        }
      }
      throw InvalidFile("DELTA_LENGTH_BYTE_ARRAY on a " + std::string(to_string(leaf_.schema.type)) + " column");
    case fmt::encoding::kDeltaByteArray:
      if constexpr (std::is_same_v<T, ByteArrays>) {
        decode_delta_byte_arrays(p, remaining, present, out, static_cast<size_t>(budget_), leaf_.schema.type_length);
        break;
      }
      throw InvalidFile("DELTA_BYTE_ARRAY on a " + std::string(to_string(leaf_.schema.type)) + " column");
    case fmt::encoding::kByteStreamSplit:
      if constexpr (std::is_same_v<T, ByteArrays>) {
        if (leaf_.schema.type == PhysicalType::kFixedLenByteArray) {
          const auto width = static_cast<size_t>(leaf_.schema.type_length);
          if (present > 0 && static_cast<uint64_t>(present) > remaining / width) {
            throw InvalidFile("BYTE_STREAM_SPLIT data holds " + std::to_string(remaining / width) +
                              " values, page declares " + std::to_string(present));
          }
          const size_t at = out->bytes.size();
          if (at + static_cast<size_t>(present) * width > static_cast<size_t>(budget_)) {
            throw InvalidFile("byte arrays exceed the size limit");
          }
          out->bytes.resize(at + static_cast<size_t>(present) * width);
          decode_byte_stream_split(p, remaining, present, width, reinterpret_cast<uint8_t*>(out->bytes.data() + at));
          int64_t end = out->offsets.back();
          for (int64_t i = 0; i < present; ++i) out->offsets.push_back(end += leaf_.schema.type_length);
          break;
        }
      } else if constexpr (!std::is_same_v<T, uint8_t>) {
        decode_byte_stream_split(p, remaining, present, sizeof(T), reinterpret_cast<uint8_t*>(dst));
        break;
      }
      throw InvalidFile("BYTE_STREAM_SPLIT on a " + std::string(to_string(leaf_.schema.type)) + " column");
    case fmt::encoding::kRle:
      if constexpr (std::is_same_v<T, uint8_t>) {
        // Booleans as RLE with a 4-byte length, bit width 1.
        if (remaining < 4) throw InvalidFile("RLE booleans truncated");
        uint32_t len;
        std::memcpy(&len, p, 4);
        if (len > remaining - 4) throw InvalidFile("RLE booleans run past the page");
        RleBitPackedDecoder dec(p + 4, len, 1);
        LevelSink sink{dst};
        dec.decode(present, sink);
        break;
      }
      [[fallthrough]];
    default:
      throw Unsupported(std::string("encoding ") + fmt::encoding_name(encoding) + " (" +
                        std::to_string(encoding) + ")");
  }
}

// ---------------------------------------------------------------------------------------------------------

int64_t value_width(PhysicalType t) {
  switch (t) {
    case PhysicalType::kBoolean: return 1;
    case PhysicalType::kInt32:
    case PhysicalType::kFloat: return 4;
    case PhysicalType::kInt64:
    case PhysicalType::kDouble: return 8;
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: return 8;  // the offset
  }
  return 8;
}

// INT96 timestamps (8 bytes of nanoseconds in the day, then the Julian day as a 4-byte signed integer, as Spark
// and Impala write it; little-endian) as INT64 microseconds since the epoch, rounded down. A value beyond INT64
// microseconds is refused rather than wrapped into a wrong date.
Column int96_to_micros(Column col, const Leaf& leaf, const std::string& path) {
  const ByteArrays& raw = col.byte_arrays();
  std::vector<int64_t> micros(static_cast<size_t>(raw.size()));
  for (int64_t r = 0; r < raw.size(); ++r) {
    const std::string_view v = raw.at(r);
    if (v.size() != 12) continue;  // a null
    int64_t nanos;
    int32_t julian;
    std::memcpy(&nanos, v.data(), 8);
    std::memcpy(&julian, v.data() + 8, 4);
    constexpr int64_t kUnixEpochJulianDay = 2440588, kMicrosPerDay = 86'400'000'000;
    __int128 us = static_cast<__int128>(static_cast<int64_t>(julian) - kUnixEpochJulianDay) * kMicrosPerDay;
    us += nanos >= 0 ? nanos / 1000 : -((-(nanos + 1)) / 1000) - 1;
    if (us > INT64_MAX || us < INT64_MIN) {
      throw InvalidFile(path + ": column '" + leaf.name + "' row " + std::to_string(r) +
                        ": INT96 timestamp (Julian day " + std::to_string(julian) + ", " + std::to_string(nanos) +
                        " ns) beyond the range of 64-bit microseconds");
    }
    micros[static_cast<size_t>(r)] = static_cast<int64_t>(us);
  }
  Column out = make_column(output_schema(leaf));
  out.values = std::move(micros);
  out.validity = std::move(col.validity);
  return out;
}

void check_leaf_supported(const ParsedFile& f, const Leaf& leaf) {
  if (leaf.unsupported.empty()) return;
  const std::string leaf_path = leaf.field == leaf.name ? "" : " (its leaf '" + leaf.name + "')";
  throw Unsupported(f.path + ": column '" + leaf.field + "'" + leaf_path + ": " + leaf.unsupported);
}

// Appends the byte arrays of `src` to `dst`.
void append_byte_arrays(ByteArrays* dst, const ByteArrays& src) {
  const int64_t shift = static_cast<int64_t>(dst->bytes.size());
  dst->bytes.append(src.bytes);
  for (size_t i = 1; i < src.offsets.size(); ++i) dst->offsets.push_back(src.offsets[i] + shift);
}

// Appends `part`'s offsets (one more than its lists, from 0) to `dst`'s, shifted to follow dst's last list.
// A copy, then a shift in place: a push_back per row, no longer inlined once this served every level, made
// reading one-level lists of strings and booleans 8-10% slower (their row groups are joined here).
void append_offsets(std::vector<int64_t>* dst, const std::vector<int64_t>& part) {
  const int64_t shift = dst->back();
  const size_t at = dst->size();
  dst->insert(dst->end(), part.begin() + 1, part.end());
  int64_t* out = dst->data();
  for (size_t i = at; i < dst->size(); ++i) out[i] += shift;
}

// Appends list column `part` (the next rows) to `dst`.
void append_list(Column* dst, Column&& part) {
  const int64_t rows = dst->size(), part_rows = part.size();
  if (rows == 0) {
    *dst = std::move(part);
    return;
  }
  // Validity vectors are empty while everything is present: fill in the side that had none.
  const auto merge = [](std::vector<uint8_t>* a, int64_t a_size, std::vector<uint8_t>&& b, int64_t b_size) {
    if (a->empty() && b.empty()) return;
    if (a->empty()) a->assign(static_cast<size_t>(a_size), 1);
    if (b.empty()) {
      a->insert(a->end(), static_cast<size_t>(b_size), 1);
    } else {
      a->insert(a->end(), b.begin(), b.end());
    }
  };
  merge(&dst->validity, rows, std::move(part.validity), part_rows);
  // Each level's offsets index the next level's lists (the values, at the innermost): those counts, taken
  // before appending, shift them.
  int64_t elements = dst->list_offsets.back(), part_elements = part.list_offsets.back();
  append_offsets(&dst->list_offsets, part.list_offsets);
  for (size_t k = 0; k < dst->inner_lists.size(); ++k) {
    ListLevel& level = dst->inner_lists[k];
    ListLevel& part_level = part.inner_lists[k];
    merge(&level.validity, elements, std::move(part_level.validity), part_elements);
    elements = level.offsets.back();
    part_elements = part_level.offsets.back();
    append_offsets(&level.offsets, part_level.offsets);
  }
  merge(&dst->element_validity, elements, std::move(part.element_validity), part_elements);
  std::visit(
      [&](auto& v) {
        using V = std::decay_t<decltype(v)>;
        V& src = std::get<V>(part.values);
        if constexpr (std::is_same_v<V, ByteArrays>) {
          append_byte_arrays(&v, src);
        } else {
          v.insert(v.end(), src.begin(), src.end());
        }
      },
      dst->values);
}

// A list column's chunk, by the reader for its depth.
template <class T>
Column read_list_chunk(ChunkReader& reader, const Leaf& leaf) {
  if (leaf.max_rep > 1) return reader.read_nested_list<T>();
  return reader.read_list<T>();
}

// The row groups to read, in the order asked for (every one when `asked` is empty).
std::vector<size_t> select_row_groups(const ParsedFile& f, const std::vector<int64_t>& asked) {
  std::vector<size_t> groups;
  const size_t count = f.md.row_groups.size();
  if (asked.empty()) {
    for (size_t g = 0; g < count; ++g) groups.push_back(g);
    return groups;
  }
  for (const int64_t g : asked) {
    if (g < 0 || static_cast<uint64_t>(g) >= count) {
      throw InvalidArgument(f.path + ": no row group " + std::to_string(g) + " (the file has " +
                            std::to_string(count) + ")");
    }
    if (std::find(groups.begin(), groups.end(), static_cast<size_t>(g)) != groups.end()) {
      throw InvalidArgument(f.path + ": row group " + std::to_string(g) + " asked for twice");
    }
    groups.push_back(static_cast<size_t>(g));
  }
  return groups;
}

// What read_table reads, of a file parse() has read the footer of. Only reads `f` (its file through pread), so
// several threads may call it on one ParsedFile at once.
Table read_parsed(const ParsedFile& f, const ReadOptions& options) {
  const std::string& path = f.path;

  // Which leaves, in the order asked for.
  std::vector<size_t> selected;
  if (options.columns.empty()) {
    for (size_t i = 0; i < f.leaves.size(); ++i) selected.push_back(i);
  } else {
    std::unordered_map<std::string, size_t> by_name;
    for (size_t i = 0; i < f.leaves.size(); ++i) by_name.emplace(f.leaves[i].name, i);
    for (const std::string& name : options.columns) {
      auto it = by_name.find(name);
      if (it == by_name.end()) throw InvalidArgument(path + ": no column named '" + name + "'");
      if (std::find(selected.begin(), selected.end(), it->second) != selected.end()) {
        throw InvalidArgument(path + ": column '" + name + "' asked for twice");
      }
      selected.push_back(it->second);
    }
  }
  for (size_t leaf : selected) check_leaf_supported(f, f.leaves[leaf]);
  const std::vector<size_t> groups = select_row_groups(f, options.row_groups);
  const size_t num_groups = groups.size();
  std::vector<int64_t> group_first_row(num_groups + 1, 0);
  for (size_t k = 0; k < num_groups; ++k) {
    group_first_row[k + 1] = group_first_row[k] + f.md.row_groups[groups[k]].num_rows;
  }
  const int64_t num_rows = group_first_row[num_groups];

  const int64_t budget = std::max(kMinOutputBudget, f.size * kMaxExpansion);
  {
    // A small hostile file must not make us allocate without bound: what the footer declares counts against
    // the budget before anything is allocated.
    int64_t need = 0;
    const auto add = [&](int64_t count, int64_t width) {
      if (count > (budget - need) / width) {
        throw InvalidFile(path + ": " + std::to_string(num_rows) + " rows of " + std::to_string(selected.size()) +
                          " columns would exceed the memory limit for a file of " + std::to_string(f.size) +
                          " bytes");
      }
      need += count * width;
    };
    for (size_t leaf_index : selected) {
      const Leaf& leaf = f.leaves[leaf_index];
      add(num_rows, value_width(leaf.schema.type) + (leaf.max_def ? 1 : 0));
      if (leaf.max_rep == 0) continue;
      for (size_t g : groups) {  // level entries: a value, scratch, a row start or inner lists (see read_list)
        const auto& md = f.md.row_groups[g].columns[leaf.index].meta_data;
        const int64_t per_entry = leaf.max_rep == 1 ? 8 : 4 + 9 * (leaf.max_rep - 1);
        if (md && md->num_values > 0) add(md->num_values, value_width(leaf.schema.type) + per_entry);
      }
    }
  }

  Table table;
  table.num_rows = num_rows;
  table.columns.resize(selected.size());
  const int threads = resolve_threads(options.num_threads);

  // Allocate (and so touch) the output in parallel: for wide tables this is a good share of the work.
  parallel_for(selected.size(), threads, [&](size_t c) {
    const Leaf& leaf = f.leaves[selected[c]];
    Column& col = table.columns[c];
    col = make_column(leaf.schema);
    if (leaf.max_rep > 0) return;  // lists are built per chunk
    std::visit(
        [&](auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (!std::is_same_v<V, ByteArrays>) v.resize(static_cast<size_t>(num_rows));
        },
        col.values);
    if (leaf.max_def > 0) col.validity.resize(static_cast<size_t>(num_rows));
  });

  // Byte arrays and lists decode per chunk into their own parts, joined afterwards (unless there is one row
  // group: then straight into the column).
  std::vector<Column> parts;
  std::vector<size_t> part_of(selected.size(), SIZE_MAX);
  {
    size_t count = 0;
    for (size_t c = 0; c < selected.size(); ++c) {
      const Leaf& leaf = f.leaves[selected[c]];
      const bool bytes = value_index(leaf.schema.type) == value_index(PhysicalType::kByteArray);
      if (leaf.max_rep > 0 || (bytes && num_groups > 1)) part_of[c] = count++;
    }
    parts.resize(count * num_groups);
    for (size_t c = 0; c < selected.size(); ++c) {
      if (part_of[c] == SIZE_MAX) continue;
      for (size_t k = 0; k < num_groups; ++k) parts[part_of[c] * num_groups + k] = make_column(f.leaves[selected[c]].schema);
    }
  }
  std::vector<int64_t> nulls(selected.size() * num_groups, 0);

  // A chunk's pages may decode on several threads: as many as its share of the bytes to read makes of the
  // threads (so that a file of one large column and small others, or of few row groups, uses them all), if it
  // is large enough for threads to pay (see internal::page_threads).
  const auto chunk_bytes = [&](size_t task) {
    const auto& md = f.md.row_groups[groups[task % num_groups]].columns[f.leaves[selected[task / num_groups]].index].meta_data;
    return md ? std::max<int64_t>(md->total_compressed_size, 0) : 0;
  };
  int64_t total_bytes = 0;
  for (size_t task = 0; task < selected.size() * num_groups; ++task) total_bytes += chunk_bytes(task);
  const int forced_page_threads = internal::page_threads.load(std::memory_order_relaxed);
  const auto page_threads = [&](size_t task) {
    if (forced_page_threads > 0) return forced_page_threads;
    const int64_t bytes = chunk_bytes(task);
    if (threads <= 1 || bytes < kMinParallelChunkBytes) return 1;
    const double share = static_cast<double>(bytes) / static_cast<double>(total_bytes);
    return std::clamp(static_cast<int>(share * threads + 0.5), 1, threads);
  };

  parallel_for(selected.size() * num_groups, threads, [&](size_t task) {
    // Column-major task order: one column's row groups run back to back, which keeps byte arrays in order.
    const size_t c = task / num_groups, k = task % num_groups;
    const Leaf& leaf = f.leaves[selected[c]];
    Column& col = table.columns[c];
    const fmt::RowGroup& rg = f.md.row_groups[groups[k]];
    const int64_t first = group_first_row[k];
    // Pages decode apart in flat columns and one-level lists, but not of variable-length byte arrays (they append).
    const bool apart = leaf.max_rep <= 1 && leaf.schema.type != PhysicalType::kByteArray;
    ChunkReader reader(f, leaf, rg.columns[leaf.index], rg.num_rows, budget, apart ? page_threads(task) : 1);
    uint8_t* validity = leaf.max_def > 0 && leaf.max_rep == 0 ? col.validity.data() + first : nullptr;
    try {
      int64_t n = 0;
      if (leaf.max_rep > 0) {
        Column& part = parts[part_of[c] * num_groups + k];
        switch (leaf.schema.type) {
          case PhysicalType::kBoolean: part = read_list_chunk<uint8_t>(reader, leaf); break;
          case PhysicalType::kInt32: part = read_list_chunk<int32_t>(reader, leaf); break;
          case PhysicalType::kInt64: part = read_list_chunk<int64_t>(reader, leaf); break;
          case PhysicalType::kFloat: part = read_list_chunk<float>(reader, leaf); break;
          case PhysicalType::kDouble: part = read_list_chunk<double>(reader, leaf); break;
          case PhysicalType::kByteArray:
          case PhysicalType::kFixedLenByteArray: part = read_list_chunk<ByteArrays>(reader, leaf); break;
        }
      } else {
        switch (leaf.schema.type) {
          case PhysicalType::kBoolean: n = reader.read<uint8_t>(FixedOut<uint8_t>{col.as<uint8_t>().data() + first}, validity); break;
          case PhysicalType::kInt32: n = reader.read<int32_t>(FixedOut<int32_t>{col.as<int32_t>().data() + first}, validity); break;
          case PhysicalType::kInt64: n = reader.read<int64_t>(FixedOut<int64_t>{col.as<int64_t>().data() + first}, validity); break;
          case PhysicalType::kFloat: n = reader.read<float>(FixedOut<float>{col.as<float>().data() + first}, validity); break;
          case PhysicalType::kDouble: n = reader.read<double>(FixedOut<double>{col.as<double>().data() + first}, validity); break;
          case PhysicalType::kByteArray:
          case PhysicalType::kFixedLenByteArray: {
            ByteArrays* out = part_of[c] != SIZE_MAX
                                  ? &std::get<ByteArrays>(parts[part_of[c] * num_groups + k].values)
                                  : &std::get<ByteArrays>(col.values);
            n = reader.read<ByteArrays>(out, validity);
            break;
          }
        }
      }
      nulls[task] = n;
    } catch (const Error&) {
      std::string where = path + ": column '" + leaf.name + "', row group " + std::to_string(groups[k]);
      if (reader.page_offset() >= 0) where += ", page at offset " + std::to_string(reader.page_offset());
      rethrow_with(where + ": ");
    }
  });

  for (size_t c = 0; c < selected.size(); ++c) {
    Column& col = table.columns[c];
    const Leaf& leaf = f.leaves[selected[c]];
    if (leaf.max_rep > 0) {
      for (size_t k = 0; k < num_groups; ++k) append_list(&col, std::move(parts[part_of[c] * num_groups + k]));
      continue;
    }
    if (part_of[c] != SIZE_MAX) {
      ByteArrays& dst = std::get<ByteArrays>(col.values);
      size_t total = 0;
      for (size_t k = 0; k < num_groups; ++k) total += std::get<ByteArrays>(parts[part_of[c] * num_groups + k].values).bytes.size();
      dst.bytes.reserve(total);
      dst.offsets.reserve(static_cast<size_t>(num_rows) + 1);
      for (size_t k = 0; k < num_groups; ++k) {
        ByteArrays& part = std::get<ByteArrays>(parts[part_of[c] * num_groups + k].values);
        append_byte_arrays(&dst, part);
        part = ByteArrays();
      }
    }
    int64_t col_nulls = 0;
    for (size_t k = 0; k < num_groups; ++k) col_nulls += nulls[c * num_groups + k];
    if (col_nulls == 0) std::vector<uint8_t>().swap(col.validity);
    if (leaf.int96) col = int96_to_micros(std::move(col), leaf, path);
  }
  return table;
}

FileInfo file_info(const ParsedFile& f) {
  FileInfo info;
  info.num_rows = f.md.num_rows;
  for (const Leaf& leaf : f.leaves) {
    if (leaf.unsupported.empty()) {
      info.schema.push_back(output_schema(leaf));
    } else {
      info.unsupported_columns.emplace_back(leaf.name, leaf.unsupported);
    }
  }
  for (const fmt::KeyValue& kv : f.md.key_value_metadata) info.key_value_metadata.emplace_back(kv.key, kv.value.value_or(""));
  info.created_by = f.md.created_by.value_or("");
  for (const fmt::RowGroup& rg : f.md.row_groups) {
    RowGroupInfo rgi;
    rgi.num_rows = rg.num_rows;
    for (size_t c = 0; c < rg.columns.size(); ++c) {
      if (!f.leaves[c].unsupported.empty()) continue;
      const fmt::ColumnChunk& chunk = rg.columns[c];
      ColumnChunkInfo ci;
      if (chunk.meta_data) {
        const fmt::ColumnMetaData& md = *chunk.meta_data;
        std::string codec = fmt::codec_name(md.codec);
        for (char& ch : codec) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        ci.codec = codec;
        for (int32_t e : md.encodings) ci.encodings.emplace_back(fmt::encoding_name(e));
        ci.compressed_bytes = md.total_compressed_size;
        ci.uncompressed_bytes = md.total_uncompressed_size;
        if (md.statistics && !f.leaves[c].int96) {  // INT96 has no defined sort order
          const fmt::Statistics& s = *md.statistics;
          ci.null_count = s.null_count.value_or(-1);
          if (s.min_value && s.max_value) {
            ci.min = *s.min_value;
            ci.max = *s.max_value;
          } else if (s.min && s.max && legacy_statistics_usable(f.leaves[c])) {
            ci.min = *s.min;
            ci.max = *s.max;
          }
        }
      }
      rgi.columns.push_back(std::move(ci));
    }
    info.row_groups.push_back(std::move(rgi));
  }
  return info;
}

}  // namespace

struct FileReader::Impl {
  explicit Impl(const std::string& path) : file(parse(path)) {}
  const ParsedFile file;
  // info() is made on first use: read() does not need it, and for a wide file of many row groups it is a copy of
  // every chunk's statistics.
  std::once_flag info_once;
  FileInfo info;
};

FileReader::FileReader(const std::string& path) : impl_(std::make_unique<Impl>(path)) {}
FileReader::~FileReader() = default;
FileReader::FileReader(FileReader&&) noexcept = default;
FileReader& FileReader::operator=(FileReader&&) noexcept = default;

const std::string& FileReader::path() const { return impl_->file.path; }

const FileInfo& FileReader::info() const {
  std::call_once(impl_->info_once, [this] { impl_->info = file_info(impl_->file); });
  return impl_->info;
}

Table FileReader::read(const ReadOptions& options) const { return read_parsed(impl_->file, options); }

Table read_table(const std::string& path, const ReadOptions& options) { return FileReader(path).read(options); }

FileInfo read_file_info(const std::string& path) { return FileReader(path).info(); }

}  // namespace feedline::parquet
