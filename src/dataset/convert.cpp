#include "feedline/convert.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "feedline/columns.h"
#include "feedline/error.h"

namespace feedline {
namespace {

using Int128 = __int128;

std::string to_string(Int128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string digits;
  for (; u != 0; u /= 10) digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
  return negative ? "-" + digits : digits;
}

bool is_integer(const ColumnSchema& s) {
  return (s.type == PhysicalType::kInt32 || s.type == PhysicalType::kInt64) && s.logical.kind == LogicalKind::kNone;
}

bool is_unsigned(const ColumnSchema& s) { return s.int_annotation && !s.int_annotation->is_signed; }

// Value slots: one a row, or for a list column one an element.
int64_t slot_count(const Column& c) {
  return std::visit([](const auto& v) { return static_cast<int64_t>(v.size()); }, c.values);
}

bool slot_is_null(const Column& c, int64_t i) { return c.schema.is_list ? c.element_is_null(i) : c.is_null(i); }

// An integer column's value with its annotation's meaning: unsigned INT(32) and INT(64) are stored as the signed
// type's bit pattern.
Int128 integer_at(const Column& c, int64_t i) {
  if (c.schema.type == PhysicalType::kInt32) {
    const int32_t v = c.as<int32_t>()[static_cast<size_t>(i)];
    return is_unsigned(c.schema) ? Int128{static_cast<uint32_t>(v)} : Int128{v};
  }
  const int64_t v = c.as<int64_t>()[static_cast<size_t>(i)];
  return is_unsigned(c.schema) ? Int128{static_cast<uint64_t>(v)} : Int128{v};
}

constexpr Int128 kMaxExactDouble = Int128{1} << 53;

std::string where(const Column& c) { return "column '" + c.schema.name + "'"; }

// ------------------------------------------------------------------------------------------------ packing

// How a packed element is made from one source value.
template <class T>
struct Convert;

template <>
struct Convert<uint8_t> {  // a byte of FIXED_LEN_BYTE_ARRAY
  static uint8_t from(const Column& c, int64_t row) {
    const Int128 v = integer_at(c, row);
    if (v < 0 || v > 255) {
      throw InvalidArgument(where(c) + " row " + std::to_string(row) + " holds " + to_string(v) +
                            "; packing as bytes needs every value in 0..255 (pack as a list to keep any number)");
    }
    return static_cast<uint8_t>(v);
  }
};

template <>
struct Convert<int32_t> {  // the columns' shared INT32 type: the stored bits
  static int32_t from(const Column& c, int64_t row) { return c.as<int32_t>()[static_cast<size_t>(row)]; }
};

template <>
struct Convert<float> {  // the columns' shared FLOAT type
  static float from(const Column& c, int64_t row) { return c.as<float>()[static_cast<size_t>(row)]; }
};

template <>
struct Convert<int64_t> {  // INT64, shared (the stored bits) or widened from INT32
  static int64_t from(const Column& c, int64_t row) {
    if (c.schema.type == PhysicalType::kInt64 && !is_unsigned(c.schema)) {
      return c.as<int64_t>()[static_cast<size_t>(row)];
    }
    const Int128 v = integer_at(c, row);
    if (v > std::numeric_limits<int64_t>::max()) {
      throw InvalidArgument(where(c) + " row " + std::to_string(row) + " holds " + to_string(v) +
                            ", beyond the INT64 that the packed columns share");
    }
    return static_cast<int64_t>(v);
  }
};

template <>
struct Convert<double> {  // DOUBLE, shared or widened from any number
  static double from(const Column& c, int64_t row) {
    switch (c.schema.type) {
      case PhysicalType::kFloat: return c.as<float>()[static_cast<size_t>(row)];
      case PhysicalType::kDouble: return c.as<double>()[static_cast<size_t>(row)];
      default: break;
    }
    const Int128 v = integer_at(c, row);
    if (v > kMaxExactDouble || v < -kMaxExactDouble) {
      throw InvalidArgument(where(c) + " row " + std::to_string(row) + " holds " + to_string(v) +
                            ", which a DOUBLE (the packed columns' shared type) cannot hold exactly");
    }
    return static_cast<double>(v);
  }
};

// out[r * n + j] = column j's value at row r, a block of rows at a time so that both sides stay in cache.
template <class T>
void fill_rows(const std::vector<const Column*>& columns, int64_t rows, T* out) {
  constexpr int64_t kBlock = 256;
  const int64_t n = static_cast<int64_t>(columns.size());
  for (int64_t begin = 0; begin < rows; begin += kBlock) {
    const int64_t end = std::min(rows, begin + kBlock);
    for (int64_t j = 0; j < n; ++j) {
      const Column& c = *columns[static_cast<size_t>(j)];
      for (int64_t r = begin; r < end; ++r) out[r * n + j] = Convert<T>::from(c, r);
    }
  }
}

// The list elements' type: the columns' own when they share one, else INT64 for integers, else DOUBLE.
ColumnSchema element_schema(const std::vector<const Column*>& columns) {
  const ColumnSchema& first = columns.front()->schema;
  ColumnSchema s;
  const bool same = std::all_of(columns.begin(), columns.end(), [&](const Column* c) {
    return c->schema.type == first.type && c->schema.int_annotation == first.int_annotation;
  });
  const bool integers =
      std::all_of(columns.begin(), columns.end(), [](const Column* c) { return is_integer(c->schema); });
  if (same) {
    s.type = first.type;
    s.int_annotation = first.int_annotation;
    if (s.type == PhysicalType::kInt64 && is_unsigned(s)) s.int_annotation.reset();  // widened through Convert<int64_t>
  } else {
    s.type = integers ? PhysicalType::kInt64 : PhysicalType::kDouble;
  }
  return s;
}

void check_packable(const Column& c, int64_t rows) {
  const ColumnSchema& s = c.schema;
  const bool number = s.type == PhysicalType::kInt32 || s.type == PhysicalType::kInt64 ||
                      s.type == PhysicalType::kFloat || s.type == PhysicalType::kDouble;
  if (s.is_list) throw InvalidArgument(where(c) + " is a list; only columns of single numbers can be packed");
  if (!number || s.logical.kind != LogicalKind::kNone) {
    throw InvalidArgument(where(c) + " is not a plain number (" + std::string(to_string(s.type)) +
                          (s.logical.kind != LogicalKind::kNone ? " with a logical type" : "") +
                          "); it cannot be packed");
  }
  for (int64_t r = 0; r < rows; ++r) {
    if (c.is_null(r)) {
      throw InvalidArgument(where(c) + " row " + std::to_string(r) + " is null; packed columns hold no nulls");
    }
  }
}

}  // namespace

ColumnSchema narrowest_integer_schema(const Column& column) {
  ColumnSchema s = column.schema;
  if (!is_integer(s)) return s;
  bool any = false;
  Int128 lo = 0, hi = 0;
  const int64_t slots = slot_count(column);
  for (int64_t i = 0; i < slots; ++i) {
    if (slot_is_null(column, i)) continue;
    const Int128 v = integer_at(column, i);
    if (!any) lo = hi = v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    any = true;
  }
  if (!any) return s;
  for (const int bits : {8, 16, 32}) {
    const Int128 span = Int128{1} << bits;
    const bool fits_unsigned = lo >= 0 && hi < span;
    const bool fits_signed = lo >= -(span / 2) && hi < span / 2;
    if (fits_unsigned || fits_signed) {
      s.type = PhysicalType::kInt32;
      s.int_annotation = IntAnnotation{bits, !fits_unsigned};
      return s;
    }
  }
  return s;  // 64 bits: an INT32 column always fits above, so this one is INT64 already
}

void narrow_integer_columns(Table& table) {
  for (Column& column : table.columns) {
    const ColumnSchema narrow = narrowest_integer_schema(column);
    if (narrow.type == column.schema.type && narrow.int_annotation == column.schema.int_annotation) continue;
    const int64_t slots = slot_count(column);
    std::vector<int32_t> values(static_cast<size_t>(slots));
    for (int64_t i = 0; i < slots; ++i) {
      // Unsigned INT(32) keeps the value's low 32 bits: the stored form of its annotation. A null slot holds 0.
      if (slot_is_null(column, i)) continue;
      values[static_cast<size_t>(i)] = static_cast<int32_t>(static_cast<uint32_t>(integer_at(column, i)));
    }
    column.values = std::move(values);
    column.schema = narrow;
  }
}

void pack_columns(Table& table, const std::string& name, const std::vector<std::string>& patterns, PackAs as) {
  if (name.empty()) throw InvalidArgument("a packed column needs a name");
  std::vector<ColumnSchema> schema;
  for (const Column& c : table.columns) schema.push_back(c.schema);
  const std::vector<std::string> names = match_columns(schema, patterns);

  std::vector<size_t> positions;
  std::vector<const Column*> columns;
  for (const std::string& n : names) {
    positions.push_back(table.column_index(n));
    columns.push_back(&table.columns[positions.back()]);
  }
  for (size_t i = 0; i < table.columns.size(); ++i) {
    if (table.columns[i].schema.name == name && std::find(positions.begin(), positions.end(), i) == positions.end()) {
      throw InvalidArgument("cannot name the packed column '" + name + "': a column left in the table has that name");
    }
  }
  for (const Column* c : columns) check_packable(*c, table.num_rows);

  const int64_t rows = table.num_rows;
  const int64_t n = static_cast<int64_t>(columns.size());
  if (rows > 0 && n > std::numeric_limits<int64_t>::max() / rows) throw InvalidArgument("too many values to pack");
  ColumnSchema packed;
  packed.name = name;
  Column out;
  if (as == PackAs::kBytes) {
    if (n > std::numeric_limits<int32_t>::max()) throw InvalidArgument("too many columns to pack as bytes");
    for (const Column* c : columns) {
      if (!is_integer(c->schema)) {
        throw InvalidArgument(where(*c) + " holds " + to_string(c->schema.type) +
                              " values; packing as bytes needs integer columns (pack as a list to keep them)");
      }
    }
    packed.type = PhysicalType::kFixedLenByteArray;
    packed.type_length = static_cast<int32_t>(n);
    out = make_column(packed);
    ByteArrays& bytes = std::get<ByteArrays>(out.values);
    bytes.bytes.resize(static_cast<size_t>(rows * n));
    fill_rows(columns, rows, reinterpret_cast<uint8_t*>(bytes.bytes.data()));
    bytes.offsets.resize(static_cast<size_t>(rows) + 1);
    for (int64_t r = 0; r <= rows; ++r) bytes.offsets[static_cast<size_t>(r)] = r * n;
  } else {
    const ColumnSchema element = element_schema(columns);
    packed.type = element.type;
    packed.int_annotation = element.int_annotation;
    packed.is_list = true;
    out = make_column(packed);
    std::visit(
        [&](auto& values) {
          using V = std::decay_t<decltype(values)>;
          // element_schema() gives INT32, INT64, FLOAT or DOUBLE: never bytes or booleans.
          if constexpr (!std::is_same_v<V, ByteArrays> && !std::is_same_v<V, std::vector<uint8_t>>) {
            values.resize(static_cast<size_t>(rows * n));
            fill_rows(columns, rows, values.data());
          }
        },
        out.values);
    out.list_offsets.resize(static_cast<size_t>(rows) + 1);
    for (int64_t r = 0; r <= rows; ++r) out.list_offsets[static_cast<size_t>(r)] = r * n;
  }

  // The packed column takes the first source column's place; the others go.
  std::vector<Column> kept;
  kept.reserve(table.columns.size() - columns.size() + 1);
  for (size_t i = 0; i < table.columns.size(); ++i) {
    if (i == positions.front()) {
      kept.push_back(std::move(out));
    } else if (std::find(positions.begin(), positions.end(), i) == positions.end()) {
      kept.push_back(std::move(table.columns[i]));
    }
  }
  table.columns = std::move(kept);
}

}  // namespace feedline
