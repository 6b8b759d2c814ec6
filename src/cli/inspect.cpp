#include "cli/inspect.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "feedline/io/columns.h"
#include "feedline/io/csv.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "feedline/io/parquet_dataset.h"
#include "feedline/io/table.h"
#include "io/cell_writer.h"
#include "io/inspect.h"
#include "io/value_text.h"

namespace feedline::cli {
namespace {

std::string shorten(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n) + "..."; }

// The physical type as inspect shows it: LIST<INT32> for a list column, LIST<LIST<INT32>> for a list of lists.
std::string type_text(const ColumnSchema& s) {
  std::string text = to_string(s.type);
  for (int k = 0; k < s.list_depth(); ++k) text = "LIST<" + text + ">";
  return text;
}

// "optional", or for a list "optional, required elements"; a list of lists names its inner levels outside in:
// "optional, inner lists optional/required, optional elements".
std::string nullability_text(const ColumnSchema& s) {
  std::string text = s.nullable ? "optional" : "required";
  if (!s.inner_list_nullable.empty()) {
    text += ", inner lists ";
    for (size_t k = 0; k < s.inner_list_nullable.size(); ++k) {
      text += std::string(k ? "/" : "") + (s.inner_list_nullable[k] ? "optional" : "required");
    }
  }
  if (s.is_list) text += s.element_nullable ? ", optional elements" : ", required elements";
  return text;
}

// A CSV file: its size, rows and columns, typed as `train` and `convert` read them (a column of numbers INT64 or
// DOUBLE, any other STRING; nullable when a field is empty).
int inspect_csv(const InspectArgs& args) {
  const Table t = read_file_columns(args.path, {}, 0, {}, /*csv_text_columns=*/true);
  const int64_t bytes = file_size(args.path);
  fmt::print("File: {} ({} bytes)\nFormat: CSV\nRows: {}\n\nSchema ({} columns, typed as `train` reads them):\n",
             args.path, bytes, t.num_rows, t.columns.size());
  size_t name_w = 24;
  for (const auto& c : t.columns) name_w = std::max(name_w, std::min<size_t>(c.schema.name.size(), 48));
  for (const auto& c : t.columns) {
    fmt::print("  {:<{}} {:<20} {:<18} {}\n", c.schema.name, name_w, to_string(c.schema.type),
               c.schema.is_string ? "STRING" : "", c.schema.nullable ? "optional" : "required");
  }
  return 0;
}

// A dataset of Parquet files: the schema they share (and the Hive columns of their paths), then each file's rows
// and row groups; `inspect FILE` shows one file's row groups and statistics.
int inspect_dataset(const InspectArgs& args) {
  const parquet::DatasetReader dataset(args.path);
  if (args.json) {
    fmt::print("{}\n", parquet::dataset_json(dataset));
    return 0;
  }
  const parquet::DatasetFiles& files = dataset.files();
  int64_t bytes = 0;
  for (const std::string& path : files.paths) bytes += file_size(path);
  fmt::print("Dataset: {} ({} file{}, {} bytes)\nRows: {} in {} row group{}\n\nSchema ({} columns", args.path,
             files.paths.size(), files.paths.size() == 1 ? "" : "s", bytes, dataset.num_rows(),
             dataset.row_groups().size(), dataset.row_groups().size() == 1 ? "" : "s", dataset.schema().size());
  const size_t keys = files.partition_columns.size();
  if (keys > 0) fmt::print(", the last {} from the paths' Hive keys", keys);
  fmt::print("):\n");
  size_t name_w = 24, type_w = 20, path_w = 24;
  for (const auto& s : dataset.schema()) {
    name_w = std::max(name_w, std::min<size_t>(s.name.size(), 48));
    type_w = std::max(type_w, std::min<size_t>(type_text(s).size(), 32));
  }
  for (const auto& s : dataset.schema()) {
    fmt::print("  {:<{}} {:<{}} {:<18} {}\n", s.name, name_w, type_text(s), type_w, logical_type_text(s),
               nullability_text(s));
  }
  for (const std::string& path : files.paths) path_w = std::max(path_w, std::min<size_t>(path.size(), 72));
  fmt::print("\nFiles:\n  {:<{}} {:>12} {:>12} {:>10}\n", "file", path_w, "bytes", "rows", "row groups");
  for (size_t i = 0; i < files.paths.size(); ++i) {
    fmt::print("  {:<{}} {:>12} {:>12} {:>10}\n", files.paths[i], path_w, file_size(files.paths[i]),
               dataset.file_rows(i), dataset.file_row_groups(i));
  }
  return 0;
}

}  // namespace

