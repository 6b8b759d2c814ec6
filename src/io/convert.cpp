#include "feedline/io/convert.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "feedline/io/columns.h"
#include "feedline/io/error.h"

namespace feedline {

bool is_narrowable_integer(const ColumnSchema& s) {
  return (s.type == PhysicalType::kInt32 || s.type == PhysicalType::kInt64) && s.logical.kind == LogicalKind::kNone;
}

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
  static uint8_t from(const Column& c, int64_t row, int64_t first_row) {
    const Int128 v = integer_at(c, row);
    if (v < 0 || v > 255) {
      throw InvalidArgument(where(c) + " row " + std::to_string(first_row + row) + " holds " + to_string(v) +
                            "; packing as bytes needs every value in 0..255 (pack as a list to keep any number)");
    }
    return static_cast<uint8_t>(v);
  }
};

template <>
struct Convert<int32_t> {  // the columns' shared INT32 type: the stored bits
  static int32_t from(const Column& c, int64_t row, int64_t) { return c.as<int32_t>()[static_cast<size_t>(row)]; }
};

template <>
struct Convert<float> {  // the columns' shared FLOAT type
  static float from(const Column& c, int64_t row, int64_t) { return c.as<float>()[static_cast<size_t>(row)]; }
};

template <>
struct Convert<int64_t> {  // INT64, shared (the stored bits) or widened from INT32
  static int64_t from(const Column& c, int64_t row, int64_t first_row) {
    if (c.schema.type == PhysicalType::kInt64 && !is_unsigned(c.schema)) {
      return c.as<int64_t>()[static_cast<size_t>(row)];
    }
    const Int128 v = integer_at(c, row);
    if (v > std::numeric_limits<int64_t>::max()) {
      throw InvalidArgument(where(c) + " row " + std::to_string(first_row + row) + " holds " + to_string(v) +
                            ", beyond the INT64 that the packed columns share");
    }
    return static_cast<int64_t>(v);
  }
};

template <>
struct Convert<double> {  // DOUBLE, shared or widened from any number
  static double from(const Column& c, int64_t row, int64_t first_row) {
    switch (c.schema.type) {
      case PhysicalType::kFloat: return c.as<float>()[static_cast<size_t>(row)];
      case PhysicalType::kDouble: return c.as<double>()[static_cast<size_t>(row)];
      default: break;
    }
    const Int128 v = integer_at(c, row);
    if (v > kMaxExactDouble || v < -kMaxExactDouble) {
      throw InvalidArgument(where(c) + " row " + std::to_string(first_row + row) + " holds " + to_string(v) +
                            ", which a DOUBLE (the packed columns' shared type) cannot hold exactly");
    }
    return static_cast<double>(v);
  }
};

// out[r * n + j] = column j's value at row r, a block of rows at a time so that both sides stay in cache.
template <class T>
void fill_rows(const std::vector<const Column*>& columns, int64_t rows, int64_t first_row, T* out) {
  constexpr int64_t kBlock = 256;
  const int64_t n = static_cast<int64_t>(columns.size());
  for (int64_t begin = 0; begin < rows; begin += kBlock) {
    const int64_t end = std::min(rows, begin + kBlock);
    for (int64_t j = 0; j < n; ++j) {
      const Column& c = *columns[static_cast<size_t>(j)];
      for (int64_t r = begin; r < end; ++r) out[r * n + j] = Convert<T>::from(c, r, first_row);
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
      std::all_of(columns.begin(), columns.end(), [](const Column* c) { return is_narrowable_integer(c->schema); });
  if (same) {
    s.type = first.type;
    s.int_annotation = first.int_annotation;
    if (s.type == PhysicalType::kInt64 && is_unsigned(s)) s.int_annotation.reset();  // widened through Convert<int64_t>
  } else {
    s.type = integers ? PhysicalType::kInt64 : PhysicalType::kDouble;
  }
  return s;
}

void check_packable(const Column& c, int64_t rows, int64_t first_row) {
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
      throw InvalidArgument(where(c) + " row " + std::to_string(first_row + r) +
                            " is null; packed columns hold no nulls");
    }
  }
}

}  // namespace

namespace {

// The narrowest INT annotation for values in [lo, hi] (`s` unchanged when 32 bits do not hold them: an INT32
// column always fits, so that one is INT64 already).
ColumnSchema narrowest_for(ColumnSchema s, Int128 lo, Int128 hi) {
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
  return s;
}

}  // namespace

