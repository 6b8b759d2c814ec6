#include "feedline/io/csv.h"

#include <fast_float/fast_float.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <exception>
#include <unordered_map>

#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "io/memory.h"
#include "io/parallel.h"

namespace feedline {
namespace {

// Where one column's parsed values go while reading: integers until a value needs a double; text (read again in
// a second pass, as written) once a value is not a number and text columns are allowed.
struct ColumnBuilder {
  std::vector<int64_t> ints;
  std::vector<double> doubles;
  std::vector<uint8_t> validity;  // filled lazily on the first null
  bool is_double = false;
  bool is_text = false;
  int64_t nulls = 0;
  // Null fields with nothing at all between the commas: the nulls this column would have as text (where " " and
  // "" are values). Lets CsvStreamReader tell a text column's nullability from blocks it parsed as numbers.
  int64_t empty_fields = 0;
  // Rows of `ints` written "-0" (or "-00"...): -0.0, not 0.0, once the column turns DOUBLE, as the rows that come
  // after the turn read, wherever the turn falls (chunks and blocks end in different places).
  std::vector<int64_t> negative_zeros;
};

// A builder's integers as doubles, negative zeros kept.
void append_as_doubles(std::vector<double>& out, const ColumnBuilder& b) {
  const size_t base = out.size();
  for (int64_t x : b.ints) out.push_back(static_cast<double>(x));
  for (int64_t row : b.negative_zeros) out[base + static_cast<size_t>(row)] = -0.0;
}

std::string_view unquote(std::string_view f) {
  if (f.size() >= 2 && f.front() == '"' && f.back() == '"') return f.substr(1, f.size() - 2);
  return f;
}

// Appends a text field's value (RFC 4180): a quoted field without its quotes and with each "" read as one quote;
// any other field as it stands, spaces included.
void append_unquoted(std::string& out, std::string_view f) {
  if (f.size() < 2 || f.front() != '"' || f.back() != '"') {
    out.append(f);
    return;
  }
  f = f.substr(1, f.size() - 2);
  for (size_t i = 0; i < f.size(); ++i) {
    out.push_back(f[i]);
    if (f[i] == '"' && i + 1 < f.size() && f[i + 1] == '"') ++i;
  }
}

// Where the record that starts at `pos` ends: at its first line end outside quotes (RFC 4180: a quoted field may
// hold line ends), or at `end`. `unclosed`: a quote was still open at `end`.
struct RecordEnd {
  size_t end;
  int64_t inner_lines = 0;  // line ends inside quoted fields
  bool unclosed = false;
};
RecordEnd record_end(std::string_view text, size_t pos, size_t end, bool quotes) {
  size_t eol = text.find('\n', pos);
  if (eol == std::string_view::npos || eol > end) eol = end;
  if (!quotes || std::memchr(text.data() + pos, '"', eol - pos) == nullptr) return {eol};
  RecordEnd r{end};
  bool quoted = false;
  for (size_t i = pos; i < end; ++i) {
    if (text[i] == '"') {
      quoted = !quoted;
    } else if (text[i] == '\n') {
      if (!quoted) {
        r.end = i;
        return r;
      }
      ++r.inner_lines;
    }
  }
  r.unclosed = quoted;
  return r;
}

// Splits one record into fields (RFC 4180 quoting: quotes protect commas and line ends; a quote inside a quoted
// field is written twice, which keeps the count even).
void split_line(std::string_view line, std::vector<std::string_view>& fields) {
  fields.clear();
  size_t start = 0;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.push_back(line.substr(start, i - start));
      start = i + 1;
    }
  }
  fields.push_back(line.substr(start));
}

struct Chunk {
  size_t begin, end;        // byte range of whole records
  int64_t first_line;       // 1-based line number of the first line in the file
  std::vector<ColumnBuilder> cols;
  int64_t rows = 0;
  bool quotes = true;       // false: the file's body holds no quote, so every line end ends a record
  std::vector<ByteArrays> texts;  // by column slot: the fields of text columns (second pass)
};

[[noreturn]] void bad_value(const std::string& path, int64_t line, const std::string& column, std::string_view v) {
  throw InvalidFile(path + ":" + std::to_string(line) + ": column '" + column + "': '" + std::string(v.substr(0, 40)) +
                    "' is not a number");
}

