// Round trips through our own writer and reader: every type, codec, encoding and nullability, several row
// groups and pages, projection, threads, statistics and the options' validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <tuple>

#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "io/parquet/reader_internal.h"
#include "io/parquet_test_support.h"
#include "io/value_text.h"
#include "test_paths.h"

namespace feedline::parquet {
namespace {

using feedline::testing::expect_tables_equal;
using feedline::testing::random_list_table;
using feedline::testing::random_table;
using feedline::testing::RandomTableSpec;
using feedline::testing::scratch_dir;
using feedline::testing::write_and_expect_read_back;

using Case = feedline::testing::RoundTripCase;

class RoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(RoundTrip, EveryTypeSurvives) {
  const Case& c = GetParam();
  RandomTableSpec spec;
  spec.rows = 2500;
  spec.distinct = c.distinct;
  const Table t = random_table(42 + static_cast<uint64_t>(c.codec), spec);
  const std::string path = scratch_dir("roundtrip") + "/t.parquet";
  write_and_expect_read_back(t, c, path);
  const FileInfo info = read_file_info(path);
  EXPECT_EQ(info.num_rows, t.num_rows);
  EXPECT_EQ(static_cast<int64_t>(info.row_groups.size()), (t.num_rows + c.row_group_rows - 1) / c.row_group_rows);
  bool saw_dictionary = false;
  for (const RowGroupInfo& rg : info.row_groups) {
    for (const ColumnChunkInfo& cc : rg.columns) {
      EXPECT_EQ(cc.codec, to_string(c.codec));
      for (const std::string& e : cc.encodings) saw_dictionary |= e == "RLE_DICTIONARY";
    }
  }
  EXPECT_EQ(saw_dictionary, c.dictionary);
}

INSTANTIATE_TEST_SUITE_P(
    Parquet, RoundTrip,
    ::testing::Values(Case{Codec::kUncompressed, false, 1 << 20, 1 << 20, 0},
                      Case{Codec::kUncompressed, true, 1 << 20, 1 << 20, 16},
                      Case{Codec::kSnappy, false, 700, 1000, 0}, Case{Codec::kSnappy, true, 700, 1000, 5},
                      Case{Codec::kGzip, false, 1000, 4096, 0}, Case{Codec::kGzip, true, 999, 300, 300},
                      Case{Codec::kZstd, false, 1 << 20, 64, 0}, Case{Codec::kZstd, true, 1 << 20, 1 << 20, 1},
                      Case{Codec::kZstd, true, 7, 1 << 20, 3}, Case{Codec::kLz4Raw, false, 900, 2000, 0},
                      Case{Codec::kLz4Raw, true, 1 << 20, 1 << 20, 7}, Case{Codec::kBrotli, false, 1000, 4096, 0}),
    [](const ::testing::TestParamInfo<Case>& info) {
      const Case& c = info.param;
      return std::string(to_string(c.codec)) + (c.dictionary ? "_dict" : "_plain") + "_rg" +
             std::to_string(c.row_group_rows) + "_page" + std::to_string(c.page_bytes) + "_distinct" +
             std::to_string(c.distinct);
    });

// Pages decoded apart (forced for chunks of any size): every flat kind and every list of them, with nulls,
// in pages of a few rows, in one row group and in several, read as on one thread and as written.
TEST(ParquetRoundTrip, PagesDecodedApartReadAsOnOneThread) {
  RandomTableSpec spec;
  spec.rows = 2500;
  for (const bool lists : {false, true}) {
    const Table t = lists ? random_list_table(21, spec) : random_table(21, spec);
    for (const int64_t group_rows : {int64_t{1} << 20, int64_t{900}}) {
      SCOPED_TRACE(std::string(lists ? "lists" : "flat") + ", row groups of " + std::to_string(group_rows));
      const std::string path = scratch_dir("pages-apart") + "/t.parquet";
      WriteOptions w;
      w.page_bytes = 300;
      w.row_group_rows = group_rows;
      w.dictionary = group_rows < 1000;  // PLAIN in one, dictionaries in the other
      write_table(path, t, w);
      ReadOptions one;
      one.num_threads = 1;
      const Table serial = read_table(path, one);
      ReadOptions three;
      three.num_threads = 3;
      three.page_threads = 3;
      const Table threaded = read_table(path, three);
      expect_tables_equal(serial, threaded);
      expect_tables_equal(t, threaded);
    }
  }
}

// Chunks of byte arrays of 1 MiB and more, their room made from their page headers (every page PLAIN: sized
// exactly from them; dictionaries: from the dictionary's longest value, or projected): flat columns and lists,
// with nulls, in one row group and in several, read alike on one thread and on two.
TEST(ParquetRoundTrip, LargeChunksOfByteArraysSizedFromTheirPageHeaders) {
  for (const bool lists : {false, true}) {
    RandomTableSpec spec;
    spec.rows = lists ? 20000 : 160000;
    const Table t = lists ? random_list_table(33, spec) : random_table(33, spec);
    for (const bool dictionary : {false, true}) {
      for (const int64_t group_rows : {int64_t{1} << 20, spec.rows / 2}) {
        SCOPED_TRACE(std::string(lists ? "lists" : "flat") + (dictionary ? ", dictionaries" : ", PLAIN") +
                     ", row groups of " + std::to_string(group_rows));
        const std::string path = scratch_dir("large-byte-arrays") + "/t.parquet";
        WriteOptions w;
        w.page_bytes = 64 << 10;
        w.row_group_rows = group_rows;
        w.dictionary = dictionary;
        write_table(path, t, w);
        // Some chunk of byte arrays is large enough for its room to be made from its headers.
        const FileInfo info = read_file_info(path);
        int64_t largest = 0;
        for (size_t c = 0; c < info.schema.size(); ++c) {
          if (info.schema[c].type != PhysicalType::kByteArray) continue;
          for (const RowGroupInfo& rg : info.row_groups) largest = std::max(largest, rg.columns[c].uncompressed_bytes);
        }
        ASSERT_GE(largest, int64_t{1} << 20);
        for (const int threads : {1, 2}) {
          ReadOptions r;
          r.num_threads = threads;
          expect_tables_equal(t, read_table(path, r));
        }
      }
    }
  }
}

TEST(ParquetRoundTrip, EmptyTableAndEmptyColumns) {
  RandomTableSpec spec;
  spec.rows = 0;
  const Table t = random_table(1, spec);
  const std::string path = scratch_dir("empty") + "/e.parquet";
  write_table(path, t);
  expect_tables_equal(t, read_table(path));

  Table none;
  none.num_rows = 0;
  write_table(path, none);
  const Table back = read_table(path);
  EXPECT_EQ(back.num_rows, 0);
  EXPECT_TRUE(back.columns.empty());
}

TEST(ParquetRoundTrip, AllNullAndNoNullOptionalColumns) {
  Table t;
  t.num_rows = 100;
  ColumnSchema s{"all_null", PhysicalType::kInt64, true, std::nullopt, false};
  Column a = make_column(s);
  a.as<int64_t>().assign(100, 0);
  a.validity.assign(100, 0);
  Column b = make_column({"no_null", PhysicalType::kByteArray, true, std::nullopt, true});
  for (int i = 0; i < 100; ++i) std::get<ByteArrays>(b.values).push_back(std::to_string(i));
  t.columns = {a, b};
  for (bool dict : {false, true}) {
    WriteOptions w;
    w.dictionary = dict;
    const std::string path = scratch_dir("nulls") + "/n.parquet";
    write_table(path, t, w);
    expect_tables_equal(t, read_table(path));
    const FileInfo info = read_file_info(path);
    EXPECT_EQ(info.row_groups[0].columns[0].null_count, 100);
    EXPECT_TRUE(info.row_groups[0].columns[0].min.empty());
    EXPECT_EQ(info.row_groups[0].columns[1].null_count, 0);
    EXPECT_EQ(info.row_groups[0].columns[1].min, "0");
    EXPECT_EQ(info.row_groups[0].columns[1].max, "99");
  }
}

// Nulls in every arrangement the reader's spreading of values over null slots treats apart: none, all, at
// either end, runs of values shorter than, as long as and longer than eight, sparse, and across page ends.
TEST(ParquetRoundTrip, NullPatternsSpreadBackToTheirRows) {
  const int64_t rows = 1000;
  const std::vector<std::pair<std::string, std::function<bool(int64_t)>>> patterns = {
      {"none", [](int64_t) { return true; }},
      {"all", [](int64_t) { return false; }},
      {"first", [](int64_t r) { return r != 0; }},
      {"last", [&](int64_t r) { return r != rows - 1; }},
      {"every 8th", [](int64_t r) { return r % 8 != 7; }},
      {"every 9th", [](int64_t r) { return r % 9 != 0; }},
      {"runs of 7", [](int64_t r) { return r % 14 < 7; }},
      {"alternate", [](int64_t r) { return r % 2 == 0; }},
      {"1 in 97", [](int64_t r) { return (r * 37) % 97 != 5; }},
  };
  for (const auto& [name, present] : patterns) {
    SCOPED_TRACE(name);
    Table t;
    t.num_rows = rows;
    Column i64 = make_column({"i64", PhysicalType::kInt64, true, std::nullopt, false});
    Column f32 = make_column({"f32", PhysicalType::kFloat, true, std::nullopt, false});
    Column u8 = make_column({"u8", PhysicalType::kBoolean, true, std::nullopt, false});
    for (Column* c : {&i64, &f32, &u8}) c->validity.resize(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      const bool p = present(r);
      i64.as<int64_t>().push_back(p ? r * 1000003 : 0);
      f32.as<float>().push_back(p ? static_cast<float>(r) + 0.5f : 0.0f);
      u8.as<uint8_t>().push_back(p ? static_cast<uint8_t>(r % 3 == 0) : 0);
      for (Column* c : {&i64, &f32, &u8}) c->validity[static_cast<size_t>(r)] = p;
    }
    // A column without nulls reads back without a validity vector.
    if (name == "none") {
      for (Column* c : {&i64, &f32, &u8}) c->validity.clear();
    }
    t.columns = {i64, f32, u8};
    // In one row group, and in four (where "first" and "last" put their one null in the first or the last: the
    // column's validity is made by the row group that has one, the others' rows valid).
    for (const int64_t group_rows : {rows, int64_t{300}}) {
      for (bool dict : {false, true}) {
        WriteOptions w;
        w.dictionary = dict;
        w.page_bytes = 1000;  // pages of a few hundred rows
        w.row_group_rows = group_rows;
        const std::string path = scratch_dir("null-patterns") + "/n.parquet";
        write_table(path, t, w);
        for (int threads : {1, 2}) {
          SCOPED_TRACE(std::to_string(group_rows) + " rows a group, " + std::to_string(threads) + " threads");
          ReadOptions r;
          r.num_threads = threads;
          expect_tables_equal(t, read_table(path, r));
        }
      }
    }
  }
}

TEST(ParquetRoundTrip, ProjectionKeepsRequestedOrder) {
  RandomTableSpec spec;
  spec.rows = 300;
  const Table t = random_table(7, spec);
  const std::string path = scratch_dir("proj") + "/p.parquet";
  WriteOptions w;
  w.row_group_rows = 128;
  write_table(path, t, w);
  ReadOptions r;
  r.columns = {"str_opt", "u8_req", "f64_opt"};
  const Table p = read_table(path, r);
  Table expected;
  expected.num_rows = t.num_rows;
  for (const std::string& name : r.columns) expected.columns.push_back(t.column(name));
  expect_tables_equal(expected, p);

  r.columns = {"nope"};
  EXPECT_THROW(read_table(path, r), InvalidArgument);
  r.columns = {"u8_req", "u8_req"};
  EXPECT_THROW(read_table(path, r), InvalidArgument);
}

// Bytes this process has read through read() and pread() so far (/proc/self/io's rchar, every thread).
int64_t bytes_read_so_far() {
  std::FILE* f = std::fopen("/proc/self/io", "r");
  if (f == nullptr) return -1;
  char line[128];
  int64_t rchar = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, "rchar: ", 7) == 0) rchar = std::strtoll(line + 7, nullptr, 10);
  }
  std::fclose(f);
  return rchar;
}

