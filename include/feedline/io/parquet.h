// feedline's own Parquet reader and writer (Debian ships no C++ Parquet library).
// Tables of required/optional BOOLEAN, INT32, INT64, FLOAT, DOUBLE, BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY
// columns, lists of them (LIST of a primitive) and lists of lists of them at any depth (written up to 30
// levels, each in the three-level LIST form); codecs UNCOMPRESSED, SNAPPY, GZIP, ZSTD, LZ4_RAW and BROTLI (and
// the deprecated LZ4, read only). Nested fields read as such columns, named by their dotted path: a struct's
// field as a column (`s.x`), a list of structs' field as a list (`objects.bbox`, one entry per struct, null
// where the struct is), a map as lists of its keys and values (`m.key`, `m.value`). A VARIANT, shredded or not,
// reads as one STRING column of its values' JSON text (LogicalKind::kVariant).
// The writer makes data page v1 with PLAIN and RLE_DICTIONARY, and writes structs of one level where asked
// (WriteOptions::dotted_names_as_structs); the reader also takes data page v2 and the DELTA_* and
// BYTE_STREAM_SPLIT encodings.
// Every function is safe to call from several threads on different files; the reader parallelises itself.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "feedline/io/table.h"

namespace feedline::parquet {

// kLz4 is Parquet's deprecated LZ4 codec: read (Hadoop's framing, or a bare LZ4 block), never written.
enum class Codec { kUncompressed, kSnappy, kGzip, kZstd, kLz4Raw, kLz4, kBrotli };

const char* to_string(Codec codec);
// Parses "uncompressed", "snappy", "gzip", "zstd", "lz4_raw" or "brotli" (any case); throws InvalidArgument
// otherwise.
Codec parse_codec(const std::string& name);

// The defaults suit tables of many small-integer columns, such as MNIST's label and 784 INT(8,false) pixel
// columns: a dictionary makes such columns markedly smaller than PLAIN values do, and ZSTD's higher levels save
// little more than level 3 at many times its write time.
struct WriteOptions {
  Codec codec = Codec::kZstd;
  int compression_level = 3;          // for GZIP and ZSTD
  bool dictionary = true;             // RLE_DICTIONARY where it pays, else PLAIN
  int64_t row_group_rows = 1 << 20;   // rows per row group
  int64_t page_bytes = 1 << 20;       // target uncompressed bytes per data page
  bool statistics = true;             // min, max, null_count per column chunk
  int num_threads = 0;                // 0: every core
  std::vector<std::pair<std::string, std::string>> key_value_metadata;
  bool page_checksums = true;         // CRC-32 of each page, checked by readers that check (feedline does)
  // Columns named `prefix.field` (split at the first dot; both parts non-empty) are written as the fields of
  // one optional struct group `prefix`, the layout Hugging Face's image datasets use (`image.bytes` and
  // `image.path` as a column `image` of struct<bytes: binary, path: string>); feedline's reader reads them
  // back by the same dotted names. The columns of one prefix must stand next to each other in the table (the
  // struct's fields keep their order); a name that is both a column and a prefix is refused (InvalidArgument).
  // The struct is present in every row (never a null struct): a field is null or required as its column says
  // (a required field reads back as a nullable column without nulls, its struct being optional).
  // Off: every column is a top-level field, its name dots and all.
  bool dotted_names_as_structs = false;
};

// Writes `table` to `path` (through a temporary file and a rename). Throws InvalidArgument for tables it
// cannot represent, IoError when the disk refuses.
void write_table(const std::string& path, const Table& table, const WriteOptions& options = {});

// Writes a file a table at a time, for data larger than memory: what write_table() writes when the tables are
// its table cut into pieces. Rows are written in row groups of options.row_group_rows (the last one, written
// by close(), may be shorter); rows short of a row group wait in memory, copied, until the next write() or
// close(). Nothing appears at `path` before close() succeeds; a writer destroyed without it (an exception on
// the way) removes its temporary file. Not thread-safe: one thread writes (each row group is encoded on
// options.num_threads threads).
class FileWriter {
 public:
  // Creates the temporary file beside `path`. Throws InvalidArgument (naming the path) for a schema or options
  // that write_table() would refuse, IoError when the file cannot be created.
  FileWriter(std::string path, std::vector<ColumnSchema> schema, WriteOptions options = {});
  ~FileWriter();
  FileWriter(FileWriter&&) noexcept;
  FileWriter& operator=(FileWriter&&) noexcept;

  // Appends the table's rows. Its columns must be the writer's schema, in order: the same names, types,
  // annotations and nullability (InvalidArgument naming the path and the column otherwise, and for values
  // write_table() would refuse; nothing of a refused table is written).
  void write(const Table& table);
  // Writes the rows still waiting, the footer, and renames the file onto `path`. Call it once.
  void close();

