// A table's rows as CSV records or JSON lines, each byte string escaped piece by piece from the column's bytes.
#include "io/cell_writer.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "feedline/io/table.h"
#include "io/value_text.h"

namespace feedline {

OutputBuffer::OutputBuffer(std::function<void(std::string_view)> flush, size_t capacity)
    : flush_(std::move(flush)), buffer_(std::max<size_t>(capacity, 1)) {}

void OutputBuffer::write(std::string_view text) {
  if (text.size() >= buffer_.size()) {  // a long piece goes on as it is, after what came before it
    flush();
    flush_(text);
    return;
  }
  while (!text.empty()) {
    if (used_ == buffer_.size()) flush();
    const size_t n = std::min(buffer_.size() - used_, text.size());
    std::memcpy(buffer_.data() + used_, text.data(), n);
    used_ += n;
    text.remove_prefix(n);
  }
}

void OutputBuffer::flush() {
  if (used_ == 0) return;
  const size_t n = used_;
  used_ = 0;
  flush_(std::string_view(buffer_.data(), n));
}

namespace {

// What decides a UTF-8 sequence: its length, and the range of its second byte (the others are 80..BF).
struct Utf8Check {
  bool valid;
  size_t length;  // of the sequence when valid, else of its maximal bad part (at least 1 byte)
};

// The sequence that starts at p[0] (a byte from 0x80 up), `left` bytes at most: well formed as Unicode's table
// 3-7 has it (no overlong forms, no surrogates, nothing past U+10FFFF), or how many bytes a decoder that stops at
// the first byte that cannot follow (nlohmann's, Hoehrmann's) takes before it rejects.
Utf8Check check_utf8(const unsigned char* p, size_t left) {
  const unsigned char lead = p[0];
  if (lead < 0xC2 || lead > 0xF4) return {false, 1};
  const size_t need = lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
  const unsigned char lo = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
  const unsigned char hi = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
  for (size_t k = 1; k < need; ++k) {
    if (k >= left) return {false, k};
    const unsigned char b = p[k];
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return {false, k};
  }
  return {true, need};
}

// The escape nlohmann writes for one of the ASCII characters a JSON string cannot hold as they are.
void write_json_escape(TextSink& out, unsigned char b) {
  switch (b) {
    case '\b': out.write("\\b"); return;
    case '\t': out.write("\\t"); return;
    case '\n': out.write("\\n"); return;
    case '\f': out.write("\\f"); return;
    case '\r': out.write("\\r"); return;
    case '"': out.write("\\\""); return;
    case '\\': out.write("\\\\"); return;
    default: {
      static constexpr char kDigits[] = "0123456789abcdef";
      const char text[6] = {'\\', 'u', '0', '0', kDigits[b >> 4], kDigits[b & 15]};
      out.write(std::string_view(text, sizeof text));
    }
  }
}

bool is_csv_special(char c) { return c == ',' || c == '"' || c == '\r' || c == '\n'; }

bool needs_csv_quotes(std::string_view text) {
  return text.empty() || std::any_of(text.begin(), text.end(), is_csv_special);
}

// `text` with each quote doubled.
void write_quotes_doubled(TextSink& out, std::string_view text) {
  while (!text.empty()) {
    const void* quote = std::memchr(text.data(), '"', text.size());
    const size_t n = quote == nullptr ? text.size() : static_cast<const char*>(quote) - text.data() + 1;
    out.write(text.substr(0, n));
    if (quote != nullptr) out.put('"');
    text.remove_prefix(n);
  }
}

// Notes whether text written to it needs CSV quotes (holds a comma, quote or line end), and keeps nothing.
class QuoteProbe final : public TextSink {
 public:
  void write(std::string_view text) override {
    if (!needs_quotes_) needs_quotes_ = std::any_of(text.begin(), text.end(), is_csv_special);
  }
  bool needs_quotes() const { return needs_quotes_; }

 private:
  bool needs_quotes_ = false;
};

// Hands text on to `out` with each quote doubled: the inside of a quoted CSV field.
class QuoteDoubler final : public TextSink {
 public:
  explicit QuoteDoubler(TextSink& out) : out_(out) {}
  void write(std::string_view text) override { write_quotes_doubled(out_, text); }

