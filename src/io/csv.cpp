#include "feedline/csv.h"

#include <fast_float/fast_float.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "feedline/error.h"
#include "feedline/file.h"

namespace feedline {
namespace {

void append_double(std::string& out, double v) {
  char buf[64];
  // Shortest representation that reads back to the same double.
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

template <class T>
void append_int(std::string& out, T v) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

void append_field(std::string& out, const Column& col, int64_t row) {
  if (col.is_null(row)) return;
  std::visit(
      [&](const auto& values) {
        using V = std::decay_t<decltype(values)>;
        if constexpr (std::is_same_v<V, ByteArrays>) {
          const auto s = values.at(row);
          if (col.schema.type == PhysicalType::kFixedLenByteArray) {
            append_hex(out, s);  // binary (hashes, UUIDs, whole images), never text
          } else if (s.find_first_of(",\"\n\r") == std::string_view::npos) {
            out.append(s);
          } else {
            out.push_back('"');
            for (char c : s) {
              if (c == '"') out.push_back('"');
              out.push_back(c);
            }
            out.push_back('"');
          }
        } else if constexpr (std::is_same_v<V, std::vector<float>> || std::is_same_v<V, std::vector<double>>) {
          append_double(out, static_cast<double>(values[row]));
        } else if constexpr (std::is_same_v<V, std::vector<int32_t>>) {
          if (col.schema.int_annotation && !col.schema.int_annotation->is_signed) {
            append_int(out, static_cast<uint32_t>(values[row]));
          } else {
            append_int(out, values[row]);
          }
        } else if constexpr (std::is_same_v<V, std::vector<int64_t>>) {
          if (col.schema.int_annotation && !col.schema.int_annotation->is_signed) {
            append_int(out, static_cast<uint64_t>(values[row]));
          } else {
            append_int(out, values[row]);
          }
        } else {
          append_int(out, static_cast<int>(values[row]));
        }
      },
      col.values);
}

// Where one column's parsed values go while reading: integers until a value needs a double.
struct ColumnBuilder {
  std::vector<int64_t> ints;
  std::vector<double> doubles;
  std::vector<uint8_t> validity;  // filled lazily on the first null
  bool is_double = false;
  int64_t nulls = 0;
};

std::string_view unquote(std::string_view f) {
  if (f.size() >= 2 && f.front() == '"' && f.back() == '"') return f.substr(1, f.size() - 2);
  return f;
}

// Splits one line into fields (simple RFC 4180 quoting: quotes protect commas; "" is not unescaped since
// numeric data never holds quotes inside a field).
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
  size_t begin, end;        // byte range of whole lines
  int64_t first_line;       // 1-based line number of the first line in the file
  std::vector<ColumnBuilder> cols;
  int64_t rows = 0;
};

[[noreturn]] void bad_value(const std::string& path, int64_t line, const std::string& column, std::string_view v) {
  throw InvalidFile(path + ":" + std::to_string(line) + ": column '" + column + "': '" + std::string(v.substr(0, 40)) +
                    "' is not a number");
}

// `slots[field]`: where that field's values go in chunk.cols, or -1 for a column that was not asked for.
void parse_chunk(const std::string& path, std::string_view text, Chunk& chunk, const std::vector<std::string>& names,
                 const std::vector<int>& slots, size_t kept) {
  const size_t ncols = names.size();
  chunk.cols.assign(kept, ColumnBuilder{});
  std::vector<std::string_view> fields;
  int64_t line_no = chunk.first_line;
  size_t pos = chunk.begin;
  while (pos < chunk.end) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos || eol > chunk.end) eol = chunk.end;
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) {
      ++line_no;
      continue;
    }
    split_line(line, fields);
    if (fields.size() != ncols) {
      throw InvalidFile(path + ":" + std::to_string(line_no) + ": " + std::to_string(fields.size()) +
                        " fields, the header has " + std::to_string(ncols));
    }
    for (size_t c = 0; c < ncols; ++c) {
      if (slots[c] < 0) continue;
      ColumnBuilder& b = chunk.cols[static_cast<size_t>(slots[c])];
      std::string_view f = unquote(fields[c]);
      while (!f.empty() && f.front() == ' ') f.remove_prefix(1);
      while (!f.empty() && f.back() == ' ') f.remove_suffix(1);
      if (f.empty()) {
        if (b.validity.empty()) b.validity.assign(static_cast<size_t>(chunk.rows), 1);
        b.validity.push_back(0);
        ++b.nulls;
        if (b.is_double) b.doubles.push_back(0); else b.ints.push_back(0);
        continue;
      }
      if (!b.validity.empty()) b.validity.push_back(1);
      if (!b.is_double) {
        int64_t v = 0;
        const char* first = f.data() + (f.front() == '+' ? 1 : 0);
        auto r = std::from_chars(first, f.data() + f.size(), v);
        if (r.ec == std::errc() && r.ptr == f.data() + f.size()) {
          b.ints.push_back(v);
          continue;
        }
        b.is_double = true;
        b.doubles.assign(b.ints.begin(), b.ints.end());
        b.ints.clear();
        b.ints.shrink_to_fit();
      }
      double d = 0;
      const char* first = f.data() + (f.front() == '+' ? 1 : 0);
      auto r = fast_float::from_chars(first, f.data() + f.size(), d);
      if (r.ec != std::errc() || r.ptr != f.data() + f.size()) bad_value(path, line_no, names[c], f);
      b.doubles.push_back(d);
    }
    ++chunk.rows;
    ++line_no;
  }
}

