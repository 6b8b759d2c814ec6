#include "cli/convert.h"

#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "feedline/columns.h"
#include "feedline/convert.h"
#include "feedline/csv.h"
#include "feedline/error.h"
#include "feedline/file.h"
#include "feedline/parquet.h"
#include "feedline/table.h"

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

Table read_input(const ConvertArgs& args) {
  std::vector<std::string> names;
  if (!args.columns.empty()) {
    const std::vector<ColumnSchema> schema = file_schema(args.input);
    try {
      names = match_columns(schema, args.columns);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(args.input + ": " + e.what());
    }
  }
  return read_file_columns(args.input, names, args.threads, {}, /*csv_text_columns=*/true);
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

  fmt::print("Reading {}\n", args.input);
  std::fflush(stdout);
  auto t = Clock::now();
  Table table = read_input(args);
  fmt::print("Read {}, {} ({:.1f} MB) in {:.2f}s\n", counted(table.num_rows, "row"),
             counted(static_cast<int64_t>(table.columns.size()), "column"),
             static_cast<double>(file_size(args.input)) / 1e6, seconds_since(t));
  if (args.limit > 0 && args.limit < table.num_rows) {
    table = head(table, args.limit);
    fmt::print("Kept the first {} rows\n", table.num_rows);
  }

  try {
    for (const auto& [name, patterns] : packs) {
      std::vector<ColumnSchema> schema;
      for (const Column& c : table.columns) schema.push_back(c.schema);
      const std::vector<std::string> sources = match_columns(schema, patterns);
      pack_columns(table, name, patterns, args.pack_as == "list" ? PackAs::kList : PackAs::kBytes);
      fmt::print("Packed {} into '{}' ({})\n", span_of(sources), name, type_name(table.column(name).schema));
    }
    if (args.narrow_ints) {
      std::map<std::string, int> narrowed;  // new type -> columns
      for (const Column& c : table.columns) {
        const ColumnSchema s = narrowest_integer_schema(c);
        if (s.type != c.schema.type || !(s.int_annotation == c.schema.int_annotation)) ++narrowed[type_name(s)];
      }
      narrow_integer_columns(table);
      if (narrowed.empty()) fmt::print("Narrowed no column (no integer column's values fit a narrower type)\n");
      for (const auto& [type, count] : narrowed) {
        fmt::print("Narrowed {} to {}\n", counted(count, "integer column"), type);
      }
    }
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(args.input + ": " + e.what());
  }

  t = Clock::now();
  if (file_format(args.output) == FileFormat::kParquet) {
    parquet::WriteOptions options;
    options.codec = parquet::parse_codec(args.codec);
    if (args.level_given) options.compression_level = args.level;
    options.dictionary = args.dictionary;
    options.row_group_rows = args.row_group_rows;
    options.num_threads = args.threads;
    parquet::write_table(args.output, table, options);
  } else {
    write_csv(args.output, table);
  }
  const int64_t in_bytes = file_size(args.input), out_bytes = file_size(args.output);
  fmt::print("Wrote {}: {}, {}, {:.1f} MB ({:.2f}x the input's size) in {:.2f}s\n", args.output,
             counted(table.num_rows, "row"), counted(static_cast<int64_t>(table.columns.size()), "column"),
             static_cast<double>(out_bytes) / 1e6,
             static_cast<double>(out_bytes) / static_cast<double>(std::max<int64_t>(in_bytes, 1)), seconds_since(t));
  return 0;
}

}  // namespace feedline::cli