// Calls fn(line_no, fields) for each non-empty record of the chunk, after checking its field count; line_no is the
// file line the record starts on.
template <class Fn>
void for_each_record(const std::string& path, std::string_view text, const Chunk& chunk, size_t ncols, Fn&& fn) {
  std::vector<std::string_view> fields;
  int64_t line_no = chunk.first_line;
  size_t pos = chunk.begin;
  while (pos < chunk.end) {
    const RecordEnd r = record_end(text, pos, chunk.end, chunk.quotes);
    if (r.unclosed) throw InvalidFile(path + ":" + std::to_string(line_no) + ": a quoted field is never closed");
    std::string_view line = text.substr(pos, r.end - pos);
    pos = r.end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) {
      split_line(line, fields);
      if (fields.size() != ncols) {
        throw InvalidFile(path + ":" + std::to_string(line_no) + ": " + std::to_string(fields.size()) +
                          " fields, the header has " + std::to_string(ncols));
      }
      fn(line_no, fields);
    }
    line_no += 1 + r.inner_lines;
  }
}

// The lines of text[begin, end) that hold more than a line end: at least as many as the records there, which
// for_each_record takes from them (empty lines are no records; a quoted field may span lines).
size_t lines_not_empty(std::string_view text, size_t begin, size_t end) {
  size_t n = 0;
  for (size_t pos = begin; pos < end;) {
    const void* nl = std::memchr(text.data() + pos, '\n', end - pos);
    const size_t stop = nl == nullptr ? end : static_cast<size_t>(static_cast<const char*>(nl) - text.data());
    if (stop > pos && !(stop == pos + 1 && text[pos] == '\r')) ++n;
    pos = stop + 1;
  }
  return n;
}

// `slots[field]`: where that field's values go in chunk.cols, or -1 for a column that was not asked for.
void parse_chunk(const std::string& path, std::string_view text, Chunk& chunk, const std::vector<std::string>& names,
                 const std::vector<int>& slots, size_t kept, bool text_columns) {
  const size_t ncols = names.size();
  chunk.cols.assign(kept, ColumnBuilder{});
  // Room for as many values a column as the chunk has lines that are not empty (at least its records), its pages
  // populated at once: a column does not grow by copies, nor fault its pages in one at a time.
  const size_t lines = lines_not_empty(text, chunk.begin, chunk.end);
  for (ColumnBuilder& b : chunk.cols) reserve_populated(b.ints, lines);
  std::vector<int> numbers = slots;  // a column that turns text leaves it: read again in the second pass
  for_each_record(path, text, chunk, ncols, [&](int64_t line_no, const std::vector<std::string_view>& fields) {
    for (size_t c = 0; c < ncols; ++c) {
      if (numbers[c] < 0) continue;
      ColumnBuilder& b = chunk.cols[static_cast<size_t>(numbers[c])];
      std::string_view f = unquote(fields[c]);
      while (!f.empty() && f.front() == ' ') f.remove_prefix(1);
      while (!f.empty() && f.back() == ' ') f.remove_suffix(1);
      if (f.empty()) {
        if (b.validity.empty()) b.validity.assign(static_cast<size_t>(chunk.rows), 1);
        b.validity.push_back(0);
        ++b.nulls;
        b.empty_fields += fields[c].empty();
        if (b.is_double) b.doubles.push_back(0); else b.ints.push_back(0);
        continue;
      }
      if (!b.validity.empty()) b.validity.push_back(1);
      if (!b.is_double) {
        int64_t v = 0;
        const char* first = f.data() + (f.front() == '+' ? 1 : 0);
        auto r = std::from_chars(first, f.data() + f.size(), v);
        if (r.ec == std::errc() && r.ptr == f.data() + f.size()) {
          if (v == 0 && f.front() == '-') b.negative_zeros.push_back(static_cast<int64_t>(b.ints.size()));
          b.ints.push_back(v);
          continue;
        }
        b.is_double = true;
        reserve_populated(b.doubles, lines);
        append_as_doubles(b.doubles, b);
        b.ints.clear();
        b.ints.shrink_to_fit();
        b.negative_zeros.clear();
      }
      double d = 0;
      const char* first = f.data() + (f.front() == '+' ? 1 : 0);
      auto r = fast_float::from_chars(first, f.data() + f.size(), d);
      if (r.ec != std::errc() || r.ptr != f.data() + f.size()) {
        if (!text_columns) bad_value(path, line_no, names[c], f);
        b = ColumnBuilder{};
        b.is_text = true;
        numbers[c] = -1;
        continue;
      }
      b.doubles.push_back(d);
    }
    ++chunk.rows;
  });
}