  const std::string& path() const;
  const std::vector<ColumnSchema>& schema() const;
  int64_t num_rows() const;  // rows given to write() so far

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct ReadOptions {
  std::vector<std::string> columns;   // empty: every column
  std::vector<int64_t> row_groups;    // empty: every row group
  int num_threads = 0;                // 0: every core
  // The most bytes the read's output (and any one page's decompressed values) may take; more is refused as
  // hostile (a file of a few KB can declare gigabytes). 0: the most of 1 GiB, 1024 x the file's size and a
  // quarter of the machine's memory.
  int64_t max_output_bytes = 0;
  // How many threads decode the pages of one column chunk (of a flat column of fixed-width values,
  // FIXED_LEN_BYTE_ARRAY or compressed PLAIN strings, or a one-level list of fixed-width values), the thread that
  // reads the chunk among them. 0: a chunk of at least 1 MiB (compressed; smaller ones decode faster than threads
  // start) gets its share of num_threads, by its share of the bytes read (a string column's chunks: every thread,
  // where the column holds more than one thread's share), and smaller ones one. N > 0: every such chunk N,
  // whatever num_threads is (tests reach that path with small files so).
  int page_threads = 0;
};

// Reads the chosen columns (every column when none are chosen), in the order asked for, of the chosen row
// groups, in the order asked for, into memory. Only the footer and those column chunks are read from disk.
// Throws InvalidFile naming the file, column, row group and page offset for anything malformed (including a
// page CRC mismatch), Unsupported for valid features outside the list above (naming the column and the
// feature: encryption, column data in another file, a VARIANT inside a list, a LIST or MAP group of a shape the
// spec does not give),
// InvalidArgument for an unknown or repeated column or row group. Output larger than options.max_output_bytes is
// refused as hostile.
Table read_table(const std::string& path, const ReadOptions& options = {});

// What a file holds, from its footer alone.
struct ColumnChunkInfo {
  std::string codec;
  std::vector<std::string> encodings;
  int64_t compressed_bytes = 0;
  int64_t uncompressed_bytes = 0;
  // Where its pages begin in the file (the dictionary page where one comes first); with compressed_bytes, the byte
  // range a read of the chunk fetches. -1: the footer gives no metadata for it.
  int64_t offset = -1;
  int64_t null_count = -1;  // -1: not recorded
  std::string min, max;      // statistics as raw PLAIN bytes; empty when absent
};
// A statistic (ColumnChunkInfo::min or max) of a fixed-size type from its PLAIN bytes: T is int32_t for INT32
// (an unsigned one keeps its bits), int64_t for INT64, float or double. nullopt when it is absent or not T's size.
template <class T>
std::optional<T> plain_statistic(const std::string& raw) {
  if (raw.size() != sizeof(T)) return std::nullopt;
  T v;
  std::memcpy(&v, raw.data(), sizeof v);
  return v;
}

struct RowGroupInfo {
  int64_t num_rows = 0;
  std::vector<ColumnChunkInfo> columns;
};
struct FileInfo {
  int64_t num_rows = 0;
  std::vector<ColumnSchema> schema;          // the columns read_table can read
  std::vector<RowGroupInfo> row_groups;      // their chunks, in schema order
  // Leaves of fields read_table cannot read (by dotted path), each with the reason.
  std::vector<std::pair<std::string, std::string>> unsupported_columns;
  // Columns whose annotation feedline does not know (a logical type of a newer format, a converted type it does
  // not interpret), read by their physical type, each with what was read past.
  std::vector<std::pair<std::string, std::string>> notes;
  std::vector<std::pair<std::string, std::string>> key_value_metadata;
  std::string created_by;
};
// Throws as read_table does for a malformed footer or an encrypted file.
FileInfo read_file_info(const std::string& path);

// One Parquet file, opened and its footer parsed and checked once, for any number of reads: read_table and
// read_file_info parse the footer at every call, and the footer of a file of hundreds of columns in many row
// groups is megabytes of Thrift, which can take longer to parse than one row group takes to decode (a streamed
// dataset reads one at a time; see BM_RowGroup_* in bench/decode_bench.cpp). It keeps the file open, so it reads
// the file it opened even after that path is replaced or deleted.
// Thread-safe: read() and info() may be called from several threads at once (the file is read with pread, and
// reads leave the parsed footer as it is). Movable; a moved-from FileReader may only be destroyed or assigned.
class FileReader {
 public:
  // Throws IoError when the file cannot be opened, and as read_file_info does for a malformed footer or an
  // encrypted file.
  explicit FileReader(const std::string& path);
  ~FileReader();
  FileReader(FileReader&&) noexcept;
  FileReader& operator=(FileReader&&) noexcept;
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;

  const std::string& path() const;
  // What read_file_info(path()) returns; made on first use.
  const FileInfo& info() const;
  // What read_table(path(), options) returns, and throws what it throws for the file opened.
  Table read(const ReadOptions& options = {}) const;
  // For a remote file: starts fetching, in the background, the column chunks that read(options) would read (the
  // columns and row groups it names), so that the read later takes them without a request of its own. Nothing for
  // a local file. Throws as read() does for options it would refuse.
  void prefetch(const ReadOptions& options = {}) const;
  // Whether the file is remote (feedline/io/remote.h).
  bool is_remote() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace feedline::parquet
