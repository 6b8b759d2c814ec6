// CsvStreamReader and CsvWriter against read_csv and write_csv: the blocks of a stream reader, joined, must be
// read_csv's table, value for value and schema for schema, with the same errors; a writer fed in pieces must write
// write_csv's bytes. Tiny blocks put a block edge inside every record, quote and line end of the small files.
#include "feedline/io/csv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "fuzz_targets.h"
#include "test_paths.h"

namespace feedline {
namespace {

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// Every block of a stream reader joined into one table, after checking each block's own promises: at least one
// row, the reader's schema, validity empty when the block holds no null. `block_rows` gets each block's rows.
Table read_blocks(const std::string& path, const CsvStreamOptions& options,
                  std::vector<int64_t>* block_rows = nullptr) {
  CsvStreamReader reader(path, options);
  const std::vector<ColumnSchema>& schema = reader.schema();
  Table all;
  for (const ColumnSchema& s : schema) all.columns.push_back(make_column(s));
  Table block;
  while (reader.next(&block)) {
    EXPECT_GE(block.num_rows, 1);
    if (block_rows != nullptr) block_rows->push_back(block.num_rows);
    EXPECT_EQ(block.columns.size(), schema.size());
    for (size_t c = 0; c < schema.size() && c < block.columns.size(); ++c) {
      const Column& col = block.columns[c];
      EXPECT_EQ(col.schema.name, schema[c].name);
      EXPECT_EQ(col.schema.type, schema[c].type) << col.schema.name;
      EXPECT_EQ(col.schema.nullable, schema[c].nullable) << col.schema.name;
      EXPECT_EQ(col.schema.is_string, schema[c].is_string) << col.schema.name;
      EXPECT_EQ(col.size(), block.num_rows) << col.schema.name;
      if (!col.validity.empty()) {
        EXPECT_EQ(static_cast<int64_t>(col.validity.size()), block.num_rows) << col.schema.name;
        EXPECT_NE(std::find(col.validity.begin(), col.validity.end(), 0), col.validity.end()) << col.schema.name;
      }
    }
    append_rows(all, block, 0, block.num_rows);
  }
  EXPECT_EQ(all.num_rows, reader.num_rows());
  EXPECT_FALSE(reader.next(&block));
  return all;
}

::testing::AssertionResult same_table(const Table& got, const Table& want) {
  if (got.num_rows != want.num_rows) {
    return ::testing::AssertionFailure() << got.num_rows << " rows, expected " << want.num_rows;
  }
  if (got.columns.size() != want.columns.size()) {
    return ::testing::AssertionFailure() << got.columns.size() << " columns, expected " << want.columns.size();
  }
  for (size_t c = 0; c < got.columns.size(); ++c) {
    Column g = got.columns[c];
    Column w = want.columns[c];
    const std::string name = "column " + std::to_string(c) + " '" + w.schema.name + "': ";
    if (g.schema.name != w.schema.name || g.schema.type != w.schema.type || g.schema.nullable != w.schema.nullable ||
        g.schema.is_string != w.schema.is_string) {
      return ::testing::AssertionFailure() << name << "schema " << g.schema.name << " " << to_string(g.schema.type)
                                           << (g.schema.nullable ? " nullable" : "") << ", expected "
                                           << to_string(w.schema.type) << (w.schema.nullable ? " nullable" : "");
    }
    // An empty validity means no null (a nullable column's first rows may hold none).
    if (w.schema.nullable && w.validity.empty()) w.validity.assign(static_cast<size_t>(want.num_rows), 1);
    if (g.schema.nullable && g.validity.empty()) g.validity.assign(static_cast<size_t>(got.num_rows), 1);
    if (g.validity != w.validity) return ::testing::AssertionFailure() << name << "validity differs";
    for (int64_t r = 0; r < want.num_rows; ++r) {
      std::string a, b;  // row r's values as text, to name the first that differs
      switch (w.schema.type) {
        case PhysicalType::kInt64:
          a = std::to_string(g.as<int64_t>()[r]);
          b = std::to_string(w.as<int64_t>()[r]);
          break;
        case PhysicalType::kDouble: {
          double x = g.as<double>()[r], y = w.as<double>()[r];  // bit for bit: NaN is NaN, -0 is not 0
          a.assign(reinterpret_cast<const char*>(&x), sizeof x);
          b.assign(reinterpret_cast<const char*>(&y), sizeof y);
          if (a != b) a = std::to_string(x), b = std::to_string(y) + " (or its sign or NaN payload)";
          break;
        }
        default:
          a = "'" + std::string(g.byte_arrays().at(r)) + "'";
          b = "'" + std::string(w.byte_arrays().at(r)) + "'";
      }
      if (a != b) return ::testing::AssertionFailure() << name << "row " << r << " is " << a << ", expected " << b;
    }
  }
  return ::testing::AssertionSuccess();
}

// What read_csv gives, or its error message. With a limit, what it gives for the file cut after that many records
// (the error naming `path` all the same).
std::string read_csv_outcome(const std::string& path, const CsvStreamOptions& options, Table* out) {
  std::string read_path = path;
  if (options.limit > 0) {
    read_path = path + ".first.csv";
    write_text(read_path, fuzz::csv_first_records(read_file(path), options.limit));
  }
  try {
    *out = read_csv(read_path, options);
  } catch (const Error& e) {
    std::string message = e.what();  // it starts with the path read
    if (read_path != path && message.compare(0, read_path.size(), read_path) == 0) {
      message.replace(0, read_path.size(), path);
    }
    return message;
  }
  return "";
}

std::string stream_outcome(const std::string& path, const CsvStreamOptions& options, Table* out) {
  try {
    *out = read_blocks(path, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The stream reader with blocks of every size in `block_sizes` gives what read_csv gives: the table or the error.
void expect_agrees_with_read_csv(const std::string& path, CsvStreamOptions options,
                                 const std::vector<int64_t>& block_sizes) {
  Table want;
  const std::string want_error = read_csv_outcome(path, options, &want);
  for (int64_t bytes : block_sizes) {
    options.block_bytes = bytes;
    SCOPED_TRACE("block_bytes " + std::to_string(bytes) + (options.text_columns ? ", text columns" : "") +
                 ", limit " + std::to_string(options.limit));
    Table got;
    const std::string error = stream_outcome(path, options, &got);
    ASSERT_EQ(error, want_error);
    if (error.empty()) ASSERT_TRUE(same_table(got, want));
  }
}

std::vector<int64_t> sizes_up_to(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t i = 1; i <= n; ++i) out.push_back(i);
  out.push_back(1 << 20);
  return out;
}

CsvStreamOptions text_options() {
  CsvStreamOptions o;
  o.num_threads = 1;
  o.text_columns = true;
  return o;
}

std::string stream_error(const std::string& path, const CsvStreamOptions& options) {
  Table ignored;
  return stream_outcome(path, options, &ignored);
}

TEST(CsvStream, QuotedFieldsStraddleEveryBlockEdge) {
  const auto dir = testing::scratch_dir("csv_stream_quotes");
  const std::string path = dir + "/t.csv";
  write_text(path,
             "id,\"na,me\",v\n"
             "1,\"a,b\",\"12\"\n"
             "2,\"two\nlines\",-3\n"
             "3,\"crlf\r\ninside\",+4\r\n"
             "4,\"say \"\"hi\"\", \"\"there\"\"\", 5 \n"
             "5,\"\",\n"
             "6,,\"\"\n"
             "7,\"\"\"\",8\n"
             "8,\"ends with a quote \"\"\",9\n");
  expect_agrees_with_read_csv(path, text_options(), sizes_up_to(64));
  const Table t = read_blocks(path, [] {
    CsvStreamOptions o = text_options();
    o.block_bytes = 5;
    return o;
  }());
  ASSERT_EQ(t.num_rows, 8);
  EXPECT_EQ(t.columns[1].schema.name, "na,me");
  EXPECT_EQ(t.columns[1].byte_arrays().at(1), "two\nlines");
  EXPECT_EQ(t.columns[1].byte_arrays().at(2), "crlf\r\ninside");
  EXPECT_EQ(t.columns[1].byte_arrays().at(3), "say \"hi\", \"there\"");
  EXPECT_EQ(t.columns[1].byte_arrays().at(6), "\"");
  EXPECT_FALSE(t.columns[1].is_null(4));  // "" is the empty string
  EXPECT_TRUE(t.columns[1].is_null(5));
  // v: numbers, quoted or spaced; a quoted empty field is a null number.
  EXPECT_EQ(t.columns[2].schema.type, PhysicalType::kInt64);
  EXPECT_EQ(t.columns[2].as<int64_t>(), (std::vector<int64_t>{12, -3, 4, 5, 0, 0, 8, 9}));
  EXPECT_TRUE(t.columns[2].is_null(5));
  // Without text columns the text is refused, at the line its record starts on, whatever the block size.
  CsvStreamOptions numbers;
  numbers.num_threads = 1;
  expect_agrees_with_read_csv(path, numbers, sizes_up_to(64));
  numbers.block_bytes = 3;
  EXPECT_EQ(stream_error(path, numbers), path + ":2: column 'na,me': 'a,b' is not a number");
  numbers.columns = {"v", "id"};
  expect_agrees_with_read_csv(path, numbers, sizes_up_to(64));
}

TEST(CsvStream, ByteOrderMarkCrlfEmptyLinesAndNoFinalLineEnd) {
  const auto dir = testing::scratch_dir("csv_stream_crlf");
  const std::vector<std::string> files{
      "\xEF\xBB\xBF" "a,b\r\n1,2\r\n\r\n3,4\r\n\r\n",
      "a,b\n\n\n1,2\n\n3,4",
      "a,b\n1,2\n3,\"x\"",
      "a,b\r\n1,2\r\n3,4\r",
      "\n",
      "a,b\n\n\n\n",
      "a,b\r\n",
      "a,b",
      "\xEF\xBB\xBF" "a",
  };
  for (size_t i = 0; i < files.size(); ++i) {
    SCOPED_TRACE("file " + std::to_string(i));
    const std::string path = dir + "/" + std::to_string(i) + ".csv";
    write_text(path, files[i]);
    expect_agrees_with_read_csv(path, text_options(), sizes_up_to(24));
    CsvStreamOptions numbers;
    expect_agrees_with_read_csv(path, numbers, sizes_up_to(24));
  }
  const std::string bom = dir + "/0.csv";
  CsvStreamOptions tiny;
  tiny.block_bytes = 2;
  CsvStreamReader reader(bom, tiny);
  EXPECT_EQ(reader.schema()[0].name, "a");  // the mark is not part of the name
  EXPECT_EQ(reader.num_rows(), 2);
  // A header alone: its columns, no rows, no block.
  CsvStreamReader header_only(dir + "/7.csv", tiny);
  ASSERT_EQ(header_only.schema().size(), 2u);
  EXPECT_EQ(header_only.schema()[1].type, PhysicalType::kInt64);
  EXPECT_EQ(header_only.num_rows(), 0);
  Table t;
  EXPECT_FALSE(header_only.next(&t));
  // Nothing at all is not a CSV file.
  write_text(dir + "/empty.csv", "");
  EXPECT_EQ(stream_error(dir + "/empty.csv", tiny), dir + "/empty.csv: empty file, expected a header row");
  EXPECT_EQ(stream_error(dir + "/4.csv", tiny), dir + "/4.csv:1: column 1 has no name");
}

TEST(CsvStream, ARecordLongerThanABlockGrowsTheBlock) {
  const auto dir = testing::scratch_dir("csv_stream_long");
  const std::string path = dir + "/t.csv";
  std::string long_field;
  for (int i = 0; i < 300; ++i) long_field += i % 17 == 0 ? "\n\"\"," : "x";
  write_text(path, "n,s\n1,a\n2,\"" + long_field + "\"\n3,b\n4,c\n");
  expect_agrees_with_read_csv(path, text_options(), {1, 2, 8, 50, 200, 400});
  CsvStreamOptions o = text_options();
  o.block_bytes = 8;
  std::vector<int64_t> rows;
  const Table t = read_blocks(path, o, &rows);
  // The long record is a block of its own; the two short records after it fit in 8 bytes.
  EXPECT_EQ(rows, (std::vector<int64_t>{1, 1, 2}));
  std::string unquoted;
  for (int i = 0; i < 300; ++i) unquoted += i % 17 == 0 ? "\n\"," : "x";
  EXPECT_EQ(t.columns[1].byte_arrays().at(1), unquoted);
  // A header longer than a block.
  std::string header, row;
  for (int c = 0; c < 200; ++c) {
    header += (c ? ",column" : "column") + std::to_string(c);
    row += (c ? "," : "") + std::to_string(c);
  }
  write_text(dir + "/wide.csv", header + "\n" + row + "\n" + row + "\n");
  expect_agrees_with_read_csv(dir + "/wide.csv", o, {1, 7, 64});
}

TEST(CsvStream, TypesSettledInTheLastBlockHoldInEveryBlock) {
  const auto dir = testing::scratch_dir("csv_stream_types");
  const std::string path = dir + "/t.csv";
  // d turns DOUBLE, s STRING and n nullable only in the last record; i stays INT64 throughout.
  std::string text = "i,d,s,n\n";
  for (int r = 0; r < 40; ++r) {
    text += std::to_string(r * 1000) + "," + std::to_string(r) + "," + (r % 2 ? "1.50" : "007") + "," +
            std::to_string(-r) + "\n";
  }
  text += "40,2.5,word,\n";
  write_text(path, text);
  CsvStreamOptions o = text_options();
  expect_agrees_with_read_csv(path, o, {1, 9, 16, 33, 64, 100, 1 << 20});
  o.block_bytes = 16;
  std::vector<int64_t> rows;
  const Table t = read_blocks(path, o, &rows);  // checks every block's schema
  EXPECT_GT(rows.size(), 20u);
  EXPECT_EQ(t.columns[0].schema.type, PhysicalType::kInt64);
  EXPECT_EQ(t.columns[1].schema.type, PhysicalType::kDouble);
  EXPECT_EQ(t.columns[1].as<double>()[3], 3.0);
  EXPECT_EQ(t.columns[2].schema.type, PhysicalType::kByteArray);
  EXPECT_TRUE(t.columns[2].schema.is_string);
  EXPECT_EQ(t.columns[2].byte_arrays().at(0), "007");  // as written, in the first block too
  EXPECT_EQ(t.columns[2].byte_arrays().at(1), "1.50");
  EXPECT_TRUE(t.columns[3].schema.nullable);
  EXPECT_TRUE(t.columns[3].is_null(40));
  // The first block on its own: already typed as the whole file.
  CsvStreamReader reader(path, o);
  Table first;
  ASSERT_TRUE(reader.next(&first));
  EXPECT_EQ(first.columns[1].schema.type, PhysicalType::kDouble);
  EXPECT_EQ(first.columns[2].byte_arrays().at(0), "007");
  EXPECT_TRUE(first.columns[3].schema.nullable);
  EXPECT_TRUE(first.columns[3].validity.empty());  // no null in this block
}

TEST(CsvStream, ColumnsAndLimitAsAskedFor) {
  const auto dir = testing::scratch_dir("csv_stream_columns");
  const std::string path = dir + "/t.csv";
  std::string text = "id,note,y,x\r\n";
  for (int i = 0; i < 30; ++i) {
    text += std::to_string(i) + ",\"row, " + std::to_string(i) + "\"," + (i == 3 ? "" : std::to_string(i % 10)) +
            "," + std::to_string(i) + ".5\r\n";
  }
  text += "30,late,,1e3\r\n";
  write_text(path, text);
  CsvStreamOptions o;
  o.columns = {"x", "y"};
  expect_agrees_with_read_csv(path, o, sizes_up_to(40));
  for (int64_t limit : {1, 2, 3, 4, 30, 31, 32, 1000}) {
    o.limit = limit;
    expect_agrees_with_read_csv(path, o, {1, 5, 17, 64, 1 << 20});
  }
  // The first rows alone decide the types: y's null is the fourth row, so with a limit of 2 it is not nullable.
  o.limit = 2;
  o.block_bytes = 10;
  CsvStreamReader reader(path, o);
  EXPECT_EQ(reader.num_rows(), 2);
  EXPECT_FALSE(reader.schema()[1].nullable);
  Table t;
  ASSERT_TRUE(reader.next(&t));
  EXPECT_TRUE(t.columns[1].validity.empty());
  EXPECT_EQ(t.columns[0].as<double>()[0], 0.5);
  int64_t rows = t.num_rows;
  while (reader.next(&t)) rows += t.num_rows;
  EXPECT_EQ(rows, 2);
  // The text column alone, and every column with text.
  CsvStreamOptions note = text_options();
  note.columns = {"note"};
  expect_agrees_with_read_csv(path, note, sizes_up_to(40));
  expect_agrees_with_read_csv(path, text_options(), sizes_up_to(40));
  // Columns that are not there, or asked for twice: read_csv's messages.
  o.columns = {"x", "zz"};
  EXPECT_EQ(stream_error(path, o), path + ": no column 'zz' (the header has id, note, y, x)");
  o.columns = {"y", "y"};
  EXPECT_EQ(stream_error(path, o), path + ": column 'y' asked for twice");
  EXPECT_THROW(CsvStreamReader(path, o), InvalidArgument);
}

TEST(CsvStream, ErrorsNameTheLineAcrossBlocks) {
  const auto dir = testing::scratch_dir("csv_stream_errors");
  struct Case {
    std::string name, text, message;
    bool text_columns;
  };
  const std::vector<Case> cases{
      {"open", "a,b\n1,\"x\ny\"\n2,3\n4,\"never closed\n5,6\n", ":5: a quoted field is never closed", true},
      {"open_last", "a,b\n1,2\n\"", ":3: a quoted field is never closed", true},
      {"ragged", "a,b\n1,\"two\nlines\"\n\n2,\"x\r\ny\"\r\n3\n", ":7: 1 fields, the header has 2", true},
      {"ragged_long", "a,b\n1,2\n3,4,5,6,7,8,9\n", ":3: 7 fields, the header has 2", false},
      {"word", "a,b\n1,2\n3,\"4\n\"\n5,hello\n", ":3: column 'b': '4\n' is not a number", false},
      {"word_late", "a,b\n1,2\n3,4\n\n5,hello\n", ":5: column 'b': 'hello' is not a number", false},
      {"noname", "a,\n1,2\n", ":1: column 2 has no name", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = dir + "/" + c.name + ".csv";
    write_text(path, c.text);
    CsvStreamOptions o;
    o.text_columns = c.text_columns;
    for (int64_t bytes : sizes_up_to(40)) {
      o.block_bytes = bytes;
      ASSERT_EQ(stream_error(path, o), path + c.message) << "block_bytes " << bytes;
    }
    expect_agrees_with_read_csv(path, o, {1, 3, 1 << 20});
  }
  CsvStreamOptions o;
  EXPECT_THROW(CsvStreamReader(dir + "/missing.csv", o), IoError);
}

TEST(CsvStream, IntegerRangesAndRowCount) {
  const auto dir = testing::scratch_dir("csv_stream_ranges");
  const std::string path = dir + "/t.csv";
  write_text(path,
             "a,b,c,d,e\n"
             "5,,1.5,x,\n"
             "-7,3,2,y,\n"
             ",9223372036854775807,3,z,\n"
             "12,-9223372036854775808,4,w,\n");
  CsvStreamOptions o = text_options();
  for (int64_t bytes : {1, 4, 1 << 20}) {
    o.block_bytes = bytes;
    CsvStreamReader reader(path, o);
    EXPECT_EQ(reader.num_rows(), 4);
    EXPECT_EQ(reader.int_range(0), std::make_pair(int64_t{-7}, int64_t{12}));  // the null's 0 is not a value
    EXPECT_EQ(reader.int_range(1), std::make_pair(INT64_MIN, INT64_MAX));
    EXPECT_EQ(reader.int_range(2), std::nullopt);  // DOUBLE
    EXPECT_EQ(reader.int_range(3), std::nullopt);  // STRING
    EXPECT_EQ(reader.int_range(4), std::nullopt);  // INT64, every field null
    EXPECT_EQ(reader.schema()[4].type, PhysicalType::kInt64);
    EXPECT_THROW(reader.int_range(5), InvalidArgument);
  }
  // Ranges index the columns asked for, and cover the rows within the limit.
  o.columns = {"b", "a"};
  o.limit = 2;
  o.block_bytes = 3;
  CsvStreamReader reader(path, o);
  EXPECT_EQ(reader.num_rows(), 2);
  EXPECT_EQ(reader.int_range(1), std::make_pair(int64_t{-7}, int64_t{5}));
  EXPECT_EQ(reader.int_range(0), std::make_pair(int64_t{3}, int64_t{3}));
  // A column that turns text late has no range.
  write_text(dir + "/late.csv", "a\n1\n2\n3\nx\n");
  o = text_options();
  o.block_bytes = 2;
  EXPECT_EQ(CsvStreamReader(dir + "/late.csv", o).int_range(0), std::nullopt);
}

TEST(CsvStream, BlocksStayNearBlockBytes) {
  const auto dir = testing::scratch_dir("csv_stream_blocks");
  const std::string path = dir + "/t.csv";
  std::string text = "a,b\n";
  for (int i = 0; i < 2000; ++i) text += std::to_string(i % 10) + "," + std::to_string(i % 7) + "\n";  // 4 bytes
  write_text(path, text);
  for (int64_t bytes : {4, 10, 64, 1000}) {
    CsvStreamOptions o;
    o.block_bytes = bytes;
    std::vector<int64_t> rows;
    read_blocks(path, o, &rows);
    // Each block is the whole records within block_bytes: never more, and none smaller but the last.
    for (size_t b = 0; b < rows.size(); ++b) {
      EXPECT_LE(rows[b], bytes / 4) << b;
      if (b + 1 < rows.size()) EXPECT_EQ(rows[b], bytes / 4) << b;
    }
    EXPECT_EQ(rows.size(), static_cast<size_t>((2000 + bytes / 4 - 1) / (bytes / 4)));
  }
}

TEST(CsvStream, SeveralThreadsInsideABlock) {
  // Blocks of a few MiB, each cut into chunks for threads; quoted line ends near the cuts; y turns DOUBLE and
  // note STRING in the last block only.
  std::string text = "x,y,note\n";
  for (int i = 0; i < 400000; ++i) {
    text += std::to_string(i) + "," + (i == 399990 ? std::string("2.5") : std::to_string(i % 7)) + "," +
            (i == 399995 ? std::string("word") : i % 3 ? "\"1\n2\"" : std::to_string(i)) + "\n";
  }
  const auto dir = testing::scratch_dir("csv_stream_threads");
  write_text(dir + "/t.csv", text);
  CsvStreamOptions o = text_options();
  o.num_threads = 3;
  Table want;
  ASSERT_EQ(read_csv_outcome(dir + "/t.csv", o, &want), "");
  for (int64_t bytes : {int64_t{3} << 20, int64_t{1} << 20}) {
    o.block_bytes = bytes;
    std::vector<int64_t> rows;
    const Table got = read_blocks(dir + "/t.csv", o, &rows);
    EXPECT_GE(rows.size(), 2u);
    EXPECT_TRUE(same_table(got, want));
  }
}

// Small CSV files drawn at random from the awkward cases, read with blocks of random sizes and options: the
// stream reader must give read_csv's table or read_csv's error, every time.
TEST(CsvStream, RandomFilesAgreeWithReadCsv) {
  const std::vector<std::string> fields{
      "0", "-12", "+7", "9223372036854775807", "-9223372036854775809", "1.5", "1e3", "-0", " 4 ", "", " ", "\"\"",
      "\"12\"", "\"1,5\"", "abc", "\"a\nb\"", "\"a\r\nb\"", "\"q\"\"q\"", "nan", "inf", "0x10", "\"\"\"\"", "1.50"};
  const auto dir = testing::scratch_dir("csv_stream_random");
  std::mt19937 gen(20251123);
  const auto pick = [&](size_t n) { return static_cast<size_t>(gen() % n); };
  for (int file = 0; file < 400; ++file) {
    const size_t cols = 1 + pick(4);
    std::string text = pick(5) == 0 ? "\xEF\xBB\xBF" : "";
    for (size_t c = 0; c < cols; ++c) text += (c ? "," : "") + std::string(1, static_cast<char>('a' + c));
    const char* eol = pick(2) ? "\n" : "\r\n";
    text += eol;
    const size_t rows = pick(12);
    for (size_t r = 0; r < rows; ++r) {
      if (pick(8) == 0) text += eol;  // an empty line
      // Mostly one kind of value per column, so that many files read; now and then a ragged row.
      const size_t n = pick(30) == 0 ? cols + 1 : cols;
      for (size_t c = 0; c < n; ++c) {
        text += (c ? "," : "") + fields[pick(4) == 0 ? pick(fields.size()) : (c * 3 + file) % 10];
      }
      if (r + 1 < rows || pick(3)) text += eol;
    }
    if (pick(40) == 0) text += "\"unclosed";
    const std::string path = dir + "/" + std::to_string(file) + ".csv";
    write_text(path, text);
    SCOPED_TRACE(path);
    CsvStreamOptions o;
    o.num_threads = 1 + static_cast<int>(pick(2));
    o.text_columns = pick(3) != 0;
    if (pick(4) == 0) o.columns = {std::string(1, static_cast<char>('a' + pick(cols)))};
    if (pick(4) == 0) o.limit = 1 + static_cast<int64_t>(pick(6));
    expect_agrees_with_read_csv(path, o, {1 + static_cast<int64_t>(pick(5)), 5 + static_cast<int64_t>(pick(40)),
                                          1 << 20});
  }
}

TEST(CsvStream, AFileChangedBetweenThePassesIsRefused) {
  const auto dir = testing::scratch_dir("csv_stream_changed");
  const std::string path = dir + "/t.csv";
  const auto next_error = [&](const std::string& before, const std::string& after, int64_t block_bytes) {
    write_text(path, before);
    CsvStreamOptions o;
    o.block_bytes = block_bytes;
    CsvStreamReader reader(path, o);
    write_text(path, after);
    Table t;
    try {
      while (reader.next(&t)) {
      }
    } catch (const IoError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(next_error("a\n11\n22\n", "a\n11\n22\n33\n", 3),
            path + ": changed while reading (8 bytes, now 11)");
  // The same size, other records.
  EXPECT_EQ(next_error("a\n11\n22\n", "a\n1\n2\n3\n", 3),
            path + ": changed while reading (the records from line 2: 2 now, 1 before)");
  // A file of one block is parsed once: next() gives the first pass's values, whatever the file holds by then.
  EXPECT_EQ(next_error("a\n11\n22\n", "a\n11\n22\n33\n", 1 << 20), "no error");
  write_text(path, "a\n11\n22\n");
  CsvStreamReader reader(path, CsvStreamOptions{});
  write_text(path, "a\n33\n44\n");
  Table t;
  ASSERT_TRUE(reader.next(&t));
  EXPECT_EQ(t.columns[0].as<int64_t>(), (std::vector<int64_t>{11, 22}));
  reader.rewind();
  ASSERT_TRUE(reader.next(&t));  // and again after a rewind
  EXPECT_EQ(t.columns[0].as<int64_t>(), (std::vector<int64_t>{11, 22}));
  EXPECT_FALSE(reader.next(&t));
  EXPECT_EQ(next_error("a\n11\n22\n", "a\n11\n2.\n", 3),
            path + ": changed while reading (column 'a' in the records from line 3 is no longer INT64)");
  EXPECT_EQ(next_error("a\n11\n22\n", "a\n11\n  \n", 3),
            path + ": changed while reading (column 'a' in the records from line 3 now holds a null)");
}

// rewind() hands out the same blocks again, from a file of many blocks or of one, and after a partial pass.
TEST(CsvStream, RewindGivesTheBlocksAgain) {
  const auto dir = testing::scratch_dir("csv_stream_rewind");
  write_text(dir + "/t.csv", "a,b\n1,x\n2,\n3,\"z\"\n");
  for (int64_t bytes : {1, 4, 1 << 20}) {
    CsvStreamOptions o = text_options();
    o.block_bytes = bytes;
    const Table want = read_blocks(dir + "/t.csv", o);
    CsvStreamReader reader(dir + "/t.csv", o);
    Table t;
    ASSERT_TRUE(reader.next(&t));
    reader.rewind();
    Table again;
    while (reader.next(&t)) append_rows(again, t, 0, t.num_rows);
    EXPECT_TRUE(same_table(again, want)) << bytes;
  }
}

TEST(CsvStream, RefusesOptionsOutOfRange) {
  const auto dir = testing::scratch_dir("csv_stream_options");
  write_text(dir + "/t.csv", "a\n1\n");
  CsvStreamOptions o;
  o.block_bytes = 0;
  EXPECT_EQ(stream_error(dir + "/t.csv", o), dir + "/t.csv: block_bytes must be positive, not 0");
  o.block_bytes = 1;
  o.limit = -1;
  EXPECT_EQ(stream_error(dir + "/t.csv", o), dir + "/t.csv: limit must not be negative: -1");
  EXPECT_THROW(CsvStreamReader(dir + "/t.csv", o), InvalidArgument);
}

// A table of every kind of column write_csv writes, with nulls and awkward text.
Table awkward_table() {
  Table t;
  ColumnSchema text{"text, \"quoted\"", PhysicalType::kByteArray, true, std::nullopt, true};
  ColumnSchema blob{"blob", PhysicalType::kFixedLenByteArray, true};
  blob.type_length = 2;
  ColumnSchema small{"small", PhysicalType::kInt32, false, IntAnnotation{8, false}};
  t.columns = {make_column(ColumnSchema{"id"}), make_column(ColumnSchema{"x", PhysicalType::kDouble, true}),
               make_column(text), make_column(blob), make_column(small)};
  const std::vector<std::string> words{"plain", "a,b", "say \"hi\"", "two\nlines", "", "12"};
  for (int i = 0; i < 23; ++i) {
    t.columns[0].as<int64_t>().push_back(i * 1000003LL - 5);
    t.columns[1].as<double>().push_back(i % 5 == 0 ? 0 : 1.0 / (i + 1));
    t.columns[1].validity.push_back(i % 5 == 0 ? 0 : 1);
    std::get<ByteArrays>(t.columns[2].values).push_back(i % 7 == 6 ? "" : words[static_cast<size_t>(i) % 6]);
    t.columns[2].validity.push_back(i % 7 == 6 ? 0 : 1);
    std::get<ByteArrays>(t.columns[3].values).push_back(std::string{static_cast<char>(i), '\xff'});
    t.columns[4].as<int32_t>().push_back(static_cast<int32_t>(255 - i) | (i % 2 ? -256 : 0));
  }
  t.columns[3].validity.assign(23, 1);
  t.num_rows = 23;
  return t;
}

std::vector<ColumnSchema> schema_of(const Table& t) {
  std::vector<ColumnSchema> out;
  for (const Column& c : t.columns) out.push_back(c.schema);
  return out;
}

TEST(CsvWriter, PiecesWriteWhatWriteCsvWritesForTheWhole) {
  const Table t = awkward_table();
  const auto dir = testing::scratch_dir("csv_writer_pieces");
  const int64_t whole_bytes = write_csv(dir + "/whole.csv", t);
  const std::string whole = read_file(dir + "/whole.csv");
  EXPECT_EQ(whole_bytes, static_cast<int64_t>(whole.size()));
  EXPECT_NE(whole.find("\"text, \"\"quoted\"\"\""), std::string::npos);
  for (const std::vector<int64_t>& cuts : std::vector<std::vector<int64_t>>{{0, 23}, {0, 1, 1, 5, 23}, {0, 0, 23, 23},
                                                                            {0, 7, 8, 9, 10, 22, 23}}) {
    std::filesystem::remove(dir + "/pieces.csv");
    CsvWriter writer(dir + "/pieces.csv", schema_of(t));
    for (size_t i = 0; i + 1 < cuts.size(); ++i) writer.write(slice(t, cuts[i], cuts[i + 1]));
    EXPECT_FALSE(std::filesystem::exists(dir + "/pieces.csv"));  // not before close()
    EXPECT_EQ(writer.close(), whole_bytes);
    EXPECT_EQ(read_file(dir + "/pieces.csv"), whole);
  }
  // No rows: the header alone.
  CsvWriter empty(dir + "/empty.csv", {ColumnSchema{"a"}, ColumnSchema{"b,c"}});
  EXPECT_EQ(empty.close(), 8);
  EXPECT_EQ(read_file(dir + "/empty.csv"), "a,\"b,c\"\n");
}

// A list column's cells are their JSON arrays, quoted where CSV needs it; a null list is an empty field, an empty
// list "[]". Written in two pieces, the same as whole.
TEST(CsvWriter, ListsAreWrittenAsTheirJsonArrays) {
  Table t;
  ColumnSchema ints{"ints", PhysicalType::kInt32, true};
  ints.is_list = true;
  ints.element_nullable = true;
  ColumnSchema words{"words", PhysicalType::kByteArray, true, std::nullopt, true};
  words.is_list = true;
  words.inner_list_nullable = {true};
  t.columns = {make_column(ints), make_column(words)};
  t.columns[0].as<int32_t>() = {1, 0, -3, 7};
  t.columns[0].list_offsets = {0, 3, 3, 3, 4};
  t.columns[0].validity = {1, 0, 1, 1};
  t.columns[0].element_validity = {1, 0, 1, 1};
  // [["a,b", "say \"hi\""], null], [], null, [[]]
  for (const char* w : {"a,b", "say \"hi\""}) std::get<ByteArrays>(t.columns[1].values).push_back(w);
  t.columns[1].list_offsets = {0, 2, 2, 2, 3};
  t.columns[1].validity = {1, 1, 0, 1};
  t.columns[1].inner_lists[0].offsets = {0, 2, 2, 2};
  t.columns[1].inner_lists[0].validity = {1, 0, 1};
  t.num_rows = 4;
  const auto dir = testing::scratch_dir("csv_writer_lists");
  write_csv(dir + "/whole.csv", t);
  const std::string want =
      "ints,words\n"
      "\"[1,null,-3]\",\"[[\"\"a,b\"\",\"\"say \\\"\"hi\\\"\"\"\"],null]\"\n"
      ",[]\n"
      "[],\n"
      "[7],[[]]\n";
  EXPECT_EQ(read_file(dir + "/whole.csv"), want);
  CsvWriter writer(dir + "/pieces.csv", schema_of(t));
  writer.write(slice(t, 0, 1));
  writer.write(slice(t, 1, 4));
  writer.close();
  EXPECT_EQ(read_file(dir + "/pieces.csv"), want);
  // Read back, the cells are text.
  CsvReadOptions text;
  text.text_columns = true;
  const Table back = read_csv(dir + "/whole.csv", text);
  ASSERT_EQ(back.num_rows, 4);
  EXPECT_EQ(back.columns[0].byte_arrays().at(0), "[1,null,-3]");
  EXPECT_EQ(back.columns[1].byte_arrays().at(0), "[[\"a,b\",\"say \\\"hi\\\"\"],null]");
}

TEST(CsvWriter, StreamedBlocksRewriteTheFileAsWriteCsvDoes) {
  const auto dir = testing::scratch_dir("csv_writer_stream");
  std::string text = "id,v,s\n";
  for (int i = 0; i < 200; ++i) {
    text += std::to_string(i) + "," + (i % 9 ? std::to_string(i) + ".25" : "") + "," +
            (i % 4 ? "\"a,\n" + std::to_string(i) + "\"" : "1.50") + "\n";
  }
  write_text(dir + "/in.csv", text);
  CsvStreamOptions o = text_options();
  write_csv(dir + "/whole.csv", read_csv(dir + "/in.csv", o));
  o.block_bytes = 50;
  CsvStreamReader reader(dir + "/in.csv", o);
  CsvWriter writer(dir + "/blocks.csv", reader.schema());
  Table block;
  int blocks = 0;
  while (reader.next(&block)) {
    writer.write(block);
    ++blocks;
  }
  EXPECT_GT(blocks, 20);
  EXPECT_EQ(writer.close(), file_size(dir + "/whole.csv"));
  EXPECT_EQ(read_file(dir + "/blocks.csv"), read_file(dir + "/whole.csv"));
}

TEST(CsvWriter, AWriterNotClosedLeavesNothingBehind) {
  const auto dir = testing::scratch_dir("csv_writer_unclosed");
  const Table t = awkward_table();
  {
    CsvWriter writer(dir + "/out.csv", schema_of(t));
    writer.write(t);
    writer.write(t);
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));  // neither the file nor a temporary one
  // An older file at the path stays as it was.
  write_text(dir + "/out.csv", "old\n");
  {
    CsvWriter writer(dir + "/out.csv", schema_of(t));
    writer.write(t);
  }
  EXPECT_EQ(read_file(dir + "/out.csv"), "old\n");
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) entries += e.is_regular_file();
  EXPECT_EQ(entries, 1);
  // A writer moved from is closed by its new owner.
  CsvWriter first(dir + "/moved.csv", schema_of(t));
  CsvWriter second = std::move(first);
  second.write(t);
  EXPECT_GT(second.close(), 0);
  EXPECT_EQ(read_file(dir + "/moved.csv"), [&] {
    write_csv(dir + "/direct.csv", t);
    return read_file(dir + "/direct.csv");
  }());
}

std::string writer_error(const std::vector<ColumnSchema>& schema, const Table& t, const std::string& path) {
  try {
    CsvWriter writer(path, schema);
    writer.write(t);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(CsvWriter, RefusesTablesThatDoNotMatchItsSchema) {
  const auto dir = testing::scratch_dir("csv_writer_mismatch");
  const std::string path = dir + "/out.csv";
  const Table t = awkward_table();
  std::vector<ColumnSchema> schema = schema_of(t);
  EXPECT_EQ(writer_error(schema, t, path), "");
  schema[1].name = "y";
  EXPECT_EQ(writer_error(schema, t, path), path + ": column 2 is 'x', the file's is 'y'");
  schema = schema_of(t);
  schema[1].type = PhysicalType::kFloat;
  EXPECT_EQ(writer_error(schema, t, path), path + ": column 'x' is DOUBLE, the file's is FLOAT");
  schema = schema_of(t);
  schema[4].int_annotation = IntAnnotation{8, true};
  EXPECT_EQ(writer_error(schema, t, path),
            path + ": column 'small' is INT32 (unsigned 8-bit), the file's is INT32 (signed 8-bit)");
  schema = schema_of(t);
  schema[3].type_length = 3;
  EXPECT_EQ(writer_error(schema, t, path),
            path + ": column 'blob' is FIXED_LEN_BYTE_ARRAY(2), the file's is FIXED_LEN_BYTE_ARRAY(3)");
  schema = schema_of(t);
  schema.pop_back();
  EXPECT_EQ(writer_error(schema, t, path), path + ": a table of 5 columns, the file has 4");
  schema = schema_of(t);
  schema[0].is_list = true;
  EXPECT_EQ(writer_error(schema, t, path), path + ": column 'id' is INT64, the file's is list of INT64");
  schema[0].inner_list_nullable = {true};
  EXPECT_EQ(writer_error(schema, t, path), path + ": column 'id' is INT64, the file's is list of list of INT64");
  // A table whose columns do not hold its rows is refused, not read past its end.
  Table short_column = t;
  short_column.columns[0].as<int64_t>().pop_back();
  EXPECT_EQ(writer_error(schema_of(t), short_column, path),
            path + ": column 'id' holds 22 values and 0 validity entries for 23 rows");
  Table short_validity = t;
  short_validity.columns[1].validity.pop_back();
  EXPECT_EQ(writer_error(schema_of(t), short_validity, path),
            path + ": column 'x' holds 23 values and 22 validity entries for 23 rows");
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  // Once closed, a writer takes nothing more.
  CsvWriter writer(path, schema_of(t));
  writer.close();
  EXPECT_THROW(writer.write(t), InvalidArgument);
  EXPECT_THROW(writer.close(), InvalidArgument);
  EXPECT_EQ(read_file(path), "id,x,\"text, \"\"quoted\"\"\",blob,small\n");
}

}  // namespace
}  // namespace feedline