// The second pass for the columns that turned out to hold text (`is_text[slot]`): their fields as written. An empty
// field is null; a quoted empty one ("") the empty string.
void collect_text(const std::string& path, std::string_view text, Chunk& chunk, const std::vector<int>& slots,
                  const std::vector<bool>& is_text) {
  chunk.texts.assign(is_text.size(), ByteArrays{});
  for (size_t k = 0; k < is_text.size(); ++k) {
    if (!is_text[k]) continue;
    ColumnBuilder& b = chunk.cols[k];
    b = ColumnBuilder{};
    b.is_text = true;
    b.validity.reserve(static_cast<size_t>(chunk.rows));
  }
  for_each_record(path, text, chunk, slots.size(), [&](int64_t, const std::vector<std::string_view>& fields) {
    for (size_t c = 0; c < slots.size(); ++c) {
      if (slots[c] < 0 || !is_text[static_cast<size_t>(slots[c])]) continue;
      ColumnBuilder& b = chunk.cols[static_cast<size_t>(slots[c])];
      const bool null = fields[c].empty();
      b.nulls += null;
      b.validity.push_back(null ? 0 : 1);
      ByteArrays& texts = chunk.texts[static_cast<size_t>(slots[c])];
      append_unquoted(texts.bytes, fields[c]);
      texts.offsets.push_back(static_cast<int64_t>(texts.bytes.size()));
    }
  });
}

// Runs fn(chunk) for every chunk, a thread each (the caller's among them); rethrows the first chunk's error in
// file order.
template <class Fn>
void for_each_chunk(std::vector<Chunk>& chunks, Fn&& fn) {
  parallel_for(chunks.size(), static_cast<int>(chunks.size()), [&](size_t i) { fn(chunks[i]); });
}

// Cuts text[begin, end), whole records to the end of `text`, into up to `threads` chunks (0: one per core; none
// under 1 MiB) at record boundaries, for parse_chunk on threads of their own. A line end is a record boundary when
// an even number of quotes comes before it from `begin` (RFC 4180 quoting). `first_line`: the file line text[begin]
// is on.
std::vector<Chunk> split_chunks(std::string_view text, size_t begin, int threads, int64_t first_line) {
  const size_t end = text.size();
  threads = std::max(1, std::min(resolve_threads(threads), static_cast<int>((end - begin) / (1 << 20)) + 1));
  const bool has_quotes = std::memchr(text.data() + begin, '"', end - begin) != nullptr;
  std::vector<Chunk> chunks;
  size_t start = begin, counted_to = begin;
  int64_t quotes = 0;  // in [begin, counted_to)
  for (int t = 0; t < threads && start < end; ++t) {
    size_t stop = t == threads - 1 ? end : begin + (end - begin) * (t + 1) / threads;
    if (stop < start) stop = start;
    while (stop < end) {
      const size_t nl = text.find('\n', stop);
      if (nl == std::string_view::npos) {
        stop = end;
        break;
      }
      if (has_quotes) {
        quotes += std::count(text.begin() + static_cast<std::ptrdiff_t>(counted_to),
                             text.begin() + static_cast<std::ptrdiff_t>(nl), '"');
        counted_to = nl;
      }
      stop = nl + 1;
      if (quotes % 2 == 0) break;
    }
    chunks.push_back(Chunk{start, stop, 0, {}, 0, has_quotes});
    start = stop;
  }
  // Line numbers: count newlines before each chunk (cheap next to parsing).
  int64_t line = first_line;
  for (auto& c : chunks) {
    c.first_line = line;
    line += std::count(text.begin() + static_cast<std::ptrdiff_t>(c.begin),
                       text.begin() + static_cast<std::ptrdiff_t>(c.end), '\n');
  }
  return chunks;
}

// The names of the columns asked for, in their order (`slots` as column_slots gives them).
std::vector<std::string> names_kept(const std::vector<std::string>& names, const std::vector<int>& slots,
                                    size_t kept) {
  std::vector<std::string> out(kept);
  for (size_t field = 0; field < names.size(); ++field) {
    if (slots[field] >= 0) out[static_cast<size_t>(slots[field])] = names[field];
  }
  return out;
}

ColumnSchema csv_column_schema(const std::string& name, bool is_double, bool is_text, bool nullable) {
  ColumnSchema s;
  s.name = name;
  s.type = is_text ? PhysicalType::kByteArray : is_double ? PhysicalType::kDouble : PhysicalType::kInt64;
  s.is_string = is_text;
  s.nullable = nullable;
  return s;
}

