#include "cli/inspect.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <nlohmann/json.hpp>
#include <string_view>

#include "feedline/io/columns.h"
#include "feedline/io/csv.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "feedline/io/table.h"

namespace feedline::cli {
namespace {

using nlohmann::ordered_json;  // keeps the columns in file order

std::string hex(std::string_view bytes) {
  std::string s;
  append_hex(s, bytes);
  return s;
}

std::string logical_type(const ColumnSchema& s) {
  const LogicalAnnotation& a = s.logical;
  const char* unit = a.unit == TimeUnit::kMillis ? "MILLIS" : a.unit == TimeUnit::kMicros ? "MICROS" : "NANOS";
  switch (a.kind) {
    case LogicalKind::kNone: break;
    case LogicalKind::kDate: return "DATE";
    case LogicalKind::kTime: return fmt::format("TIME({}{})", unit, a.utc ? ",UTC" : "");
    case LogicalKind::kTimestamp: return fmt::format("TIMESTAMP({}{})", unit, a.utc ? ",UTC" : "");
    case LogicalKind::kDecimal: return fmt::format("DECIMAL({},{})", a.precision, a.scale);
    case LogicalKind::kFloat16: return "FLOAT16";
  }
  if (s.int_annotation) {
    return fmt::format("INT({},{})", s.int_annotation->bit_width, s.int_annotation->is_signed ? "signed" : "unsigned");
  }
  if (s.is_string) return "STRING";
  if (s.type == PhysicalType::kFixedLenByteArray) return fmt::format("length {}", s.type_length);
  return "";
}

bool is_unsigned(const ColumnSchema& s) { return s.int_annotation && !s.int_annotation->is_signed; }

// Shortest text that reads back as the same float, as JSON-friendly words for the values JSON lacks.
template <class F>
std::string float_text(F v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return fmt::format("{}", v);
}

// Days since 1970-01-01 as a proleptic Gregorian civil date (Howard Hinnant's days_from_civil inverse).
std::string date_text(int64_t days) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return fmt::format("{:04}-{:02}-{:02}", y, m, d);
}

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// A count of `unit`s since midnight as HH:MM:SS with the unit's fraction digits.
std::string time_of_day_text(int64_t v, TimeUnit unit) {
  const int64_t per_second = unit == TimeUnit::kMillis ? 1000 : unit == TimeUnit::kMicros ? 1000000 : 1000000000;
  const int digits = unit == TimeUnit::kMillis ? 3 : unit == TimeUnit::kMicros ? 6 : 9;
  const int64_t seconds = floor_div(v, per_second), fraction = v - seconds * per_second;
  return fmt::format("{:02}:{:02}:{:02}.{:0{}}", seconds / 3600, seconds / 60 % 60, seconds % 60, fraction, digits);
}

// A value of a DATE, TIME, TIMESTAMP, DECIMAL or FLOAT16 column as text (ISO 8601 for dates and times); the
// integer for INT32/INT64 storage, the bytes for byte-array storage. nullopt for other columns.
std::optional<std::string> logical_text(const ColumnSchema& s, int64_t integer, std::string_view bytes) {
  const LogicalAnnotation& a = s.logical;
  switch (a.kind) {
    case LogicalKind::kNone: return std::nullopt;
    case LogicalKind::kDate: return date_text(integer);
    case LogicalKind::kTime: return time_of_day_text(integer, a.unit);
    case LogicalKind::kTimestamp: {
      const int64_t per_day = int64_t{86400} * (a.unit == TimeUnit::kMillis   ? 1000
                                                : a.unit == TimeUnit::kMicros ? 1000000
                                                                              : 1000000000);
      const int64_t day = floor_div(integer, per_day);
      return date_text(day) + "T" + time_of_day_text(integer - day * per_day, a.unit) + (a.utc ? "Z" : "");
    }
    case LogicalKind::kDecimal:
      return decimal_to_string(s.type == PhysicalType::kInt32 || s.type == PhysicalType::kInt64 ? __int128{integer}
                                                                                          : decimal_unscaled(bytes),
                          a.scale);
    case LogicalKind::kFloat16:
      if (bytes.size() != 2) return std::nullopt;
      return float_text(half_to_float(static_cast<uint16_t>(static_cast<uint8_t>(bytes[0]) |
                                                            (static_cast<uint8_t>(bytes[1]) << 8))));
  }
  return std::nullopt;
}

// A statistics value (raw PLAIN bytes) as text for its column's type; hex when the size does not fit.
std::string statistic_text(const ColumnSchema& s, const std::string& raw) {
  if (s.logical.kind != LogicalKind::kNone) {
    std::optional<int64_t> integer;
    if (s.type == PhysicalType::kInt32) integer = parquet::plain_statistic<int32_t>(raw);
    if (s.type == PhysicalType::kInt64) integer = parquet::plain_statistic<int64_t>(raw);
    const bool fits = integer.has_value() ||
                      ((s.type == PhysicalType::kByteArray || s.type == PhysicalType::kFixedLenByteArray) && raw.size() <= 16);
    if (fits) {
      if (auto text = logical_text(s, integer.value_or(0), raw)) return *text;
    }
    return "0x" + hex(raw);
  }
  switch (s.type) {
    case PhysicalType::kBoolean:
      if (raw.size() == 1) return raw[0] ? "true" : "false";
      break;
    case PhysicalType::kInt32:
      if (auto v = parquet::plain_statistic<int32_t>(raw)) {
        return is_unsigned(s) ? std::to_string(static_cast<uint32_t>(*v)) : std::to_string(*v);
      }
      break;
    case PhysicalType::kInt64:
      if (auto v = parquet::plain_statistic<int64_t>(raw)) {
        return is_unsigned(s) ? std::to_string(static_cast<uint64_t>(*v)) : std::to_string(*v);
      }
      break;
    case PhysicalType::kFloat:
      if (auto v = parquet::plain_statistic<float>(raw)) return float_text(*v);
      break;
    case PhysicalType::kDouble:
      if (auto v = parquet::plain_statistic<double>(raw)) return float_text(*v);
      break;
    case PhysicalType::kByteArray:
      if (s.is_string) return raw;
      break;
    case PhysicalType::kFixedLenByteArray: break;
  }
  return "0x" + hex(raw);
}

std::string shorten(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n) + "..."; }