// Projection and row-group selection read only the footer and the chosen column chunks from disk.
TEST(ParquetRoundTrip, ReadsOnlyTheChosenChunksFromDisk) {
  const int64_t rows = 200000;
  Table t;
  t.num_rows = rows;
  for (const char* name : {"a", "b", "c", "d"}) {
    ColumnSchema s;
    s.name = name;
    s.type = PhysicalType::kInt64;
    Column c = make_column(s);
    for (int64_t i = 0; i < rows; ++i) c.as<int64_t>().push_back(i * 2654435761 + name[0]);
    t.columns.push_back(std::move(c));
  }
  const std::string path = scratch_dir("disk-reads") + "/four.parquet";
  WriteOptions w;
  w.codec = Codec::kUncompressed;
  w.dictionary = false;
  w.row_group_rows = rows / 2;  // two row groups of 800 KB a column
  write_table(path, t, w);
  const int64_t file = file_size(path);
  ASSERT_GT(file, 6'000'000);
  const int64_t before = bytes_read_so_far();
  ASSERT_GE(before, 0) << "/proc/self/io is not readable";
  auto read_with = [&](std::vector<std::string> columns, std::vector<int64_t> groups) {
    ReadOptions r;
    r.columns = std::move(columns);
    r.row_groups = std::move(groups);
    const int64_t start = bytes_read_so_far();
    Table out = read_table(path, r);
    return std::make_pair(std::move(out), bytes_read_so_far() - start);
  };
  const auto [all, all_bytes] = read_with({}, {});
  EXPECT_GE(all_bytes, file - 100'000);
  const auto [one, one_bytes] = read_with({"c"}, {});
  EXPECT_EQ(one.column("c").as<int64_t>(), t.column("c").as<int64_t>());
  EXPECT_GE(one_bytes, file / 4 - 100'000);
  EXPECT_LE(one_bytes, file / 4 + 100'000);
  const auto [quarter, quarter_bytes] = read_with({"d"}, {1});
  ASSERT_EQ(quarter.num_rows, rows / 2);
  EXPECT_EQ(quarter.column("d").as<int64_t>()[0], t.column("d").as<int64_t>()[rows / 2]);
  EXPECT_LE(quarter_bytes, file / 8 + 100'000);
}

template <class T>
T decode_stat(const std::string& bytes) {
  T v{};
  EXPECT_EQ(bytes.size(), sizeof(T));
  if (bytes.size() == sizeof(T)) std::memcpy(&v, bytes.data(), sizeof(T));
  return v;
}

TEST(ParquetRoundTrip, StatisticsCompareUnsignedAsUnsigned) {
  Table t;
  t.num_rows = 4;
  Column u32 = make_column({"u32", PhysicalType::kInt32, false, IntAnnotation{32, false}, false});
  u32.as<int32_t>() = {1, -1 /* 4294967295 */, 7, 0x7fffffff};
  Column i32 = make_column({"i32", PhysicalType::kInt32, false, std::nullopt, false});
  i32.as<int32_t>() = {1, -1, 7, 0x7fffffff};
  Column u64 = make_column({"u64", PhysicalType::kInt64, false, IntAnnotation{64, false}, false});
  u64.as<int64_t>() = {5, -2, 3, 9};
  Column f = make_column({"f", PhysicalType::kDouble, false, std::nullopt, false});
  f.as<double>() = {0.0, std::nan(""), 2.5, -0.0};
  Column s = make_column({"s", PhysicalType::kByteArray, false, std::nullopt, true});
  for (const char* v : {"b", "\xff", "a", "ab"}) std::get<ByteArrays>(s.values).push_back(v);
  ColumnSchema fixed_schema{"fl", PhysicalType::kFixedLenByteArray, false, std::nullopt, false, 2};
  Column fl = make_column(fixed_schema);  // signed bytes would make "\x80\x80" the minimum
  for (const char* v : {"\x01\xff", "\xff\x00", "\x80\x80", "\x01\xfe"}) {
    std::get<ByteArrays>(fl.values).push_back(std::string(v, 2));
  }
  t.columns = {u32, i32, u64, f, s, fl};
  const std::string path = scratch_dir("stats") + "/s.parquet";
  write_table(path, t);
  const FileInfo info = read_file_info(path);
  const auto& cols = info.row_groups.at(0).columns;
  EXPECT_EQ(decode_stat<uint32_t>(cols[0].min), 1u);
  EXPECT_EQ(decode_stat<uint32_t>(cols[0].max), 4294967295u);
  EXPECT_EQ(decode_stat<int32_t>(cols[1].min), -1);
  EXPECT_EQ(decode_stat<int32_t>(cols[1].max), 0x7fffffff);
  EXPECT_EQ(decode_stat<uint64_t>(cols[2].min), 3u);
  EXPECT_EQ(decode_stat<uint64_t>(cols[2].max), static_cast<uint64_t>(-2));
  const double fmin = decode_stat<double>(cols[3].min), fmax = decode_stat<double>(cols[3].max);
  EXPECT_EQ(fmin, 0.0);
  EXPECT_TRUE(std::signbit(fmin));  // a zero minimum is written as -0
  EXPECT_EQ(fmax, 2.5);
  EXPECT_EQ(cols[4].min, "a");
  EXPECT_EQ(cols[4].max, "\xff");
  EXPECT_EQ(cols[5].min, std::string("\x01\xfe", 2));
  EXPECT_EQ(cols[5].max, std::string("\xff\x00", 2));
  for (const auto& c : cols) EXPECT_EQ(c.null_count, 0);
  expect_tables_equal(t, read_table(path));
}

// DECIMAL in byte arrays orders as signed numbers (two's complement, big-endian, any length), as Parquet's
// statistics want it: unsigned byte order would make -1 (0xff) the maximum.
TEST(ParquetRoundTrip, DecimalStatisticsCompareAsSignedNumbers) {
  for (const PhysicalType type : {PhysicalType::kByteArray, PhysicalType::kFixedLenByteArray}) {
    const bool fixed = type == PhysicalType::kFixedLenByteArray;
    ColumnSchema schema{"dec", type, false, std::nullopt, false, fixed ? 2 : 0};
    schema.logical.kind = LogicalKind::kDecimal;
    schema.logical.precision = 4;
    schema.logical.scale = 2;
    Table t;
    t.columns = {make_column(schema)};
    // 1, -1, 32767, -512, 5 (in one or two bytes where the lengths may vary)
    const std::vector<std::string> values =
        fixed ? std::vector<std::string>{std::string("\x00\x01", 2), std::string("\xff\xff", 2),
                                         std::string("\x7f\xff", 2), std::string("\xfe\x00", 2),
                                         std::string("\x00\x05", 2)}
              : std::vector<std::string>{std::string("\x01", 1), std::string("\xff", 1), std::string("\x7f\xff", 2),
                                         std::string("\xfe\x00", 2), std::string("\x05", 1)};
    for (const std::string& v : values) std::get<ByteArrays>(t.columns[0].values).push_back(v);
    t.num_rows = static_cast<int64_t>(values.size());
    const std::string path = scratch_dir("decimal-stats") + "/d.parquet";
    write_table(path, t);
    const FileInfo info = read_file_info(path);
    const ColumnChunkInfo& c = info.row_groups.at(0).columns.at(0);
    EXPECT_EQ(decimal_bytes_to_string(c.min, 2), "-5.12") << to_string(type);
    EXPECT_EQ(decimal_bytes_to_string(c.max, 2), "327.67") << to_string(type);
    expect_tables_equal(t, read_table(path));
  }
}

TEST(ParquetRoundTrip, KeyValueMetadataAndCreatedBy) {
  RandomTableSpec spec;
  spec.rows = 10;
  const Table t = random_table(3, spec);
  WriteOptions w;
  w.key_value_metadata = {{"origin", "feedline test"}, {"empty", ""}};
  const std::string path = scratch_dir("kv") + "/kv.parquet";
  write_table(path, t, w);
  const FileInfo info = read_file_info(path);
  EXPECT_EQ(info.key_value_metadata, w.key_value_metadata);
  EXPECT_NE(info.created_by.find("feedline"), std::string::npos);
  ASSERT_EQ(info.schema.size(), t.columns.size());
  for (size_t i = 0; i < t.columns.size(); ++i) EXPECT_EQ(info.schema[i].name, t.columns[i].schema.name);
}

TEST(ParquetRoundTrip, WriterRejectsWhatItCannotRepresent) {
  const std::string path = scratch_dir("reject") + "/r.parquet";
  auto one = [](ColumnSchema s) {
    Table t;
    t.num_rows = 2;
    Column c = make_column(s);
    if (s.type == PhysicalType::kInt32) c.as<int32_t>() = {1, 300};
    if (s.type == PhysicalType::kInt64) c.as<int64_t>() = {1, 2};
    if (s.type == PhysicalType::kFloat) c.as<float>() = {1, 2};
    t.columns.push_back(c);
    return t;
  };
  EXPECT_THROW(write_table(path, one({"x", PhysicalType::kInt32, false, IntAnnotation{8, false}, false})), InvalidArgument);
  EXPECT_THROW(write_table(path, one({"x", PhysicalType::kInt32, false, IntAnnotation{64, true}, false})), InvalidArgument);
  EXPECT_THROW(write_table(path, one({"x", PhysicalType::kInt64, false, IntAnnotation{16, true}, false})), InvalidArgument);
  EXPECT_THROW(write_table(path, one({"x", PhysicalType::kFloat, false, std::nullopt, true})), InvalidArgument);
  Table nulls = one({"x", PhysicalType::kInt64, false, std::nullopt, false});
  nulls.columns[0].validity = {1, 0};
  EXPECT_THROW(write_table(path, nulls), InvalidArgument);
  Table short_col = one({"x", PhysicalType::kInt64, false, std::nullopt, false});
  short_col.num_rows = 3;
  EXPECT_THROW(write_table(path, short_col), InvalidArgument);
  ColumnSchema fixed{"x", PhysicalType::kFixedLenByteArray, false, std::nullopt, false, 3};
  Table flba = one(fixed);
  std::get<ByteArrays>(flba.columns[0].values).push_back("abc");
  std::get<ByteArrays>(flba.columns[0].values).push_back("de");  // one byte short
  try {
    write_table(path, flba);
    ADD_FAILURE() << "a short FIXED_LEN_BYTE_ARRAY value was written";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("row 1 holds 2 bytes, its FIXED_LEN_BYTE_ARRAY type_length is 3"),
              std::string::npos)
        << e.what();
  }
  fixed.type_length = 0;
  Table no_length = one(fixed);
  EXPECT_THROW(write_table(path, no_length), InvalidArgument);
  Table dup = one({"x", PhysicalType::kInt64, false, std::nullopt, false});
  dup.columns.push_back(dup.columns[0]);
  EXPECT_THROW(write_table(path, dup), InvalidArgument);
  WriteOptions bad;
  bad.row_group_rows = 0;
  EXPECT_THROW(write_table(path, one({"x", PhysicalType::kInt64, false, std::nullopt, false}), bad), InvalidArgument);
  // Nothing was left behind by the failed writes.
  EXPECT_THROW(read_table(path), IoError);
}

TEST(ParquetRoundTrip, ParseCodec) {
  EXPECT_EQ(parse_codec("ZSTD"), Codec::kZstd);
  EXPECT_EQ(parse_codec("snappy"), Codec::kSnappy);
  EXPECT_EQ(parse_codec("Gzip"), Codec::kGzip);
  EXPECT_EQ(parse_codec("uncompressed"), Codec::kUncompressed);
  EXPECT_THROW(parse_codec("lz4"), InvalidArgument);
  EXPECT_EQ(parse_codec("LZ4_RAW"), Codec::kLz4Raw);
  for (Codec c : {Codec::kUncompressed, Codec::kSnappy, Codec::kGzip, Codec::kZstd, Codec::kLz4Raw, Codec::kBrotli}) {
    EXPECT_EQ(parse_codec(to_string(c)), c);
  }
}

}  // namespace
}  // namespace feedline::parquet

namespace feedline::parquet {
namespace {

// A column of strings over several row groups is read row group after row group into the column itself: any
// threads, row groups asked for in any order, dictionary-encoded and PLAIN chunks, nulls, and the read's memory
// limit counted over all its row groups.
TEST(ParquetRoundTrip, StringColumnsOfManyRowGroupsReadAsWritten) {
  Table t;
  t.num_rows = 7000;
  Column note = make_column({"note", PhysicalType::kByteArray, true, std::nullopt, true});
  Column code = make_column({"code", PhysicalType::kByteArray, false, std::nullopt, true});
  Column id = make_column({"id", PhysicalType::kInt64, false, std::nullopt, false});
  auto& notes = std::get<ByteArrays>(note.values);
  for (int64_t i = 0; i < t.num_rows; ++i) {
    const bool null = i % 11 == 3;
    note.validity.push_back(null ? 0 : 1);
    // Rows 3000 to 3999 share a few values (a chunk the writer encodes with its dictionary), the others differ.
    const int64_t v = i >= 3000 && i < 4000 ? i % 5 : i * 7919;
    notes.push_back(null ? "" : std::string(static_cast<size_t>(1 + v % 97), static_cast<char>('a' + v % 26)) +
                                    std::to_string(v));
    std::get<ByteArrays>(code.values).push_back("k" + std::to_string(i % 13));
    id.as<int64_t>().push_back(i);
  }
  t.columns = {std::move(note), std::move(code), std::move(id)};
  const std::string path = scratch_dir("string-row-groups") + "/strings.parquet";
  for (const bool dictionary : {true, false}) {
    WriteOptions w;
    w.dictionary = dictionary;
    w.row_group_rows = 1000;
    w.page_bytes = 4096;  // many pages a chunk
    write_table(path, t, w);
    ASSERT_EQ(read_file_info(path).row_groups.size(), 7u);
    for (const int threads : {1, 2, 3}) {
      SCOPED_TRACE("dictionary " + std::to_string(dictionary) + ", threads " + std::to_string(threads));
      ReadOptions r;
      r.num_threads = threads;
      expect_tables_equal(read_table(path, r), t);
      r.row_groups = {5, 0, 3};
      Table expected = slice(t, 5000, 6000);
      append_rows(expected, t, 0, 1000);
      append_rows(expected, t, 3000, 4000);
      expect_tables_equal(read_table(path, r), expected);
    }
    // The limit holds the bytes of all the row groups together, not of each alone.
    int64_t bytes = 0;
    for (const Column& c : t.columns) {
      bytes += c.validity.size() + (c.schema.type == PhysicalType::kInt64 ? 8 * t.num_rows : 0);
      if (c.schema.type == PhysicalType::kByteArray) {
        bytes += 9 * t.num_rows + static_cast<int64_t>(std::get<ByteArrays>(c.values).bytes.size());
      }
    }
    ReadOptions limited;
    limited.num_threads = 2;
    limited.max_output_bytes = static_cast<int64_t>(std::get<ByteArrays>(t.columns[0].values).bytes.size()) * 2 / 3;
    try {
      read_table(path, limited);
      ADD_FAILURE() << "a read of more than its limit went through";
    } catch (const InvalidFile& e) {
      EXPECT_NE(std::string(e.what()).find("strings.parquet"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("column 'note', row group"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("limit"), std::string::npos) << e.what();
    }
    limited.max_output_bytes = 2 * bytes;
    expect_tables_equal(read_table(path, limited), t);
  }
}

// A compressed chunk of PLAIN strings on several threads decodes a window of its pages apart (each into a buffer,
// then copied into place): the same values as in order, and where a page is damaged, the same error, naming the
// same page, as a read on one thread.
TEST(ParquetRoundTrip, StringPagesDecodedApartReadAsInOrder) {
  Table t;
  t.num_rows = 20000;
  Column note = make_column({"note", PhysicalType::kByteArray, true, std::nullopt, true});
  auto& notes = std::get<ByteArrays>(note.values);
  uint64_t x = 88172645463325252ull;
  for (int64_t i = 0; i < t.num_rows; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const bool null = x % 9 == 0;
    note.validity.push_back(null ? 0 : 1);
    notes.push_back(null ? "" : std::string(static_cast<size_t>(x % 61), static_cast<char>('a' + x % 23)) +
                                    std::to_string(x));
  }
  t.columns = {std::move(note)};
  const std::string dir = scratch_dir("string-pages-apart");
  for (const Codec codec : {Codec::kSnappy, Codec::kZstd}) {
    SCOPED_TRACE(format::codec_name(static_cast<int32_t>(codec)));
    const std::string path = dir + "/apart.parquet";
    WriteOptions w;
    w.codec = codec;
    w.dictionary = false;
    w.page_bytes = 8192;  // about a hundred pages: windows of them
    w.row_group_rows = 12000;
    write_table(path, t, w);
    for (const int page_threads : {1, 2, 3}) {
      ReadOptions r;
      r.num_threads = 2;
      r.page_threads = page_threads;
      expect_tables_equal(read_table(path, r), t);
    }
    // A byte of a page in the middle of the first chunk changed: its checksum (or header) no longer holds.
    std::string bytes = read_file(path);
    const ColumnChunkInfo chunk = read_file_info(path).row_groups.at(0).columns.at(0);
    bytes[static_cast<size_t>(chunk.offset + chunk.compressed_bytes / 2)] ^= 0x5a;
    const std::string damaged = dir + "/damaged.parquet";
    std::ofstream(damaged, std::ios::binary) << bytes;
    std::string errors[2];
    for (const int page_threads : {1, 3}) {
      ReadOptions r;
      r.num_threads = 2;
      r.page_threads = page_threads;
      try {
        read_table(damaged, r);
        ADD_FAILURE() << "a damaged page read without error";
      } catch (const InvalidFile& e) {
        errors[page_threads == 1 ? 0 : 1] = e.what();
      }
    }
    EXPECT_NE(errors[0].find("page at offset"), std::string::npos) << errors[0];
    EXPECT_EQ(errors[1], errors[0]);
  }
}

}  // namespace
}  // namespace feedline::parquet
