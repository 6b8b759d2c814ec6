// convert_file(): a conversion a block at a time, from BlockInput to a Parquet or CSV writer.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "io/block_input.h"

#include "feedline/io/columns.h"
#include "feedline/io/convert.h"
#include "feedline/io/csv.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "feedline/io/parquet_dataset.h"
#include "feedline/io/table.h"

namespace feedline {
namespace {

// The levels every build of the libraries takes (zstd also has negative "fast" levels; they are left out), or
// none for a codec without levels.
std::optional<std::pair<int, int>> compression_levels(parquet::Codec codec) {
  switch (codec) {
    case parquet::Codec::kZstd: return std::pair{1, 22};
    case parquet::Codec::kGzip: return std::pair{0, 9};
    case parquet::Codec::kBrotli: return std::pair{0, 11};
    default: return std::nullopt;
  }
}

// Refuses, before the input is read, an output whose format is unknown or whose folder is missing, and options
// that cannot apply. Messages name the options as `feedline convert`'s flags.
void check_output(const std::string& output, const ConvertOptions& options) {
  const FileFormat format = file_format(output);
  const std::filesystem::path out(output);
  std::error_code ec;
  if (std::filesystem::is_directory(out, ec)) throw InvalidArgument(output + ": is a folder, not a file");
  if (out.has_parent_path() && !std::filesystem::is_directory(out.parent_path(), ec)) {
    throw InvalidArgument(output + ": the folder " + out.parent_path().string() + " does not exist");
  }
  if (options.level) {
    const std::string codec = parquet::to_string(options.codec);
    if (format != FileFormat::kParquet) throw OptionError("level", "applies to Parquet output");
    const auto levels = compression_levels(options.codec);
    if (!levels) throw OptionError("level", "applies to zstd, gzip and brotli, not " + codec);
    if (*options.level < levels->first || *options.level > levels->second) {
      throw OptionError("level", std::to_string(*options.level) + ": " + codec + "'s levels are " +
                            std::to_string(levels->first) + " to " + std::to_string(levels->second));
    }
  }
  if (options.limit < 0) throw OptionError("limit", std::to_string(options.limit) + ": use 0 or more");
  if (options.row_group_rows < 0) {
    throw OptionError("row_group_rows", std::to_string(options.row_group_rows) + ": use 0 or more");
  }
  if (options.num_threads < 0) {
    throw OptionError("num_threads", std::to_string(options.num_threads) + ": use 1 or more, or 0 for every core");
  }
  for (const PackSpec& spec : options.packs) {
    if (spec.name.empty() || spec.patterns.empty()) {
      throw OptionError("packs", "'" + spec.name + "': a pack needs a name and at least one pattern");
    }
  }
}

// Rows per row group when options.row_group_rows leaves it to us: up to 2^20, fewer when a row group of the first
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

std::vector<ColumnSchema> schema_of(const Table& table) {
  std::vector<ColumnSchema> schema;
  for (const Column& c : table.columns) schema.push_back(c.schema);
  return schema;
}

// One conversion: each block packed, then (with the narrowed types of the whole input) narrowed, then written.
class StreamConverter {
 public:
  StreamConverter(const std::string& input, const std::string& output, const ConvertOptions& options,
                  int64_t input_bytes)
      : input_(input), output_(output), options_(options), input_bytes_(input_bytes),
        to_parquet_(file_format(output) == FileFormat::kParquet), blocks_(input, options) {}

  ConvertResult run();

 private:
  void report(ConvertStage stage, int64_t rows_done = 0, std::string note = {}) const;
  // Messages name the input; their rows count from its first.
  void pack(Table& block, int64_t first_row) const;
  void narrow(Table& block, int64_t first_row) const;
  void find_ranges();
  std::vector<ColumnSchema> ranges_by_pass();
  bool write_blocks();
  void open_output(const Table& first);
  ConvertResult finish();

