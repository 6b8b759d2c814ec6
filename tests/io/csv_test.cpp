#include "feedline/io/csv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/idx.h"
#include "test_paths.h"

namespace feedline {
namespace {

std::string error_of(const std::string& path) {
  try {
    read_csv(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Csv, WritesTheExperimentLayoutByteForByte) {
  ImageSplit s;
  s.count = 2;
  s.rows = 1;
  s.cols = 3;
  s.images = {0, 255, 17, 3, 0, 128};
  s.labels = {9, 4};
  const auto dir = testing::scratch_dir("csv_layout");
  const int64_t n = write_csv(dir + "/t.csv", image_split_to_table(s));
  const std::string text = read_file(dir + "/t.csv");
  EXPECT_EQ(text, "label,pixel1,pixel2,pixel3\n9,0,255,17\n4,3,0,128\n");
  EXPECT_EQ(n, static_cast<int64_t>(text.size()));
}

TEST(Csv, WritesByteArraysAsIsAndFixedLengthOnesAsHex) {
  Table t;
  t.num_rows = 3;
  ColumnSchema text{"text", PhysicalType::kByteArray, false, std::nullopt, true};
  ColumnSchema blob{"blob", PhysicalType::kFixedLenByteArray, true};
  blob.type_length = 3;
  t.columns = {make_column(text), make_column(blob)};
  for (const char* v : {"plain", "a,b", "say \"hi\""}) std::get<ByteArrays>(t.columns[0].values).push_back(v);
  auto& fixed = std::get<ByteArrays>(t.columns[1].values);
  fixed.push_back(std::string("\x00\xff,", 3));
  fixed.push_back("");  // null
  fixed.push_back(std::string("\n\x80\x0f", 3));
  t.columns[1].validity = {1, 0, 1};
  const auto dir = testing::scratch_dir("csv_bytes");
  write_csv(dir + "/t.csv", t);
  EXPECT_EQ(read_file(dir + "/t.csv"), "text,blob\nplain,00ff2c\n\"a,b\",\n\"say \"\"hi\"\"\",0a800f\n");
}

TEST(Csv, RoundTripsIntegersDoublesAndNulls) {
  Table t;
  t.num_rows = 4;
  ColumnSchema a{"a", PhysicalType::kInt64};
  ColumnSchema b{"b", PhysicalType::kDouble};
  ColumnSchema c{"c", PhysicalType::kInt64, true};
  t.columns = {make_column(a), make_column(b), make_column(c)};
  t.columns[0].as<int64_t>() = {1, -2, 9007199254740993LL, 0};
  t.columns[1].as<double>() = {0.1, -1e300, 3.0000000000000004, 5e-324};
  t.columns[2].as<int64_t>() = {5, 0, 7, 0};
  t.columns[2].validity = {1, 0, 1, 0};
  const auto dir = testing::scratch_dir("csv_roundtrip");
  write_csv(dir + "/t.csv", t);
  for (int threads : {1, 3}) {
    const Table back = read_csv(dir + "/t.csv", CsvReadOptions{threads});
    ASSERT_EQ(back.num_rows, 4);
    EXPECT_EQ(back.columns[0].schema.type, PhysicalType::kInt64);
    EXPECT_EQ(back.columns[0].as<int64_t>(), t.columns[0].as<int64_t>());
    EXPECT_EQ(back.columns[1].schema.type, PhysicalType::kDouble);
    EXPECT_EQ(back.columns[1].as<double>(), t.columns[1].as<double>());  // shortest round-trip form
    EXPECT_TRUE(back.columns[2].schema.nullable);
    EXPECT_EQ(back.columns[2].validity, t.columns[2].validity);
    EXPECT_EQ(back.columns[2].as<int64_t>(), t.columns[2].as<int64_t>());
  }
}

// A double with no fraction is written with ".0" (as pandas writes it), so that a column of them reads back as
// DOUBLE, not INT64; other forms stay the shortest that round-trips.
TEST(Csv, WholeDoublesReadBackAsDoubles) {
  Table t;
  t.num_rows = 6;
  t.columns = {make_column(ColumnSchema{"x", PhysicalType::kDouble})};
  t.columns[0].as<double>() = {1.0, -0.0, 0.0, -3.0, 2.5e20, 1e300};
  const auto dir = testing::scratch_dir("csv_whole_doubles");
  write_csv(dir + "/t.csv", t);
  EXPECT_EQ(read_file(dir + "/t.csv"), "x\n1.0\n-0.0\n0.0\n-3.0\n2.5e+20\n1e+300\n");
  const Table back = read_csv(dir + "/t.csv");
  ASSERT_EQ(back.columns[0].schema.type, PhysicalType::kDouble);
  ASSERT_EQ(back.num_rows, 6);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(std::signbit(back.columns[0].as<double>()[i]), std::signbit(t.columns[0].as<double>()[i])) << i;
    EXPECT_EQ(back.columns[0].as<double>()[i], t.columns[0].as<double>()[i]) << i;
  }
}

// In a table of one column a null would be an empty line, which is no record: it is written "", so the row
// stays. A number column reads it back as null; a text column as an empty string (CSV has no other way).
TEST(Csv, OneColumnKeepsItsNullRows) {
  Table t;
  t.num_rows = 3;
  t.columns = {make_column(ColumnSchema{"n", PhysicalType::kInt64, true})};
  t.columns[0].as<int64_t>() = {1, 0, 3};
  t.columns[0].validity = {1, 0, 1};
  const auto dir = testing::scratch_dir("csv_one_column_nulls");
  write_csv(dir + "/n.csv", t);
  EXPECT_EQ(read_file(dir + "/n.csv"), "n\n1\n\"\"\n3\n");
  const Table back = read_csv(dir + "/n.csv");
  ASSERT_EQ(back.num_rows, 3);
  EXPECT_EQ(back.columns[0].validity, t.columns[0].validity);
  EXPECT_EQ(back.columns[0].as<int64_t>(), t.columns[0].as<int64_t>());

  ColumnSchema text{"s", PhysicalType::kByteArray, true};
  text.is_string = true;
  Table s;
  s.num_rows = 3;
  s.columns = {make_column(text)};
  for (const char* v : {"x", "", ""}) std::get<ByteArrays>(s.columns[0].values).push_back(v);
  s.columns[0].validity = {1, 0, 1};
  write_csv(dir + "/s.csv", s);
  CsvReadOptions with_text;
  with_text.text_columns = true;
  const Table text_back = read_csv(dir + "/s.csv", with_text);
  ASSERT_EQ(text_back.num_rows, 3);
  EXPECT_EQ(text_back.columns[0].byte_arrays().at(1), "");
  EXPECT_FALSE(text_back.columns[0].is_null(1));

  // Two columns need no quotes: the comma makes the line.
  t.columns.push_back(t.columns[0]);
  t.columns[1].schema.name = "m";
  write_csv(dir + "/nm.csv", t);
  EXPECT_EQ(read_file(dir + "/nm.csv"), "n,m\n1,1\n,\n3,3\n");
  // A table of no columns makes no CSV file.
  Table none;
  none.num_rows = 2;
  EXPECT_THROW(write_csv(dir + "/none.csv", none), InvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(dir + "/none.csv"));
}

TEST(Csv, ParallelChunksAgreeWithOneThread) {
  // Large enough to be split into several chunks; a column turns double in a late chunk only.
  std::string text = "x,y\n";
  for (int i = 0; i < 300000; ++i) {
    text += std::to_string(i) + "," + (i == 299990 ? std::string("2.5") : std::to_string(i % 7)) + "\r\n";
  }
  const auto dir = testing::scratch_dir("csv_chunks");
  std::ofstream(dir + "/t.csv", std::ios::binary) << text;
  const Table one = read_csv(dir + "/t.csv", CsvReadOptions{1});
  const Table many = read_csv(dir + "/t.csv", CsvReadOptions{4});
  ASSERT_EQ(one.num_rows, 300000);
  ASSERT_EQ(many.num_rows, 300000);
  EXPECT_EQ(one.columns[0].as<int64_t>(), many.columns[0].as<int64_t>());
  EXPECT_EQ(many.columns[1].schema.type, PhysicalType::kDouble);
  EXPECT_EQ(one.columns[1].as<double>(), many.columns[1].as<double>());
  EXPECT_EQ(many.columns[1].as<double>()[299990], 2.5);
  EXPECT_EQ(many.columns[1].as<double>()[299989], 299989 % 7);
}

TEST(Csv, NegativeZeroIsMinusZeroWhereverTheColumnTurnsDouble) {
  // "-0" reads as the integer 0 until its column needs doubles; then it must be -0.0 like a "-0" read after the turn,
  // whichever chunk (or CsvStreamReader block) the turn falls in.
  std::string text = "x\n-0\n-00\n0\n";
  for (int i = 0; i < 200000; ++i) text += "7\n";
  text += "0.5\n-0\n";
  const auto dir = testing::scratch_dir("csv_negative_zero");
  std::ofstream(dir + "/t.csv", std::ios::binary) << text;
  for (int threads : {1, 3}) {
    const Table t = read_csv(dir + "/t.csv", CsvReadOptions{threads});
    const auto& x = t.columns[0].as<double>();
    ASSERT_EQ(x.size(), 200005u);
    EXPECT_TRUE(std::signbit(x[0]));
    EXPECT_TRUE(std::signbit(x[1]));
    EXPECT_FALSE(std::signbit(x[2]));
    EXPECT_TRUE(std::signbit(x[200004]));
  }
  // An integer column keeps its 0.
  std::ofstream(dir + "/ints.csv", std::ios::binary) << "x\n-0\n3\n";
  EXPECT_EQ(read_csv(dir + "/ints.csv").columns[0].as<int64_t>(), (std::vector<int64_t>{0, 3}));
}

TEST(Csv, BadInputNamesFileLineAndColumn) {
  const auto dir = testing::scratch_dir("csv_bad");
  std::ofstream(dir + "/ragged.csv") << "a,b\n1,2\n3\n";
  std::ofstream(dir + "/text.csv") << "a,b\n1,2\n3,hello\n";
  std::ofstream(dir + "/empty.csv") << "";
  std::ofstream(dir + "/noname.csv") << "a,,c\n1,2,3\n";
  EXPECT_EQ(error_of(dir + "/ragged.csv"), dir + "/ragged.csv:3: 1 fields, the header has 2");
  EXPECT_EQ(error_of(dir + "/text.csv"), dir + "/text.csv:3: column 'b': 'hello' is not a number");
  EXPECT_NE(error_of(dir + "/empty.csv").find("empty file"), std::string::npos);
  EXPECT_NE(error_of(dir + "/noname.csv").find("column 2 has no name"), std::string::npos);
  EXPECT_THROW(read_csv(dir + "/missing.csv"), IoError);
}

std::string error_of(const std::string& path, const CsvReadOptions& options) {
  try {
    read_csv(path, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

CsvReadOptions with_text(int threads) {
  CsvReadOptions o;
  o.num_threads = threads;
  o.text_columns = true;
  return o;
}

TEST(Csv, TextColumnsRoundTripEveryAwkwardString) {
  Table t;
  ColumnSchema text{"text, with \"quotes\"", PhysicalType::kByteArray, true, std::nullopt, true};
  t.columns = {make_column(ColumnSchema{"id"}), make_column(text)};
  const std::vector<std::string> values{"plain", "a,b", "say \"hi\"", "two\nlines", "crlf\r\nend", "  spaced  ", "",
                                        "\"", "ünïcödé", "12", "x"};
  for (size_t i = 0; i < values.size(); ++i) {
    t.columns[0].as<int64_t>().push_back(static_cast<int64_t>(i));
    std::get<ByteArrays>(t.columns[1].values).push_back(values[i]);
  }
  std::get<ByteArrays>(t.columns[1].values).push_back("");  // a null: different from the empty string above
  t.columns[0].as<int64_t>().push_back(99);
  t.columns[1].validity.assign(values.size(), 1);
  t.columns[1].validity.push_back(0);
  t.num_rows = static_cast<int64_t>(values.size()) + 1;
  const auto dir = testing::scratch_dir("csv_text");
  write_csv(dir + "/t.csv", t);
  for (int threads : {1, 3}) {
    const Table back = read_csv(dir + "/t.csv", with_text(threads));
    ASSERT_EQ(back.num_rows, t.num_rows);
    ASSERT_EQ(back.columns.size(), 2u);
    EXPECT_EQ(back.columns[0].schema.type, PhysicalType::kInt64);
    EXPECT_EQ(back.columns[0].as<int64_t>(), t.columns[0].as<int64_t>());
    const Column& c = back.columns[1];
    EXPECT_EQ(c.schema.name, t.columns[1].schema.name);
    EXPECT_EQ(c.schema.type, PhysicalType::kByteArray);
    EXPECT_TRUE(c.schema.is_string);
    EXPECT_TRUE(c.schema.nullable);
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_FALSE(c.is_null(static_cast<int64_t>(i))) << i;
      EXPECT_EQ(c.byte_arrays().at(static_cast<int64_t>(i)), values[i]) << i;
    }
    EXPECT_TRUE(c.is_null(static_cast<int64_t>(values.size())));
  }
  // Without text columns, the same file is refused at its first non-number, naming the line it starts on.
  EXPECT_EQ(error_of(dir + "/t.csv"), dir + "/t.csv:2: column 'text, with \"quotes\"': 'plain' is not a number");
}

TEST(Csv, AColumnTurnsTextInALateChunkKeepingEveryFieldAsWritten) {
  // Several chunks; quoted fields with line ends straddle the places where the chunks would be cut; column y is
  // numbers written in odd ways until a word near the end.
  std::string text = "x,y,note\n";
  std::vector<std::string> ys, notes;
  for (int i = 0; i < 200000; ++i) {
    ys.push_back(i == 199990 ? "word" : i % 3 == 0 ? "007" : i % 3 == 1 ? "1.50" : "-0");
    notes.push_back(i % 2 ? "line one\nline \"two\"," : "n" + std::to_string(i));
    text += std::to_string(i) + "," + ys.back() + "," + (i % 2 ? "\"line one\nline \"\"two\"\",\"" : notes.back()) + "\n";
  }
  const auto dir = testing::scratch_dir("csv_text_chunks");
  std::ofstream(dir + "/t.csv", std::ios::binary) << text;
  const Table one = read_csv(dir + "/t.csv", with_text(1));
  const Table many = read_csv(dir + "/t.csv", with_text(4));
  for (const Table* t : {&one, &many}) {
    ASSERT_EQ(t->num_rows, 200000);
    ASSERT_EQ(t->columns[0].as<int64_t>().size(), 200000u);
    EXPECT_EQ(t->columns[0].as<int64_t>()[123457], 123457);
    ASSERT_EQ(t->columns[1].schema.type, PhysicalType::kByteArray);
    for (int64_t i = 0; i < 200000; i += 997) {
      ASSERT_EQ(t->columns[1].byte_arrays().at(i), ys[static_cast<size_t>(i)]) << i;
      ASSERT_EQ(t->columns[2].byte_arrays().at(i), notes[static_cast<size_t>(i)]) << i;
    }
    EXPECT_EQ(t->columns[1].byte_arrays().at(199990), "word");
  }
  EXPECT_EQ(one.columns[2].byte_arrays().bytes, many.columns[2].byte_arrays().bytes);
  // The numbers alone, without the text columns, still read as numbers from every chunk.
  CsvReadOptions x_only;
  x_only.columns = {"x"};
  x_only.num_threads = 4;
  EXPECT_EQ(read_csv(dir + "/t.csv", x_only).columns[0].as<int64_t>(), one.columns[0].as<int64_t>());
}

TEST(Csv, QuotingErrorsNameTheLine) {
  const auto dir = testing::scratch_dir("csv_quotes_bad");
  std::ofstream(dir + "/open.csv") << "a,b\n1,2\n3,\"never closed\n4,5\n";
  std::ofstream(dir + "/multiline.csv") << "a,b\n1,\"two\nlines\"\n3\n";
  EXPECT_EQ(error_of(dir + "/open.csv", with_text(1)), dir + "/open.csv:3: a quoted field is never closed");
  EXPECT_EQ(error_of(dir + "/open.csv", with_text(2)), dir + "/open.csv:3: a quoted field is never closed");
  // Line numbers count the line ends inside quoted fields.
  EXPECT_EQ(error_of(dir + "/multiline.csv", with_text(1)), dir + "/multiline.csv:4: 1 fields, the header has 2");
}

TEST(Csv, ReadsOnlyTheColumnsAskedForInTheirOrder) {
  const auto dir = testing::scratch_dir("csv_columns");
  // `note` holds text, which read_csv refuses to parse: asking for other columns never parses it.
  std::string text = "\xEF\xBB\xBFid,note,y,x\r\n";
  for (int i = 0; i < 50000; ++i) {
    text += std::to_string(i) + ",row " + std::to_string(i) + "," + (i == 3 ? "" : std::to_string(i % 10)) + "," +
            std::to_string(i) + ".5\r\n";
  }
  std::ofstream(dir + "/t.csv", std::ios::binary) << text;
  EXPECT_EQ(read_csv_header(dir + "/t.csv"), (std::vector<std::string>{"id", "note", "y", "x"}));
  for (int threads : {1, 3}) {
    CsvReadOptions options;
    options.num_threads = threads;
    options.columns = {"x", "y"};
    const Table t = read_csv(dir + "/t.csv", options);
    ASSERT_EQ(t.columns.size(), 2u);
    ASSERT_EQ(t.num_rows, 50000);
    EXPECT_EQ(t.columns[0].schema.name, "x");
    EXPECT_EQ(t.columns[0].schema.type, PhysicalType::kDouble);
    EXPECT_EQ(t.columns[0].as<double>()[49999], 49999.5);
    EXPECT_EQ(t.columns[1].schema.name, "y");
    EXPECT_EQ(t.columns[1].schema.type, PhysicalType::kInt64);
    EXPECT_TRUE(t.columns[1].schema.nullable);
    EXPECT_TRUE(t.columns[1].is_null(3));
    EXPECT_FALSE(t.columns[1].is_null(4));
    EXPECT_EQ(t.columns[1].as<int64_t>()[27], 7);
    EXPECT_EQ(t.columns[1].as<int64_t>()[49999], 9);
  }
  // Every column, as before: the text column is refused.
  EXPECT_NE(error_of(dir + "/t.csv").find("column 'note': 'row 0' is not a number"), std::string::npos);
}

TEST(Csv, ColumnsAskedForMustExistOnce) {
  const auto dir = testing::scratch_dir("csv_columns_bad");
  std::ofstream(dir + "/t.csv") << "a,b,c\n1,2,3\n4,5\n";
  CsvReadOptions missing;
  missing.columns = {"a", "zz"};
  EXPECT_EQ(error_of(dir + "/t.csv", missing), dir + "/t.csv: no column 'zz' (the header has a, b, c)");
  CsvReadOptions twice;
  twice.columns = {"b", "b"};
  EXPECT_EQ(error_of(dir + "/t.csv", twice), dir + "/t.csv: column 'b' asked for twice");
  EXPECT_THROW(read_csv(dir + "/t.csv", missing), InvalidArgument);
  // A ragged row is still found when the short field is one that was not asked for.
  CsvReadOptions first;
  first.columns = {"a"};
  EXPECT_EQ(error_of(dir + "/t.csv", first), dir + "/t.csv:3: 2 fields, the header has 3");
  EXPECT_THROW(read_csv_header(dir + "/missing.csv"), IoError);
  std::ofstream(dir + "/empty.csv") << "";
  EXPECT_THROW(read_csv_header(dir + "/empty.csv"), InvalidFile);
}

TEST(Csv, FailedWriteLeavesNoPartialFile) {
  const auto dir = testing::scratch_dir("csv_atomic");
  Table t;
  t.num_rows = 1;
  t.columns.push_back(make_column(ColumnSchema{"a", PhysicalType::kInt64}));
  t.columns[0].as<int64_t>() = {1};
  // The target is a directory: rename fails, and neither the target nor a temporary file may be left behind.
  std::filesystem::create_directories(dir + "/out.csv/sub");
  EXPECT_THROW(write_csv(dir + "/out.csv", t), IoError);
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);  // only out.csv/ itself
}

}  // namespace
}  // namespace feedline
