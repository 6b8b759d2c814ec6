// CSV files written as pandas writes them: a header row, then a record a row, fields quoted where RFC 4180 needs
// it, floats in shortest round-trip form, nulls empty; through a temporary file renamed into place on close().
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "feedline/io/csv.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "io/value_text.h"

namespace feedline {
namespace {

void append_double(std::string& out, double v) {
  char buf[64];
  // Shortest representation that reads back to the same double, with ".0" when it would read as an integer
  // (1.0 as "1.0", not "1"), so that the column reads back as DOUBLE.
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
  if (std::all_of(buf, res.ptr, [](char c) { return (c >= '0' && c <= '9') || c == '-'; })) out.append(".0");
}

template <class T>
void append_int(std::string& out, T v) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

// Text as a CSV field: as it is, or quoted (quotes doubled) when it holds a comma, quote or line end, is empty,
// or when `always`.
void append_quoted(std::string& out, std::string_view s, bool always = false) {
  if (!always && !s.empty() && s.find_first_of(",\"\n\r") == std::string_view::npos) {
    out.append(s);
    return;
  }
  out.push_back('"');
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

// One value as write_csv writes it, formatted as `schema` says (the file's schema, which the column's matches).
void append_field(std::string& out, const ColumnSchema& schema, const Column& col, int64_t row) {
  if (col.is_null(row)) return;
  if (schema.is_list) {  // its JSON array, as `cat` prints it: [1,2,null], [["a"],[]]
    append_quoted(out, *cell_text(col, row));
    return;
  }
  std::visit(
      [&](const auto& values) {
        using V = std::decay_t<decltype(values)>;
        if constexpr (std::is_same_v<V, ByteArrays>) {
          const auto s = values.at(row);
          if (schema.logical.kind == LogicalKind::kUuid || schema.logical.kind == LogicalKind::kInterval) {
            out += *value_text(col, row);  // as `cat` prints them: 8-4-4-4-12, "1 year 2 months"
          } else if (schema.type == PhysicalType::kFixedLenByteArray) {
            append_hex(out, s);  // binary (hashes, whole images), never text
          } else {
            append_quoted(out, s);
          }
        } else if constexpr (std::is_same_v<V, std::vector<float>> || std::is_same_v<V, std::vector<double>>) {
          append_double(out, static_cast<double>(values[row]));
        } else if constexpr (std::is_same_v<V, std::vector<int32_t>>) {
          if (schema.int_annotation && !schema.int_annotation->is_signed) {
            append_int(out, static_cast<uint32_t>(values[row]));
          } else {
            append_int(out, values[row]);
          }
        } else if constexpr (std::is_same_v<V, std::vector<int64_t>>) {
          if (schema.int_annotation && !schema.int_annotation->is_signed) {
            append_int(out, static_cast<uint64_t>(values[row]));
          } else {
            append_int(out, values[row]);
          }
        } else {
          append_int(out, static_cast<int>(values[row]));
        }
      },
      col.values);
}

// A column's type as CsvWriter's messages name it: "INT32", "INT32 (unsigned 8-bit)", "FIXED_LEN_BYTE_ARRAY(16)",
// "list of DOUBLE", "list of list of BYTE_ARRAY".
std::string type_name(const ColumnSchema& s) {
  std::string out;
  for (int k = 0; k < s.list_depth(); ++k) out += "list of ";
  out += to_string(s.type);
  if (s.type == PhysicalType::kFixedLenByteArray) out += "(" + std::to_string(s.type_length) + ")";
  if (s.int_annotation) {
    out += std::string(" (") + (s.int_annotation->is_signed ? "signed " : "unsigned ") +
           std::to_string(s.int_annotation->bit_width) + "-bit)";
  }
  return out;
}

}  // namespace

int64_t write_csv(const std::string& path, const Table& table) {
  std::vector<ColumnSchema> schema;
  schema.reserve(table.columns.size());
  for (const Column& col : table.columns) schema.push_back(col.schema);
  CsvWriter writer(path, std::move(schema));
  writer.write(table);
  return writer.close();
}

CsvWriter::CsvWriter(std::string path, std::vector<ColumnSchema> schema)
    : path_(std::move(path)), schema_(std::move(schema)) {
  if (schema_.empty()) throw InvalidArgument(path_ + ": a CSV file needs at least one column");
  file_ = std::make_unique<AtomicFile>(path_);
  for (size_t c = 0; c < schema_.size(); ++c) {
    if (c > 0) buf_.push_back(',');
    // A first name that starts with a byte order mark is quoted: readers drop one that starts the file.
    const bool bom = c == 0 && schema_[c].name.rfind("\xEF\xBB\xBF", 0) == 0;
    append_quoted(buf_, schema_[c].name, bom);
  }
  buf_.push_back('\n');
}

CsvWriter::~CsvWriter() = default;
CsvWriter::CsvWriter(CsvWriter&&) noexcept = default;
CsvWriter& CsvWriter::operator=(CsvWriter&&) noexcept = default;

void CsvWriter::write(const Table& table) {
  if (file_ == nullptr) throw InvalidArgument(path_ + ": written to after close()");
  if (table.columns.size() != schema_.size()) {
    throw InvalidArgument(path_ + ": a table of " + std::to_string(table.columns.size()) + " columns, the file has " +
                          std::to_string(schema_.size()));
  }
  for (size_t c = 0; c < schema_.size(); ++c) {
    const ColumnSchema& want = schema_[c];
    const ColumnSchema& got = table.columns[c].schema;
    if (got.name != want.name) {
      throw InvalidArgument(path_ + ": column " + std::to_string(c + 1) + " is '" + got.name + "', the file's is '" +
                            want.name + "'");
    }
    if (got.type != want.type || got.list_depth() != want.list_depth() || got.type_length != want.type_length ||
        !(got.int_annotation == want.int_annotation)) {
      throw InvalidArgument(path_ + ": column '" + got.name + "' is " + type_name(got) + ", the file's is " +
                            type_name(want));
    }
    const Column& col = table.columns[c];
    const bool validity_fits = col.validity.empty() || static_cast<int64_t>(col.validity.size()) == table.num_rows;
    if (col.size() != table.num_rows || !validity_fits) {
      throw InvalidArgument(path_ + ": column '" + got.name + "' holds " + std::to_string(col.size()) + " values and " +
                            std::to_string(col.validity.size()) + " validity entries for " +
                            std::to_string(table.num_rows) + " rows");
    }
  }
  for (int64_t r = 0; r < table.num_rows; ++r) {
    const size_t row_start = buf_.size();
    for (size_t c = 0; c < schema_.size(); ++c) {
      if (c > 0) buf_.push_back(',');
      append_field(buf_, schema_[c], table.columns[c], r);
    }
    // One null field would make an empty line, which readers skip (feedline's, pandas'): "" keeps the row.
    if (buf_.size() == row_start) buf_.append("\"\"");
    buf_.push_back('\n');
    if (buf_.size() > (1 << 20)) {
      file_->write(buf_);
      buf_.clear();
    }
  }
}

int64_t CsvWriter::close() {
  if (file_ == nullptr) throw InvalidArgument(path_ + ": closed twice");
  // Owned here, so that a failed write or rename still removes the temporary file and leaves the writer closed.
  const std::unique_ptr<AtomicFile> file = std::move(file_);
  file->write(buf_);
  buf_.clear();
  buf_.shrink_to_fit();
  const int64_t written = file->bytes_written();
  file->commit();
  return written;
}

}  // namespace feedline
