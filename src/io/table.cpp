#include "feedline/io/table.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "feedline/io/error.h"
#include "io/value_text.h"

namespace feedline {

const char* to_string(PhysicalType type) {
  switch (type) {
    case PhysicalType::kBoolean: return "BOOLEAN";
    case PhysicalType::kInt32: return "INT32";
    case PhysicalType::kInt64: return "INT64";
    case PhysicalType::kFloat: return "FLOAT";
    case PhysicalType::kDouble: return "DOUBLE";
    case PhysicalType::kByteArray: return "BYTE_ARRAY";
    case PhysicalType::kFixedLenByteArray: return "FIXED_LEN_BYTE_ARRAY";
  }
  return "?";
}

int64_t Column::size() const {
  if (schema.is_list) return static_cast<int64_t>(list_offsets.size()) - 1;
  return std::visit([](const auto& v) { return static_cast<int64_t>(v.size()); }, values);
}

float half_to_float(uint16_t bits) {
  const uint32_t sign = (bits >> 15) & 1, exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // zero and subnormals
  } else if (exponent == 31) {
    // Infinity, or a NaN keeping its sign and payload, bit for bit.
    const uint32_t wide = (sign << 31) | 0x7f800000u | (mantissa << 13);
    float f;
    std::memcpy(&f, &wide, 4);
    return f;
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), static_cast<int>(exponent) - 25);
  }
  return sign ? -magnitude : magnitude;
}

__int128 decimal_unscaled(std::string_view big_endian) {
  if (big_endian.size() > 16) {
    throw InvalidArgument("DECIMAL of " + std::to_string(big_endian.size()) + " bytes (at most 16 are supported)");
  }
  if (big_endian.empty()) return 0;
  unsigned __int128 v = static_cast<uint8_t>(big_endian[0]) >= 0x80 ? ~static_cast<unsigned __int128>(0) : 0;
  for (const char c : big_endian) v = (v << 8) | static_cast<uint8_t>(c);
  return static_cast<__int128>(v);
}

double decimal_bytes_to_double(std::string_view big_endian, int scale) {
  if (big_endian.size() <= 16) return static_cast<double>(decimal_unscaled(big_endian)) / std::pow(10.0, scale);
  // Exact text (value_text.cpp makes the text of decimals and bytes), then the correctly rounded double of it.
  return std::strtod(decimal_bytes_to_string(big_endian, scale).c_str(), nullptr);
}

double Column::value_as_double(int64_t row) const {
  if (schema.logical.kind == LogicalKind::kDecimal) {
    if (schema.type == PhysicalType::kByteArray || schema.type == PhysicalType::kFixedLenByteArray) {
      if (schema.is_list ? element_is_null(row) : is_null(row)) return 0.0;
      return decimal_bytes_to_double(std::get<5>(values).at(row), schema.logical.scale);
    }
    const double unscaled = schema.type == PhysicalType::kInt32 ? std::get<1>(values)[row]
                                                                : static_cast<double>(std::get<2>(values)[row]);
    return unscaled / std::pow(10.0, schema.logical.scale);
  }
  if (schema.logical.kind == LogicalKind::kFloat16 && schema.type == PhysicalType::kFixedLenByteArray) {
    const std::string_view v = std::get<5>(values).at(row);
    if (v.size() != 2) return 0.0;  // a null
    return half_to_float(static_cast<uint16_t>(static_cast<uint8_t>(v[0]) | (static_cast<uint8_t>(v[1]) << 8)));
  }
  switch (schema.type) {
    case PhysicalType::kBoolean: return std::get<0>(values)[row];
    // Unsigned INT(32) and INT(64) hold the signed type's bit pattern.
    case PhysicalType::kInt32: {
      const int32_t v = std::get<1>(values)[row];
      return schema.int_annotation && !schema.int_annotation->is_signed ? static_cast<double>(static_cast<uint32_t>(v))
                                                                        : static_cast<double>(v);
    }
    case PhysicalType::kInt64: {
      const int64_t v = std::get<2>(values)[row];
      return schema.int_annotation && !schema.int_annotation->is_signed ? static_cast<double>(static_cast<uint64_t>(v))
                                                                        : static_cast<double>(v);
    }
    case PhysicalType::kFloat: return std::get<3>(values)[row];
    case PhysicalType::kDouble: return std::get<4>(values)[row];
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: break;
  }
  throw InvalidArgument("column '" + schema.name + "' holds byte arrays, not numbers");
}

Column make_column(ColumnSchema schema) {
  Column c;
  switch (schema.type) {
    case PhysicalType::kBoolean: c.values.emplace<0>(); break;
    case PhysicalType::kInt32: c.values.emplace<1>(); break;
    case PhysicalType::kInt64: c.values.emplace<2>(); break;
    case PhysicalType::kFloat: c.values.emplace<3>(); break;
    case PhysicalType::kDouble: c.values.emplace<4>(); break;
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: c.values.emplace<5>(); break;
  }
  if (schema.is_list) c.list_offsets.push_back(0);
  c.inner_lists.resize(schema.inner_list_nullable.size());
  c.schema = std::move(schema);
  return c;
}

size_t Table::column_index(std::string_view name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].schema.name == name) return i;
  }
  throw InvalidArgument("no column named '" + std::string(name) + "'");
}

