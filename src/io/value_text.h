// Values as feedline prints them (internal to the library and the tool): `inspect`'s logical types and
// statistics, `cat`'s CSV and JSON cells. Plain functions without state: safe from any thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "feedline/io/table.h"

namespace feedline {

// The logical type as `inspect` names it: "DATE", "TIMESTAMP(MICROS,UTC)", "DECIMAL(9,2)", "INT(8,unsigned)",
// "STRING", "length 16" for other fixed-length byte arrays; "" for none.
std::string logical_type_text(const ColumnSchema& s);

// A statistics value (raw PLAIN bytes) as text for its column's type; 0x and hex when the size does not fit.
std::string statistic_text(const ColumnSchema& s, const std::string& raw);

// Value `row` (for a list column, element `row`) as text, null or not: dates and times in ISO 8601, decimals
// exact, floats in their shortest round-trip digits ("NaN", "Infinity"), byte strings that are not text in hex.
std::optional<std::string> value_text(const Column& c, int64_t row);

// Days since 1970-01-01 as YYYY-MM-DD (proleptic Gregorian).
std::string date_text(int64_t days);

// A TIME (`v` units since midnight, taken modulo a day: some writers leave times past midnight or below 0 after
// subtracting a time zone's offset) and a TIMESTAMP (`v` units since the epoch) as value_text prints them:
// "12:33:54.123456", "2024-11-07T12:33:54.123456Z" (Z when adjusted to UTC), with the unit's fraction digits.
std::string time_text(int64_t v, TimeUnit unit);
std::string timestamp_text(int64_t v, TimeUnit unit, bool utc);

// A double in its shortest round-trip digits; "NaN", "Infinity", "-Infinity" for the values JSON lacks.
std::string double_text(double v);

// 16 bytes as a UUID's canonical 8-4-4-4-12 lowercase hex.
std::string uuid_text(std::string_view bytes);

// An interval as DuckDB prints one: years and months, days, then the time of day's length with its fraction's
// digits up to the last that is not 0 ("1 year 2 months 3 days 04:05:06.789", "-1 day", "25:00:00"), and
// "00:00:00" when all three are 0.
std::string interval_text(int32_t months, int32_t days, int64_t micros);

// One row's cell as JSON: null, a value, or for a list column an array (of arrays, for a list of lists; nulls
// at any level as null).
nlohmann::ordered_json json_cell(const Column& c, int64_t row);

// One row's cell as CSV text; nullopt for a null. A list is its JSON array.
std::optional<std::string> cell_text(const Column& c, int64_t row);

}  // namespace feedline
