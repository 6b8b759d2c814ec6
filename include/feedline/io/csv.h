// CSV files as pandas writes and reads them: a header row of column names, then one row per record, fields quoted
// as RFC 4180 has it (a quoted field may hold commas, line ends and doubled quotes). Integers become INT64 columns,
// anything with a fraction or exponent DOUBLE, and, when asked for, any other text a STRING column; an empty field
// is null.
// read_csv, read_csv_header and write_csv are safe from any thread on different files (read_csv parses on up to
// num_threads threads of feedline::parallel_for); a CsvStreamReader or CsvWriter is used by one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "feedline/io/table.h"

namespace feedline {

// Writes `table` as CSV (header, '\n' line ends, integers as integers, floats in shortest round-trip form with
// ".0" where that has no point or exponent, so that they read back as DOUBLE; nulls empty) through a temporary
// file and a rename. Returns the bytes written. BYTE_ARRAY values are written as they are (quoted when they hold
// a comma, quote or line end, or are empty, so that an empty string differs from a null; many writers leave
// strings unannotated); names in the header are quoted the same way (and a first one that starts with a byte
// order mark, which readers would drop); FIXED_LEN_BYTE_ARRAY values, which are binary, as lowercase hex (two
// digits a byte, as DuckDB's hex()), but UUIDs in their canonical 8-4-4-4-12 form; a list column's cells as their
// JSON arrays (which read back as text). In a table of one column a null is written `""`, since an empty line is
// no record: it reads back as a null number, but as an empty string in a text column. A table read_csv() made is
// read back the same by it, types, nulls and values (but for that case). A table of no columns is refused.
int64_t write_csv(const std::string& path, const Table& table);

struct CsvReadOptions {
  int num_threads = 0;               // 0: every core
  std::vector<std::string> columns;  // empty: every column; else only these, in this order
  // A column with a field that is not a number becomes a STRING column of its fields as written (unquoted;
  // "" is the empty string, an empty field null) instead of an error. Read in a second pass over those columns.
  bool text_columns = false;
};

// Reads a CSV file. Throws InvalidFile naming the path, line and column for a ragged row, a quoted field that is
// never closed or (unless text_columns) a value that is not a number, IoError when the file cannot be read,
// InvalidArgument naming the path and the
// column for a name in `options.columns` that the header lacks or that is asked for twice. Columns not asked
// for are split over but never parsed or stored, so they may hold anything.
Table read_csv(const std::string& path, const CsvReadOptions& options = {});

// The column names in the header row of a CSV file (read without the rest of the file). Throws as read_csv.
std::vector<std::string> read_csv_header(const std::string& path);

class AtomicFile;
class RandomAccessFile;

// How much CSV text CsvStreamReader reads and parses at a time, unless told.
constexpr int64_t kDefaultCsvBlockBytes = int64_t{64} << 20;

// read_csv's options, and how a CsvStreamReader cuts the file. A CsvStreamOptions is a CsvReadOptions, so the same
// options can be given to read_csv (for the whole file at once).
struct CsvStreamOptions : CsvReadOptions {
  int64_t block_bytes = kDefaultCsvBlockBytes;  // text read and parsed at a time; a block grows to hold one record
  int64_t limit = 0;                            // > 0: next() gives only the first `limit` records
};

// Reads a CSV file larger than memory, a block of records at a time, typed as read_csv types the whole file.
// The constructor reads the file once, a block at a time, to fix every column's type (read_csv's rules: INT64,
// DOUBLE, or STRING with text_columns; nullable when any field is null), each INT64 column's range, and where the
// blocks begin; next() then reads the file again, one block per call, every block typed as schema() says. The
// blocks of next() joined are read_csv(path, options). With a limit, both passes stop at the limit-th record:
// the blocks are what read_csv gives for the file cut after that record (those records alone decide the types
// and ranges, and nothing past them is read or checked), so taking the first rows of a huge file is quick.
// A file whose records fit in one block is parsed once: the first pass keeps that block's values, and next()
// hands out a copy of them.
// Memory: about two blocks of text and one block's values, and 32 bytes a block to remember where each begins. A
// block grows past block_bytes only to hold one record longer than that (a quote never closed makes the rest of
// the file one record, as it does for read_csv). Each block is parsed on up to num_threads threads of the reader's
// own (one per MiB of text).
// Throws as read_csv does, with the same messages and line numbers, from the constructor; next() throws IoError
// naming the path when the file changed between the passes (its size, or the records or types of a block it reads
// again differ), or
// read_csv's error should the changed text no longer parse. Not thread-safe: one thread calls a reader.
class CsvStreamReader {
 public:
  explicit CsvStreamReader(const std::string& path, const CsvStreamOptions& options = {});
  ~CsvStreamReader();
  CsvStreamReader(CsvStreamReader&&) noexcept;
  CsvStreamReader& operator=(CsvStreamReader&&) noexcept;