 private:
  TextSink& out_;
};

// Bytes in hex as value_text gives them (append_hex), a bounded piece at a time.
void write_hex(TextSink& out, std::string_view bytes) {
  constexpr size_t kPiece = 4096;
  std::string text;
  while (!bytes.empty()) {
    const size_t n = std::min(bytes.size(), kPiece);
    text.clear();
    append_hex(text, bytes.substr(0, n));
    out.write(text);
    bytes.remove_prefix(n);
  }
}

// Value `i` (for a list column, element `i`), not null, as JSON.
void write_json_value(TextSink& out, const Column& c, int64_t i) {
  const LogicalKind kind = c.schema.logical.kind;
  const bool parsed = kind == LogicalKind::kJson || kind == LogicalKind::kVariant;  // the value the text holds
  switch (value_text_kind(c.schema)) {
    case ValueTextKind::kBytes:
      if (parsed) break;
      write_json_string(out, c.byte_arrays().at(i));
      return;
    case ValueTextKind::kHex:
      out.put('"');
      write_hex(out, c.byte_arrays().at(i));
      out.put('"');
      return;
    case ValueTextKind::kShort: break;
  }
  out.write(json_value(c, i).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

// Entry `i` at list level `level` of a list column (0: the rows' lists; list_depth(): the values), as
// json_cell's json_list_entry gives it.
void write_json_list_entry(TextSink& out, const Column& c, int level, int64_t i) {
  if (level == c.schema.list_depth()) {
    if (c.element_is_null(i)) {
      out.write("null");
    } else {
      write_json_value(out, c, i);
    }
    return;
  }
  const ListLevel* inner = level == 0 ? nullptr : &c.inner_lists[static_cast<size_t>(level - 1)];
  if (inner == nullptr ? c.is_null(i) : inner->is_null(i)) {
    out.write("null");
    return;
  }
  const std::vector<int64_t>& offsets = inner == nullptr ? c.list_offsets : inner->offsets;
  const int64_t begin = offsets[static_cast<size_t>(i)], end = offsets[static_cast<size_t>(i + 1)];
  out.put('[');
  for (int64_t e = begin; e < end; ++e) {
    if (e > begin) out.put(',');
    write_json_list_entry(out, c, level + 1, e);
  }
  out.put(']');
}

}  // namespace

void write_json_string(TextSink& out, std::string_view bytes) {
  out.put('"');
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  size_t run = 0;  // start of the bytes not yet written that go out as they are
  size_t i = 0;
  while (i < n) {
    const unsigned char b = p[i];
    if (b >= 0x20 && b < 0x80 && b != '"' && b != '\\') {
      ++i;
      continue;
    }
    if (b >= 0x80) {
      const Utf8Check seq = check_utf8(p + i, n - i);
      if (seq.valid) {
        i += seq.length;
        continue;
      }
      out.write(bytes.substr(run, i - run));
      out.write("\xEF\xBF\xBD");  // U+FFFD
      i += seq.length;
    } else {
      out.write(bytes.substr(run, i - run));
      write_json_escape(out, b);
      ++i;
    }
    run = i;
  }
  out.write(bytes.substr(run));
  out.put('"');
}

void write_csv_field(TextSink& out, std::string_view text) {
  if (!needs_csv_quotes(text)) {
    out.write(text);
    return;
  }
  out.put('"');
  write_quotes_doubled(out, text);
  out.put('"');
}

std::string csv_field(std::string_view text) {
  if (!needs_csv_quotes(text)) return std::string(text);
  std::string out = "\"";
  for (const char ch : text) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

void write_json_cell(TextSink& out, const Column& c, int64_t row) {
  if (c.is_null(row)) {
    out.write("null");
  } else if (c.schema.is_list) {
    write_json_list_entry(out, c, 0, row);
  } else {
    write_json_value(out, c, row);
  }
}

void write_csv_cell(TextSink& out, const Column& c, int64_t row) {
  if (c.is_null(row)) return;
  if (c.schema.is_list) {
    // The list's JSON text, which is never empty: written once to see whether it needs quotes, then for real.
    QuoteProbe probe;
    write_json_list_entry(probe, c, 0, row);
    if (!probe.needs_quotes()) {
      write_json_list_entry(out, c, 0, row);
      return;
    }
    out.put('"');
    QuoteDoubler inside(out);
    write_json_list_entry(inside, c, 0, row);
    out.put('"');
    return;
  }
  switch (value_text_kind(c.schema)) {
    case ValueTextKind::kBytes: write_csv_field(out, c.byte_arrays().at(row)); return;
    case ValueTextKind::kHex: {
      const std::string_view bytes = c.byte_arrays().at(row);
      if (bytes.empty()) {
        out.write("\"\"");
      } else {
        write_hex(out, bytes);  // digits only: never quoted
      }
      return;
    }
    case ValueTextKind::kShort: break;
  }
  if (const std::optional<std::string> text = value_text(c, row)) write_csv_field(out, *text);
}

void write_csv_header(TextSink& out, const Table& t) {
  for (size_t c = 0; c < t.columns.size(); ++c) {
    if (c > 0) out.put(',');
    write_csv_field(out, t.columns[c].schema.name);
  }
  out.put('\n');
}

void write_csv_record(TextSink& out, const Table& t, int64_t row) {
  // Every cell but a null writes something (an empty text is ""), so only these rows would be empty lines.
  if (t.columns.empty() || (t.columns.size() == 1 && t.columns[0].is_null(row))) {
    out.write("\"\"\n");
    return;
  }
  for (size_t c = 0; c < t.columns.size(); ++c) {
    if (c > 0) out.put(',');
    write_csv_cell(out, t.columns[c], row);
  }
  out.put('\n');
}

JsonLineWriter::JsonLineWriter(const Table& t) : table_(t) {
  std::map<std::string_view, size_t> key_of_name;
  for (size_t c = 0; c < t.columns.size(); ++c) {
    const auto [it, is_new] = key_of_name.emplace(t.columns[c].schema.name, columns_.size());
    if (is_new) {
      columns_.push_back(c);
    } else {
      columns_[it->second] = c;
    }
  }
}

void JsonLineWriter::write(TextSink& out, int64_t row) const {
  out.put('{');
  for (size_t k = 0; k < columns_.size(); ++k) {
    const Column& c = table_.columns[columns_[k]];
    if (k > 0) out.put(',');
    write_json_string(out, c.schema.name);
    out.put(':');
    write_json_cell(out, c, row);
  }
  out.write("}\n");
}

void write_table_text(const Table& t, TextFormat format, const std::function<void(std::string_view)>& write,
                      int64_t rows) {
  if (rows < 0 || rows > t.num_rows) rows = t.num_rows;
  OutputBuffer out(write);
  if (format == TextFormat::kCsv) {
    write_csv_header(out, t);
    for (int64_t r = 0; r < rows; ++r) write_csv_record(out, t, r);
  } else {
    const JsonLineWriter json(t);
    for (int64_t r = 0; r < rows; ++r) json.write(out, r);
  }
  out.flush();
}

}  // namespace feedline
