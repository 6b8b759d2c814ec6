// The checks a table passes before the writer writes anything of it: names, types, annotations, options, and each
// list column's offsets and validity at every level (Column's contract, table.h), so that a bad table is refused
// by name and never half-written.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include <zstd.h>

#include "feedline/io/error.h"
#include "io/parquet/schema.h"
#include "io/parquet/writer_internal.h"

namespace feedline::parquet::detail {

namespace {

// A list column's offsets, validity and element validity describe its values (Column's contract, table.h), at
// every level of a list of lists; checked before anything reads them.
void validate_list(const Column& col, int64_t rows) {
  const std::string where = column_where(col);
  const int depth = col.schema.list_depth();
  // Two schema elements a level: deeper lists would make a schema that readers refuse as hostile (feedline's
  // at 64 levels of nesting), and levels past uint8_t.
  constexpr int kMaxListDepth = 30;
  if (depth > kMaxListDepth) {
    throw InvalidArgument(where + " nests lists " + std::to_string(depth) + " deep; at most " +
                          std::to_string(kMaxListDepth) + " are written");
  }
  if (col.inner_lists.size() != static_cast<size_t>(depth - 1)) {
    throw InvalidArgument(where + ": inner_lists holds " + std::to_string(col.inner_lists.size()) +
                          " levels, its schema " + std::to_string(depth - 1));
  }
  const int64_t elements = std::visit([](const auto& v) { return static_cast<int64_t>(v.size()); }, col.values);
  const ListLevels levels(col);
  int64_t lists = rows;  // at level k
  for (int k = 0; k < depth; ++k) {
    const std::string name = k == 0 ? "list_offsets" : "inner_lists[" + std::to_string(k - 1) + "].offsets";
    const std::string what = k == 0 ? "rows" : "lists";
    const std::vector<int64_t>& offsets = levels.offsets(k);
    if (static_cast<int64_t>(offsets.size()) != lists + 1) {
      throw InvalidArgument(where + ": " + name + " holds " + std::to_string(offsets.size()) + " entries for " +
                            std::to_string(lists) + " " + what + " (" + what + " + 1 needed)");
    }
    if (offsets.front() != 0) {
      throw InvalidArgument(where + ": " + name + " starts at " + std::to_string(offsets.front()) + ", not 0");
    }
    for (int64_t i = 0; i < lists; ++i) {
      if (offsets[static_cast<size_t>(i + 1)] < offsets[static_cast<size_t>(i)]) {
        throw InvalidArgument(where + ": " + name + " decreases at " + (k == 0 ? "row " : "list ") +
                              std::to_string(i));
      }
    }
    const std::vector<uint8_t>& valid = levels.validity(k);
    // The rows' validity is checked with the flat columns' (its size, its bytes, nulls in a required column).
    if (k > 0 && !valid.empty()) {
      const std::string vname = "inner_lists[" + std::to_string(k - 1) + "].validity";
      if (static_cast<int64_t>(valid.size()) != lists) {
        throw InvalidArgument(where + ": " + vname + " holds " + std::to_string(valid.size()) + " entries for " +
                              std::to_string(lists) + " lists");
      }
      for (int64_t i = 0; i < lists; ++i) {
        const uint8_t v = valid[static_cast<size_t>(i)];
        if (v > 1) throw InvalidArgument(where + ": " + vname + " bytes must be 0 or 1");
        if (v == 0 && !levels.nullable(k)) {
          throw InvalidArgument(where + ": its lists at level " + std::to_string(k + 1) +
                                " are not nullable but list " + std::to_string(i) + " is null");
        }
      }
    }
    if (static_cast<int64_t>(valid.size()) == lists) {  // a null list holds nothing
      for (int64_t i = 0; i < lists; ++i) {
        const int64_t size = offsets[static_cast<size_t>(i + 1)] - offsets[static_cast<size_t>(i)];
        if (valid[static_cast<size_t>(i)] == 0 && size != 0) {
          throw InvalidArgument(where + (k == 0 ? " row " : " level " + std::to_string(k + 1) + " list ") +
                                std::to_string(i) + " is a null list holding " + std::to_string(size) +
                                (k + 1 < depth ? " lists" : " elements"));
        }
      }
    }
    lists = offsets.back();
  }
  if (lists != elements) {
    throw InvalidArgument(where + ": " + (depth == 1 ? "list_offsets" : "inner_lists[" + std::to_string(depth - 2) +
                                                                           "].offsets") +
                          " ends at " + std::to_string(lists) + ", its values hold " + std::to_string(elements) +
                          " elements");
  }
  const std::vector<uint8_t>& ev = col.element_validity;
  if (!ev.empty()) {
    if (static_cast<int64_t>(ev.size()) != elements) {
      throw InvalidArgument(where + ": element_validity holds " + std::to_string(ev.size()) + " entries for " +
                            std::to_string(elements) + " elements");
    }
    for (size_t e = 0; e < ev.size(); ++e) {
      if (ev[e] > 1) throw InvalidArgument(where + ": element_validity bytes must be 0 or 1");
      if (ev[e] == 0 && !col.schema.element_nullable) {
        throw InvalidArgument(where + ": its elements are not nullable but element " + std::to_string(e) + " is null");
      }
    }
  }
}

// A byte array column's offsets, and a FIXED_LEN_BYTE_ARRAY column's type_length and value sizes.
void validate_byte_arrays(const Column& col, const std::string& where) {
  const ColumnSchema& s = col.schema;
  if (value_index(s.type) == value_index(PhysicalType::kByteArray)) {
    const ByteArrays& b = col.byte_arrays();
    if (b.offsets.empty() || b.offsets.front() != 0 || b.offsets.back() != static_cast<int64_t>(b.bytes.size()) ||
        !std::is_sorted(b.offsets.begin(), b.offsets.end())) {
      throw InvalidArgument(where + ": byte array offsets are inconsistent");
    }
  }
  if (s.type == PhysicalType::kFixedLenByteArray) {
    if (s.type_length < 1 || s.type_length > kMaxTypeLength) {
      throw InvalidArgument(where + ": FIXED_LEN_BYTE_ARRAY needs a type_length from 1 to " +
                            std::to_string(kMaxTypeLength) + ", got " + std::to_string(s.type_length));
    }
    const ByteArrays& b = col.byte_arrays();
    // A flat column's values are its rows, a list's its elements; a null one holds no bytes.
    const std::vector<uint8_t>& valid = s.is_list ? col.element_validity : col.validity;
    for (int64_t r = 0; r < b.size(); ++r) {
      const auto len = static_cast<int64_t>(b.at(r).size());
      const bool null = static_cast<int64_t>(valid.size()) == b.size() && valid[r] == 0;
      if (len != s.type_length && !null) {
        throw InvalidArgument(where + (s.is_list ? " element " : " row ") + std::to_string(r) + " holds " +
                              std::to_string(len) + " bytes, its FIXED_LEN_BYTE_ARRAY type_length is " +
                              std::to_string(s.type_length));
      }
    }
  }
}

// A column's validity bytes, against the table's rows and the column's nullability.
void validate_validity(const Column& col, int64_t num_rows, const std::string& where) {
  if (col.validity.empty()) return;
  if (static_cast<int64_t>(col.validity.size()) != num_rows) {
    throw InvalidArgument(where + ": validity holds " + std::to_string(col.validity.size()) + " entries for " +
                          std::to_string(num_rows) + " rows");
  }
  if (!col.schema.nullable && std::find(col.validity.begin(), col.validity.end(), 0) != col.validity.end()) {
    throw InvalidArgument(where + " is not nullable but holds nulls");
  }
  if (std::any_of(col.validity.begin(), col.validity.end(), [](uint8_t v) { return v > 1; })) {
    throw InvalidArgument(where + ": validity bytes must be 0 or 1");
  }
}

// A column's annotations (INT, logical types, strings) against its physical type.
void validate_annotations(const ColumnSchema& s, const std::string& where) {
  if (s.int_annotation) {
    const IntAnnotation& a = *s.int_annotation;
    const bool ok = (s.type == PhysicalType::kInt32 && (a.bit_width == 8 || a.bit_width == 16 || a.bit_width == 32)) ||
                    (s.type == PhysicalType::kInt64 && a.bit_width == 64);
    if (!ok) {
      throw InvalidArgument(where + ": INT(" + std::to_string(a.bit_width) + ") cannot annotate " + to_string(s.type));
    }
  }
  if (s.logical.kind != LogicalKind::kNone) {
    const LogicalAnnotation& a = s.logical;
    const bool bytes = s.type == PhysicalType::kByteArray || s.type == PhysicalType::kFixedLenByteArray;
    const bool text = a.kind == LogicalKind::kVariant || a.kind == LogicalKind::kJson || a.kind == LogicalKind::kEnum;
    bool ok = !s.int_annotation && (!s.is_string || text);
    switch (a.kind) {
      case LogicalKind::kNone: break;
      case LogicalKind::kVariant: ok = ok && s.type == PhysicalType::kByteArray; break;  // JSON text
      case LogicalKind::kJson:
      case LogicalKind::kEnum: ok = ok && s.type == PhysicalType::kByteArray && s.is_string; break;
      case LogicalKind::kBson: ok = ok && s.type == PhysicalType::kByteArray; break;
      case LogicalKind::kInterval:
        ok = ok && s.type == PhysicalType::kFixedLenByteArray && s.type_length == 12;
        break;
      case LogicalKind::kDate: ok = ok && s.type == PhysicalType::kInt32; break;
      case LogicalKind::kTime:
        ok = ok && s.type == (a.unit == TimeUnit::kMillis ? PhysicalType::kInt32 : PhysicalType::kInt64);
        break;
      case LogicalKind::kTimestamp: ok = ok && s.type == PhysicalType::kInt64; break;
      case LogicalKind::kDecimal:
        ok = ok && a.precision >= 1 && (a.precision <= 38 || bytes) && a.scale >= 0 && a.scale <= a.precision &&
             ((s.type == PhysicalType::kInt32 && a.precision <= 9) ||
              (s.type == PhysicalType::kInt64 && a.precision <= 18) || bytes);
        break;
      case LogicalKind::kFloat16: ok = ok && s.type == PhysicalType::kFixedLenByteArray && s.type_length == 2; break;
      case LogicalKind::kUuid: ok = ok && s.type == PhysicalType::kFixedLenByteArray && s.type_length == 16; break;
    }
    if (!ok) throw InvalidArgument(where + ": its logical type does not fit " + to_string(s.type));
  }
  if (s.is_string && s.type != PhysicalType::kByteArray) {
    throw InvalidArgument(where + ": only BYTE_ARRAY columns can be strings");
  }
}

// The options a write takes: row group and page sizes, the codec's level.
void validate_options(const WriteOptions& options) {
  if (options.row_group_rows < 1) throw InvalidArgument("row_group_rows must be at least 1");
  if (options.page_bytes < 1 || options.page_bytes > (int64_t{1} << 30)) {
    throw InvalidArgument("page_bytes must be between 1 and 1 GiB");
  }
  if (options.codec == Codec::kZstd &&
      (options.compression_level < ZSTD_minCLevel() || options.compression_level > ZSTD_maxCLevel())) {
    throw InvalidArgument("zstd compression level " + std::to_string(options.compression_level) + " out of range");
  }
  if (options.codec == Codec::kGzip && (options.compression_level < -1 || options.compression_level > 9)) {
    throw InvalidArgument("gzip compression level " + std::to_string(options.compression_level) + " out of range");
  }
}

// With WriteOptions::dotted_names_as_structs: every dotted name a struct's name and a field's, the columns of one
// struct side by side (its fields in the table's order), and no name both a top-level column's and a struct's.
void validate_structs(const Table& table, const WriteOptions& options) {
  std::set<std::string> top_level, done;  // top-level columns; structs whose columns are all behind us
  std::string open;                       // the struct of the column before, if any
  for (const Column& col : table.columns) {
    const std::string& name = col.schema.name;
    const size_t dot = name.find('.');
    if (dot != std::string::npos && (dot == 0 || dot + 1 == name.size())) {
      throw InvalidArgument(column_where(col) + ": with dotted_names_as_structs a dotted name must be "
                            "<struct>.<field>, both parts non-empty");
    }
    const size_t n = struct_name_length(name, options);
    const std::string group = name.substr(0, n);
    if (group != open && !open.empty()) done.insert(open);
    if (n == 0) {
      top_level.insert(name);
    } else if (done.count(group) != 0) {
      throw InvalidArgument(column_where(col) + " is a field of struct '" + group +
                            "' but does not follow that struct's other columns: with dotted_names_as_structs a "
                            "struct's columns must stand next to each other");
    }
    open = group;
  }
  for (const Column& col : table.columns) {
    const size_t n = struct_name_length(col.schema.name, options);
    const std::string group = col.schema.name.substr(0, n);
    if (n > 0 && top_level.count(group) != 0) {
      throw InvalidArgument("column '" + group + "' is also the name of the struct that " + column_where(col) +
                            " makes with dotted_names_as_structs");
    }
  }
}

}  // namespace

void validate(const Table& table, const WriteOptions& options) {
  if (table.num_rows < 0) throw InvalidArgument("table has a negative row count");
  std::set<std::string> names;
  for (const Column& col : table.columns) {
    const ColumnSchema& s = col.schema;
    const std::string where = column_where(col);
    if (!names.insert(s.name).second) throw InvalidArgument(where + " appears twice");
    if (col.values.index() != value_index(s.type)) {
      throw InvalidArgument(where + ": values do not match its type " + to_string(s.type));
    }
    if (s.is_list) validate_list(col, table.num_rows);
    if (col.size() != table.num_rows) {
      throw InvalidArgument(where + " holds " + std::to_string(col.size()) + " values for " +
                            std::to_string(table.num_rows) + " rows");
    }
    validate_byte_arrays(col, where);
    validate_validity(col, table.num_rows, where);
    validate_annotations(s, where);
  }
  if (options.dotted_names_as_structs) validate_structs(table, options);
  validate_options(options);
}

// A column of the table handed to FileWriter::write() must be the writer's column: the same name, type,
// annotations and nullability, so that one footer describes every row group.
void check_same_schema(const std::string& path, const ColumnSchema& want, const ColumnSchema& got) {
  const std::string where = path + ": column '" + want.name + "'";
  if (got.name != want.name) throw InvalidArgument(where + ": the table has column '" + got.name + "' in its place");
  const bool same = got.type == want.type && got.type_length == want.type_length &&
                    got.int_annotation == want.int_annotation && got.is_string == want.is_string &&
                    got.logical == want.logical && got.is_list == want.is_list &&
                    got.element_nullable == want.element_nullable &&
                    got.inner_list_nullable == want.inner_list_nullable;
  if (!same) throw InvalidArgument(where + ": the table's column has another type or annotation than the file's");
  if (got.nullable != want.nullable) {
    throw InvalidArgument(where + (want.nullable ? ": the file's column is optional, the table's required"
                                                 : ": the file's column is required, the table's optional"));
  }
}

// A table of `schema`'s columns and no rows.
Table empty_table(const std::vector<ColumnSchema>& schema) {
  Table t;
  for (const ColumnSchema& s : schema) t.columns.push_back(make_column(s));
  return t;
}

}  // namespace feedline::parquet::detail
