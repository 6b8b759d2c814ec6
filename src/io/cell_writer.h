// A table's rows as text, written as they are made (what `feedline cat` prints), and the pieces that write them. A table's rows written as CSV records or JSON lines straight
// into an output buffer, the text that cell_text / json_row give, without building any cell's whole text first.
// A byte string is escaped (CSV quotes doubled; JSON escapes, bytes that are not UTF-8 replaced as nlohmann's
// error_handler_t::replace replaces them) or turned into hex piece by piece from the column's own bytes, so that a
// value of a gigabyte costs the output buffer and no copy of it; a list's JSON array is written element by
// element. What a value's text is comes from value_text.h alone (value_text_kind says which values are byte
// strings or hex; small values, numbers, dates, decimals, are value_text / json_value's whole). Text that a JSON or
// VARIANT column holds is written to JSON lines as its parsed and dumped value, which needs the whole text: such
// a value is built whole, as json_row builds it.
// The functions keep no state; a sink is used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

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

// Where text goes: the output buffer, or a filter in front of it.
class TextSink {
 public:
  virtual ~TextSink() = default;
  virtual void write(std::string_view text) = 0;
  void put(char c) { write(std::string_view(&c, 1)); }
};

// Text gathered into a buffer of fixed size and handed to `flush` whenever it fills, and on flush(). The
// destructor drops what flush() did not hand on: the callback may throw, and a destructor must not.
class OutputBuffer final : public TextSink {
 public:
  static constexpr size_t kDefaultCapacity = size_t{64} << 10;

  explicit OutputBuffer(std::function<void(std::string_view)> flush, size_t capacity = kDefaultCapacity);
  void write(std::string_view text) override;
  // Hands the buffered text to the callback.
  void flush();

 private:
  std::function<void(std::string_view)> flush_;
  std::vector<char> buffer_;
  size_t used_ = 0;
};

// `bytes` as a JSON string, quotes included: '"', '\\' and control characters escaped as nlohmann escapes them,
// other characters as they are, and each maximal bad part of a sequence that is not UTF-8 replaced by U+FFFD.
void write_json_string(TextSink& out, std::string_view bytes);

// `text` as a CSV field: as it is, or in quotes (quotes doubled) when it holds a comma, quote or line end, or is
// empty.
void write_csv_field(TextSink& out, std::string_view text);

// The same rule building a string: the field for a cell_text.
std::string csv_field(std::string_view text);

// One row's cell as cell_text + csv_field give it; nothing for a null.
void write_csv_cell(TextSink& out, const Column& c, int64_t row);

// One row's cell as JSON, as json_cell(c, row).dump() gives it with bad UTF-8 replaced.
void write_json_cell(TextSink& out, const Column& c, int64_t row);

// The CSV header (the column names) and one row's record, each with its line end. A record that would be an
// empty line (one column, null) is written as "" instead: an empty line is no record to a reader.
void write_csv_header(TextSink& out, const Table& t);
void write_csv_record(TextSink& out, const Table& t, int64_t row);

// JSON lines: one object a row, as json_row gives it followed by a line end. Columns that share a name give one
// key, where the name first appears, holding the last such column's value (as an object built key by key).
class JsonLineWriter {
 public:
  explicit JsonLineWriter(const Table& t);
  void write(TextSink& out, int64_t row) const;

 private:
  const Table& table_;
  std::vector<size_t> columns_;  // the column whose value each key takes, in the keys' order
};

}  // namespace feedline
