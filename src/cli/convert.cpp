#include "cli/convert.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "io/progress.h"

#include "feedline/io/columns.h"
#include "feedline/io/convert.h"
#include "feedline/io/csv.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "feedline/io/parquet_dataset.h"
#include "feedline/io/table.h"

namespace feedline::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string type_name(const ColumnSchema& s) {
  std::string name = to_string(s.type);
  if (s.type == PhysicalType::kFixedLenByteArray) name += "(" + std::to_string(s.type_length) + ")";
  if (s.int_annotation) {
    name = fmt::format("INT({},{})", s.int_annotation->bit_width, s.int_annotation->is_signed ? "signed" : "unsigned");
  }
  for (int k = 0; k < s.list_depth(); ++k) name = "list<" + name + ">";
  return name;
}

// "1 row", "2 rows".
std::string counted(int64_t n, const std::string& noun) { return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s"); }

// "NAME=PATTERN[,PATTERN...]" as the name and its patterns.
std::pair<std::string, std::vector<std::string>> parse_pack(const std::string& spec) {
  const size_t eq = spec.find('=');
  std::vector<std::string> patterns;
  if (eq != std::string::npos) {
    size_t start = eq + 1;
    while (start <= spec.size()) {
      const size_t comma = std::min(spec.find(',', start), spec.size());
      if (comma > start) patterns.push_back(spec.substr(start, comma - start));
      start = comma + 1;
    }
  }
  if (eq == std::string::npos || eq == 0 || patterns.empty()) {
    throw InvalidArgument("--pack '" + spec + "': expected NAME=PATTERN[,PATTERN...], for example image=pixel*");
  }
  return {spec.substr(0, eq), patterns};
}

// Refuses, before the input is read, an output whose format is unknown or whose folder is missing.
void check_output(const ConvertArgs& args) {
  file_format(args.output);
  const std::filesystem::path out(args.output);
  std::error_code ec;
  if (std::filesystem::is_directory(out, ec)) throw InvalidArgument(args.output + ": is a folder, not a file");
  if (out.has_parent_path() && !std::filesystem::is_directory(out.parent_path(), ec)) {
    throw InvalidArgument(args.output + ": the folder " + out.parent_path().string() + " does not exist");
  }
  if (args.level_given) {
    const parquet::Codec codec = parquet::parse_codec(args.codec);
    if (file_format(args.output) != FileFormat::kParquet) throw InvalidArgument("--level applies to Parquet output");
    // The ranges every build of the libraries takes (zstd also has negative "fast" levels; they are left out).
    const auto [lo, hi] = codec == parquet::Codec::kZstd   ? std::pair{1, 22}
                          : codec == parquet::Codec::kGzip ? std::pair{0, 9}
                          : codec == parquet::Codec::kBrotli ? std::pair{0, 11}
                                                             : std::pair{0, -1};
    if (hi < 0) throw InvalidArgument("--level applies to zstd, gzip and brotli, not " + args.codec);
    if (args.level < lo || args.level > hi) {
      throw InvalidArgument(fmt::format("--level {}: {}'s levels are {} to {}", args.level, args.codec, lo, hi));
    }
  }
}

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

// The input a block of rows at a time, so that a file larger than memory converts: a Parquet file (or a dataset of
// them, file after file) a row group at a time; a CSV file about 64 MB of text at a time (CsvStreamReader), or
// whole up to 256 MB. The first block may hold no rows (a file of none still has its columns); blocks stop at
// --limit.
class BlockInput {
 public:
  static constexpr int64_t kWholeCsvBytes = int64_t{256} << 20;

  // Opens the input and resolves --columns against its footer or header.
  explicit BlockInput(const ConvertArgs& args) : args_(args) {
    if (parquet::is_dataset_spec(args.input) || input_format(args.input) == FileFormat::kParquet) {
      parquet_.emplace(args.input, args.threads);  // the footers, parsed once for every block
      names_ = chosen_columns(parquet_->schema());
      for (const parquet::DatasetReader::RowGroup& rg : parquet_->row_groups()) total_ += rg.num_rows;
      if (args.limit > 0) total_ = std::min(total_, args.limit);
    } else {
      CsvStreamOptions options;
      options.num_threads = args.threads;
      if (!args.columns.empty()) options.columns = chosen_columns(file_schema(args.input));  // the header's names
      options.text_columns = true;
      options.limit = args.limit;
      // A file of up to 256 MB is one block, parsed once, its values (about 3x its text) held whole; a larger one
      // goes in blocks of 64 MB, each parsed twice (the first pass types the columns and finds their ranges).
      const int64_t size = file_size(args.input);
      if (size <= kWholeCsvBytes) options.block_bytes = std::max(size, kDefaultCsvBlockBytes);
      csv_.emplace(args.input, options);
      total_ = csv_->num_rows();
    }
  }

  bool is_parquet() const { return parquet_.has_value(); }
  // Rows the blocks hold in all (at most --limit).
  int64_t total_rows() const { return total_; }
  // The first row of the block last given, counted from the file's first.
  int64_t first_row() const { return given_ - last_; }

  bool next(Table* block) {
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
      options.num_threads = args_.threads;
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

  // Rows that hold each integer column's least and greatest value in the rows the blocks hold, zeros and empty
  // values in its other columns: what the integer ranges of the whole input need, without another pass. For a
  // CSV input, two rows, from the reader's first pass (nulls for a column of no value); for a Parquet input, two
  // rows a row group, from the footer's statistics. Empty when they cannot tell: a CSV input of no rows, a
  // Parquet input cut by --limit, or a chunk of an integer column without statistics.
  std::optional<Table> extremes() const {
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

  // The footer's statistics of each row group as two rows, its minima and maxima (see extremes()). A chunk of
  // no minimum and maximum is all nulls when its null count says so (two null rows; for a list column, two
  // empty lists), and otherwise unknown. Integer lists of lists are not handled (their element ranges would
  // need rows of lists of lists).
  // A dataset of several files, or with Hive columns, takes a pass.
  std::optional<Table> parquet_extremes() const {
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

  // Back to the first block, for another pass.
  void rewind() {
    if (csv_) csv_->rewind();
    group_ = 0;
    given_ = last_ = 0;
    started_ = false;
  }

 private:
  // The names --columns matches in `schema` (every column when it is not given: none named).
  std::vector<std::string> chosen_columns(const std::vector<ColumnSchema>& schema) const {
    if (args_.columns.empty()) return {};
    try {
      return match_columns(schema, args_.columns);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(args_.input + ": " + e.what());
    }
  }

  const ConvertArgs& args_;
  std::optional<parquet::DatasetReader> parquet_;
  std::vector<std::string> names_;   // Parquet: the columns to read (empty: every one)
  size_t group_ = 0;
  std::optional<CsvStreamReader> csv_;
  int64_t total_ = 0, given_ = 0, last_ = 0;
  bool started_ = false;
};

// Rows per row group when --row-group-rows leaves it to us: up to 2^20, fewer when a row group of the first
// block's rows would take more than about 256 MB of memory (what waits for the writer is one row group).
int64_t auto_row_group_rows(const Table& block) {
  constexpr int64_t kMaxRows = int64_t{1} << 20, kTargetBytes = int64_t{256} << 20;
  if (block.num_rows == 0) return kMaxRows;
  int64_t bytes = 0;
  for (const Column& c : block.columns) {
    bytes += std::visit(
        [](const auto& v) -> int64_t {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, ByteArrays>) {
            return static_cast<int64_t>(v.bytes.size() + v.offsets.size() * sizeof(int64_t));
          } else {
            return static_cast<int64_t>(v.size() * sizeof(typename V::value_type));
          }
        },
        c.values);
    bytes += static_cast<int64_t>(c.validity.size() + c.list_offsets.size() * sizeof(int64_t));
  }
  const int64_t per_row = std::max<int64_t>(1, bytes / block.num_rows);
  return std::clamp<int64_t>(kTargetBytes / per_row, 1, kMaxRows);
}

// The bytes of the input file, or of every file of a dataset of Parquet files.
int64_t input_bytes(const std::string& input) {
  if (!parquet::is_dataset_spec(input)) return file_size(input);
  int64_t bytes = 0;
  for (const std::string& path : parquet::list_dataset_files(input).paths) bytes += file_size(path);
  return bytes;
}

// "pixel1..pixel784 (784 columns)", or the one name.
std::string span_of(const std::vector<std::string>& names) {
  if (names.size() == 1) return names.front();
  return fmt::format("{}..{} ({} columns)", names.front(), names.back(), names.size());
}

}  // namespace

int run_convert(const ConvertArgs& args) {
  check_output(args);
  std::vector<std::pair<std::string, std::vector<std::string>>> packs;
  for (const auto& spec : args.packs) packs.push_back(parse_pack(spec));
  const PackAs pack_as = args.pack_as == "list" ? PackAs::kList : PackAs::kBytes;
  const bool to_parquet = file_format(args.output) == FileFormat::kParquet;

  // A block as it is written: packed, then (with the narrowed types of the whole input) narrowed. Messages name
  // the input; their rows count from its first.
  auto pack = [&](Table& block, int64_t first_row) {
    try {
      for (const auto& [name, patterns] : packs) pack_columns(block, name, patterns, pack_as, first_row);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(args.input + ": " + e.what());
    }
  };
  auto narrow = [&](Table& block, int64_t first_row, const std::vector<ColumnSchema>& narrowed) {
    try {
      cast_integer_columns(block, narrowed, first_row);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(args.input + ": " + e.what());
    }
  };

  const int64_t in_bytes = input_bytes(args.input);
  fmt::print("Reading {} ({:.1f} MB)\n", args.input, static_cast<double>(in_bytes) / 1e6);
  std::fflush(stdout);
  const auto start = Clock::now();
  ProgressBar bar;
  BlockInput input(args);
  std::vector<ColumnSchema> packed;  // the columns before narrowing, for the summary
  // The narrowed columns from a pass over the input, as packed blocks.
  auto ranges_by_pass = [&]() {
    IntegerRanges ranges;
    packed.clear();
    Table block;
    while (input.next(&block)) {
      pack(block, input.first_row());
      if (packed.empty()) {
        for (const Column& c : block.columns) packed.push_back(c.schema);
      }
      ranges.add(block);
      bar.update("Integer ranges", input.first_row() + block.num_rows, input.total_rows());
    }
    bar.clear();
    input.rewind();
    return ranges.narrowed();
  };
  // Narrowing needs every value's range before the first row is written. A CSV reader's first pass found each
  // column's, and a Parquet footer's statistics hold each row group's: those extreme rows, packed as every block
  // is, give the ranges of the columns written. Otherwise (statistics missing, --limit cutting a Parquet input,
  // or extremes that a pack refuses, for the pass to name the row) a pass over the input. Should a value lie
  // outside its chunk's statistics (a file that misstates them), the cast refuses it and the conversion starts
  // again from a pass.
  std::optional<std::vector<ColumnSchema>> narrowed;
  bool from_statistics = false;
  if (args.narrow_ints) {
    if (std::optional<Table> extremes = input.extremes()) {
      try {
        pack(*extremes, 0);
        IntegerRanges ranges;
        ranges.add(*extremes);
        for (const Column& c : extremes->columns) packed.push_back(c.schema);
        narrowed = ranges.narrowed();
        from_statistics = input.is_parquet();
      } catch (const InvalidArgument&) {
      }
    }
    if (!narrowed) narrowed = ranges_by_pass();
  }

  if (args.limit > 0) fmt::print("Keeping the first {}\n", counted(input.total_rows(), "row"));
  std::optional<parquet::FileWriter> parquet_out;
  std::optional<CsvWriter> csv_out;
  std::vector<ColumnSchema> unpacked;
  int64_t rows = 0;
  // Writes every block; false when a value lies outside the statistics the narrowed types came from.
  auto write_blocks = [&]() {
    Table block;
    while (input.next(&block)) {
      if (unpacked.empty()) {
        for (const Column& c : block.columns) unpacked.push_back(c.schema);
      }
      pack(block, input.first_row());
      if (narrowed) {
        try {
          narrow(block, input.first_row(), *narrowed);
        } catch (const InvalidArgument& e) {
          if (!from_statistics) throw;
          bar.clear();
          fmt::print("{}; the footer's statistics do not hold it, so the ranges come from a pass\n", e.what());
          return false;
        }
      }
      if (!parquet_out && !csv_out) {  // the first block: the output's columns
        std::vector<ColumnSchema> schema;
        for (const Column& c : block.columns) schema.push_back(c.schema);
        if (!to_parquet) {
          csv_out.emplace(args.output, std::move(schema));
        } else {
          parquet::WriteOptions options;
          options.codec = parquet::parse_codec(args.codec);
          if (args.level_given) options.compression_level = args.level;
          options.dictionary = args.dictionary;
          options.row_group_rows = args.row_group_rows > 0 ? args.row_group_rows : auto_row_group_rows(block);
          options.num_threads = args.threads;
          parquet_out.emplace(args.output, std::move(schema), options);
        }
      }
      if (to_parquet) {
        parquet_out->write(block);
      } else {
        csv_out->write(block);
      }
      rows += block.num_rows;
      bar.update("Converting", input.first_row() + block.num_rows, input.total_rows());
    }
    bar.clear();
    return true;
  };
  if (!write_blocks()) {
    parquet_out.reset();  // its temporary file is removed: nothing was written at the output's path
    csv_out.reset();
    unpacked.clear();
    rows = 0;
    input.rewind();
    narrowed = ranges_by_pass();
    from_statistics = false;
    write_blocks();
  }

  // What changed, from the schemas before and after.
  const std::vector<ColumnSchema> schema = to_parquet ? parquet_out->schema() : csv_out->schema();
  for (const auto& [name, patterns] : packs) {
    const std::vector<std::string> sources = match_columns(unpacked, patterns);
    const auto it = std::find_if(schema.begin(), schema.end(), [&](const ColumnSchema& s) { return s.name == name; });
    fmt::print("Packed {} into '{}' ({})\n", span_of(sources), name, type_name(*it));
  }
  if (narrowed) {
    std::map<std::string, int> changed;  // new type -> columns
    for (size_t k = 0; k < schema.size(); ++k) {
      const ColumnSchema& before = packed[k];
      if (schema[k].type != before.type || !(schema[k].int_annotation == before.int_annotation)) {
        ++changed[type_name(schema[k])];
      }
    }
    if (changed.empty()) fmt::print("Narrowed no column (no integer column's values fit a narrower type)\n");
    for (const auto& [type, count] : changed) fmt::print("Narrowed {} to {}\n", counted(count, "integer column"), type);
  }

  if (to_parquet) {
    parquet_out->close();
  } else {
    csv_out->close();
  }
  const int64_t out_bytes = file_size(args.output);
  fmt::print("Wrote {}: {}, {}, {:.1f} MB ({:.2f}x the input's size) in {:.2f}s\n", args.output,
             counted(rows, "row"), counted(static_cast<int64_t>(schema.size()), "column"),
             static_cast<double>(out_bytes) / 1e6,
             static_cast<double>(out_bytes) / static_cast<double>(std::max<int64_t>(in_bytes, 1)),
             seconds_since(start));
  return 0;
}

}  // namespace feedline::cli