int run_inspect(const InspectArgs& args) {
  if (parquet::is_dataset_spec(args.path)) return inspect_dataset(args);
  if (args.json) {
    fmt::print("{}\n", inspect_json(args.path));
    return 0;
  }
  if (input_format(args.path) == FileFormat::kCsv) return inspect_csv(args);
  const parquet::FileInfo info = parquet::read_file_info(args.path);
  const int64_t bytes = file_size(args.path);
  fmt::print("File: {} ({} bytes)\nCreated by: {}\nRows: {} in {} row group{}\n\nSchema ({} columns):\n", args.path,
             bytes, info.created_by.empty() ? "(not recorded)" : info.created_by, info.num_rows,
             info.row_groups.size(), info.row_groups.size() == 1 ? "" : "s", info.schema.size());
  // Columns as wide as the longest name and type (within bounds): nested fields' dotted paths run long.
  size_t name_w = 24, type_w = 20;
  for (const auto& s : info.schema) {
    name_w = std::max(name_w, std::min<size_t>(s.name.size(), 48));
    type_w = std::max(type_w, std::min<size_t>(type_text(s).size(), 32));
  }
  for (const auto& [name, why] : info.unsupported_columns) name_w = std::max(name_w, std::min<size_t>(name.size(), 48));
  for (const auto& s : info.schema) {
    fmt::print("  {:<{}} {:<{}} {:<18} {}\n", s.name, name_w, type_text(s), type_w, logical_type_text(s),
               nullability_text(s));
  }
  if (!info.unsupported_columns.empty()) {
    fmt::print("\nNot readable ({} leaf columns; `cat` and `train` can read the columns above):\n",
               info.unsupported_columns.size());
    for (const auto& [name, why] : info.unsupported_columns) fmt::print("  {:<{}} {}\n", name, name_w, why);
  }
  if (!info.notes.empty()) {
    fmt::print("\nRead by their physical type ({} column{} whose annotation feedline does not interpret):\n",
               info.notes.size(), info.notes.size() == 1 ? "" : "s");
    for (const auto& [name, note] : info.notes) fmt::print("  {:<{}} {}\n", name, name_w, note);
  }
  for (size_t g = 0; g < info.row_groups.size(); ++g) {
    const auto& rg = info.row_groups[g];
    fmt::print("\nRow group {}: {} rows\n", g, rg.num_rows);
    fmt::print("  {:<{}} {:<12} {:<36} {:>12} {:>12} {:>6}  {}\n", "column", name_w, "codec", "encodings",
               "compressed", "uncompressed", "nulls", "min .. max");
    for (size_t c = 0; c < rg.columns.size(); ++c) {
      const auto& ci = rg.columns[c];
      std::string encodings;
      for (const auto& e : ci.encodings) encodings += (encodings.empty() ? "" : ",") + e;
      const std::string range = ci.min.empty() && ci.max.empty()
                                    ? std::string("-")
                                    : shorten(statistic_text(info.schema[c], ci.min), 24) + " .. " +
                                          shorten(statistic_text(info.schema[c], ci.max), 24);
      fmt::print("  {:<{}} {:<12} {:<36} {:>12} {:>12} {:>6}  {}\n", info.schema[c].name, name_w, ci.codec, encodings,
                 ci.compressed_bytes, ci.uncompressed_bytes, ci.null_count >= 0 ? std::to_string(ci.null_count) : "-",
                 range);
    }
  }
  if (!info.key_value_metadata.empty()) {
    fmt::print("\nKey-value metadata:\n");
    for (const auto& [k, v] : info.key_value_metadata) fmt::print("  {}: {}\n", k, shorten(v, 200));
  }
  return 0;
}

int run_cat(const CatArgs& args) {
  // A Parquet file, a CSV file (its columns typed, text as STRING) or a dataset of Parquet files.
  const Table t = read_file_columns(args.path, args.columns, args.threads, {}, /*csv_text_columns=*/true);
  // Each cell written as it is made: a value of a gigabyte is not copied into a text of its own first.
  const TextFormat format = args.format == "csv" ? TextFormat::kCsv : TextFormat::kJsonLines;
  write_table_text(
      t, format, [](std::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); }, args.limit);
  std::fflush(stdout);
  return 0;
}

}  // namespace feedline::cli