namespace {

// Appends entries [begin, end) of `src` (one byte per entry, or empty: all 1) to `dst`, which holds `dst_size`
// entries, or none when it is empty and every one of them is 1. `dst` stays empty while it has no 0 (no null),
// as Column asks.
void append_validity(std::vector<uint8_t>& dst, int64_t dst_size, const std::vector<uint8_t>& src, int64_t begin,
                     int64_t end) {
  if (dst.empty() && (src.empty() || std::find(src.begin() + begin, src.begin() + end, 0) == src.begin() + end)) {
    return;
  }
  if (dst.empty()) dst.assign(static_cast<size_t>(dst_size), 1);
  if (src.empty()) {
    dst.insert(dst.end(), static_cast<size_t>(end - begin), 1);
  } else {
    dst.insert(dst.end(), src.begin() + begin, src.begin() + end);
  }
}

// Appends offsets for entries [begin, end) of `src` to `dst`, shifted so that they continue dst's last one.
void append_offsets(std::vector<int64_t>& dst, const std::vector<int64_t>& src, int64_t begin, int64_t end) {
  const int64_t shift = dst.back() - src[static_cast<size_t>(begin)];
  for (int64_t i = begin + 1; i <= end; ++i) dst.push_back(src[static_cast<size_t>(i)] + shift);
}

bool same_type(const ColumnSchema& a, const ColumnSchema& b) {
  return a.type == b.type && a.type_length == b.type_length && a.int_annotation == b.int_annotation &&
         a.is_string == b.is_string && a.logical == b.logical && a.is_list == b.is_list &&
         a.inner_list_nullable.size() == b.inner_list_nullable.size();
}

void append_column(Column& dst, const Column& src, int64_t begin, int64_t end) {
  const int64_t dst_rows = dst.size();
  // element_validity is one byte per value (see Column).
  const int64_t dst_values = !dst.schema.is_list        ? dst_rows
                             : dst.inner_lists.empty() ? dst.list_offsets.back()
                                                       : dst.inner_lists.back().offsets.back();
  append_validity(dst.validity, dst_rows, src.validity, begin, end);
  // The range of entries at each level of lists, down to the values.
  int64_t v0 = begin, v1 = end;
  if (src.schema.is_list) {
    append_offsets(dst.list_offsets, src.list_offsets, begin, end);
    v0 = src.list_offsets[static_cast<size_t>(begin)];
    v1 = src.list_offsets[static_cast<size_t>(end)];
    for (size_t k = 0; k < src.inner_lists.size(); ++k) {
      ListLevel& to = dst.inner_lists[k];
      const ListLevel& from = src.inner_lists[k];
      append_validity(to.validity, to.size(), from.validity, v0, v1);
      append_offsets(to.offsets, from.offsets, v0, v1);
      v0 = from.offsets[static_cast<size_t>(v0)];
      v1 = from.offsets[static_cast<size_t>(v1)];
    }
    append_validity(dst.element_validity, dst_values, src.element_validity, v0, v1);
  }
  std::visit(
      [&](auto& to) {
        using V = std::decay_t<decltype(to)>;
        const V& from = std::get<V>(src.values);
        if constexpr (std::is_same_v<V, ByteArrays>) {
          const auto b = static_cast<size_t>(from.offsets[static_cast<size_t>(v0)]);
          const auto e = static_cast<size_t>(from.offsets[static_cast<size_t>(v1)]);
          append_offsets(to.offsets, from.offsets, v0, v1);
          to.bytes.append(from.bytes, b, e - b);
        } else {
          to.insert(to.end(), from.begin() + v0, from.begin() + v1);
        }
      },
      dst.values);
}

}  // namespace

void append_rows(Table& dst, const Table& src, int64_t begin, int64_t end) {
  if (begin < 0 || end < begin || end > src.num_rows) {
    throw InvalidArgument("rows " + std::to_string(begin) + " to " + std::to_string(end) + " of a table of " +
                          std::to_string(src.num_rows) + " rows");
  }
  if (dst.columns.empty() && dst.num_rows == 0) {
    for (const Column& c : src.columns) dst.columns.push_back(make_column(c.schema));
  }
  if (dst.columns.size() != src.columns.size()) {
    throw InvalidArgument("appending a table of " + std::to_string(src.columns.size()) + " columns to one of " +
                          std::to_string(dst.columns.size()));
  }
  for (size_t c = 0; c < src.columns.size(); ++c) {
    const ColumnSchema &to = dst.columns[c].schema, &from = src.columns[c].schema;
    if (to.name != from.name || !same_type(to, from)) {
      throw InvalidArgument("appending column '" + from.name + "' (" + to_string(from.type) + ") to column '" +
                            to.name + "' (" + to_string(to.type) + "): they differ");
    }
  }
  for (size_t c = 0; c < src.columns.size(); ++c) append_column(dst.columns[c], src.columns[c], begin, end);
  dst.num_rows += end - begin;
}

Table slice(const Table& table, int64_t begin, int64_t end) {
  Table out;
  for (const Column& c : table.columns) out.columns.push_back(make_column(c.schema));
  append_rows(out, table, begin, end);
  return out;
}

Table head(const Table& table, int64_t n) {
  if (n < 0) throw InvalidArgument("head: negative row count");
  return slice(table, 0, std::min(n, table.num_rows));
}

}  // namespace feedline
