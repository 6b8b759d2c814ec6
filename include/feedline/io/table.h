// An in-memory columnar table: what the CSV and Parquet readers produce and the writers consume.
// Plain data, no locking: safe to read from many threads once built.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace feedline {

// Parquet's physical types that feedline handles for flat tables.
// kFixedLenByteArray holds its values in ByteArrays too, each exactly ColumnSchema::type_length bytes.
enum class PhysicalType { kBoolean, kInt32, kInt64, kFloat, kDouble, kByteArray, kFixedLenByteArray };

const char* to_string(PhysicalType type);

// Parquet's INT(bit_width, signed) logical annotation.
struct IntAnnotation {
  int bit_width = 32;  // 8, 16, 32 or 64
  bool is_signed = true;
  bool operator==(const IntAnnotation& o) const { return bit_width == o.bit_width && is_signed == o.is_signed; }
};

// Parquet's logical types beyond INT and STRING. Values keep their physical storage: DATE is INT32 days since
// 1970-01-01; TIME is INT32 (millis) or INT64 (micros, nanos) since midnight; TIMESTAMP is INT64 units since the
// epoch (INT96 timestamps are read as TIMESTAMP(MICROS), not adjusted to UTC, as Spark means them); DECIMAL is
// the unscaled integer in INT32, INT64, or big-endian two's complement in a (FIXED_LEN_)BYTE_ARRAY; FLOAT16 is a
// FIXED_LEN_BYTE_ARRAY(2) of IEEE half-precision, little-endian; UUID is a FIXED_LEN_BYTE_ARRAY(16) of the UUID's
// bytes in their written order (shown as the canonical 8-4-4-4-12 lowercase hex). VARIANT (semi-structured
// values, shredded or not) is read as each value's JSON text in a BYTE_ARRAY STRING column, and written as a
// STRING annotated JSON. INTERVAL is a FIXED_LEN_BYTE_ARRAY(12) of three little-endian 32-bit counts: months,
// days, milliseconds (shown as DuckDB shows it: "1 year 2 months 3 days 04:05:06.789"). JSON and ENUM are
// BYTE_ARRAY strings (is_string), BSON a BYTE_ARRAY of bytes: the kind only names what the text or bytes are.
enum class LogicalKind {
  kNone, kDate, kTime, kTimestamp, kDecimal, kFloat16, kUuid, kVariant, kInterval, kJson, kEnum, kBson
};
enum class TimeUnit { kMillis, kMicros, kNanos };

struct LogicalAnnotation {
  LogicalKind kind = LogicalKind::kNone;
  TimeUnit unit = TimeUnit::kMicros;  // kTime, kTimestamp
  bool utc = true;                    // kTime, kTimestamp: isAdjustedToUTC
  int32_t precision = 0, scale = 0;   // kDecimal
  // Compares what the kind uses: the unit and UTC flag of times, the precision and scale of decimals.
  bool operator==(const LogicalAnnotation& o) const {
    if (kind != o.kind) return false;
    if (kind == LogicalKind::kTime || kind == LogicalKind::kTimestamp) return unit == o.unit && utc == o.utc;
    if (kind == LogicalKind::kDecimal) return precision == o.precision && scale == o.scale;
    return true;
  }
};

struct ColumnSchema {
  std::string name;
  PhysicalType type = PhysicalType::kInt64;
  bool nullable = false;
  std::optional<IntAnnotation> int_annotation;  // only for kInt32 / kInt64
  bool is_string = false;                        // kByteArray with a STRING (UTF8) annotation
  int32_t type_length = 0;                       // kFixedLenByteArray: bytes per value (positive)
  LogicalAnnotation logical;                     // DATE, TIME, TIMESTAMP, DECIMAL, FLOAT16, UUID, ...
  // A list column (Parquet's LIST of a primitive, or a bare repeated primitive): each row holds a list of
  // values of the type above. `nullable` then says whether a row's list may be null, `element_nullable`
  // whether an element may be.
  bool is_list = false;
  bool element_nullable = false;
  // Lists of lists (LIST of LIST, any depth): one entry per level of lists inside the row's list, outside in,
  // saying whether a list at that level may be null. Empty for a list of values, so that code written for one
  // level of lists reads such columns unchanged.
  std::vector<bool> inner_list_nullable;

  // Levels of lists: 0 for a flat column, 1 for a list of values, 2 for list<list<...>>, and so on.
  int list_depth() const { return is_list ? 1 + static_cast<int>(inner_list_nullable.size()) : 0; }
};

// Variable-length values: value i is bytes[offsets[i], offsets[i+1]).
struct ByteArrays {
  std::vector<int64_t> offsets{0};
  std::string bytes;
  int64_t size() const { return static_cast<int64_t>(offsets.size()) - 1; }
  std::string_view at(int64_t i) const {
    return std::string_view(bytes.data() + offsets[i], static_cast<size_t>(offsets[i + 1] - offsets[i]));
  }
  void push_back(std::string_view v) {
    bytes.append(v.data(), v.size());
    offsets.push_back(static_cast<int64_t>(bytes.size()));
  }
  bool operator==(const ByteArrays& o) const { return offsets == o.offsets && bytes == o.bytes; }
};

