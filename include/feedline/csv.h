// CSV files as pandas writes and reads them: a header row of column names, then one row per record, fields quoted
// as RFC 4180 has it (a quoted field may hold commas, line ends and doubled quotes). Integers become INT64 columns,
// anything with a fraction or exponent DOUBLE, and, when asked for, any other text a STRING column; an empty field
// is null.
#pragma once

#include <string>
#include <vector>

#include "feedline/table.h"

namespace feedline {

// Writes `table` as CSV (header, '\n' line ends, integers as integers, floats in shortest round-trip form,
// nulls empty) through a temporary file and a rename. Returns the bytes written. BYTE_ARRAY values are written
// as they are (quoted when they hold a comma, quote or line end, or are empty, so that an empty string differs
// from a null; many writers leave strings unannotated); names in the header are quoted the same way;
// FIXED_LEN_BYTE_ARRAY values, which are binary, as lowercase hex (two digits a byte, as DuckDB's hex()).
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

}  // namespace feedline
