#include "cli/inspect.h"

#include <fmt/core.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>

#include "feedline/file.h"
#include "feedline/parquet.h"
#include "feedline/table.h"

namespace feedline::cli {
namespace {

using nlohmann::ordered_json;  // keeps the columns in file order

std::string hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (const char c : bytes) {
    const auto b = static_cast<uint8_t>(c);
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

std::string logical_type(const ColumnSchema& s) {
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

// A statistics value (raw PLAIN bytes) as text for its column's type; hex when the size does not fit.
std::string statistic_text(const ColumnSchema& s, const std::string& raw) {
  auto fixed = [&](auto zero) -> std::optional<decltype(zero)> {
    if (raw.size() != sizeof zero) return std::nullopt;
    decltype(zero) v;
    std::memcpy(&v, raw.data(), sizeof v);
    return v;
  };
  switch (s.type) {
    case PhysicalType::kBoolean:
      if (raw.size() == 1) return raw[0] ? "true" : "false";
      break;
    case PhysicalType::kInt32:
      if (auto v = fixed(int32_t{})) return is_unsigned(s) ? std::to_string(static_cast<uint32_t>(*v)) : std::to_string(*v);
      break;
    case PhysicalType::kInt64:
      if (auto v = fixed(int64_t{})) return is_unsigned(s) ? std::to_string(static_cast<uint64_t>(*v)) : std::to_string(*v);
      break;
    case PhysicalType::kFloat:
      if (auto v = fixed(float{})) return float_text(*v);
      break;
    case PhysicalType::kDouble:
      if (auto v = fixed(double{})) return float_text(*v);
      break;
    case PhysicalType::kByteArray:
      if (s.is_string) return raw;
      break;
    case PhysicalType::kFixedLenByteArray: break;
  }
  return "0x" + hex(raw);
}

std::string shorten(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n) + "..."; }

// One cell as text; nullopt for a null.
std::optional<std::string> cell_text(const Column& c, int64_t row) {
  if (c.is_null(row)) return std::nullopt;
  const ColumnSchema& s = c.schema;
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

ordered_json json_cell(const Column& c, int64_t row) {
  const auto text = cell_text(c, row);
  if (!text) return nullptr;
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

}  // namespace

int run_inspect(const InspectArgs& args) {
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
      if (s.is_string) c["logical_type"] = "STRING";
      if (s.type == PhysicalType::kFixedLenByteArray) c["type_length"] = s.type_length;
      j["schema"].push_back(c);
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
  for (const auto& s : info.schema) {
    fmt::print("  {:<24} {:<20} {:<18} {}\n", s.name, to_string(s.type), logical_type(s),
               s.nullable ? "optional" : "required");
  }
  for (size_t g = 0; g < info.row_groups.size(); ++g) {
    const auto& rg = info.row_groups[g];
    fmt::print("\nRow group {}: {} rows\n", g, rg.num_rows);
    fmt::print("  {:<24} {:<12} {:<36} {:>12} {:>12} {:>6}  {}\n", "column", "codec", "encodings", "compressed",
               "uncompressed", "nulls", "min .. max");
    for (size_t c = 0; c < rg.columns.size(); ++c) {
      const auto& ci = rg.columns[c];
      std::string encodings;
      for (const auto& e : ci.encodings) encodings += (encodings.empty() ? "" : ",") + e;
      const std::string range = ci.min.empty() && ci.max.empty()
                                    ? std::string("-")
                                    : shorten(statistic_text(info.schema[c], ci.min), 24) + " .. " +
                                          shorten(statistic_text(info.schema[c], ci.max), 24);
      fmt::print("  {:<24} {:<12} {:<36} {:>12} {:>12} {:>6}  {}\n", info.schema[c].name, ci.codec, encodings,
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
  parquet::ReadOptions options;
  options.columns = args.columns;
  options.num_threads = args.threads;
  const Table t = parquet::read_table(args.path, options);
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
      for (size_t c = 0; c < t.columns.size(); ++c) {
        if (c) out += ',';
        if (auto text = cell_text(t.columns[c], r)) out += csv_field(*text);
      }
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