// The variant's alternative follows PhysicalType (see value_index): bool is stored as one uint8_t (0 or 1) per
// row, BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY both as ByteArrays.
using ColumnValues = std::variant<std::vector<uint8_t>, std::vector<int32_t>, std::vector<int64_t>,
                                  std::vector<float>, std::vector<double>, ByteArrays>;

// One level of lists inside a list column's rows (Column::inner_lists): `offsets` holds one entry per list at
// this level plus one, starting at 0; list i holds the next level's entries [offsets[i], offsets[i + 1]) (the
// values, at the innermost level). `validity` is empty when no list at this level is null, else one byte
// (1 = present) per list; a null list holds no entries.
struct ListLevel {
  std::vector<int64_t> offsets{0};
  std::vector<uint8_t> validity;
  int64_t size() const { return static_cast<int64_t>(offsets.size()) - 1; }
  bool is_null(int64_t list) const { return !validity.empty() && validity[list] == 0; }
};

// One column: one value slot per row (a null row holds a zero value / empty bytes), and a validity vector
// that is empty when the column has no nulls, else one byte (1 = present) per row.
// A list column (schema.is_list) holds every row's elements back to back in `values`: row r's elements are
// values[list_offsets[r] .. list_offsets[r + 1]). A null row holds no elements; a null element holds a zero
// value and is marked in element_validity (empty when no element is null, else one byte per element).
// A list of lists (schema.list_depth() > 1) keeps list_offsets and validity for the rows' lists, whose
// elements are now the lists of inner_lists[0]: row r holds inner_lists[0]'s lists [list_offsets[r],
// list_offsets[r + 1]), list i of inner_lists[k] holds inner_lists[k + 1]'s lists [offsets[i], offsets[i + 1]),
// and the innermost level's lists hold the values. For list<list<INT32>> with rows [[1, 2], null, []] and
// [[3]]: list_offsets {0, 3, 4}, inner_lists[0] = {offsets {0, 2, 2, 2, 3}, validity {1, 0, 1, 1}}, values
// {1, 2, 3}. element_validity stays one byte per value.
struct Column {
  ColumnSchema schema;
  ColumnValues values;
  std::vector<uint8_t> validity;
  std::vector<int64_t> list_offsets;      // list columns: rows + 1 entries, starting at 0
  std::vector<uint8_t> element_validity;  // list columns
  std::vector<ListLevel> inner_lists;     // lists of lists: schema.list_depth() - 1 levels, outside in

  // Rows (for a list column, lists; not elements).
  int64_t size() const;
  // Elements in row `row`'s list (list columns only; for a list of lists, the lists of inner_lists[0]).
  int64_t list_size(int64_t row) const { return list_offsets[row + 1] - list_offsets[row]; }
  bool element_is_null(int64_t element) const {
    return !element_validity.empty() && element_validity[element] == 0;
  }
  bool is_null(int64_t row) const { return !validity.empty() && validity[row] == 0; }
  template <class T>
  const std::vector<T>& as() const { return std::get<std::vector<T>>(values); }
  template <class T>
  std::vector<T>& as() { return std::get<std::vector<T>>(values); }
  const ByteArrays& byte_arrays() const { return std::get<ByteArrays>(values); }
  // The value at `row` converted to double (0 for null): DECIMAL scaled, FLOAT16 widened, dates and times as
  // their raw integers. Throws InvalidArgument for other byte arrays. For a list column, `row` indexes the
  // elements.
  double value_as_double(int64_t row) const;
};

// IEEE half precision (a FLOAT16 value's two bytes, read little-endian) widened to float, exactly.
float half_to_float(uint16_t bits);

// The unscaled integer of a DECIMAL stored big-endian two's complement, up to 16 bytes (precision 38); throws
// InvalidArgument for longer values.
__int128 decimal_unscaled(std::string_view big_endian);

// The ColumnValues alternative that holds values of `type`.
constexpr size_t value_index(PhysicalType type) {
  return type == PhysicalType::kFixedLenByteArray ? 5 : static_cast<size_t>(type);
}

// Builds an empty column whose value vector matches the schema's physical type (with list_offsets {0} for a
// list column, and an empty ListLevel for each inner level of a list of lists).
Column make_column(ColumnSchema schema);

struct Table {
  std::vector<Column> columns;
  int64_t num_rows = 0;

  // Index of the column called `name`; throws InvalidArgument when absent.
  size_t column_index(std::string_view name) const;
  const Column& column(std::string_view name) const { return columns[column_index(name)]; }
};

// The first min(n, num_rows) rows of `table` (a copy).
Table head(const Table& table, int64_t n);

// Rows [begin, end) of `table` (a copy; list offsets start again at 0). Throws InvalidArgument for a range
// outside 0..num_rows.
Table slice(const Table& table, int64_t begin, int64_t end);

// Appends rows [begin, end) of `src` to `dst`, column by column. A `dst` without columns takes src's schemas;
// otherwise the columns must match in number, name and type (InvalidArgument naming the column when not).
// Validity vectors are filled in as needed: dst keeps an empty one while neither side has a null.
void append_rows(Table& dst, const Table& src, int64_t begin, int64_t end);

}  // namespace feedline