  // What read_csv(path, options) would give: the columns asked for, in their order.
  const std::vector<ColumnSchema>& schema() const { return schema_; }
  // Rows that next() gives in all: the file's records, or `limit` when that is fewer.
  int64_t num_rows() const { return num_rows_; }
  // For an INT64 column (an index into schema()), the least and greatest of its non-null values in the rows next()
  // gives (the whole file, or its first `limit` records); empty for a column of another type or with no value.
  // Throws InvalidArgument for an index out of range.
  std::optional<std::pair<int64_t, int64_t>> int_range(size_t column) const;
  // Reads the next block of records into `out` (at least one record, typed as schema(); a column's validity is
  // empty when the block holds no null in it). Returns false, leaving `out` alone, when every row was given.
  bool next(Table* out);
  // Goes back to the first block: next() reads the file again (the constructor's pass is not repeated).
  void rewind() {
    next_block_ = 0;
    rows_given_ = 0;
  }

 private:
  struct Block {
    int64_t offset, size;  // bytes of whole records in the file
    int64_t rows;          // records in them
    int64_t first_line;    // the file line the block starts on
  };
  void scan();

  std::string path_;
  CsvStreamOptions options_;
  std::unique_ptr<RandomAccessFile> file_;
  int64_t file_size_ = 0;
  std::vector<std::string> names_;  // the header's
  std::vector<int> slots_;          // for each header field, its index in schema_ (-1: not asked for)
  std::vector<ColumnSchema> schema_;
  std::vector<std::optional<std::pair<int64_t, int64_t>>> ranges_;
  std::vector<Block> blocks_;       // those holding at least one record
  size_t next_block_ = 0;
  int64_t num_rows_ = 0;
  int64_t rows_given_ = 0;
  std::string text_;  // the block being parsed
  // When the records read fit in one block: its values from the first pass, which next() hands out as a copy.
  std::unique_ptr<Table> whole_;
};

// Writes a CSV file a table at a time, exactly as write_csv writes their rows as one table: the header when made,
// each table's rows on write(), and the file in place only on close() (written to a temporary file beside it and
// renamed), so a writer destroyed without close() leaves nothing at `path`. Not thread-safe.
class CsvWriter {
 public:
  // Writes the header. Throws InvalidArgument for no column, IoError when the file cannot be made. A list column's
  // cells are their JSON arrays, as `feedline cat` prints them ([1,2,null], [["a"],[]]), quoted as CSV needs.
  CsvWriter(std::string path, std::vector<ColumnSchema> schema);
  ~CsvWriter();
  CsvWriter(CsvWriter&&) noexcept;
  CsvWriter& operator=(CsvWriter&&) noexcept;

  // Appends the table's rows. Its columns must be the schema's, in order: the same names, physical types, list
  // depths and integer annotations (which choose how values are written), else InvalidArgument naming the path and column.
  // Nullability is not checked: a null is an empty field.
  void write(const Table& table);
  // Writes what is buffered and renames the file onto `path`. Returns the bytes written. Throws IoError when the
  // write or the rename fails (nothing is left at `path` then), InvalidArgument when already closed.
  int64_t close();

  const std::vector<ColumnSchema>& schema() const { return schema_; }

 private:
  std::string path_;
  std::vector<ColumnSchema> schema_;
  std::unique_ptr<AtomicFile> file_;  // null once closed
  std::string buf_;
};

}  // namespace feedline
