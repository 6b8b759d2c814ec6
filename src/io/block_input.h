// Internal to convert_file() (stream_convert.cpp): the input of a conversion a block of rows at a time, and the
// rows that give its integer columns' ranges without a pass. Used by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "feedline/io/convert.h"
#include "feedline/io/csv.h"
#include "feedline/io/parquet_dataset.h"
#include "feedline/io/table.h"

namespace feedline {

// The input a block of rows at a time, so that a file larger than memory converts: a Parquet file (or a dataset of
// them, file after file) a row group at a time; a CSV file about 64 MB of text at a time (CsvStreamReader), or
// whole up to 256 MB. The first block may hold no rows (a file of none still has its columns); blocks stop at
// options.limit.
class BlockInput {
 public:
  static constexpr int64_t kWholeCsvBytes = int64_t{256} << 20;

  // Opens the input and resolves options.columns against its footer or header. Keeps a reference to `options`.
  BlockInput(std::string input, const ConvertOptions& options);

  bool is_parquet() const { return parquet_.has_value(); }
  // Rows the blocks hold in all (at most options.limit).
  int64_t total_rows() const { return total_; }
  // The first row of the block last given, counted from the file's first.
  int64_t first_row() const { return given_ - last_; }

  // The next block into *block; false after the last.
  bool next(Table* block);

  // Rows that hold each integer column's least and greatest value in the rows the blocks hold, zeros and empty
  // values in its other columns: what the integer ranges of the whole input need, without another pass. For a
  // CSV input, two rows, from the reader's first pass (nulls for a column of no value); for a Parquet input, two
  // rows a row group, from the footer's statistics. Empty when they cannot tell: a CSV input of no rows, a
  // Parquet input cut by the limit, or a chunk of an integer column without statistics.
  std::optional<Table> extremes() const;

  // Back to the first block, for another pass.
  void rewind();

 private:
  std::optional<Table> parquet_extremes() const;
  // The names options.columns matches in `schema` (every column when it is not given: none named).
  std::vector<std::string> chosen_columns(const std::vector<ColumnSchema>& schema) const;

  std::string input_;
  const ConvertOptions& options_;
  std::optional<parquet::DatasetReader> parquet_;
  std::vector<std::string> names_;  // Parquet: the columns to read (empty: every one)
  size_t group_ = 0;
  std::optional<CsvStreamReader> csv_;
  int64_t total_ = 0, given_ = 0, last_ = 0;
  bool started_ = false;
};

}  // namespace feedline