// Value `row` (for a list column, element `row`) as text, null or not.
std::optional<std::string> value_text(const Column& c, int64_t row) {
  const ColumnSchema& s = c.schema;
  if (s.logical.kind != LogicalKind::kNone) {
    const int64_t integer = s.type == PhysicalType::kInt32   ? c.as<int32_t>()[row]
                            : s.type == PhysicalType::kInt64 ? c.as<int64_t>()[row]
                                                             : 0;
    const std::string_view bytes = value_index(s.type) == value_index(PhysicalType::kByteArray)
                                       ? c.byte_arrays().at(row)
                                       : std::string_view();
    if (auto text = logical_text(s, integer, bytes)) return text;
  }
  switch (s.type) {
    case PhysicalType::kBoolean: return c.as<uint8_t>()[row] ? "true" : "false";
    case PhysicalType::kInt32: {
      const int32_t v = c.as<int32_t>()[row];
      return is_unsigned(s) ? std::to_string(static_cast<uint32_t>(v)) : std::to_string(v);
    }
    case PhysicalType::kInt64: {
      const int64_t v = c.as<int64_t>()[row];
      return is_unsigned(s) ? std::to_string(static_cast<uint64_t>(v)) : std::to_string(v);
    }
    case PhysicalType::kFloat: return float_text(c.as<float>()[row]);
    case PhysicalType::kDouble: return float_text(c.as<double>()[row]);
    case PhysicalType::kByteArray:
      if (s.is_string) return std::string(c.byte_arrays().at(row));
      return hex(c.byte_arrays().at(row));
    case PhysicalType::kFixedLenByteArray: return hex(c.byte_arrays().at(row));
  }
  return std::nullopt;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos && !text.empty()) return text;
  std::string out = "\"";
  for (const char ch : text) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

