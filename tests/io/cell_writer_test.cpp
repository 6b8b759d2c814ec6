// The streaming cell writer against the texts built whole (cell_text + csv_field, json_row, nlohmann's dump with
// bad UTF-8 replaced): every Parquet file of the test corpora that reads, then hand-made columns of long strings
// whose multi-byte characters, bad bytes, quotes and control characters sit at and around every piece boundary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/parquet.h"
#include "feedline/io/table.h"
#include "io/cell_writer.h"
#include "io/value_text.h"
#include "test_paths.h"

namespace feedline {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

// What the writer writes, through an output buffer of `capacity` bytes (small ones cut the text everywhere).
class Captured {
 public:
  explicit Captured(size_t capacity = OutputBuffer::kDefaultCapacity)
      : buffer_([this](std::string_view s) { text_.append(s); }, capacity) {}
  TextSink& sink() { return buffer_; }
  std::string take() {
    buffer_.flush();
    return std::move(text_);
  }

 private:
  std::string text_;
  OutputBuffer buffer_;
};

// The CSV record as `cat` built it before it wrote cells as it made them.
std::string oracle_csv_record(const Table& t, int64_t row) {
  std::string out;
  for (size_t c = 0; c < t.columns.size(); ++c) {
    if (c) out += ',';
    if (auto text = cell_text(t.columns[c], row)) out += csv_field(*text);
  }
  if (out.empty()) out = "\"\"";
  return out + '\n';
}

std::string oracle_csv_header(const Table& t) {
  std::string out;
  for (size_t c = 0; c < t.columns.size(); ++c) out += (c ? "," : "") + csv_field(t.columns[c].schema.name);
  return out + '\n';
}

std::string oracle_json_dump(std::string_view bytes) {
  return ordered_json(std::string(bytes)).dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

std::string streamed_json(std::string_view bytes, size_t capacity = OutputBuffer::kDefaultCapacity) {
  Captured out(capacity);
  write_json_string(out.sink(), bytes);
  return out.take();
}

// Compares every row of `t` in both formats; returns the number of rows that differ (each reported once).
int64_t compare_table(const Table& t, const std::string& what, size_t capacity = OutputBuffer::kDefaultCapacity) {
  int64_t differing = 0;
  {
    Captured out(capacity);
    write_csv_header(out.sink(), t);
    EXPECT_EQ(out.take(), oracle_csv_header(t)) << what << ": CSV header";
  }
  const JsonLineWriter json(t);
  for (int64_t r = 0; r < t.num_rows; ++r) {
    Captured csv(capacity), jsonl(capacity);
    write_csv_record(csv.sink(), t, r);
    json.write(jsonl.sink(), r);
    const std::string csv_text = csv.take(), json_text = jsonl.take();
    const std::string want_csv = oracle_csv_record(t, r), want_json = json_row(t, r) + '\n';
    if (csv_text == want_csv && json_text == want_json) continue;
    if (++differing <= 3) {
      EXPECT_EQ(csv_text, want_csv) << what << ": CSV row " << r;
      EXPECT_EQ(json_text, want_json) << what << ": JSON row " << r;
    }
  }
  return differing;
}

std::vector<std::string> corpus_files() {
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(testing::test_data_dir())) {
    if (e.is_regular_file() && e.path().extension() == ".parquet") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(CellWriter, EveryCorpusFileAsTheWholeTexts) {
  parquet::ReadOptions options;
  options.max_output_bytes = int64_t{1} << 28;  // the files of a gigabyte's values are measured, not compared
  int read = 0;
  for (const std::string& path : corpus_files()) {
    Table t;
    try {
      t = parquet::read_table(path, options);
    } catch (const Error&) {
      continue;  // unreadable files are the corpus tests' concern
    }
    ++read;
    EXPECT_EQ(compare_table(t, path), 0) << path;
  }
  EXPECT_GT(read, 200);  // the corpora are there and mostly read
}

// Bytes that test the escaping: every kind of UTF-8 lead and continuation byte, the bounds of the ranges that
// Unicode's table 3-7 allows after E0, ED, F0 and F4, quotes, backslashes, control characters, CSV's specials.
const std::vector<unsigned char> kAlphabet = {0x00, 0x08, 0x09, 0x0A, 0x0D, 0x1F, '"', '\\', ',', 'a', 0x7F,
                                              0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0,
                                              0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF};

TEST(CellWriter, JsonStringsOfUpToFourBytesAsNlohmannReplaces) {
  const size_t n = kAlphabet.size();
  int64_t checked = 0, differing = 0;
  std::string s;
  for (size_t len = 0; len <= 4; ++len) {
    size_t count = 1;
    for (size_t k = 0; k < len; ++k) count *= n;
    for (size_t code = 0; code < count; ++code) {
      s.clear();
      for (size_t k = 0, rest = code; k < len; ++k, rest /= n) s += static_cast<char>(kAlphabet[rest % n]);
      ++checked;
      const std::string want = oracle_json_dump(s), got = streamed_json(s, 3);
      if (got != want && ++differing <= 5) {
        std::string hex;
        append_hex(hex, s);
        ADD_FAILURE() << "bytes 0x" << hex << ": " << got << ", nlohmann: " << want;
      }
    }
  }
  EXPECT_EQ(differing, 0);
  EXPECT_GT(checked, 1000000);
}

// Several MiB of text: runs of plain ASCII of every length up to past the buffer's size, each followed by one
// tricky piece (a multi-byte character, a bad or cut sequence, an escape), so that the tricky pieces fall at
// every offset around the 64 KiB (and, through small buffers, every other) boundary.
std::string tricky_text(uint32_t seed) {
  static const std::vector<std::string> kPieces = {
      "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xF4\x8F\xBF\xBF", "\xEF\xBF\xBD",  // valid
      "\x80", "\xBF", "\xC0\xAF", "\xC1\xBF", "\xE0\x80\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80",     // invalid
      "\xF5", "\xFF", "\xE2\x82", "\xF0\x9F\x98", "\xC3", "\xF0\x9F", "\xE2\x82\x41",                  // cut
      "\"", "\\", ",", "\r\n", "\n", "\t", "\x01", "\x1F", "\x7F", "\"\"", "a,\"b\"",                 // specials
  };
  std::mt19937 rng(seed);
  std::string s;
  while (s.size() < (size_t{5} << 20)) {
    // Fill up to the next boundary of 64 KiB (input) minus a few bytes, then a run of tricky pieces.
    const size_t boundary = (s.size() / 65536 + 1) * 65536;
    const size_t back = rng() % 8;
    s.append(boundary - back > s.size() ? boundary - back - s.size() : 0, 'x');
    for (int k = 0; k < 6; ++k) s += kPieces[rng() % kPieces.size()];
    s.append(rng() % 300, 'y');
    for (int k = 0; k < 3; ++k) s += kPieces[rng() % kPieces.size()];
  }
  return s;
}

Column string_column(const std::string& name, const std::vector<std::optional<std::string>>& values, bool text) {
  ColumnSchema schema{name, PhysicalType::kByteArray, true};
  schema.is_string = text;
  Column c = make_column(schema);
  for (const auto& v : values) {
    std::get<ByteArrays>(c.values).push_back(v.value_or(""));
    c.validity.push_back(v.has_value());
  }
  return c;
}

TEST(CellWriter, LongStringsAroundEveryPieceBoundary) {
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const std::string s = tricky_text(seed);
    // The JSON string alone, through buffers of many sizes: the text is cut at every kind of place.
    const std::string want = oracle_json_dump(s);
    for (const size_t capacity : {size_t{1}, size_t{7}, size_t{4096}, size_t{65535}, OutputBuffer::kDefaultCapacity}) {
      const std::string got = streamed_json(s, capacity);
      ASSERT_EQ(got.size(), want.size()) << "seed " << seed << ", buffer " << capacity;
      EXPECT_TRUE(got == want) << "seed " << seed << ", buffer " << capacity << ": first difference at byte "
                               << std::mismatch(got.begin(), got.end(), want.begin()).first - got.begin();
    }
    // In tables: as text, as bytes (hex), beside a null and an empty value, and in a list.
    Table t;
    t.num_rows = 4;
    t.columns.push_back(string_column("text", {s, std::nullopt, "", s.substr(1, 100000)}, true));
    t.columns.push_back(string_column("bytes", {s, "", std::nullopt, "\x01\xFF"}, false));
    EXPECT_EQ(compare_table(t, "seed " + std::to_string(seed)), 0);
    EXPECT_EQ(compare_table(t, "seed " + std::to_string(seed) + ", buffer 5", 5), 0);
  }
}

TEST(CellWriter, ListsOfLongStrings) {
  ColumnSchema schema{"list of \"text\"", PhysicalType::kByteArray, true};
  schema.is_string = true;
  schema.is_list = true;
  schema.element_nullable = true;
  schema.inner_list_nullable = {true};
  Column c = make_column(schema);
  // Rows: [["<long>", null], null, []], null, [[]], [["plain"]] -- a list of lists of strings.
  const std::string long_text = tricky_text(7).substr(0, 3 << 20);
  c.list_offsets = {0, 3, 3, 4, 5};
  c.validity = {1, 0, 1, 1};
  c.inner_lists[0].offsets = {0, 2, 2, 2, 2, 3};
  c.inner_lists[0].validity = {1, 0, 1, 1, 1};
  auto& values = std::get<ByteArrays>(c.values);
  values.push_back(long_text);
  values.push_back("");
  values.push_back("plain");
  c.element_validity = {1, 0, 1};
  Table t;
  t.num_rows = 4;
  t.columns.push_back(c);
  EXPECT_EQ(compare_table(t, "list of lists"), 0);
  EXPECT_EQ(compare_table(t, "list of lists, buffer 3", 3), 0);

  // A one-level list of numbers: no quotes wanted until a comma shows up.
  ColumnSchema numbers_schema{"n", PhysicalType::kInt64, true};
  numbers_schema.is_list = true;
  Column numbers = make_column(numbers_schema);
  numbers.list_offsets = {0, 1, 3, 3, 3};
  numbers.validity = {1, 1, 1, 0};
  numbers.as<int64_t>() = {7, -1, 2};
  Table n;
  n.num_rows = 4;
  n.columns.push_back(numbers);
  EXPECT_EQ(compare_table(n, "list of numbers"), 0);
  Captured out;
  for (int64_t r = 0; r < 4; ++r) write_csv_record(out.sink(), n, r);
  EXPECT_EQ(out.take(), "[7]\n\"[-1,2]\"\n[]\n\"\"\n");  // quoted for its comma; the lone null as ""
}

TEST(CellWriter, NullsAndTheLoneNull) {
  Table one;
  one.num_rows = 3;
  one.columns.push_back(string_column("a", {std::nullopt, "", "x"}, true));
  Captured out;
  for (int64_t r = 0; r < 3; ++r) write_csv_record(out.sink(), one, r);
  EXPECT_EQ(out.take(), "\"\"\n\"\"\nx\n");
  EXPECT_EQ(compare_table(one, "one column"), 0);

  Table two = one;
  two.columns.push_back(string_column("b", {std::nullopt, std::nullopt, std::nullopt}, false));
  Captured csv, json;
  write_csv_record(csv.sink(), two, 0);
  JsonLineWriter(two).write(json.sink(), 0);
  EXPECT_EQ(csv.take(), ",\n");
  EXPECT_EQ(json.take(), "{\"a\":null,\"b\":null}\n");
  EXPECT_EQ(compare_table(two, "two columns"), 0);

  Table none;
  none.num_rows = 2;
  EXPECT_EQ(compare_table(none, "no columns"), 0);
}

TEST(CellWriter, SharedNamesAndJsonText) {
  ColumnSchema json_schema{"j", PhysicalType::kByteArray, true};
  json_schema.is_string = true;
  json_schema.logical.kind = LogicalKind::kJson;
  Table t;
  t.num_rows = 3;
  t.columns.push_back(string_column("k\"ey\n", {"1", "2", std::nullopt}, true));
  Column j = string_column("j", {"{\"b\": [1, 2.50, \"x\"], \"a\": null}", "not json \xFF", "\"s\""}, true);
  j.schema = json_schema;
  t.columns.push_back(j);
  t.columns.push_back(string_column("k\"ey\n", {"3", std::nullopt, "\xE2\x82"}, true));
  EXPECT_EQ(compare_table(t, "shared names"), 0);
  Captured out;
  JsonLineWriter(t).write(out.sink(), 0);
  EXPECT_EQ(out.take(), "{\"k\\\"ey\\n\":\"3\",\"j\":{\"b\":[1,2.5,\"x\"],\"a\":null}}\n");
}

TEST(CellWriter, OutputBufferHandsOnEveryByteInOrder) {
  std::string got;
  std::vector<size_t> pieces;
  OutputBuffer out(
      [&](std::string_view s) {
        got.append(s);
        pieces.push_back(s.size());
      },
      4);
  out.write("ab");
  out.write("cde");
  out.write("fghijkl");  // longer than the buffer: after "abcd" and "e", on its own
  out.put('m');
  out.flush();
  out.flush();
  EXPECT_EQ(got, "abcdefghijklm");
  EXPECT_EQ(pieces, (std::vector<size_t>{4, 1, 7, 1}));
}

}  // namespace
}  // namespace feedline