// The chunks' values as one table typed as `schema`: a chunk's integers widen to doubles in a DOUBLE column; a
// column's validity is filled only when some chunk holds a null in it. The chunks must agree with the schema (no
// doubles in an INT64 column; collect_text run for every BYTE_ARRAY one). A lone chunk's values are moved, not
// copied (read_csv on one thread, a small block of CsvStreamReader): the chunks are left spent.
Table join_chunks(std::vector<Chunk>& chunks, const std::vector<ColumnSchema>& schema) {
  Table table;
  for (const auto& c : chunks) table.num_rows += c.rows;
  const bool lone = chunks.size() == 1;
  for (size_t col = 0; col < schema.size(); ++col) {
    int64_t nulls = 0;
    for (const auto& c : chunks) nulls += c.cols[col].nulls;
    Column out = make_column(schema[col]);
    if (schema[col].type == PhysicalType::kByteArray) {
      auto& v = std::get<ByteArrays>(out.values);
      if (lone) {
        v = std::move(chunks[0].texts[col]);
      } else {
        for (const auto& c : chunks) {
          const ByteArrays& part = c.texts[col];
          const auto base = static_cast<int64_t>(v.bytes.size());
          v.bytes += part.bytes;
          for (size_t i = 1; i < part.offsets.size(); ++i) v.offsets.push_back(base + part.offsets[i]);
        }
      }
    } else if (schema[col].type == PhysicalType::kDouble) {
      auto& v = out.as<double>();
      if (lone && chunks[0].cols[col].is_double) {
        v = std::move(chunks[0].cols[col].doubles);
      } else {
        reserve_populated(v, static_cast<size_t>(table.num_rows));
        for (const auto& c : chunks) {
          const auto& b = c.cols[col];
          if (b.is_double) v.insert(v.end(), b.doubles.begin(), b.doubles.end());
          else append_as_doubles(v, b);
        }
      }
    } else {
      auto& v = out.as<int64_t>();
      if (lone) {
        v = std::move(chunks[0].cols[col].ints);
      } else {
        reserve_populated(v, static_cast<size_t>(table.num_rows));
        for (const auto& c : chunks) v.insert(v.end(), c.cols[col].ints.begin(), c.cols[col].ints.end());
      }
    }
    if (nulls > 0 && lone && !chunks[0].cols[col].validity.empty()) {
      out.validity = std::move(chunks[0].cols[col].validity);
    } else if (nulls > 0) {
      out.validity.reserve(static_cast<size_t>(table.num_rows));
      for (const auto& c : chunks) {
        const auto& b = c.cols[col];
        if (b.validity.empty()) out.validity.insert(out.validity.end(), static_cast<size_t>(c.rows), 1);
        else out.validity.insert(out.validity.end(), b.validity.begin(), b.validity.end());
      }
    }
    table.columns.push_back(std::move(out));
  }
  return table;
}

// Where the last whole record in `text` ends: the index of the last line end with an even number of quotes before
// it (RFC 4180: a line end inside quotes belongs to the field); npos when none. `text` must start at a record
// boundary. Walks back from the last line end, so a block costs one count of its quotes.
size_t last_record_end(std::string_view text) {
  size_t nl = text.rfind('\n');
  if (nl == std::string_view::npos) return nl;
  int64_t quotes = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nl), '"');
  while (quotes % 2 != 0) {
    const size_t prev = nl == 0 ? std::string_view::npos : text.rfind('\n', nl - 1);
    if (prev == std::string_view::npos) return prev;
    quotes -= std::count(text.begin() + static_cast<std::ptrdiff_t>(prev),
                         text.begin() + static_cast<std::ptrdiff_t>(nl), '"');
    nl = prev;
  }
  return nl;
}

// Where the first record that ends in text[from, end) ends: the index of the first line end there with an even
// number of quotes before it in `text`, given `quotes_before` quotes in text[0, from); npos when none.
size_t first_record_end(std::string_view text, size_t from, int64_t quotes_before) {
  int64_t quotes = quotes_before;
  size_t counted_to = from;
  for (size_t nl = text.find('\n', from); nl != std::string_view::npos; nl = text.find('\n', nl + 1)) {
    quotes += std::count(text.begin() + static_cast<std::ptrdiff_t>(counted_to),
                         text.begin() + static_cast<std::ptrdiff_t>(nl), '"');
    counted_to = nl;
    if (quotes % 2 == 0) return nl;
  }
  return std::string_view::npos;
}

