#include "io/block_input.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "feedline/io/columns.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"

namespace feedline {
namespace {

// A column of extremes rows (see BlockInput::extremes()), one a value of `values`: for an integer column the value
// where `present` says so and a null elsewhere (for a list column of integers, a list of that one value, or an
// empty list); for any other column zeros, empty values or empty lists.
Column extremes_column(const ColumnSchema& schema, const std::vector<int64_t>& values,
                       const std::vector<uint8_t>& present) {
  Column c = make_column(schema);
  const bool integer = is_narrowable_integer(schema);
  const int64_t rows = static_cast<int64_t>(values.size());
  if (schema.is_list) {
    for (int64_t r = 0; r < rows; ++r) c.list_offsets.push_back(c.list_offsets.back() + (integer && present[r]));
    for (ListLevel& level : c.inner_lists) level.offsets.assign(1, 0);  // no inner list
  }
  const int64_t slots = schema.is_list ? c.list_offsets.back() : rows;
  std::visit(
      [&](auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, ByteArrays>) {
          const std::string zero(static_cast<size_t>(std::max(schema.type_length, 0)), '\0');
          for (int64_t i = 0; i < slots; ++i) v.push_back(zero);
        } else if constexpr (std::is_same_v<typename V::value_type, int32_t> ||
                             std::is_same_v<typename V::value_type, int64_t>) {
          if (!integer) v.assign(static_cast<size_t>(slots), 0);
          for (int64_t r = 0; integer && r < rows; ++r) {
            if (!schema.is_list || present[r]) v.push_back(static_cast<typename V::value_type>(values[r]));
          }
        } else {
          v.assign(static_cast<size_t>(slots), {});
        }
      },
      c.values);
  if (!schema.is_list && std::count(present.begin(), present.end(), 0) > 0) c.validity = present;
  return c;
}

}  // namespace

BlockInput::BlockInput(std::string input, const ConvertOptions& options)
    : input_(std::move(input)), options_(options) {
  if (parquet::is_dataset_spec(input_) || input_format(input_) == FileFormat::kParquet) {
    parquet_.emplace(input_, options.num_threads);  // the footers, parsed once for every block
    names_ = chosen_columns(parquet_->schema());
    for (const parquet::DatasetReader::RowGroup& rg : parquet_->row_groups()) total_ += rg.num_rows;
    if (options.limit > 0) total_ = std::min(total_, options.limit);
  } else {
    CsvStreamOptions csv;
    csv.num_threads = options.num_threads;
    if (!options.columns.empty()) csv.columns = chosen_columns(file_schema(input_));  // the header's names
    csv.text_columns = true;
    csv.limit = options.limit;
    // A file of up to 256 MB is one block, parsed once, its values (about 3x its text) held whole; a larger one
    // goes in blocks of 64 MB, each parsed twice (the first pass types the columns and finds their ranges).
    const int64_t size = file_size(input_);
    if (size <= kWholeCsvBytes) csv.block_bytes = std::max(size, kDefaultCsvBlockBytes);
    csv_.emplace(input_, csv);
    total_ = csv_->num_rows();
  }
}

bool BlockInput::next(Table* block) {
  if (started_ && given_ >= total_) return false;
  if (csv_) {
    if (!csv_->next(block)) {
      if (started_) return false;
      *block = Table();  // a header alone: its columns, no rows
      for (const ColumnSchema& s : csv_->schema()) block->columns.push_back(make_column(s));
    }
  } else {
    // Row groups of no rows are skipped, but for the first block: a file's columns come with it.
    const auto& groups = parquet_->row_groups();
    while (started_ && group_ < groups.size() && groups[group_].num_rows == 0) ++group_;
    if (started_ && group_ >= groups.size()) return false;
    parquet::ReadOptions options;
    options.columns = names_;
    options.num_threads = options_.num_threads;
    // None for a file of no row group: its columns and no rows.
    size_t file = 0;
    if (group_ < groups.size()) {
      file = groups[group_].file;
      options.row_groups.push_back(groups[group_++].row_group);
    }
    *block = parquet_->read_file(file, options);
  }
  started_ = true;
  if (block->num_rows > total_ - given_) *block = head(*block, total_ - given_);
  last_ = block->num_rows;
  given_ += last_;
  return true;
}