void IntegerRanges::add(const Table& block) {
  if (schema_.empty()) {
    for (const Column& c : block.columns) schema_.push_back(c.schema);
    ranges_.assign(schema_.size(), std::nullopt);
  }
  if (block.columns.size() != schema_.size()) {
    throw InvalidArgument("IntegerRanges: a block of " + std::to_string(block.columns.size()) + " columns after " +
                          std::to_string(schema_.size()));
  }
  for (size_t k = 0; k < schema_.size(); ++k) {
    const Column& column = block.columns[k];
    if (column.schema.name != schema_[k].name || column.schema.type != schema_[k].type ||
        !(column.schema.int_annotation == schema_[k].int_annotation)) {
      throw InvalidArgument("IntegerRanges: " + where(column) + " differs from the first block's '" +
                            schema_[k].name + "'");
    }
    if (!is_narrowable_integer(column.schema)) continue;
    std::optional<std::pair<Int128, Int128>>& range = ranges_[k];
    const int64_t slots = slot_count(column);
    for (int64_t i = 0; i < slots; ++i) {
      if (slot_is_null(column, i)) continue;
      const Int128 v = integer_at(column, i);
      if (!range) range.emplace(v, v);
      range->first = std::min(range->first, v);
      range->second = std::max(range->second, v);
    }
  }
}

std::vector<ColumnSchema> IntegerRanges::narrowed() const {
  std::vector<ColumnSchema> out = schema_;
  for (size_t k = 0; k < out.size(); ++k) {
    if (ranges_[k]) out[k] = narrowest_for(out[k], ranges_[k]->first, ranges_[k]->second);
  }
  return out;
}

void cast_integer_columns(Table& table, const std::vector<ColumnSchema>& schema, int64_t first_row) {
  if (schema.size() != table.columns.size()) {
    throw InvalidArgument("cast_integer_columns: " + std::to_string(schema.size()) + " types for " +
                          std::to_string(table.columns.size()) + " columns");
  }
  for (size_t k = 0; k < schema.size(); ++k) {
    Column& column = table.columns[k];
    const ColumnSchema& to = schema[k];
    if (to.type == column.schema.type && to.int_annotation == column.schema.int_annotation) continue;
    if (!is_narrowable_integer(column.schema) || to.type != PhysicalType::kInt32 || !to.int_annotation ||
        to.name != column.schema.name) {
      throw InvalidArgument("cast_integer_columns: " + where(column) + " cannot become another type than INT(8/16/32)");
    }
    const int bits = to.int_annotation->bit_width;
    const Int128 lo = to.int_annotation->is_signed ? -(Int128{1} << (bits - 1)) : 0;
    const Int128 hi = to.int_annotation->is_signed ? (Int128{1} << (bits - 1)) - 1 : (Int128{1} << bits) - 1;
    const int64_t slots = slot_count(column);
    std::vector<int32_t> values(static_cast<size_t>(slots));
    for (int64_t i = 0; i < slots; ++i) {
      // Unsigned INT(32) keeps the value's low 32 bits: the stored form of its annotation. A null slot holds 0.
      if (slot_is_null(column, i)) continue;
      const Int128 v = integer_at(column, i);
      if (v < lo || v > hi) {
        const std::string type = "INT(" + std::to_string(bits) + (to.int_annotation->is_signed ? ",signed)" : ",unsigned)");
        throw InvalidArgument(where(column) + (column.schema.is_list ? " element " : " row ") +
                              std::to_string(column.schema.is_list ? i : first_row + i) + " holds " + to_string(v) +
                              ", beyond " + type);
      }
      values[static_cast<size_t>(i)] = static_cast<int32_t>(static_cast<uint32_t>(v));
    }
    column.values = std::move(values);
    column.schema.type = to.type;
    column.schema.int_annotation = to.int_annotation;
  }
}

void narrow_integer_columns(Table& table) {
  IntegerRanges ranges;
  ranges.add(table);
  cast_integer_columns(table, ranges.narrowed());
}

void pack_columns(Table& table, const std::string& name, const std::vector<std::string>& patterns, PackAs as,
                  int64_t first_row) {
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
  for (const Column* c : columns) check_packable(*c, table.num_rows, first_row);

  const int64_t rows = table.num_rows;
  const int64_t n = static_cast<int64_t>(columns.size());
  if (rows > 0 && n > std::numeric_limits<int64_t>::max() / rows) throw InvalidArgument("too many values to pack");
  ColumnSchema packed;
  packed.name = name;
  Column out;
  if (as == PackAs::kBytes) {
    if (n > std::numeric_limits<int32_t>::max()) throw InvalidArgument("too many columns to pack as bytes");
    for (const Column* c : columns) {
      if (!is_narrowable_integer(c->schema)) {
        throw InvalidArgument(where(*c) + " holds " + to_string(c->schema.type) +
                              " values; packing as bytes needs integer columns (pack as a list to keep them)");
      }
    }
    packed.type = PhysicalType::kFixedLenByteArray;
    packed.type_length = static_cast<int32_t>(n);
    out = make_column(packed);
    ByteArrays& bytes = std::get<ByteArrays>(out.values);
    bytes.bytes.resize(static_cast<size_t>(rows * n));
    fill_rows(columns, rows, first_row, reinterpret_cast<uint8_t*>(bytes.bytes.data()));
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
            fill_rows(columns, rows, first_row, values.data());
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
