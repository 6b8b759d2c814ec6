// Values as feedline prints them: `inspect`'s logical types and statistics, `cat`'s CSV and JSON cells. Plain
// functions without state: safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

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

// One row's cell as CSV text; nullopt for a null. A list is its JSON array.
std::optional<std::string> cell_text(const Column& c, int64_t row);

// One row of a table as a JSON object on one line, its keys the column names in the table's order: a null as null,
// a list as an array (of arrays, for a list of lists), text that is not valid UTF-8 with its bad bytes replaced.
std::string json_row(const Table& t, int64_t row);

}  // namespace feedline
