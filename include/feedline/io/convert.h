// Changing a table's layout before it is written: integer columns narrowed to the smallest INT annotation that
// holds their values (how feedline's own MNIST files store pixels as bytes), and many numeric columns packed into
// one row-major column of byte strings or lists (one image or feature vector a row, which compresses better and
// decodes with one copy). The functions on tables are pure functions on values: safe from any thread.
// convert_file() is `feedline convert`: a CSV or Parquet file (or a dataset of Parquet files) rewritten as CSV or
// Parquet a block at a time, those changes made on the way; calls on different files may run on any threads at
// once, and its progress callback runs on the calling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "feedline/io/parquet.h"
#include "feedline/io/table.h"

namespace feedline {

// Whether narrow_integer_columns() and IntegerRanges range a column's values: INT32 or INT64 with no logical type
// but INT (for a list column, its elements').
bool is_narrowable_integer(const ColumnSchema& schema);

// The narrowest type that holds every non-null value of an integer column (INT32 or INT64 with no logical type
// but INT; for a list column, of its elements): INT(8), INT(16) or INT(32) stored as INT32, unsigned when no
// value is negative, signed otherwise, else INT64 (unsigned INT(64) when a value needs it). A column with no
// non-null value keeps its type. Values are unchanged; other columns are untouched.
void narrow_integer_columns(Table& table);

// narrow_integer_columns() for a table read a block at a time: add() every block, then cast each block (read
// again) to narrowed() with cast_integer_columns().
class IntegerRanges {
 public:
  // Widens each integer column's range by the block's non-null values. The first block fixes the columns; a
  // later one of other names or types is refused (InvalidArgument).
  void add(const Table& block);
  // Each column's schema as narrow_integer_columns() would make it for the blocks added so far, as one table.
  std::vector<ColumnSchema> narrowed() const;

 private:
  std::vector<ColumnSchema> schema_;
  std::vector<std::optional<std::pair<__int128, __int128>>> ranges_;  // empty: no non-null integer seen
};

// Stores each integer column whose type in `schema` (one entry a column, as IntegerRanges::narrowed() gives)
// is a narrower INT(8/16/32) as that type; other columns are untouched. Throws InvalidArgument naming the column
// and row (counted from `first_row`) for a value the narrower type cannot hold.
void cast_integer_columns(Table& table, const std::vector<ColumnSchema>& schema, int64_t first_row = 0);

enum class PackAs {
  // FIXED_LEN_BYTE_ARRAY(n): one byte a column, so every value must be an integer in 0..255.
  kBytes,
  // A list of n numbers a row. Its element type is the columns' type when they share one, else INT64 when all
  // are integers, else DOUBLE (every INT32 and FLOAT converts exactly; an INT64 beyond 2^53 is refused).
  kList,
};

// Packs the columns that match `patterns` (see match_columns(): exact names or `*`/`?` globs, in table order)
// into one required column called `name`, placed where the first of them was: row r holds their values in table
// order. The columns must be non-list numbers without a logical type (INT annotations allowed) and hold no null;
// InvalidArgument names the column (and row) that breaks a rule, or `name` when another column left in the table
// has it.
// Rows in messages are counted from `first_row`: the table's place in its file when it is one block of it.
void pack_columns(Table& table, const std::string& name, const std::vector<std::string>& patterns, PackAs as,
                  int64_t first_row = 0);

// ---------------------------------------------------------------------------------------------------------------
// Converting a file

// One pack_columns() of a conversion: the columns matching `patterns` become one column called `name`.
struct PackSpec {
  std::string name;
  std::vector<std::string> patterns;
};

// Where convert_file() stands, as it goes: kOpening once (input_bytes known, nothing read yet); kRanges for each
// block of a pass over the input that finds the integer columns' ranges (narrow_ints without the ranges at hand);
// kReady once (rows_total known, the ranges found); kWriting for each block written; kRestarting when a value lies
// outside the footer's statistics the ranges came from (`note` names it): what was written is dropped, and a pass
// for the ranges and the writing follow again.
enum class ConvertStage { kOpening, kRanges, kReady, kWriting, kRestarting };

struct ConvertProgress {
  ConvertStage stage = ConvertStage::kOpening;
  int64_t rows_done = 0;    // kRanges, kWriting: rows of the input passed so far
  int64_t rows_total = 0;   // from kRanges on: the rows the output will hold (at most `limit`)
  int64_t input_bytes = 0;  // the input's bytes (every file of a dataset)
  std::string note;         // kRestarting: the value the statistics do not hold, with its column and row
};

struct ConvertOptions {
  std::vector<std::string> columns;  // only these columns, in file order (names or globs); empty: every column
  int64_t limit = 0;                 // only the first N rows; 0: all
  std::vector<PackSpec> packs;       // applied in order, to every block
  PackAs pack_as = PackAs::kBytes;
  bool narrow_ints = false;          // narrow_integer_columns() over the whole input
  // Parquet output: codec, level (unset: the writer's default; zstd 1..22, gzip 0..9, brotli 0..11, no other codec
  // takes one), dictionary pages, rows per row group (0: up to 2^20, fewer to keep one near 256 MB in memory).
  parquet::Codec codec = parquet::Codec::kZstd;
  std::optional<int> level;
  bool dictionary = true;
  int64_t row_group_rows = 0;
  int num_threads = 0;  // 0: every core
  std::function<void(const ConvertProgress&)> progress;  // may be empty
};

// What convert_file() did.
struct ConvertResult {
  int64_t rows = 0;
  std::vector<ColumnSchema> schema;  // the output's columns
  int64_t input_bytes = 0, output_bytes = 0;
  // Each pack's column and the input columns that went into it, in the order of `packs`.
  std::vector<std::pair<std::string, std::vector<std::string>>> packed;
  std::vector<std::string> narrowed;  // the columns narrow_ints stored in a narrower type, in output order
};

// Writes the input (`.csv` or `.parquet`, or Parquet files read as one table, see parquet::is_dataset_spec()) to
// `output` (`.csv` or `.parquet`, by its extension) through a temporary file and a rename, with the columns,
// limit, packs and narrowing of `options`. Reads a block at a time, so a file larger than memory converts: a
// Parquet row group, about 64 MB of CSV text (a CSV file of up to 256 MB whole). With narrow_ints the ranges come
// from the CSV reader's typing pass or a Parquet file's footer statistics, else from a pass of their own. Checks
// the output's path and the options before reading anything (InvalidArgument naming what is wrong); errors in
// the input name it, rows counted from its first.
ConvertResult convert_file(const std::string& input, const std::string& output, const ConvertOptions& options = {});

}  // namespace feedline