ordered_json json_value(const Column& c, int64_t row) {
  const auto text = value_text(c, row);
  if (!text) return nullptr;
  if (c.schema.logical.kind == LogicalKind::kFloat16) {
    const double v = c.value_as_double(row);
    return std::isfinite(v) ? ordered_json::parse(*text) : ordered_json(*text);
  }
  if (c.schema.logical.kind != LogicalKind::kNone) return *text;  // ISO 8601 dates and times, exact decimals
  switch (c.schema.type) {
    case PhysicalType::kBoolean: return c.as<uint8_t>()[row] != 0;
    case PhysicalType::kInt32:
    case PhysicalType::kInt64:
      if (is_unsigned(c.schema)) return std::stoull(*text);
      return std::stoll(*text);
    case PhysicalType::kFloat:
    case PhysicalType::kDouble: {
      const double v = c.schema.type == PhysicalType::kFloat ? c.as<float>()[row] : c.as<double>()[row];
      if (!std::isfinite(v)) return *text;  // JSON has no NaN or infinity: "NaN", "Infinity", "-Infinity"
      return ordered_json::parse(*text);    // keeps the shortest round-trip digits
    }
    default: return *text;
  }
}

// Entry `i` at list level `level` of a list column (0: the rows' lists; list_depth(): the values) as JSON: a
// value, or an array of the next level's entries; null for a null list or element.
ordered_json json_list_entry(const Column& c, int level, int64_t i) {
  if (level == c.schema.list_depth()) return c.element_is_null(i) ? ordered_json(nullptr) : json_value(c, i);
  const ListLevel* inner = level == 0 ? nullptr : &c.inner_lists[static_cast<size_t>(level - 1)];
  if (inner == nullptr ? c.is_null(i) : inner->is_null(i)) return nullptr;
  const std::vector<int64_t>& offsets = inner == nullptr ? c.list_offsets : inner->offsets;
  ordered_json list = ordered_json::array();
  for (int64_t e = offsets[static_cast<size_t>(i)]; e < offsets[static_cast<size_t>(i + 1)]; ++e) {
    list.push_back(json_list_entry(c, level + 1, e));
  }
  return list;
}

// One row's cell as JSON: null, a value, or for a list column an array (of arrays, for a list of lists; nulls
// at any level as null).
ordered_json json_cell(const Column& c, int64_t row) {
  if (c.is_null(row)) return nullptr;
  if (!c.schema.is_list) return json_value(c, row);
  return json_list_entry(c, 0, row);
}

// One row's cell as CSV text; nullopt for a null. A list is its JSON array.
std::optional<std::string> cell_text(const Column& c, int64_t row) {
  if (c.is_null(row)) return std::nullopt;
  if (c.schema.is_list) return json_cell(c, row).dump(-1, ' ', false, ordered_json::error_handler_t::replace);
  return value_text(c, row);
}

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
  if (args.json) {
    ordered_json j;
    j["file"] = args.path;
    j["format"] = "csv";
    j["bytes"] = bytes;
    j["num_rows"] = t.num_rows;
    j["schema"] = ordered_json::array();
    for (const auto& c : t.columns) {
      const ColumnSchema& s = c.schema;
      ordered_json col = {{"name", s.name}, {"physical_type", to_string(s.type)}, {"nullable", s.nullable}};
      if (s.is_string) col["logical_type"] = "STRING";
      j["schema"].push_back(col);
    }
    fmt::print("{}\n", j.dump(2, ' ', false, ordered_json::error_handler_t::replace));
    return 0;
  }
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

}  // namespace

