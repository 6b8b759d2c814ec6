// Changing a table's layout before it is written: integer columns narrowed to the smallest INT annotation that
// holds their values (how feedline's own MNIST files store pixels as bytes), and many numeric columns packed into
// one row-major column of byte strings or lists (one image or feature vector a row, which compresses better and
// decodes with one copy). What `feedline convert` does to a CSV or Parquet file. Pure functions on values: safe
// from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

}  // namespace feedline
