// Values as feedline prints them: `inspect`'s types and statistics, `cat`'s CSV and JSON cells.
#include "io/value_text.h"

#include <fmt/core.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

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

}  // namespace

std::string logical_type_text(const ColumnSchema& s) {
  const LogicalAnnotation& a = s.logical;
  const char* unit = a.unit == TimeUnit::kMillis ? "MILLIS" : a.unit == TimeUnit::kMicros ? "MICROS" : "NANOS";
  switch (a.kind) {
    case LogicalKind::kNone: break;
    case LogicalKind::kDate: return "DATE";
    case LogicalKind::kTime: return fmt::format("TIME({}{})", unit, a.utc ? ",UTC" : "");
    case LogicalKind::kTimestamp: return fmt::format("TIMESTAMP({}{})", unit, a.utc ? ",UTC" : "");
    case LogicalKind::kDecimal: return fmt::format("DECIMAL({},{})", a.precision, a.scale);
    case LogicalKind::kFloat16: return "FLOAT16";
    case LogicalKind::kUuid: return "UUID";
    case LogicalKind::kVariant: return "VARIANT";
    case LogicalKind::kInterval: return "INTERVAL";
    case LogicalKind::kJson: return "JSON";
    case LogicalKind::kEnum: return "ENUM";
    case LogicalKind::kBson: return "BSON";
  }
  if (s.int_annotation) {
    return fmt::format("INT({},{})", s.int_annotation->bit_width, s.int_annotation->is_signed ? "signed" : "unsigned");
  }
  if (s.is_string) return "STRING";
  if (s.type == PhysicalType::kFixedLenByteArray) return fmt::format("length {}", s.type_length);
  return "";
}

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

namespace {

// Whether values of the kind print in a form of their own, rather than as their physical type (or string) does.
bool has_own_text(LogicalKind kind) {
  return kind != LogicalKind::kNone && kind != LogicalKind::kJson && kind != LogicalKind::kEnum &&
         kind != LogicalKind::kBson && kind != LogicalKind::kVariant;
}

bool is_unsigned(const ColumnSchema& s) { return s.int_annotation && !s.int_annotation->is_signed; }

// A value of a DATE, TIME, TIMESTAMP, DECIMAL, FLOAT16 or UUID column as text (ISO 8601 for dates and times); the
// integer for INT32/INT64 storage, the bytes for byte-array storage. nullopt for other columns.
std::optional<std::string> logical_text(const ColumnSchema& s, int64_t integer, std::string_view bytes) {
  const LogicalAnnotation& a = s.logical;
  switch (a.kind) {
    case LogicalKind::kNone: return std::nullopt;
    case LogicalKind::kDate: return date_text(integer);
    case LogicalKind::kTime: return time_text(integer, a.unit);
    case LogicalKind::kTimestamp: return timestamp_text(integer, a.unit, a.utc);
    case LogicalKind::kVariant:  // its JSON text, a string
    case LogicalKind::kJson:
    case LogicalKind::kEnum:
    case LogicalKind::kBson: return std::nullopt;  // the text or bytes
    case LogicalKind::kInterval: {
      if (bytes.size() != 12) return std::nullopt;
      // Months and days as DuckDB reads them (signed), milliseconds unsigned.
      int32_t months, days;
      uint32_t millis;
      std::memcpy(&months, bytes.data(), 4);
      std::memcpy(&days, bytes.data() + 4, 4);
      std::memcpy(&millis, bytes.data() + 8, 4);
      return interval_text(months, days, int64_t{millis} * 1000);
    }
    case LogicalKind::kDecimal:
      if (s.type == PhysicalType::kInt32 || s.type == PhysicalType::kInt64) return decimal_to_string(integer, a.scale);
      return decimal_bytes_to_string(bytes, a.scale);
    case LogicalKind::kUuid:
      if (bytes.size() != 16) return std::nullopt;
      return uuid_text(bytes);
    case LogicalKind::kFloat16:
      if (bytes.size() != 2) return std::nullopt;
      return float_text(half_to_float(static_cast<uint16_t>(static_cast<uint8_t>(bytes[0]) |
                                                            (static_cast<uint8_t>(bytes[1]) << 8))));
  }
  return std::nullopt;
}

}  // namespace

// A statistics value (raw PLAIN bytes) as text for its column's type; hex when the size does not fit.
std::string statistic_text(const ColumnSchema& s, const std::string& raw) {
  if (has_own_text(s.logical.kind)) {
    std::optional<int64_t> integer;
    if (s.type == PhysicalType::kInt32) integer = parquet::plain_statistic<int32_t>(raw);
    if (s.type == PhysicalType::kInt64) integer = parquet::plain_statistic<int64_t>(raw);
    const bool bytes = s.type == PhysicalType::kByteArray || s.type == PhysicalType::kFixedLenByteArray;
    const bool fits = integer.has_value() || (bytes && (raw.size() <= 16 || s.logical.kind == LogicalKind::kDecimal));
    if (fits) {
      if (auto text = logical_text(s, integer.value_or(0), raw)) return *text;
    }
    return "0x" + hex(raw);
  }
  switch (s.type) {
    case PhysicalType::kBoolean:
      if (raw.size() == 1) return raw[0] ? "true" : "false";
      break;
    case PhysicalType::kInt32:
      if (auto v = parquet::plain_statistic<int32_t>(raw)) {
        return is_unsigned(s) ? std::to_string(static_cast<uint32_t>(*v)) : std::to_string(*v);
      }
      break;
    case PhysicalType::kInt64:
      if (auto v = parquet::plain_statistic<int64_t>(raw)) {
        return is_unsigned(s) ? std::to_string(static_cast<uint64_t>(*v)) : std::to_string(*v);
      }
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
  return "0x" + hex(raw);
}

// Value `row` (for a list column, element `row`) as text, null or not.
std::optional<std::string> value_text(const Column& c, int64_t row) {
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

ordered_json json_value(const Column& c, int64_t row) {
  const auto text = value_text(c, row);
  if (!text) return nullptr;
  if (c.schema.logical.kind == LogicalKind::kFloat16) {
    const double v = c.value_as_double(row);
    return std::isfinite(v) ? ordered_json::parse(*text) : ordered_json(*text);
  }
  if (c.schema.logical.kind == LogicalKind::kVariant || c.schema.logical.kind == LogicalKind::kJson) {
    // The value itself, not a string holding it; text that does not parse (bytes that are not UTF-8) as a string.
    ordered_json parsed = ordered_json::parse(*text, nullptr, /*allow_exceptions=*/false);
    return parsed.is_discarded() ? ordered_json(*text) : parsed;
  }
  if (has_own_text(c.schema.logical.kind)) return *text;  // ISO 8601 dates and times, exact decimals, intervals
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