// Where the `n`-th record of `text` (which starts at a record) ends, past its line end: the end of `text` when that
// record is its last and has no line end; npos when `text` holds fewer than `n` whole records or a quote is never
// closed (the parser then reports it). Empty lines are not records, as for_each_record has it.
size_t after_records(std::string_view text, int64_t n) {
  size_t pos = 0;
  while (n > 0 && pos < text.size()) {
    const RecordEnd r = record_end(text, pos, text.size(), true);
    if (r.unclosed) return std::string_view::npos;
    std::string_view line = text.substr(pos, r.end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) --n;
    pos = r.end + 1;
  }
  return n == 0 ? std::min(pos, text.size()) : std::string_view::npos;
}

[[noreturn]] void changed_while_reading(const std::string& path, const std::string& why) {
  throw IoError(path + ": changed while reading (" + why + ")");
}

// The column names of a header line (without its line end); a UTF-8 byte-order mark is skipped.
std::vector<std::string> parse_header(const std::string& path, std::string_view header) {
  if (!header.empty() && header.back() == '\r') header.remove_suffix(1);
  if (header.size() >= 3 && header.substr(0, 3) == "\xEF\xBB\xBF") header.remove_prefix(3);
  std::vector<std::string_view> fields;
  split_line(header, fields);
  std::vector<std::string> names;
  for (auto f : fields) append_unquoted(names.emplace_back(), f);
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) throw InvalidFile(path + ":1: column " + std::to_string(i + 1) + " has no name");
  }
  return names;
}

// The first few names of a header, for messages: "a, b, c, ... (785 columns)".
std::string some_names(const std::vector<std::string>& names) {
  constexpr size_t kShown = 5;
  std::string out;
  for (size_t i = 0; i < names.size() && i < kShown; ++i) out += (i > 0 ? ", " : "") + names[i];
  if (names.size() > kShown) out += ", ... (" + std::to_string(names.size()) + " columns)";
  return out;
}

// For each field of the header, its place among the columns asked for (-1: not asked for). Every column when
// `wanted` is empty.
std::vector<int> column_slots(const std::string& path, const std::vector<std::string>& names,
                              const std::vector<std::string>& wanted) {
  std::vector<int> slots(names.size(), -1);
  if (wanted.empty()) {
    for (size_t i = 0; i < names.size(); ++i) slots[i] = static_cast<int>(i);
    return slots;
  }
  std::unordered_map<std::string_view, size_t> field_of;
  for (size_t i = names.size(); i-- > 0;) field_of[names[i]] = i;  // the first of duplicate names wins
  for (size_t w = 0; w < wanted.size(); ++w) {
    const auto it = field_of.find(wanted[w]);
    if (it == field_of.end()) {
      throw InvalidArgument(path + ": no column '" + wanted[w] + "' (the header has " + some_names(names) + ")");
    }
    if (slots[it->second] >= 0) throw InvalidArgument(path + ": column '" + wanted[w] + "' asked for twice");
    slots[it->second] = static_cast<int>(w);
  }
  return slots;
}

}  // namespace

Table read_csv(const std::string& path, const CsvReadOptions& options) {
  const std::string data = read_file(path);
  const std::string_view text(data);
  size_t header_end = text.find('\n');
  if (text.empty()) throw InvalidFile(path + ": empty file, expected a header row");
  if (header_end == std::string_view::npos) header_end = text.size();
  const std::vector<std::string> names = parse_header(path, text.substr(0, header_end));
  const std::vector<int> slots = column_slots(path, names, options.columns);
  const size_t kept = options.columns.empty() ? names.size() : options.columns.size();

  // Split the body into per-thread chunks, parse them in parallel, then concatenate.
  const size_t body = std::min(header_end + 1, text.size());
  std::vector<Chunk> chunks = split_chunks(text, body, options.num_threads, 2);
  for_each_chunk(chunks, [&](Chunk& c) { parse_chunk(path, text, c, names, slots, kept, options.text_columns); });
  std::vector<bool> is_text(kept, false);
  for (const auto& c : chunks) {
    for (size_t col = 0; col < kept; ++col) is_text[col] = is_text[col] || c.cols[col].is_text;
  }
  if (std::find(is_text.begin(), is_text.end(), true) != is_text.end()) {
    for_each_chunk(chunks, [&](Chunk& c) { collect_text(path, text, c, slots, is_text); });
  }

  const std::vector<std::string> kept_names = names_kept(names, slots, kept);
  std::vector<ColumnSchema> schema(kept);
  for (size_t col = 0; col < kept; ++col) {
    bool is_double = false;
    int64_t nulls = 0;
    for (const auto& c : chunks) {
      is_double |= c.cols[col].is_double;
      nulls += c.cols[col].nulls;
    }
    schema[col] = csv_column_schema(kept_names[col], is_double, is_text[col], nulls > 0);
  }
  return join_chunks(chunks, schema);
}