std::optional<Table> BlockInput::extremes() const {
  if (parquet_) return parquet_extremes();
  if (total_ == 0) return std::nullopt;
  Table t;
  t.num_rows = 2;
  const std::vector<ColumnSchema>& schema = csv_->schema();
  for (size_t k = 0; k < schema.size(); ++k) {
    const bool integer = is_narrowable_integer(schema[k]);
    const auto range = integer ? csv_->int_range(k) : std::nullopt;
    if (integer && !range && !schema[k].nullable) return std::nullopt;
    t.columns.push_back(extremes_column(schema[k], range ? std::vector<int64_t>{range->first, range->second}
                                                         : std::vector<int64_t>{0, 0},
                                        std::vector<uint8_t>(2, !integer || range)));
  }
  return t;
}

// The footer's statistics of each row group as two rows, its minima and maxima (see extremes()). A chunk of no
// minimum and maximum is all nulls when its null count says so (two null rows; for a list column, two empty
// lists), and otherwise unknown. Integer lists of lists are not handled (their element ranges would need rows of
// lists of lists). A dataset of several files, or with Hive columns, takes a pass.
std::optional<Table> BlockInput::parquet_extremes() const {
  if (parquet_->num_files() != 1 || !parquet_->files().partition_columns.empty()) return std::nullopt;
  const std::shared_ptr<const parquet::FileReader> file = parquet_->open_file(0);
  const parquet::FileInfo& info = file->info();
  if (total_ < info.num_rows || info.row_groups.empty()) return std::nullopt;
  std::vector<size_t> chosen;  // the read's columns, as indices into info.schema
  for (size_t k = 0; names_.empty() && k < info.schema.size(); ++k) chosen.push_back(k);
  for (const std::string& name : names_) {
    const auto it = std::find_if(info.schema.begin(), info.schema.end(),
                                 [&](const ColumnSchema& s) { return s.name == name; });
    if (it == info.schema.end()) return std::nullopt;
    chosen.push_back(static_cast<size_t>(it - info.schema.begin()));
  }
  const int64_t rows = 2 * static_cast<int64_t>(info.row_groups.size());
  Table t;
  t.num_rows = rows;
  for (const size_t k : chosen) {
    const ColumnSchema& schema = info.schema[k];
    const bool integer = is_narrowable_integer(schema);
    if (integer && schema.list_depth() > 1) return std::nullopt;
    std::vector<uint8_t> present(static_cast<size_t>(rows), 1);
    std::vector<int64_t> values(static_cast<size_t>(rows), 0);
    // An INT32 statistic as the column holds it (an unsigned one keeps its bits), or an INT64 one.
    auto statistic = [&](const std::string& raw) -> std::optional<int64_t> {
      if (schema.type == PhysicalType::kInt32) return parquet::plain_statistic<int32_t>(raw);
      return parquet::plain_statistic<int64_t>(raw);
    };
    for (size_t g = 0; integer && g < info.row_groups.size(); ++g) {
      const parquet::ColumnChunkInfo& chunk = info.row_groups[g].columns[k];
      const std::optional<int64_t> min = statistic(chunk.min), max = statistic(chunk.max);
      if (min && max) {
        values[2 * g] = *min;
        values[2 * g + 1] = *max;
      } else if (schema.nullable && !schema.is_list && chunk.null_count == info.row_groups[g].num_rows) {
        present[2 * g] = present[2 * g + 1] = 0;
      } else {
        return std::nullopt;
      }
    }
    t.columns.push_back(extremes_column(schema, values, present));
  }
  return t;
}

void BlockInput::rewind() {
  if (csv_) csv_->rewind();
  group_ = 0;
  given_ = last_ = 0;
  started_ = false;
}

std::vector<std::string> BlockInput::chosen_columns(const std::vector<ColumnSchema>& schema) const {
  if (options_.columns.empty()) return {};
  try {
    return match_columns(schema, options_.columns);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(input_ + ": " + e.what());
  }
}

}  // namespace feedline
