// Values as feedline prints them, every kind's text in this one place: `inspect`'s types and statistics, `cat`'s
// CSV and JSON cells (cell_writer.cpp writes the long ones piece by piece, as these texts have them), decimals and
// hex (declared in feedline/io/table.h), dates, times, floats, UUIDs and intervals.
#include "io/value_text.h"

#include <fmt/core.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "feedline/io/parquet.h"
#include "feedline/io/table.h"

namespace feedline {

using nlohmann::ordered_json;

namespace {

std::string hex(std::string_view bytes) {
  std::string s;
  append_hex(s, bytes);
  return s;
}

// Shortest text that reads back as the same float, as JSON-friendly words for the values JSON lacks.
template <class F>
std::string float_text(F v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return fmt::format("{}", v);
}

bool is_unsigned(const ColumnSchema& s) { return s.int_annotation && !s.int_annotation->is_signed; }

// An INT32 or INT64 value as its column's integer annotation reads it: unsigned ones from the same bits.
template <class T>
std::string integer_text(const ColumnSchema& s, T v) {
  return is_unsigned(s) ? std::to_string(static_cast<std::make_unsigned_t<T>>(v)) : std::to_string(v);
}

// Whether values of the kind print in a form of their own, rather than as their physical type (or string) does.
bool has_own_text(LogicalKind kind) {
  return kind != LogicalKind::kNone && kind != LogicalKind::kJson && kind != LogicalKind::kEnum &&
         kind != LogicalKind::kBson && kind != LogicalKind::kVariant;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// Decimals and bytes: declared with the table (feedline/io/table.h), whose values they print.

void append_hex(std::string& out, std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  out.reserve(out.size() + 2 * bytes.size());
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
}

namespace {

// A decimal's digits (its magnitude's, without leading zeros) with `scale` of them after the point.
std::string with_point(std::string digits, int scale) {
  if (scale > 0) {
    const auto point = static_cast<size_t>(scale);
    if (digits.size() <= point) digits.insert(0, point + 1 - digits.size(), '0');
    digits.insert(digits.size() - point, ".");
  }
  return digits;
}

// The magnitude of a two's complement big-endian integer of any length, as base-2^32 limbs, most significant
// first.
std::vector<uint32_t> magnitude_limbs(std::string_view big_endian, bool negative) {
  std::vector<uint8_t> bytes(big_endian.begin(), big_endian.end());
  if (negative) {  // two's complement: invert and add one
    for (auto& b : bytes) b = static_cast<uint8_t>(~b);
    for (size_t i = bytes.size(); i-- > 0;) {
      if (++bytes[i] != 0) break;
    }
  }
  std::vector<uint32_t> limbs((bytes.size() + 3) / 4, 0);
  const size_t pad = limbs.size() * 4 - bytes.size();
  for (size_t i = 0; i < bytes.size(); ++i) {
    const size_t at = i + pad;
    limbs[at / 4] |= static_cast<uint32_t>(bytes[i]) << (8 * (3 - at % 4));
  }
  return limbs;
}

// The decimal digits of a magnitude in limbs (which it uses up), without leading zeros: divided by 10^9 until
// nothing is left, the remainders are the digits, nine at a time, lowest first.
std::string limbs_digits(std::vector<uint32_t> limbs) {
  std::string digits;
  const auto is_zero = [&limbs] {
    for (const uint32_t l : limbs) {
      if (l != 0) return false;
    }
    return true;
  };
  do {
    uint64_t remainder = 0;
    for (auto& l : limbs) {
      const uint64_t cur = (remainder << 32) | l;
      l = static_cast<uint32_t>(cur / 1000000000u);
      remainder = cur % 1000000000u;
    }
    char chunk[16];
    std::snprintf(chunk, sizeof chunk, "%09u", static_cast<unsigned>(remainder));
    digits.insert(0, chunk);
  } while (!is_zero());
  const size_t first = digits.find_first_not_of('0');
  return first == std::string::npos ? "0" : digits.substr(first);
}

}  // namespace

std::string decimal_to_string(__int128 unscaled, int scale) {
  const bool negative = unscaled < 0;
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(unscaled) : static_cast<unsigned __int128>(unscaled);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u > 0);
  return (negative ? "-" : "") + with_point(std::move(digits), scale);
}

std::string decimal_bytes_to_string(std::string_view big_endian, int scale) {
  if (big_endian.size() <= 16) return decimal_to_string(decimal_unscaled(big_endian), scale);
  const bool negative = static_cast<uint8_t>(big_endian[0]) >= 0x80;
  return (negative ? "-" : "") + with_point(limbs_digits(magnitude_limbs(big_endian, negative)), scale);
}

// ---------------------------------------------------------------------------------------------------------
// Types.

namespace {

// A logical kind's name as Parquet spells it; "" for none.
const char* kind_name(LogicalKind kind) {
  switch (kind) {
    case LogicalKind::kNone: return "";
    case LogicalKind::kDate: return "DATE";
    case LogicalKind::kTime: return "TIME";
    case LogicalKind::kTimestamp: return "TIMESTAMP";
    case LogicalKind::kDecimal: return "DECIMAL";
    case LogicalKind::kFloat16: return "FLOAT16";
    case LogicalKind::kUuid: return "UUID";
    case LogicalKind::kVariant: return "VARIANT";
    case LogicalKind::kInterval: return "INTERVAL";
    case LogicalKind::kJson: return "JSON";
    case LogicalKind::kEnum: return "ENUM";
    case LogicalKind::kBson: return "BSON";
  }
  return "";
}

// What follows the name of an annotation with parameters: "(MICROS,UTC)" for times and timestamps, "(9,2)" for
// decimals; "" for the others.
std::string annotation_parameters(const LogicalAnnotation& a) {
  const char* unit = a.unit == TimeUnit::kMillis ? "MILLIS" : a.unit == TimeUnit::kMicros ? "MICROS" : "NANOS";
  if (a.kind == LogicalKind::kTime || a.kind == LogicalKind::kTimestamp) {
    return fmt::format("({}{})", unit, a.utc ? ",UTC" : "");
  }
  if (a.kind == LogicalKind::kDecimal) return fmt::format("({},{})", a.precision, a.scale);
  return "";
}

// The type of a column without a logical annotation as `inspect` names it: its integer annotation, STRING, a
// fixed length; "" for a bare physical type.
std::string storage_type_text(const ColumnSchema& s) {
  if (s.int_annotation) {
    return fmt::format("INT({},{})", s.int_annotation->bit_width, s.int_annotation->is_signed ? "signed" : "unsigned");
  }
  if (s.is_string) return "STRING";
  if (s.type == PhysicalType::kFixedLenByteArray) return fmt::format("length {}", s.type_length);
  return "";
}

}  // namespace

std::string logical_type_text(const ColumnSchema& s) {
  if (s.logical.kind == LogicalKind::kNone) return storage_type_text(s);
  return kind_name(s.logical.kind) + annotation_parameters(s.logical);
}

// ---------------------------------------------------------------------------------------------------------
// Dates, times, floats, UUIDs, intervals.

std::string date_text(int64_t days) {
  // A proleptic Gregorian civil date (Howard Hinnant's days_from_civil inverse).
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

namespace {

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

int64_t units_per_second(TimeUnit unit) {
  return unit == TimeUnit::kMillis ? 1000 : unit == TimeUnit::kMicros ? 1000000 : 1000000000;
}

}  // namespace

std::string time_text(int64_t v, TimeUnit unit) {
  const int64_t per_second = units_per_second(unit);
  v -= floor_div(v, 86400 * per_second) * 86400 * per_second;  // into the day (writers that subtract an offset)
  const int digits = unit == TimeUnit::kMillis ? 3 : unit == TimeUnit::kMicros ? 6 : 9;
  const int64_t seconds = floor_div(v, per_second), fraction = v - seconds * per_second;
  return fmt::format("{:02}:{:02}:{:02}.{:0{}}", seconds / 3600, seconds / 60 % 60, seconds % 60, fraction, digits);
}

std::string timestamp_text(int64_t v, TimeUnit unit, bool utc) {
  const int64_t per_day = int64_t{86400} * units_per_second(unit);
  const int64_t day = floor_div(v, per_day);
  return date_text(day) + "T" + time_text(v - day * per_day, unit) + (utc ? "Z" : "");
}

std::string double_text(double v) { return float_text(v); }

std::string uuid_text(std::string_view bytes) {
  std::string text;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    append_hex(text, bytes.substr(i, 1));
  }
  return text;
}

std::string interval_text(int32_t months, int32_t days, int64_t micros) {
  std::string text;
  const auto part = [&](int64_t n, const char* unit) {
    if (n == 0) return;
    if (!text.empty()) text += ' ';
    text += fmt::format("{} {}{}", n, unit, n == 1 || n == -1 ? "" : "s");
  };
  part(months / 12, "year");
  part(months % 12, "month");
  part(days, "day");
  if (micros != 0) {
    if (!text.empty()) text += ' ';
    // (as unsigned: the magnitude of INT64_MIN too)
    uint64_t v = micros < 0 ? 0 - static_cast<uint64_t>(micros) : static_cast<uint64_t>(micros);
    if (micros < 0) text += '-';
    const uint64_t hours = v / 3600000000, minutes = v / 60000000 % 60, seconds = v / 1000000 % 60;
    text += fmt::format("{:02}:{:02}:{:02}", hours, minutes, seconds);
    if (v % 1000000 != 0) {
      std::string fraction = fmt::format("{:06}", v % 1000000);
      fraction.erase(fraction.find_last_not_of('0') + 1);
      text += '.' + fraction;
    }
  } else if (text.empty()) {
    text = "00:00:00";
  }
  return text;
}

// ---------------------------------------------------------------------------------------------------------
// A value of a column, and a statistic.

ValueTextKind value_text_kind(const ColumnSchema& s) {
  if (value_index(s.type) != value_index(PhysicalType::kByteArray) || has_own_text(s.logical.kind)) {
    return ValueTextKind::kShort;
  }
  return s.type == PhysicalType::kByteArray && s.is_string ? ValueTextKind::kBytes : ValueTextKind::kHex;
}

namespace {

// An INTERVAL's 12 bytes: months and days as DuckDB reads them (signed), milliseconds unsigned. nullopt for
// another size.
std::optional<std::string> interval_bytes_text(std::string_view bytes) {
  if (bytes.size() != 12) return std::nullopt;
  int32_t months, days;
  uint32_t millis;
  std::memcpy(&months, bytes.data(), 4);
  std::memcpy(&days, bytes.data() + 4, 4);
  std::memcpy(&millis, bytes.data() + 8, 4);
  return interval_text(months, days, int64_t{millis} * 1000);
}

// A DECIMAL stored as INT32 or INT64 (`integer`), or as bytes, exactly.
std::string decimal_text(const ColumnSchema& s, int64_t integer, std::string_view bytes) {
  const int scale = s.logical.scale;
  if (s.type == PhysicalType::kInt32 || s.type == PhysicalType::kInt64) return decimal_to_string(integer, scale);
  return decimal_bytes_to_string(bytes, scale);
}

// A FLOAT16's two bytes (little-endian) as float_text gives it. nullopt for another size.
std::optional<std::string> float16_text(std::string_view bytes) {
  if (bytes.size() != 2) return std::nullopt;
  return float_text(
      half_to_float(static_cast<uint16_t>(static_cast<uint8_t>(bytes[0]) | (static_cast<uint8_t>(bytes[1]) << 8))));
}

// A value of a DATE, TIME, TIMESTAMP, DECIMAL, INTERVAL, FLOAT16 or UUID column as text (ISO 8601 for dates and
// times); the integer for INT32/INT64 storage, the bytes for byte-array storage. nullopt for other columns, and
// for bytes of a size the kind does not have.
std::optional<std::string> logical_text(const ColumnSchema& s, int64_t integer, std::string_view bytes) {
  const LogicalAnnotation& a = s.logical;
  switch (a.kind) {
    case LogicalKind::kDate: return date_text(integer);
    case LogicalKind::kTime: return time_text(integer, a.unit);
    case LogicalKind::kTimestamp: return timestamp_text(integer, a.unit, a.utc);
    case LogicalKind::kDecimal: return decimal_text(s, integer, bytes);
    case LogicalKind::kInterval: return interval_bytes_text(bytes);
    case LogicalKind::kUuid: return bytes.size() == 16 ? std::optional<std::string>(uuid_text(bytes)) : std::nullopt;
    case LogicalKind::kFloat16: return float16_text(bytes);
    case LogicalKind::kNone:
    case LogicalKind::kVariant:  // its JSON text, a string
    case LogicalKind::kJson:
    case LogicalKind::kEnum:
    case LogicalKind::kBson: break;  // the text or bytes
  }
  return std::nullopt;
}

// A value as its physical type prints it: true or false, integers (unsigned ones as such), floats in their
// shortest round-trip digits, a string's bytes as they are, other bytes in hex.
std::optional<std::string> physical_text(const Column& c, int64_t row) {
  const ColumnSchema& s = c.schema;
  switch (s.type) {
    case PhysicalType::kBoolean: return c.as<uint8_t>()[row] ? "true" : "false";
    case PhysicalType::kInt32: return integer_text(s, c.as<int32_t>()[row]);
    case PhysicalType::kInt64: return integer_text(s, c.as<int64_t>()[row]);
    case PhysicalType::kFloat: return float_text(c.as<float>()[row]);
    case PhysicalType::kDouble: return float_text(c.as<double>()[row]);
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: {
      const std::string_view bytes = c.byte_arrays().at(row);
      return s.type == PhysicalType::kByteArray && s.is_string ? std::string(bytes) : hex(bytes);
    }
  }
  return std::nullopt;
}

// value_text of a kShort column: its logical type's text, else its physical type's.
std::optional<std::string> short_text(const Column& c, int64_t row) {
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
  return physical_text(c, row);
}

// A statistic of a column whose logical type prints in a form of its own, as that form; nullopt where its size
// does not fit the type.
std::optional<std::string> logical_statistic_text(const ColumnSchema& s, const std::string& raw) {
  std::optional<int64_t> integer;
  if (s.type == PhysicalType::kInt32) integer = parquet::plain_statistic<int32_t>(raw);
  if (s.type == PhysicalType::kInt64) integer = parquet::plain_statistic<int64_t>(raw);
  const bool bytes = s.type == PhysicalType::kByteArray || s.type == PhysicalType::kFixedLenByteArray;
  const bool fits = integer.has_value() || (bytes && (raw.size() <= 16 || s.logical.kind == LogicalKind::kDecimal));
  if (!fits) return std::nullopt;
  return logical_text(s, integer.value_or(0), raw);
}

// A statistic as its physical type prints it (a string's bytes as they are); nullopt where its size does not fit
// the type, and for other bytes.
std::optional<std::string> physical_statistic_text(const ColumnSchema& s, const std::string& raw) {
  switch (s.type) {
    case PhysicalType::kBoolean:
      if (raw.size() == 1) return raw[0] ? "true" : "false";
      break;
    case PhysicalType::kInt32:
      if (auto v = parquet::plain_statistic<int32_t>(raw)) return integer_text(s, *v);
      break;
    case PhysicalType::kInt64:
      if (auto v = parquet::plain_statistic<int64_t>(raw)) return integer_text(s, *v);
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
  return std::nullopt;
}

}  // namespace

// A statistics value (raw PLAIN bytes) as text for its column's type; hex when the size does not fit.
std::string statistic_text(const ColumnSchema& s, const std::string& raw) {
  const std::optional<std::string> text =
      has_own_text(s.logical.kind) ? logical_statistic_text(s, raw) : physical_statistic_text(s, raw);
  return text ? *text : "0x" + hex(raw);
}

// Value `row` (for a list column, element `row`) as text, null or not.
std::optional<std::string> value_text(const Column& c, int64_t row) {
  switch (value_text_kind(c.schema)) {
    case ValueTextKind::kBytes: return std::string(c.byte_arrays().at(row));
    case ValueTextKind::kHex: return hex(c.byte_arrays().at(row));
    case ValueTextKind::kShort: break;
  }
  return short_text(c, row);
}

// ---------------------------------------------------------------------------------------------------------
// JSON.

namespace {

// A number's text as a JSON number (its digits kept), or, for NaN and infinities, which JSON lacks, as a string.
ordered_json json_number(const std::string& text, double v) {
  return std::isfinite(v) ? ordered_json::parse(text) : ordered_json(text);
}

// The value a JSON or VARIANT text holds, not a string holding it; text that does not parse (bytes that are not
// UTF-8) as a string.
ordered_json json_parsed(const std::string& text) {
  ordered_json parsed = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? ordered_json(text) : parsed;
}

// A value without a logical form of its own, its value_text `text`, as JSON: a boolean, a number, or a string.
ordered_json json_physical(const Column& c, int64_t row, const std::string& text) {
  switch (c.schema.type) {
    case PhysicalType::kBoolean: return c.as<uint8_t>()[row] != 0;
    case PhysicalType::kInt32:
    case PhysicalType::kInt64:
      if (is_unsigned(c.schema)) return std::stoull(text);
      return std::stoll(text);
    case PhysicalType::kFloat: return json_number(text, c.as<float>()[row]);
    case PhysicalType::kDouble: return json_number(text, c.as<double>()[row]);
    default: return text;
  }
}

}  // namespace

ordered_json json_value(const Column& c, int64_t row) {
  const auto text = value_text(c, row);
  if (!text) return nullptr;
  const LogicalKind kind = c.schema.logical.kind;
  if (kind == LogicalKind::kFloat16) return json_number(*text, c.value_as_double(row));
  if (kind == LogicalKind::kVariant || kind == LogicalKind::kJson) return json_parsed(*text);
  if (has_own_text(kind)) return *text;  // ISO 8601 dates and times, exact decimals, intervals
  return json_physical(c, row, *text);
}

namespace {

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

}  // namespace

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

std::string json_row(const Table& t, int64_t row) {
  ordered_json line = ordered_json::object();
  for (const auto& c : t.columns) line[c.schema.name] = json_cell(c, row);
  return line.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

}  // namespace feedline