CsvStreamReader::CsvStreamReader(const std::string& path, const CsvStreamOptions& options)
    : path_(path), options_(options) {
  if (options_.block_bytes <= 0) {
    throw InvalidArgument(path_ + ": block_bytes must be positive, not " + std::to_string(options_.block_bytes));
  }
  if (options_.limit < 0) {
    throw InvalidArgument(path_ + ": limit must not be negative: " + std::to_string(options_.limit));
  }
  file_ = std::make_unique<RandomAccessFile>(path_);
  file_size_ = file_->size();
  scan();
}

CsvStreamReader::~CsvStreamReader() = default;
CsvStreamReader::CsvStreamReader(CsvStreamReader&&) noexcept = default;
CsvStreamReader& CsvStreamReader::operator=(CsvStreamReader&&) noexcept = default;

namespace {

// A file read from the start in pieces of at least 64 KiB, whatever the block size: `text` holds it from `offset`
// on, what has been read and not yet dropped.
struct ForwardText {
  static constexpr size_t kMinRead = size_t{64} << 10;
  // A remote file is asked for this far ahead of the reads, so that they are not a request each.
  static constexpr int64_t kRemoteAhead = int64_t{32} << 20;
  const RandomAccessFile& file;
  int64_t file_size;
  std::string text;
  int64_t offset = 0, read_to = 0, ahead_to = 0;

  void read_more(size_t want) {
    const auto n = static_cast<size_t>(std::min<int64_t>(file_size - read_to,
                                                         static_cast<int64_t>(std::max(want, kMinRead))));
    if (file.is_remote() && read_to + static_cast<int64_t>(n) + kRemoteAhead / 2 > ahead_to) {
      const int64_t from = std::max(ahead_to, read_to);
      ahead_to = std::min(file_size, std::max(from, read_to + static_cast<int64_t>(n)) + kRemoteAhead);
      file.prefetch({{from, ahead_to - from}});
    }
    const size_t old = text.size();
    text.resize(old + n);
    file.read_at(read_to, n, text.data() + old);
    read_to += static_cast<int64_t>(n);
  }
  void drop(size_t n) {
    text.erase(0, n);
    offset += static_cast<int64_t>(n);
  }
  // The header's end: the first line end, quoted or not, as read_csv has it (the file's end when it has none).
  size_t header_end() {
    size_t end = 0;
    for (;;) {
      end = text.find('\n', end);
      if (end != std::string::npos) return end;
      end = text.size();
      if (read_to == file_size) return end;
      read_more(text.size());
    }
  }
  // The next block's end in `text` (0: nothing left): the whole records in its first block_bytes, or, when not one
  // record ends there, the first record alone, looked for in a window twice as long, and so on; the rest of the
  // file when it fits (its last record may lack a line end, or hold a quote never closed, which parse_chunk
  // reports).
  size_t block_end(size_t block_bytes) {
    size_t window = block_bytes, from = 0;
    int64_t quotes = 0;  // in text[0, from)
    for (;;) {
      if (text.size() < window && read_to < file_size) read_more(window - text.size());
      const size_t w = std::min(window, text.size());
      const bool rest = read_to == file_size && w == text.size();
      if (rest && from == 0) return text.size();
      const std::string_view in_window = std::string_view(text).substr(0, w);
      const size_t nl = from == 0 ? last_record_end(in_window) : first_record_end(in_window, from, quotes);
      if (nl != std::string_view::npos || rest) return nl != std::string_view::npos ? nl + 1 : text.size();
      quotes += std::count(text.begin() + static_cast<std::ptrdiff_t>(from),
                           text.begin() + static_cast<std::ptrdiff_t>(w), '"');
      from = w;
      window = 2 * w;
    }
  }
};

// What the blocks of CsvStreamReader's first pass say about each column, folded together as read_csv folds its
// chunks.
struct ColumnTotals {
  explicit ColumnTotals(size_t kept)
      : is_text(kept, false), is_double(kept, false), has_value(kept, false), nulls(kept, 0), empty_fields(kept, 0),
        range(kept, {0, 0}) {}
  std::vector<bool> is_text, is_double, has_value;
  std::vector<int64_t> nulls, empty_fields;
  std::vector<std::pair<int64_t, int64_t>> range;  // an integer column's values, once has_value