// The column names of a header line (without its line end); a UTF-8 byte-order mark is skipped.
std::vector<std::string> parse_header(const std::string& path, std::string_view header) {
  if (!header.empty() && header.back() == '\r') header.remove_suffix(1);
  if (header.size() >= 3 && header.substr(0, 3) == "\xEF\xBB\xBF") header.remove_prefix(3);
  std::vector<std::string_view> fields;
  split_line(header, fields);
  std::vector<std::string> names;
  for (auto f : fields) names.emplace_back(unquote(f));
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

std::vector<std::string> read_csv_header(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw IoError(path + ": cannot open: " + std::strerror(errno));
  std::string header;
  char buf[1 << 16];
  bool failed = false, empty = true;
  for (;;) {
    const size_t n = std::fread(buf, 1, sizeof buf, f);
    empty = empty && n == 0;
    const auto nl = std::string_view(buf, n).find('\n');
    header.append(buf, nl == std::string_view::npos ? n : nl);
    if (nl != std::string_view::npos || n < sizeof buf) {
      failed = std::ferror(f) != 0;
      break;
    }
  }
  std::fclose(f);
  if (failed) throw IoError(path + ": read failed");
  if (empty) throw InvalidFile(path + ": empty file, expected a header row");
  return parse_header(path, header);
}

int64_t write_csv(const std::string& path, const Table& table) {
  for (const Column& col : table.columns) {
    if (col.schema.is_list) {
      throw InvalidArgument(path + ": column '" + col.schema.name + "' is a list; CSV holds one value per cell");
    }
  }
  AtomicFile file(path);
  std::string buf;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    if (c > 0) buf.push_back(',');
    buf.append(table.columns[c].schema.name);
  }
  buf.push_back('\n');
  for (int64_t r = 0; r < table.num_rows; ++r) {
    for (size_t c = 0; c < table.columns.size(); ++c) {
      if (c > 0) buf.push_back(',');
      append_field(buf, table.columns[c], r);
    }
    buf.push_back('\n');
    if (buf.size() > (1 << 20)) {
      file.write(buf);
      buf.clear();
    }
  }
  file.write(buf);
  const int64_t written = file.bytes_written();
  file.commit();
  return written;
}

Table read_csv(const std::string& path, const CsvReadOptions& options) {
  const std::string data = read_file(path);
  const std::string_view text(data);
  size_t header_end = text.find('\n');
  if (text.empty()) throw InvalidFile(path + ": empty file, expected a header row");
  if (header_end == std::string_view::npos) header_end = text.size();
  const std::vector<std::string> names = parse_header(path, text.substr(0, header_end));
  const std::vector<int> slots = column_slots(path, names, options.columns);
  const size_t kept = options.columns.empty() ? names.size() : options.columns.size();

  // Split the body into per-thread chunks at line boundaries, parse them in parallel, then concatenate.
  const size_t body = std::min(header_end + 1, text.size());
  int threads = options.num_threads > 0 ? options.num_threads : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(1, std::min(threads, static_cast<int>((text.size() - body) / (1 << 20)) + 1));
  std::vector<Chunk> chunks;
  size_t start = body;
  for (int t = 0; t < threads && start < text.size(); ++t) {
    size_t end = t == threads - 1 ? text.size() : body + (text.size() - body) * (t + 1) / threads;
    if (end < start) end = start;
    if (end < text.size()) {
      const size_t nl = text.find('\n', end);
      end = nl == std::string_view::npos ? text.size() : nl + 1;
    }
    chunks.push_back(Chunk{start, end, 0, {}, 0});
    start = end;
  }
  // Line numbers: count newlines before each chunk (cheap next to parsing).
  int64_t line = 2;
  for (auto& c : chunks) {
    c.first_line = line;
    line += std::count(text.begin() + static_cast<std::ptrdiff_t>(c.begin),
                       text.begin() + static_cast<std::ptrdiff_t>(c.end), '\n');
  }
  std::vector<std::exception_ptr> errors(chunks.size());
  {
    std::vector<std::thread> pool;
    for (size_t i = 1; i < chunks.size(); ++i) {
      pool.emplace_back([&, i] {
        try {
          parse_chunk(path, text, chunks[i], names, slots, kept);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
    }
    if (!chunks.empty()) {
      try {
        parse_chunk(path, text, chunks[0], names, slots, kept);
      } catch (...) {
        errors[0] = std::current_exception();
      }
    }
    for (auto& t : pool) t.join();
  }
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }

  Table table;
  for (const auto& c : chunks) table.num_rows += c.rows;
  std::vector<std::string> kept_names(kept);
  for (size_t field = 0; field < names.size(); ++field) {
    if (slots[field] >= 0) kept_names[static_cast<size_t>(slots[field])] = names[field];
  }
  for (size_t col = 0; col < kept; ++col) {
    bool is_double = false;
    int64_t nulls = 0;
    for (const auto& c : chunks) {
      is_double |= c.cols[col].is_double;
      nulls += c.cols[col].nulls;
    }
    ColumnSchema s;
    s.name = kept_names[col];
    s.type = is_double ? PhysicalType::kDouble : PhysicalType::kInt64;
    s.nullable = nulls > 0;
    Column out = make_column(std::move(s));
    if (is_double) {
      auto& v = out.as<double>();
      v.reserve(static_cast<size_t>(table.num_rows));
      for (const auto& c : chunks) {
        const auto& b = c.cols[col];
        if (b.is_double) v.insert(v.end(), b.doubles.begin(), b.doubles.end());
        else for (int64_t x : b.ints) v.push_back(static_cast<double>(x));
      }
    } else {
      auto& v = out.as<int64_t>();
      v.reserve(static_cast<size_t>(table.num_rows));
      for (const auto& c : chunks) v.insert(v.end(), c.cols[col].ints.begin(), c.cols[col].ints.end());
    }
    if (nulls > 0) {
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

}  // namespace feedline
