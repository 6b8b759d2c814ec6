// Values as feedline prints them: `inspect`'s logical types and statistics, `cat`'s CSV and JSON cells, the text
// of single values of each kind, how a column's values print, and a cell as JSON. value_text.cpp holds every
// value's text (decimals and hex too); the writers call it. Plain functions without state: safe from any thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "feedline/io/table.h"

namespace feedline {

// Appends `bytes` as lowercase hex, two digits a byte: how feedline prints binary values (CSV, `cat`).
void append_hex(std::string& out, std::string_view bytes);

// A DECIMAL's unscaled integer with `scale` digits after the point, as text: "-12.30", "0.05", "7".
std::string decimal_to_string(__int128 unscaled, int scale);

// The same for an unscaled integer stored big-endian two's complement in any number of bytes (DECIMAL of any
// precision: 77 digits take 32 bytes), exactly.
std::string decimal_bytes_to_string(std::string_view big_endian, int scale);

// Such a DECIMAL's value as the nearest double.
double decimal_bytes_to_double(std::string_view big_endian, int scale);

// The logical type as `inspect` names it: "DATE", "TIMESTAMP(MICROS,UTC)", "DECIMAL(9,2)", "INT(8,unsigned)",
// "STRING", "length 16" for other fixed-length byte arrays; "" for none.
std::string logical_type_text(const ColumnSchema& s);

// A statistics value (raw PLAIN bytes) as text for its column's type; 0x and hex when the size does not fit.
std::string statistic_text(const ColumnSchema& s, const std::string& raw);

// Value `row` (for a list column, element `row`) as text, null or not: dates and times in ISO 8601, decimals
// exact, floats in their shortest round-trip digits ("NaN", "Infinity"), byte strings that are not text in hex.
std::optional<std::string> value_text(const Column& c, int64_t row);

// One row's cell as CSV text; nullopt for a null. A list is its JSON array.
std::optional<std::string> cell_text(const Column& c, int64_t row);

// One row of a table as a JSON object on one line, its keys the column names in the table's order: a null as null,
// a list as an array (of arrays, for a list of lists), text that is not valid UTF-8 with its bad bytes replaced.
std::string json_row(const Table& t, int64_t row);

// How value_text gives the values of a column of type `s`: kBytes, the bytes as they are (BYTE_ARRAY strings, and
// the text of JSON, ENUM, BSON and VARIANT columns); kHex, the bytes in hex, as append_hex writes them (other byte
// arrays); kShort, a short text made whole (booleans, numbers, dates and times, decimals, UUIDs, intervals,
// FLOAT16). Writers may hand on a long value of the first two from the column's bytes, piece by piece.
enum class ValueTextKind { kBytes, kHex, kShort };
ValueTextKind value_text_kind(const ColumnSchema& s);

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

// Value `row` (for a list column, element `row`) as JSON, as json_cell gives a value that is not null (validity is
// not looked at): a string, a number, a boolean, or the value that a JSON or VARIANT text holds.
nlohmann::ordered_json json_value(const Column& c, int64_t row);

// One row's cell as JSON: null, a value, or for a list column an array (of arrays, for a list of lists; nulls
// at any level as null).
nlohmann::ordered_json json_cell(const Column& c, int64_t row);

}  // namespace feedline