  // Adds a block's chunks, `text_now` naming the columns found text so far (this block included). Returns the
  // block's rows.
  int64_t fold(const std::vector<Chunk>& chunks, const std::vector<bool>& text_now) {
    int64_t rows = 0;
    for (const auto& c : chunks) {
      rows += c.rows;
      for (size_t col = 0; col < is_text.size(); ++col) fold_column(col, c.cols[col], text_now[col]);
    }
    is_text = text_now;
    return rows;
  }
  void fold_column(size_t col, const ColumnBuilder& b, bool text) {
    // A text column's nulls are its empty fields, which collect_text counts (a number's nulls also take " ").
    if (text) {
      empty_fields[col] += b.nulls;
      return;
    }
    nulls[col] += b.nulls;
    empty_fields[col] += b.empty_fields;
    if (b.is_double) {
      is_double[col] = true;
      return;
    }
    for (size_t r = 0; r < b.ints.size(); ++r) {
      if (!b.validity.empty() && b.validity[r] == 0) continue;
      const int64_t v = b.ints[r];
      if (!has_value[col]) range[col] = {v, v};
      range[col] = {std::min(range[col].first, v), std::max(range[col].second, v)};
      has_value[col] = true;
    }
  }
};

}  // namespace

std::vector<std::string> read_csv_header(const std::string& path) {
  const RandomAccessFile file(path);
  if (file.size() == 0) throw InvalidFile(path + ": empty file, expected a header row");
  ForwardText in{file, file.size()};
  const size_t header_end = in.header_end();
  return parse_header(path, std::string_view(in.text).substr(0, header_end));
}

// The first pass: the header, then the body a block at a time, each parsed as read_csv parses the whole body, and
// what the blocks say about each column folded together as read_csv folds its chunks.
void CsvStreamReader::scan() {
  if (file_size_ == 0) throw InvalidFile(path_ + ": empty file, expected a header row");
  ForwardText in{*file_, file_size_};
  const size_t header_end = in.header_end();
  names_ = parse_header(path_, std::string_view(in.text).substr(0, header_end));
  slots_ = column_slots(path_, names_, options_.columns);
  const size_t kept = options_.columns.empty() ? names_.size() : options_.columns.size();
  in.drop(std::min(header_end + 1, in.text.size()));

  std::vector<int> number_slots = slots_;  // a column leaves them once it turns text: never parsed again
  ColumnTotals totals(kept);
  int64_t line = 2, rows = 0;
  std::vector<Chunk> only_block;
  for (;;) {
    size_t cut = in.block_end(static_cast<size_t>(options_.block_bytes));
    if (cut == 0) break;
    // With a limit the scan ends at the limit-th record: the records past it are neither typed nor checked.
    bool at_limit = false;
    if (options_.limit > 0) {
      const size_t at = after_records(std::string_view(in.text.data(), cut), options_.limit - rows);
      if (at != std::string_view::npos) {
        cut = at;
        at_limit = true;
      }
    }
    const std::string_view block(in.text.data(), cut);
    std::vector<Chunk> chunks = split_chunks(block, 0, options_.num_threads, line);
    for_each_chunk(chunks, [&](Chunk& c) {
      parse_chunk(path_, block, c, names_, number_slots, kept, options_.text_columns);
    });
    std::vector<bool> text_now = totals.is_text;
    for (const auto& c : chunks) {
      for (size_t col = 0; col < kept; ++col) text_now[col] = text_now[col] || c.cols[col].is_text;
    }
    if (std::find(text_now.begin(), text_now.end(), true) != text_now.end()) {
      for_each_chunk(chunks, [&](Chunk& c) { collect_text(path_, block, c, slots_, text_now); });
    }
    const int64_t block_rows = totals.fold(chunks, text_now);
    for (int& slot : number_slots) {
      if (slot >= 0 && totals.is_text[static_cast<size_t>(slot)]) slot = -1;
    }
    // The first block with records is also the last (the file's body fits in it, or the limit falls in it): its
    // values are kept, so that next() does not parse it again.
    if (blocks_.empty() && block_rows > 0 && (at_limit || (cut == in.text.size() && in.read_to == file_size_))) {
      only_block = std::move(chunks);
    }
    if (block_rows > 0) blocks_.push_back(Block{in.offset, static_cast<int64_t>(cut), block_rows, line});
    rows += block_rows;
    line += std::count(block.begin(), block.end(), '\n');
    in.drop(cut);
    if (at_limit) break;
  }

  const std::vector<std::string> kept_names = names_kept(names_, slots_, kept);
  for (size_t col = 0; col < kept; ++col) {
    const bool is_text = totals.is_text[col];
    const bool nullable = is_text ? totals.empty_fields[col] > 0 : totals.nulls[col] > 0;
    schema_.push_back(csv_column_schema(kept_names[col], totals.is_double[col], is_text, nullable));
    const bool is_int = schema_.back().type == PhysicalType::kInt64;
    ranges_.push_back(is_int && totals.has_value[col] ? std::optional(totals.range[col]) : std::nullopt);
  }
  num_rows_ = options_.limit > 0 ? std::min(options_.limit, rows) : rows;
  if (!only_block.empty()) whole_ = std::make_unique<Table>(join_chunks(only_block, schema_));
}

