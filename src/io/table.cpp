#include "feedline/table.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "feedline/error.h"

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

void append_hex(std::string& out, std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  out.reserve(out.size() + 2 * bytes.size());
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
}

std::string decimal_to_string(__int128 unscaled, int scale) {
  const bool negative = unscaled < 0;
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(unscaled) : static_cast<unsigned __int128>(unscaled);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u > 0);
  if (scale > 0) {
    if (digits.size() <= static_cast<size_t>(scale)) digits.insert(0, static_cast<size_t>(scale) + 1 - digits.size(), '0');
    digits.insert(digits.size() - static_cast<size_t>(scale), ".");
  }
  return (negative ? "-" : "") + digits;
}

double Column::value_as_double(int64_t row) const {
  if (schema.logical.kind == LogicalKind::kDecimal) {
    const double unscaled = schema.type == PhysicalType::kInt32   ? std::get<1>(values)[row]
                            : schema.type == PhysicalType::kInt64 ? static_cast<double>(std::get<2>(values)[row])
                            : (schema.is_list ? element_is_null(row) : is_null(row)) ? 0.0
                                  : static_cast<double>(decimal_unscaled(std::get<5>(values).at(row)));
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

Table head(const Table& table, int64_t n) {
  if (n < 0) throw InvalidArgument("head: negative row count");
  Table out;
  out.num_rows = std::min(n, table.num_rows);
  const auto rows = static_cast<size_t>(out.num_rows);
  for (const Column& c : table.columns) {
    Column copy = make_column(c.schema);
    // For a list column, the first `rows` lists' elements; for a list of lists, the lists they hold at each
    // level, down to the values.
    size_t values = c.schema.is_list ? static_cast<size_t>(c.list_offsets[rows]) : rows;
    for (size_t k = 0; k < c.inner_lists.size(); ++k) {
      const ListLevel& level = c.inner_lists[k];
      const auto lists = static_cast<std::ptrdiff_t>(values);
      copy.inner_lists[k].offsets.assign(level.offsets.begin(), level.offsets.begin() + lists + 1);
      if (!level.validity.empty()) {
        copy.inner_lists[k].validity.assign(level.validity.begin(), level.validity.begin() + lists);
      }
      values = static_cast<size_t>(level.offsets[values]);
    }
    std::visit(
        [&](auto& dst) {
          using V = std::decay_t<decltype(dst)>;
          const V& src = std::get<V>(c.values);
          if constexpr (std::is_same_v<V, ByteArrays>) {
            for (size_t r = 0; r < values; ++r) dst.push_back(src.at(static_cast<int64_t>(r)));
          } else {
            dst.assign(src.begin(), src.begin() + static_cast<std::ptrdiff_t>(values));
          }
        },
        copy.values);
    if (!c.validity.empty()) copy.validity.assign(c.validity.begin(), c.validity.begin() + static_cast<std::ptrdiff_t>(rows));
    if (c.schema.is_list) {
      copy.list_offsets.assign(c.list_offsets.begin(), c.list_offsets.begin() + static_cast<std::ptrdiff_t>(rows) + 1);
      if (!c.element_validity.empty()) {
        copy.element_validity.assign(c.element_validity.begin(),
                                     c.element_validity.begin() + static_cast<std::ptrdiff_t>(values));
      }
    }
    out.columns.push_back(std::move(copy));
  }
  return out;
}

}  // namespace feedline