int run_inspect(const InspectArgs& args) {
  if (file_format(args.path) == FileFormat::kCsv) return inspect_csv(args);
  const parquet::FileInfo info = parquet::read_file_info(args.path);
  const int64_t bytes = file_size(args.path);
  if (args.json) {
    ordered_json j;
    j["file"] = args.path;
    j["bytes"] = bytes;
    j["created_by"] = info.created_by;
    j["num_rows"] = info.num_rows;
    j["schema"] = ordered_json::array();
    for (const auto& s : info.schema) {
      ordered_json c = {{"name", s.name}, {"physical_type", to_string(s.type)}, {"nullable", s.nullable}};
      if (s.int_annotation) c["int"] = {{"bit_width", s.int_annotation->bit_width}, {"signed", s.int_annotation->is_signed}};
      if (const std::string lt = logical_type(s); !lt.empty() && !s.int_annotation) c["logical_type"] = lt;
      if (s.type == PhysicalType::kFixedLenByteArray) c["type_length"] = s.type_length;
      if (s.is_list) {
        c["list"] = true;
        if (s.list_depth() > 1) {
          c["list_depth"] = s.list_depth();
          c["inner_lists_nullable"] = s.inner_list_nullable;
        }
        c["element_nullable"] = s.element_nullable;
      }
      j["schema"].push_back(c);
    }
    j["unsupported_columns"] = ordered_json::array();
    for (const auto& [name, why] : info.unsupported_columns) {
      j["unsupported_columns"].push_back({{"name", name}, {"reason", why}});
    }
    j["row_groups"] = ordered_json::array();
    for (const auto& rg : info.row_groups) {
      ordered_json cols = ordered_json::array();
      for (size_t c = 0; c < rg.columns.size(); ++c) {
        const auto& ci = rg.columns[c];
        ordered_json col = {{"name", c < info.schema.size() ? info.schema[c].name : ""},
                    {"codec", ci.codec},
                    {"encodings", ci.encodings},
                    {"compressed_bytes", ci.compressed_bytes},
                    {"uncompressed_bytes", ci.uncompressed_bytes}};
        if (ci.null_count >= 0) col["null_count"] = ci.null_count;
        if (!ci.min.empty() || !ci.max.empty()) {
          col["min"] = statistic_text(info.schema[c], ci.min);
          col["max"] = statistic_text(info.schema[c], ci.max);
        }
        cols.push_back(col);
      }
      j["row_groups"].push_back({{"num_rows", rg.num_rows}, {"columns", cols}});
    }
    j["key_value_metadata"] = ordered_json::object();
    for (const auto& [k, v] : info.key_value_metadata) j["key_value_metadata"][k] = v;
    fmt::print("{}\n", j.dump(2, ' ', false, ordered_json::error_handler_t::replace));
    return 0;
  }
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
    fmt::print("  {:<{}} {:<{}} {:<18} {}\n", s.name, name_w, type_text(s), type_w, logical_type(s),
               nullability_text(s));
  }
  if (!info.unsupported_columns.empty()) {
    fmt::print("\nNot readable ({} leaf columns; `cat` and `train` can read the columns above):\n",
               info.unsupported_columns.size());
    for (const auto& [name, why] : info.unsupported_columns) fmt::print("  {:<{}} {}\n", name, name_w, why);
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
  Table t;
  if (file_format(args.path) == FileFormat::kCsv) {
    t = read_file_columns(args.path, args.columns, args.threads, {}, /*csv_text_columns=*/true);
  } else {
    parquet::ReadOptions options;
    options.columns = args.columns;
    options.num_threads = args.threads;
    t = parquet::read_table(args.path, options);
  }
  const int64_t rows = args.limit < 0 ? t.num_rows : std::min(args.limit, t.num_rows);
  std::string out;
  auto flush = [&] {
    std::fwrite(out.data(), 1, out.size(), stdout);
    out.clear();
  };
  if (args.format == "csv") {
    for (size_t c = 0; c < t.columns.size(); ++c) out += (c ? "," : "") + csv_field(t.columns[c].schema.name);
    out += '\n';
    for (int64_t r = 0; r < rows; ++r) {
      const size_t row_start = out.size();
      for (size_t c = 0; c < t.columns.size(); ++c) {
        if (c) out += ',';
        if (auto text = cell_text(t.columns[c], r)) out += csv_field(*text);
      }
      if (out.size() == row_start) out += "\"\"";  // a lone null: an empty line would be no record
      out += '\n';
      if (out.size() > (1 << 16)) flush();
    }
  } else {
    for (int64_t r = 0; r < rows; ++r) {
      ordered_json line = ordered_json::object();
      for (const auto& c : t.columns) line[c.schema.name] = json_cell(c, r);
      out += line.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
      out += '\n';
      if (out.size() > (1 << 16)) flush();
    }
  }
  flush();
  std::fflush(stdout);
  return 0;
}

}  // namespace feedline::cli
