#include "feedline/io/columns.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <unordered_set>

#include "feedline/io/csv.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "feedline/io/parquet_dataset.h"

namespace feedline {
namespace {

// `*` and `?` only (fnmatch(3) would also give `[`, `\` and locale rules a meaning, which column names may hold).
// Greedy with one backtrack point: linear in practice, never exponential.
bool glob_match(std::string_view pattern, std::string_view name) {
  size_t p = 0, n = 0;
  size_t star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// "label, pixel1, pixel2, pixel3, pixel4, ... (785 columns)"
std::string some_columns(const std::vector<ColumnSchema>& schema) {
  constexpr size_t kShown = 5;
  if (schema.empty()) return "no columns";
  std::string out;
  for (size_t i = 0; i < schema.size() && i < kShown; ++i) out += (i > 0 ? ", " : "") + schema[i].name;
  if (schema.size() > kShown) out += ", ... (" + std::to_string(schema.size()) + " columns)";
  return out;
}

const ColumnSchema* find(const std::vector<ColumnSchema>& schema, const std::string& name) {
  for (const auto& c : schema) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

bool is_byte_strings(const ColumnSchema& c) {
  return c.type == PhysicalType::kByteArray || c.type == PhysicalType::kFixedLenByteArray;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i > 0 ? "," : "") + v[i];
  return out;
}

}  // namespace

std::vector<std::string> dataset_column_names(const std::string& path, const std::vector<ColumnSchema>& file_schema,
                                              const DatasetColumns& want) {
  std::vector<ColumnSchema> subset;  // of want.columns; the file's schema itself is not copied
  if (!want.columns.empty()) {
    std::unordered_set<std::string_view> in_file;
    for (const auto& c : file_schema) in_file.insert(c.name);
    for (const auto& name : want.columns) {
      if (in_file.count(name) == 0) {
        throw InvalidArgument(path + ": no column '" + name + "' (the file has " + some_columns(file_schema) + ")");
      }
    }
    const std::unordered_set<std::string_view> wanted(want.columns.begin(), want.columns.end());
    for (const auto& c : file_schema) {
      if (wanted.count(c.name) > 0) subset.push_back(c);
    }
  }
  const std::vector<ColumnSchema>& schema = want.columns.empty() ? file_schema : subset;
  if (find(schema, want.label_column) == nullptr) {
    throw InvalidArgument(path + ": no label column '" + want.label_column + "' (" +
                          (find(file_schema, want.label_column) != nullptr ? "not among the columns to read; "
                                                                           : "the file has ") +
                          some_columns(schema) + ")");
  }

  std::vector<std::string> features;
  const ColumnSchema* image = want.image_column.empty() ? nullptr : find(schema, want.image_column);
  // A Hugging Face image struct reads as `image.bytes` (the PNG file) and `image.path`.
  if (image == nullptr && !want.image_column.empty()) image = find(schema, want.image_column + ".bytes");
  if (image != nullptr && image->name != want.label_column) {
    features = {image->name};
  } else {
    try {
      features = match_columns(schema, want.feature_columns);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(path + ": " + e.what());
    }
    features.erase(std::remove(features.begin(), features.end(), want.label_column), features.end());
  }

  if (want.feature_count > 0) {
    const ColumnSchema* only = features.size() == 1 ? find(schema, features[0]) : nullptr;
    if (only != nullptr && only->is_list) {
      // A list column of one image a row: its lengths are checked as it is decoded.
    } else if (only != nullptr && is_byte_strings(*only)) {
      if (only->type == PhysicalType::kFixedLenByteArray && only->type_length != want.feature_count) {
        throw InvalidArgument(path + ": column '" + only->name + "' holds " + std::to_string(only->type_length) +
                              " bytes a row, expected " + std::to_string(want.feature_count));
      }
    } else if (static_cast<int64_t>(features.size()) != want.feature_count) {
      throw InvalidArgument(path + ": " + std::to_string(features.size()) + " feature columns match '" +
                            joined(want.feature_columns) + "', expected " + std::to_string(want.feature_count));
    }
  }

  // In file order. The features are in file order too (match_columns() keeps it), so one merge, not a search a
  // column, whose string comparisons grow with the square of the column count and would weigh on the read of a
  // small row group of a wide table.
  std::vector<std::string> out;
  out.reserve(features.size() + 1);
  auto next_feature = features.begin();
  for (const auto& c : schema) {
    if (next_feature != features.end() && c.name == *next_feature) {
      out.push_back(c.name);
      ++next_feature;
    } else if (c.name == want.label_column) {
      out.push_back(c.name);
    }
  }
  return out;
}

std::vector<std::string> match_columns(const std::vector<ColumnSchema>& schema, const std::vector<std::string>& patterns) {
  std::vector<bool> chosen(schema.size(), false);
  for (const auto& pattern : patterns) {
    bool any = false;
    for (size_t i = 0; i < schema.size(); ++i) {
      if (schema[i].name == pattern || glob_match(pattern, schema[i].name)) {
        chosen[i] = true;
        any = true;
      }
    }
    if (!any) {
      throw InvalidArgument("no column matches '" + pattern + "' (columns: " + some_columns(schema) + ")");
    }
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < schema.size(); ++i) {
    if (chosen[i]) out.push_back(schema[i].name);
  }
  return out;
}

namespace {

constexpr const char* kUnknownFormat = ": cannot tell the format from the name (expected a .parquet or .csv file)";

// The format the path's extension names (any case), if it names one.
std::optional<FileFormat> format_by_name(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".parquet") return FileFormat::kParquet;
  if (ext == ".csv") return FileFormat::kCsv;
  return std::nullopt;
}

}  // namespace

FileFormat file_format(const std::string& path) {
  if (const auto format = format_by_name(path)) return *format;
  throw InvalidArgument(path + kUnknownFormat);
}

const char* file_format_name(FileFormat format) { return format == FileFormat::kCsv ? "csv" : "parquet"; }

FileFormat input_format(const std::string& path) {
  if (const auto format = format_by_name(path)) return *format;
  const RandomAccessFile file(path);  // a URL too
  char magic[4] = {};
  if (file.size() >= 4) file.read_at(0, 4, magic);
  if (std::memcmp(magic, "PAR1", 4) == 0 || std::memcmp(magic, "PARE", 4) == 0) return FileFormat::kParquet;
  throw InvalidArgument(path + kUnknownFormat + ", and it does not begin as a Parquet file does");
}

std::vector<ColumnSchema> file_schema(const std::string& path) {
  if (parquet::is_dataset_spec(path)) return parquet::DatasetReader(path).schema();
  if (input_format(path) == FileFormat::kParquet) return parquet::read_file_info(path).schema;
  std::vector<ColumnSchema> schema;
  for (auto& name : read_csv_header(path)) schema.push_back(ColumnSchema{std::move(name)});
  return schema;
}

Table read_file_columns(const std::string& path, const std::vector<std::string>& names, int num_threads,
                        const std::vector<int64_t>& row_groups, bool csv_text_columns) {
  const bool dataset = parquet::is_dataset_spec(path);
  if (dataset || input_format(path) == FileFormat::kParquet) {
    parquet::ReadOptions options;
    options.columns = names;
    options.row_groups = row_groups;
    options.num_threads = num_threads;
    return dataset ? parquet::read_dataset(path, options) : parquet::read_table(path, options);
  }
  if (!row_groups.empty()) throw InvalidArgument(path + ": row groups are chosen in Parquet files; CSV has none");
  CsvReadOptions options;
  options.num_threads = num_threads;
  options.columns = names;
  options.text_columns = csv_text_columns;
  return read_csv(path, options);
}

Table read_dataset_table(const std::string& path, const DatasetColumns& columns, int num_threads) {
  if (parquet::is_dataset_spec(path)) {
    const parquet::DatasetReader dataset(path, num_threads);
    parquet::ReadOptions options;
    options.columns = dataset_column_names(path, dataset.schema(), columns);
    options.row_groups = columns.row_groups;
    options.num_threads = num_threads;
    return dataset.read(options);
  }
  // A Parquet file's footer parsed once for the schema and the read: for 785 columns it is 74 KB of Thrift in one
  // row group, 3 MB in 60.
  if (input_format(path) == FileFormat::kParquet) {
    return read_dataset_table(parquet::FileReader(path), columns, num_threads);
  }
  return read_file_columns(path, dataset_column_names(path, file_schema(path), columns), num_threads,
                           columns.row_groups);
}

Table read_dataset_table(const parquet::FileReader& file, const DatasetColumns& columns, int num_threads) {
  parquet::ReadOptions options;
  options.columns = dataset_column_names(file.path(), file.info().schema, columns);
  options.row_groups = columns.row_groups;
  options.num_threads = num_threads;
  return file.read(options);
}

}  // namespace feedline
