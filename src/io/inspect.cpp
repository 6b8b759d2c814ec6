#include "io/inspect.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "feedline/io/columns.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "feedline/io/table.h"
#include "io/value_text.h"

namespace feedline {
namespace {

using nlohmann::ordered_json;  // keeps the columns in file order

// A CSV file: its size, rows and columns, typed as `train` and `convert` read them (a column of numbers INT64 or
// DOUBLE, any other STRING; nullable when a field is empty).
std::string csv_json(const std::string& path) {
  const Table t = read_file_columns(path, {}, 0, {}, /*csv_text_columns=*/true);
  const int64_t bytes = file_size(path);
  ordered_json j;
  j["file"] = path;
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
  return j.dump(2, ' ', false, ordered_json::error_handler_t::replace);
}

std::string parquet_json(const std::string& path) {
  const parquet::FileInfo info = parquet::read_file_info(path);
  const int64_t bytes = file_size(path);
  ordered_json j;
  j["file"] = path;
  j["bytes"] = bytes;
  j["created_by"] = info.created_by;
  j["num_rows"] = info.num_rows;
  j["schema"] = ordered_json::array();
  for (const auto& s : info.schema) {
    ordered_json c = {{"name", s.name}, {"physical_type", to_string(s.type)}, {"nullable", s.nullable}};
    if (s.int_annotation) c["int"] = {{"bit_width", s.int_annotation->bit_width}, {"signed", s.int_annotation->is_signed}};
    if (const std::string lt = logical_type_text(s); !lt.empty() && !s.int_annotation) c["logical_type"] = lt;
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
  j["notes"] = ordered_json::array();
  for (const auto& [name, note] : info.notes) j["notes"].push_back({{"name", name}, {"note", note}});
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
  return j.dump(2, ' ', false, ordered_json::error_handler_t::replace);
}

}  // namespace

std::string inspect_json(const std::string& path) {
  return input_format(path) == FileFormat::kCsv ? csv_json(path) : parquet_json(path);
}

}  // namespace feedline