std::optional<std::pair<int64_t, int64_t>> CsvStreamReader::int_range(size_t column) const {
  if (column >= ranges_.size()) {
    throw InvalidArgument(path_ + ": no column " + std::to_string(column) + " (" + std::to_string(ranges_.size()) +
                          " columns read)");
  }
  return ranges_[column];
}

bool CsvStreamReader::next(Table* out) {
  if (next_block_ >= blocks_.size() || rows_given_ >= num_rows_) return false;
  if (whole_) {  // the one block, parsed by the first pass
    ++next_block_;
    *out = *whole_;
    rows_given_ += out->num_rows;
    return true;
  }
  const Block& block = blocks_[next_block_++];
  // A remote file's change is its reads' error (its ETag); its next block comes while this one is parsed.
  if (!file_->is_remote()) {
    if (const int64_t size = file_size(path_); size != file_size_) {
      changed_while_reading(path_, std::to_string(file_size_) + " bytes, now " + std::to_string(size));
    }
  } else if (next_block_ < blocks_.size()) {
    file_->prefetch({{blocks_[next_block_].offset, blocks_[next_block_].size}});
  }
  text_.resize(static_cast<size_t>(block.size));
  file_->read_at(block.offset, text_.size(), text_.data());

  // Parsed as in the first pass, but with every column's type known: text columns are only collected.
  const size_t kept = schema_.size();
  std::vector<bool> is_text(kept);
  for (size_t col = 0; col < kept; ++col) is_text[col] = schema_[col].type == PhysicalType::kByteArray;
  std::vector<int> number_slots = slots_;
  for (int& slot : number_slots) {
    if (slot >= 0 && is_text[static_cast<size_t>(slot)]) slot = -1;
  }
  std::vector<Chunk> chunks = split_chunks(text_, 0, options_.num_threads, block.first_line);
  for_each_chunk(chunks, [&](Chunk& c) {
    parse_chunk(path_, text_, c, names_, number_slots, kept, options_.text_columns);
  });
  if (std::find(is_text.begin(), is_text.end(), true) != is_text.end()) {
    for_each_chunk(chunks, [&](Chunk& c) { collect_text(path_, text_, c, slots_, is_text); });
  }
  // The first pass saw these bytes; they must read the same now.
  const std::string where = "the records from line " + std::to_string(block.first_line);
  int64_t rows = 0;
  for (const auto& c : chunks) {
    rows += c.rows;
    for (size_t col = 0; col < kept; ++col) {
      const ColumnBuilder& b = c.cols[col];
      const ColumnSchema& s = schema_[col];
      if ((s.type == PhysicalType::kInt64 && (b.is_double || b.is_text)) ||
          (s.type == PhysicalType::kDouble && b.is_text)) {
        changed_while_reading(path_, "column '" + s.name + "' in " + where + " is no longer " + to_string(s.type));
      }
      if (!s.nullable && b.nulls > 0) {
        changed_while_reading(path_, "column '" + s.name + "' in " + where + " now holds a null");
      }
    }
  }
  if (rows != block.rows) {
    changed_while_reading(path_, where + ": " + std::to_string(rows) + " now, " + std::to_string(block.rows) +
                                     " before");
  }
  Table table = join_chunks(chunks, schema_);
  if (rows_given_ + table.num_rows > num_rows_) {
    table = head(table, num_rows_ - rows_given_);  // which drops a validity whose nulls were all past the limit
  }
  rows_given_ += table.num_rows;
  *out = std::move(table);
  return true;
}

}  // namespace feedline