  const std::string& input_;
  const std::string& output_;
  const ConvertOptions& options_;
  const int64_t input_bytes_;
  const bool to_parquet_;
  BlockInput blocks_;
  std::optional<std::vector<ColumnSchema>> narrowed_;  // the output's columns when narrowing
  bool from_statistics_ = false;                       // narrowed_ from a Parquet footer's statistics
  std::vector<ColumnSchema> unpacked_, packed_;        // the columns before packing, and before narrowing
  std::optional<parquet::FileWriter> parquet_out_;
  std::optional<CsvWriter> csv_out_;
  int64_t rows_ = 0;
};

void StreamConverter::report(ConvertStage stage, int64_t rows_done, std::string note) const {
  if (!options_.progress) return;
  ConvertProgress p;
  p.stage = stage;
  p.rows_done = rows_done;
  p.rows_total = blocks_.total_rows();
  p.input_bytes = input_bytes_;
  p.note = std::move(note);
  options_.progress(p);
}

void StreamConverter::pack(Table& block, int64_t first_row) const {
  try {
    for (const PackSpec& spec : options_.packs) {
      pack_columns(block, spec.name, spec.patterns, options_.pack_as, first_row);
    }
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(input_ + ": " + e.what());
  }
}

void StreamConverter::narrow(Table& block, int64_t first_row) const {
  try {
    cast_integer_columns(block, *narrowed_, first_row);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(input_ + ": " + e.what());
  }
}

// Narrowing needs every value's range before the first row is written. A CSV reader's first pass found each
// column's, and a Parquet footer's statistics hold each row group's: those extreme rows, packed as every block is,
// give the ranges of the columns written. Otherwise (statistics missing, a limit cutting a Parquet input, or
// extremes that a pack refuses, for the pass to name the row) a pass over the input. Should a value lie outside
// its chunk's statistics (a file that misstates them), the cast refuses it and the conversion starts again from
// a pass (run()).
void StreamConverter::find_ranges() {
  if (std::optional<Table> extremes = blocks_.extremes()) {
    try {
      pack(*extremes, 0);
      IntegerRanges ranges;
      ranges.add(*extremes);
      packed_ = schema_of(*extremes);
      narrowed_ = ranges.narrowed();
      from_statistics_ = blocks_.is_parquet();
    } catch (const InvalidArgument&) {
    }
  }
  if (!narrowed_) narrowed_ = ranges_by_pass();
}

// The narrowed columns from a pass over the input, as packed blocks.
std::vector<ColumnSchema> StreamConverter::ranges_by_pass() {
  IntegerRanges ranges;
  packed_.clear();
  Table block;
  while (blocks_.next(&block)) {
    pack(block, blocks_.first_row());
    if (packed_.empty()) packed_ = schema_of(block);
    ranges.add(block);
    report(ConvertStage::kRanges, blocks_.first_row() + block.num_rows);
  }
  blocks_.rewind();
  return ranges.narrowed();
}

// Writes every block; false when a value lies outside the statistics the narrowed types came from.
bool StreamConverter::write_blocks() {
  Table block;
  while (blocks_.next(&block)) {
    if (unpacked_.empty()) unpacked_ = schema_of(block);
    pack(block, blocks_.first_row());
    if (narrowed_) {
      try {
        narrow(block, blocks_.first_row());
      } catch (const InvalidArgument& e) {
        if (!from_statistics_) throw;
        report(ConvertStage::kRestarting, 0, e.what());
        return false;
      }
    }
    if (!parquet_out_ && !csv_out_) open_output(block);
    if (to_parquet_) {
      parquet_out_->write(block);
    } else {
      csv_out_->write(block);
    }
    rows_ += block.num_rows;
    report(ConvertStage::kWriting, blocks_.first_row() + block.num_rows);
  }
  return true;
}

// The writer, with the columns of the first block as it is written.
void StreamConverter::open_output(const Table& first) {
  if (!to_parquet_) {
    csv_out_.emplace(output_, schema_of(first));
    return;
  }
  parquet::WriteOptions options;
  options.codec = options_.codec;
  if (options_.level) options.compression_level = *options_.level;
  options.dictionary = options_.dictionary;
  options.row_group_rows = options_.row_group_rows > 0 ? options_.row_group_rows : auto_row_group_rows(first);
  options.num_threads = options_.num_threads;
  parquet_out_.emplace(output_, schema_of(first), options);
}

ConvertResult StreamConverter::run() {
  if (options_.narrow_ints) find_ranges();
  report(ConvertStage::kReady);
  if (!write_blocks()) {
    parquet_out_.reset();  // its temporary file is removed: nothing was written at the output's path
    csv_out_.reset();
    unpacked_.clear();
    rows_ = 0;
    blocks_.rewind();
    narrowed_ = ranges_by_pass();
    from_statistics_ = false;
    write_blocks();
  }
  return finish();
}

// Closes the output and says what changed, from the schemas before and after.
ConvertResult StreamConverter::finish() {
  ConvertResult result;
  result.schema = to_parquet_ ? parquet_out_->schema() : csv_out_->schema();
  if (to_parquet_) {
    parquet_out_->close();
  } else {
    csv_out_->close();
  }
  result.rows = rows_;
  result.input_bytes = input_bytes_;
  result.output_bytes = file_size(output_);
  for (const PackSpec& spec : options_.packs) {
    result.packed.emplace_back(spec.name, match_columns(unpacked_, spec.patterns));
  }
  for (size_t k = 0; narrowed_ && k < result.schema.size(); ++k) {
    const ColumnSchema &after = result.schema[k], &before = packed_[k];
    if (after.type != before.type || !(after.int_annotation == before.int_annotation)) {
      result.narrowed.push_back(after.name);
    }
  }
  return result;
}

}  // namespace

ConvertResult convert_file(const std::string& input, const std::string& output, const ConvertOptions& options) {
  check_output(output, options);
  ConvertProgress opening;
  opening.input_bytes = input_bytes(input);
  if (options.progress) options.progress(opening);
  StreamConverter converter(input, output, options, opening.input_bytes);
  return converter.run();
}

}  // namespace feedline
