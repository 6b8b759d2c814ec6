// A table's rows as text, written as they are made: CSV records (what `feedline cat` prints) or JSON lines, handed
// on in pieces so that a long value (a string of a gigabyte) is never copied into a text of its own first.
// Plain functions without state: safe from any thread for tables that no one changes meanwhile.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "feedline/io/table.h"

namespace feedline {

enum class TextFormat {
  kCsv,        // a header of the column names, then a record a row: cell_text's texts, quoted where RFC 4180
               // needs it; a null empty, and a record of one null column as "" (an empty line is no record)
  kJsonLines,  // an object a row, as json_row gives it, each on its own line
};

// Writes rows [0, rows) of `t` (every row when `rows` is negative or past the end) in `format`, handing the text
// to `write` in pieces of up to 64 KiB, or a long value's bytes as they are, in order. What `write` throws passes
// through.
void write_table_text(const Table& t, TextFormat format, const std::function<void(std::string_view)>& write,
                      int64_t rows = -1);

}  // namespace feedline
