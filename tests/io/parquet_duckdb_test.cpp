// Interop with DuckDB (the npm package @duckdb/node-api, driven through tests/io/duckdb_parquet.mjs):
// files our writer makes must read in DuckDB with every value equal, and files DuckDB writes must read in ours.
// A missing node or package is a failure, not a skip: scripts/install-deps.sh installs both.
#include <gtest/gtest.h>

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/parquet.h"
#include "feedline/io/parquet_dataset.h"
#include "io/inspect.h"
#include "io/parquet_duckdb_support.h"
#include "io/parquet_test_support.h"
#include "io/value_text.h"
#include "test_paths.h"

namespace feedline::parquet {
namespace {

using feedline::testing::Dump;
using feedline::testing::expect_same_values;
using feedline::testing::parse_dump;
using feedline::testing::random_list_table;
using feedline::testing::random_table;
using feedline::testing::RandomTableSpec;
using feedline::testing::run_duckdb;
using feedline::testing::scratch_dir;

struct WriteCase {
  Codec codec;
  bool dictionary;
};

class DuckDbReadsOurs : public ::testing::TestWithParam<WriteCase> {};

TEST_P(DuckDbReadsOurs, EveryValue) {
  const WriteCase& wc = GetParam();
  RandomTableSpec spec;
  spec.rows = 3000;
  spec.distinct = wc.dictionary ? 40 : 0;
  const Table t = random_table(11, spec);
  WriteOptions w;
  w.codec = wc.codec;
  w.dictionary = wc.dictionary;
  w.row_group_rows = 1100;  // three row groups
  w.page_bytes = 2000;      // several pages per chunk
  const std::string path = scratch_dir("duckdb-reads-ours") + "/ours.parquet";
  write_table(path, t, w);
  std::string out;
  ASSERT_TRUE(run_duckdb({"dump", path}, &out));
  expect_same_values(t, parse_dump(out));
}

INSTANTIATE_TEST_SUITE_P(Parquet, DuckDbReadsOurs,
                         ::testing::Values(WriteCase{Codec::kUncompressed, false}, WriteCase{Codec::kUncompressed, true},
                                           WriteCase{Codec::kSnappy, false}, WriteCase{Codec::kSnappy, true},
                                           WriteCase{Codec::kGzip, false}, WriteCase{Codec::kGzip, true},
                                           WriteCase{Codec::kZstd, false}, WriteCase{Codec::kZstd, true},
                                           WriteCase{Codec::kLz4Raw, false}, WriteCase{Codec::kBrotli, true}),
                         [](const ::testing::TestParamInfo<WriteCase>& info) {
                           return std::string(to_string(info.param.codec)) + (info.param.dictionary ? "_dict" : "_plain");
                         });

// List columns of every element type, nullable or not at both levels, with null, empty and long lists, cut into
// three row groups and small pages.
class DuckDbReadsOurLists : public ::testing::TestWithParam<WriteCase> {};

TEST_P(DuckDbReadsOurLists, EveryValue) {
  const WriteCase& wc = GetParam();
  RandomTableSpec spec;
  spec.rows = 1200;
  spec.distinct = wc.dictionary ? 40 : 0;
  const Table t = random_list_table(13, spec);
  WriteOptions w;
  w.codec = wc.codec;
  w.dictionary = wc.dictionary;
  w.row_group_rows = 450;
  w.page_bytes = 1500;
  const std::string path = scratch_dir("duckdb-reads-our-lists") + "/lists.parquet";
  write_table(path, t, w);
  std::string out;
  ASSERT_TRUE(run_duckdb({"dump", path}, &out));
  expect_same_values(t, parse_dump(out));
}

INSTANTIATE_TEST_SUITE_P(Parquet, DuckDbReadsOurLists,
                         ::testing::Values(WriteCase{Codec::kUncompressed, false}, WriteCase{Codec::kSnappy, true},
                                           WriteCase{Codec::kGzip, false}, WriteCase{Codec::kZstd, true},
                                           WriteCase{Codec::kLz4Raw, true}, WriteCase{Codec::kBrotli, false}),
                         [](const ::testing::TestParamInfo<WriteCase>& info) {
                           return std::string(to_string(info.param.codec)) + (info.param.dictionary ? "_dict" : "_plain");
                         });

// Lists of lists, two and three levels, every combination of nullable levels and elements, with null, empty and
// long lists at every level, cut into row groups and small pages.
TEST(ParquetDuckDb, ReadsOurListsOfLists) {
  for (const int depth : {2, 3}) {
    for (const bool dictionary : {false, true}) {
      SCOPED_TRACE("depth " + std::to_string(depth) + (dictionary ? ", dictionary" : ", plain"));
      RandomTableSpec spec;
      spec.rows = 700;
      spec.distinct = dictionary ? 30 : 0;
      const Table t = feedline::testing::random_nested_list_table(21 + depth, spec, depth);
      WriteOptions w;
      w.codec = dictionary ? Codec::kZstd : Codec::kSnappy;
      w.dictionary = dictionary;
      w.row_group_rows = 300;
      w.page_bytes = 1200;
      const std::string path = scratch_dir("duckdb-reads-our-nested") + "/nested.parquet";
      write_table(path, t, w);
      std::string out;
      ASSERT_TRUE(run_duckdb({"dump", path}, &out));
      expect_same_values(t, parse_dump(out));
    }
  }
}

class OursReadsDuckDb : public ::testing::TestWithParam<const char*> {};

TEST_P(OursReadsDuckDb, EveryValue) {
  const std::string codec = GetParam();
  const std::string path = scratch_dir("ours-reads-duckdb") + "/duck_" + codec + ".parquet";
  std::string out;
  ASSERT_TRUE(run_duckdb({"write", path, codec, "5000", "2048"}, &out));
  const Dump duck = parse_dump(out);
  const FileInfo info = read_file_info(path);
  EXPECT_GE(info.row_groups.size(), 2u);
  for (int threads : {1, 2}) {
    ReadOptions r;
    r.num_threads = threads;
    expect_same_values(read_table(path, r), duck);
  }
  // Projection of a few columns in another order.
  ReadOptions r;
  r.columns = {"s_opt", "u64_req", "b_opt"};
  const Table p = read_table(path, r);
  ASSERT_EQ(p.columns.size(), 3u);
  EXPECT_EQ(p.columns[0].schema.name, "s_opt");
  EXPECT_TRUE(p.columns[0].schema.is_string);
  EXPECT_EQ(p.columns[1].schema.int_annotation, (IntAnnotation{64, false}));
}

INSTANTIATE_TEST_SUITE_P(Parquet, OursReadsDuckDb,
                         ::testing::Values("uncompressed", "snappy", "gzip", "zstd", "lz4_raw", "brotli"));

// DATE, TIME, TIMESTAMP (each unit), DECIMAL in all four storages, FLOAT16, INTERVAL, JSON, ENUM and BSON: our
// writer, our reader and DuckDB agree on every value (and on an interval's text).
TEST(ParquetDuckDb, LogicalTypesBothWays) {
  const int64_t n = 60;
  Table t;
  t.num_rows = n;
  t.columns.reserve(15);  // the references below must stay valid
  auto add = [&](const std::string& name, PhysicalType type, LogicalAnnotation logical, int32_t length = 0) -> Column& {
    ColumnSchema s;
    s.name = name;
    s.type = type;
    s.nullable = true;
    s.type_length = length;
    s.logical = logical;
    t.columns.push_back(make_column(s));
    Column& c = t.columns.back();
    c.validity.assign(static_cast<size_t>(n), 1);
    c.validity[7] = 0;
    return c;
  };
  auto logical = [](LogicalKind kind, TimeUnit unit = TimeUnit::kMicros, bool utc = false, int p = 0, int s = 0) {
    LogicalAnnotation a;
    a.kind = kind;
    a.unit = unit;
    a.utc = utc;
    a.precision = p;
    a.scale = s;
    return a;
  };
  auto big_endian = [](__int128 v, size_t bytes) {
    std::string out(bytes, '\0');
    for (size_t i = 0; i < bytes; ++i) out[bytes - 1 - i] = static_cast<char>(static_cast<uint8_t>(v >> (8 * i)));
    return out;
  };
  const uint16_t halves[] = {0x3c00, 0xc000, 0x3800, 0x7bff, 0x7c00, 0xfc00, 0x0001, 0x8000, 0x3555};
  Column& date = add("date", PhysicalType::kInt32, logical(LogicalKind::kDate));
  Column& time_ms = add("time_ms", PhysicalType::kInt32, logical(LogicalKind::kTime, TimeUnit::kMillis));
  Column& time_us = add("time_us", PhysicalType::kInt64, logical(LogicalKind::kTime, TimeUnit::kMicros));
  Column& ts_ms = add("ts_ms_utc", PhysicalType::kInt64, logical(LogicalKind::kTimestamp, TimeUnit::kMillis, true));
  Column& ts_us = add("ts_us", PhysicalType::kInt64, logical(LogicalKind::kTimestamp, TimeUnit::kMicros));
  Column& ts_ns = add("ts_ns", PhysicalType::kInt64, logical(LogicalKind::kTimestamp, TimeUnit::kNanos));
  Column& d32 = add("dec32", PhysicalType::kInt32, logical(LogicalKind::kDecimal, {}, false, 9, 2));
  Column& d64 = add("dec64", PhysicalType::kInt64, logical(LogicalKind::kDecimal, {}, false, 18, 4));
  Column& dfl = add("dec_flba", PhysicalType::kFixedLenByteArray, logical(LogicalKind::kDecimal, {}, false, 20, 3), 9);
  Column& dba = add("dec_bytes", PhysicalType::kByteArray, logical(LogicalKind::kDecimal, {}, false, 12, 5));
  Column& half = add("half", PhysicalType::kFixedLenByteArray, logical(LogicalKind::kFloat16), 2);
  Column& interval = add("interval", PhysicalType::kFixedLenByteArray, logical(LogicalKind::kInterval), 12);
  Column& json = add("json", PhysicalType::kByteArray, logical(LogicalKind::kJson));
  Column& enumeration = add("enum", PhysicalType::kByteArray, logical(LogicalKind::kEnum));
  Column& bson = add("bson", PhysicalType::kByteArray, logical(LogicalKind::kBson));
  json.schema.is_string = enumeration.schema.is_string = true;
  auto le32 = [](uint32_t v) {
    return std::string{static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16),
                       static_cast<char>(v >> 24)};
  };
  for (int64_t i = 0; i < n; ++i) {
    const bool present = i != 7;  // a null row holds zero / no bytes, as Table wants
    auto v = [&](int64_t x) { return present ? x : 0; };
    date.as<int32_t>().push_back(static_cast<int32_t>(v(i * 4001 - 100000)));
    time_ms.as<int32_t>().push_back(static_cast<int32_t>(v(i * 1234567 % 86400000)));
    time_us.as<int64_t>().push_back(v(i * 1234567891 % 86400000000));
    ts_ms.as<int64_t>().push_back(v(i * 86400123 - 2000000000000));
    ts_us.as<int64_t>().push_back(v(i * 3600000017 + 1700000000000000));
    ts_ns.as<int64_t>().push_back(v(i * 999999937 - 5000000000));
    d32.as<int32_t>().push_back(static_cast<int32_t>(v(i * 137 - 3000)));
    d64.as<int64_t>().push_back(v(i * 987654321012 - 20000000000000));
    std::get<ByteArrays>(dfl.values).push_back(present ? big_endian(__int128{i} * 12345678901234 - 300000000000000, 9) : "");
    std::get<ByteArrays>(dba.values).push_back(present ? big_endian(i * 7919 - 200000, 3) : "");
    const uint16_t h = halves[i % 9];
    std::get<ByteArrays>(half.values).push_back(present ? std::string{static_cast<char>(h & 0xff), static_cast<char>(h >> 8)} : "");
    // Months past a year, days, milliseconds past a day; zeros alone and together.
    const uint32_t months = i % 5 == 0 ? 0 : static_cast<uint32_t>(i * 7 % 40);
    const uint32_t days = i % 3 == 0 ? 0 : static_cast<uint32_t>(i * 11 % 400);
    const uint32_t millis = i % 4 == 0 ? 0 : static_cast<uint32_t>(i * 987654321 % 200000000);
    std::get<ByteArrays>(interval.values).push_back(present ? le32(months) + le32(days) + le32(millis) : "");
    std::get<ByteArrays>(json.values).push_back(present ? "{\"i\":" + std::to_string(i) + ",\"s\":[\"é\",null]}" : "");
    std::get<ByteArrays>(enumeration.values).push_back(present ? std::string(i % 2 ? "cat" : "dog") : "");
    std::get<ByteArrays>(bson.values).push_back(present ? std::string("\x05\x00\x00\x00") + static_cast<char>(i) : "");
  }
  const std::string path = scratch_dir("logical-types") + "/logical.parquet";
  write_table(path, t);
  feedline::testing::expect_tables_equal(t, read_table(path));
  std::string out;
  ASSERT_TRUE(run_duckdb({"dump", path}, &out));
  expect_same_values(t, parse_dump(out), /*check_types=*/false);

  EXPECT_EQ(decimal_to_string(-5, 2), "-0.05");
  EXPECT_EQ(decimal_to_string(7, 0), "7");
  EXPECT_EQ(decimal_to_string(123456, 3), "123.456");
  EXPECT_EQ(decimal_to_string(-100, 2), "-1.00");
  EXPECT_EQ(decimal_unscaled(std::string("\xff\xfe", 2)), -2);
  // Wider than 16 bytes: 2^128 (17 bytes), -1 in 20 bytes, and -2^135 (17 bytes), each with a scale.
  EXPECT_EQ(decimal_bytes_to_string(std::string("\x01") + std::string(16, '\0'), 0),
            "340282366920938463463374607431768211456");
  EXPECT_EQ(decimal_bytes_to_string(std::string(20, '\xff'), 3), "-0.001");
  EXPECT_EQ(decimal_bytes_to_string(std::string("\x80") + std::string(16, '\0'), 40),
            "-4.3556142965880123323311949751266331066368");
  EXPECT_EQ(decimal_bytes_to_string(std::string(18, '\0'), 2), "0.00");
  EXPECT_EQ(decimal_bytes_to_double(std::string("\x01") + std::string(16, '\0'), 0), 0x1p128);
  EXPECT_EQ(half_to_float(0x3555), 0.333251953125f);
  // Intervals as DuckDB prints them, with negative counts (DuckDB's own intervals; Parquet's are unsigned).
  EXPECT_EQ(interval_text(0, 0, 0), "00:00:00");
  EXPECT_EQ(interval_text(-13, 0, 0), "-1 year -1 month");
  EXPECT_EQ(interval_text(24, 1, 0), "2 years 1 day");
  EXPECT_EQ(interval_text(0, 0, -1), "-00:00:00.000001");
  EXPECT_EQ(interval_text(0, 0, 1230000), "00:00:01.23");
  EXPECT_EQ(interval_text(0, 0, int64_t{1000} * 3600000000), "1000:00:00");
  EXPECT_EQ(interval_text(0, INT32_MIN, 0), "-2147483648 days");

  // The writer refuses annotations that do not fit the storage.
  Table bad = t;
  bad.columns.resize(1);
  bad.columns[0].schema.logical.kind = LogicalKind::kTimestamp;  // TIMESTAMP on INT32
  EXPECT_THROW(write_table(path + ".bad", bad), InvalidArgument);
}

// Lists of DATE, TIMESTAMP and DECIMAL (INT64 and FIXED_LEN_BYTE_ARRAY): DuckDB reads the annotations on the
// element of our three-level lists.
TEST(ParquetDuckDb, ReadsOurListsOfLogicalTypes) {
  const int64_t n = 200;
  Table t;
  t.num_rows = n;
  auto add = [&](const std::string& name, PhysicalType type, LogicalKind kind, int32_t length = 0) {
    ColumnSchema s;
    s.name = name;
    s.type = type;
    s.type_length = length;
    s.logical.kind = kind;
    s.logical.precision = type == PhysicalType::kInt64 ? 18 : 20;
    s.logical.scale = 3;
    s.is_list = true;
    s.nullable = true;
    s.element_nullable = true;
    t.columns.push_back(make_column(s));
    return t.columns.size() - 1;
  };
  const size_t date = add("dates", PhysicalType::kInt32, LogicalKind::kDate);
  const size_t ts = add("stamps", PhysicalType::kInt64, LogicalKind::kTimestamp);
  const size_t d64 = add("dec64", PhysicalType::kInt64, LogicalKind::kDecimal);
  const size_t dfl = add("dec_flba", PhysicalType::kFixedLenByteArray, LogicalKind::kDecimal, 9);
  for (Column& c : t.columns) c.validity.assign(static_cast<size_t>(n), 1);
  for (int64_t i = 0; i < n; ++i) {
    for (Column& c : t.columns) {
      const int64_t len = i % 9 == 4 ? 0 : i % 5;
      if (i % 9 == 4 && i % 2 == 0) c.validity[static_cast<size_t>(i)] = 0;  // every other empty row is a null list
      for (int64_t e = 0; e < len; ++e) c.element_validity.push_back((i + e) % 4 != 1);
      c.list_offsets.push_back(c.list_offsets.back() + len);
    }
    const int64_t len = t.columns[0].list_size(i);
    for (int64_t e = 0; e < len; ++e) {
      const bool present = (i + e) % 4 != 1;
      const int64_t x = present ? i * 7 + e : 0;
      // A null element holds a zero value (no bytes), as Table wants.
      t.columns[date].as<int32_t>().push_back(present ? static_cast<int32_t>(x * 311 - 20000) : 0);
      t.columns[ts].as<int64_t>().push_back(present ? x * 3600000017 + 1700000000000000 : 0);
      t.columns[d64].as<int64_t>().push_back(present ? x * 987654321 - 5000000000 : 0);
      const __int128 unscaled = __int128{x} * 12345678901234 - 300000000000000;
      std::string bytes(present ? 9 : 0, '\0');  // big-endian two's complement
      for (size_t b = 0; b < bytes.size(); ++b) {
        bytes[8 - b] = static_cast<char>(static_cast<uint8_t>(unscaled >> (8 * b)));
      }
      std::get<ByteArrays>(t.columns[dfl].values).push_back(bytes);
    }
  }
  const std::string path = scratch_dir("duckdb-list-logical") + "/logical_lists.parquet";
  write_table(path, t);
  feedline::testing::expect_tables_equal(t, read_table(path));
  std::string out;
  ASSERT_TRUE(run_duckdb({"dump", path}, &out));
  expect_same_values(t, parse_dump(out), /*check_types=*/false);
}

// What pandas (through pyarrow) writes: INT64 columns, SNAPPY, dictionary pages, a `pandas` key in the footer.
TEST(ParquetDuckDb, ReadsThePandasLayout) {
  const std::string path = scratch_dir("pandas-layout") + "/pandas.parquet";
  std::string out;
  ASSERT_TRUE(run_duckdb({"pandas", path, "3000"}, &out));
  const Dump duck = parse_dump(out);
  const FileInfo info = read_file_info(path);
  bool has_pandas_key = false;
  for (const auto& [key, value] : info.key_value_metadata) {
    if (key == "pandas") has_pandas_key = value.find("index_columns") != std::string::npos;
  }
  EXPECT_TRUE(has_pandas_key);
  ASSERT_FALSE(info.row_groups.empty());
  bool dictionary = false;
  for (const auto& c : info.row_groups[0].columns) {
    EXPECT_EQ(c.codec, "snappy");
    for (const auto& e : c.encodings) dictionary |= e == "RLE_DICTIONARY" || e == "PLAIN_DICTIONARY";
  }
  EXPECT_TRUE(dictionary);
  EXPECT_EQ(info.schema.at(0).type, PhysicalType::kInt64);
  const Table t = read_table(path);
  expect_same_values(t, duck);
  EXPECT_EQ(t.columns.size(), 31u);
  EXPECT_EQ(t.column("pixel3").as<int64_t>()[5], (5 * 9) % 256);
}

// Lists written by DuckDB (three-level LIST with nullable lists and elements, empty lists, several row groups
// and pages): every value, and the element types.
TEST(ParquetDuckDb, ReadsListColumns) {
  for (const char* codec : {"uncompressed", "snappy", "zstd"}) {
    SCOPED_TRACE(codec);
    const std::string path = scratch_dir("duckdb-lists") + "/lists_" + codec + ".parquet";
    std::string out;
    ASSERT_TRUE(run_duckdb({"lists", path, codec, "5000", "2048"}, &out));
    const Dump duck = parse_dump(out);
    EXPECT_GE(read_file_info(path).row_groups.size(), 2u);
    for (int threads : {1, 2}) {
      ReadOptions r;
      r.num_threads = threads;
      const Table t = read_table(path, r);
      expect_same_values(t, duck);
      const Column& embedding = t.column("embedding");
      ASSERT_TRUE(embedding.schema.is_list);
      EXPECT_EQ(embedding.list_offsets.back(), 8 * 5000);
      EXPECT_TRUE(t.column("ragged").schema.element_nullable);
      EXPECT_FALSE(t.column("ragged").validity.empty());
    }
  }
}

// Lists of lists written by DuckDB (three-level LIST at every level, nulls and empty lists at every level, two
// and three levels, several row groups and pages): every value, and the levels' nullability; and DuckDB reads
// the same values from the file written back by us.
TEST(ParquetDuckDb, ReadsListsOfLists) {
  for (const char* codec : {"uncompressed", "zstd"}) {
    SCOPED_TRACE(codec);
    const std::string path = scratch_dir("duckdb-nested") + "/nested_" + codec + ".parquet";
    std::string out;
    ASSERT_TRUE(run_duckdb({"nested", path, codec, "5000", "2048"}, &out));
    const Dump duck = parse_dump(out);
    ASSERT_EQ(read_file_info(path).row_groups.size(), 3u);
    for (int threads : {1, 2}) {
      ReadOptions r;
      r.num_threads = threads;
      const Table t = read_table(path, r);
      expect_same_values(t, duck);
      const Column& boxes = t.column("boxes");
      ASSERT_EQ(boxes.schema.list_depth(), 2);
      EXPECT_EQ(boxes.schema.inner_list_nullable, (std::vector<bool>{true}));
      EXPECT_EQ(boxes.list_offsets.back(), 3 * 5000);
      ASSERT_EQ(boxes.inner_lists.size(), 1u);
      EXPECT_EQ(boxes.inner_lists[0].offsets.back(), 4 * 3 * 5000);
      EXPECT_TRUE(boxes.inner_lists[0].validity.empty());  // no null inner list
      EXPECT_FALSE(t.column("ragged").inner_lists[0].validity.empty());
      EXPECT_EQ(t.column("deep").schema.list_depth(), 3);
    }
    // Written back by us, DuckDB reads the same values.
    const std::string ours = scratch_dir("duckdb-nested-ours") + "/ours_" + codec + ".parquet";
    WriteOptions w;
    w.row_group_rows = 4000;
    w.page_bytes = 4096;
    write_table(ours, read_table(path), w);
    std::string ours_out;
    ASSERT_TRUE(run_duckdb({"dump", ours}, &ours_out));
    expect_same_values(read_table(path), parse_dump(ours_out));
    EXPECT_EQ(parse_dump(ours_out).rows, duck.rows);
    // Row groups read in another order: each level's offsets follow the rows asked for.
    ReadOptions r;
    r.row_groups = {2, 0};
    r.columns = {"ragged"};
    const Table t = read_table(path, r);
    const FileInfo info = read_file_info(path);
    Dump want;
    want.names = {"ragged"};
    want.types = {duck.types[2]};
    const int64_t first[] = {0, info.row_groups[0].num_rows, info.row_groups[0].num_rows + info.row_groups[1].num_rows};
    for (const int g : {2, 0}) {
      for (int64_t i = 0; i < info.row_groups[static_cast<size_t>(g)].num_rows; ++i) {
        want.rows.push_back({duck.rows[static_cast<size_t>(first[g] + i)][2]});
      }
    }
    expect_same_values(t, want);
  }
}

// Chosen row groups: only their rows, in the order asked for, with the chosen columns.
TEST(ParquetDuckDb, ReadsChosenRowGroups) {
  const std::string path = scratch_dir("duckdb-row-groups") + "/lists.parquet";
  std::string out;
  ASSERT_TRUE(run_duckdb({"lists", path, "zstd", "5000", "2048"}, &out));
  const Dump duck = parse_dump(out);
  const FileInfo info = read_file_info(path);
  ASSERT_EQ(info.row_groups.size(), 3u);
  ReadOptions r;
  r.row_groups = {2, 0};
  r.columns = {"ragged", "id"};
  const Table t = read_table(path, r);
  Dump want;
  want.names = {"ragged", "id"};
  want.types = {duck.types[3], duck.types[0]};
  const int64_t first[] = {0, info.row_groups[0].num_rows, info.row_groups[0].num_rows + info.row_groups[1].num_rows};
  for (const int g : {2, 0}) {
    for (int64_t i = 0; i < info.row_groups[static_cast<size_t>(g)].num_rows; ++i) {
      const auto& row = duck.rows[static_cast<size_t>(first[g] + i)];
      want.rows.push_back({row[3], row[0]});
    }
  }
  EXPECT_EQ(t.num_rows, info.row_groups[2].num_rows + info.row_groups[0].num_rows);
  expect_same_values(t, want);
  for (const auto& [groups, message] : std::vector<std::pair<std::vector<int64_t>, std::string>>{
           {{3}, "no row group 3 (the file has 3)"}, {{1, 1}, "row group 1 asked for twice"}, {{-1}, "no row group -1"}}) {
    ReadOptions bad;
    bad.row_groups = groups;
    try {
      read_table(path, bad);
      ADD_FAILURE() << message;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(path + ": " + message), std::string::npos) << e.what();
    }
  }
}

// Structs written by DuckDB: their fields read as flat columns named by dotted path, null where the field or any
// struct above it is; lists and lists of lists inside a struct too (a null struct: a null list).
TEST(ParquetDuckDb, ReadsStructFieldsFlattened) {
  const std::string path = scratch_dir("duckdb-structs") + "/structs.parquet";
  std::string out;
  ASSERT_TRUE(run_duckdb({"structs", path, "3000"}, &out));
  const Dump duck = parse_dump(out);
  const FileInfo info = read_file_info(path);
  std::vector<std::string> names;
  for (const ColumnSchema& c : info.schema) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"id", "s.x", "s.y", "s.inner.z", "with_list.a", "with_list.l",
                                             "with_list.boxes"}));
  EXPECT_TRUE(info.unsupported_columns.empty());
  const Table t = read_table(path);
  expect_same_values(t, duck);
  EXPECT_TRUE(t.column("s.inner.z").schema.nullable);
  EXPECT_TRUE(t.column("s.inner.z").is_null(5));   // the outer struct is null
  EXPECT_TRUE(t.column("s.inner.z").is_null(7));   // the inner struct is null
  EXPECT_FALSE(t.column("s.inner.z").is_null(1));
  const Column& l = t.column("with_list.l");
  ASSERT_TRUE(l.schema.is_list);
  EXPECT_TRUE(l.schema.nullable);
  EXPECT_TRUE(l.is_null(4));   // its struct is null
  EXPECT_TRUE(l.is_null(1));   // the list is null
  EXPECT_FALSE(l.is_null(2));  // an empty list
  EXPECT_EQ(l.list_size(2), 0);
  EXPECT_EQ(t.column("with_list.boxes").schema.list_depth(), 2);
  // Written back by us as top-level list columns, they read back the same.
  const std::string back = scratch_dir("duckdb-structs-back") + "/back.parquet";
  write_table(back, t);
  feedline::testing::expect_tables_equal(t, read_table(back));
}

// Lists of structs, maps and lists of lists of structs, as DuckDB writes them: each field a list (of lists), the
// values DuckDB gives for the same field taken element by element.
TEST(ParquetDuckDb, ReadsListsOfStructsAndMaps) {
  const std::string path = scratch_dir("duckdb-liststructs") + "/liststructs.parquet";
  std::string out;
  ASSERT_TRUE(run_duckdb({"liststructs", path, "3000", "1000"}, &out));
  const FileInfo info = read_file_info(path);
  std::vector<std::string> names;
  for (const ColumnSchema& c : info.schema) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"id", "objects.label", "objects.name", "objects.bbox", "objects.inner.z",
                                             "attrs.key", "attrs.value", "tags.key", "tags.value", "grid.v"}));
  EXPECT_TRUE(info.unsupported_columns.empty());
  const Table t = read_table(path);
  std::string json = "[";
  for (size_t i = 0; i < names.size(); ++i) json += (i ? ",\"" : "\"") + names[i] + "\"";
  ASSERT_TRUE(run_duckdb({"dump", path, json + "]"}, &out));
  expect_same_values(t, parse_dump(out), /*check_types=*/false);

  // Row 1 holds one struct, of label 10. Row 3 holds three: a null label ((3 + 0) % 3 = 0), label 31, and a null
  // struct ((3 + 2) % 5 = 0), whose label is null too.
  const Column& label = t.column("objects.label");
  EXPECT_TRUE(label.schema.nullable);
  EXPECT_TRUE(label.schema.element_nullable);
  EXPECT_TRUE(label.is_null(0));  // a null list of structs
  EXPECT_EQ(feedline::testing::cell(label, 1), "L[10]");
  EXPECT_EQ(feedline::testing::cell(label, 3), "L[N,31,N]");
  EXPECT_EQ(t.column("objects.bbox").schema.list_depth(), 2);
  EXPECT_EQ(t.column("objects.bbox").schema.inner_list_nullable, (std::vector<bool>{true}));
  EXPECT_EQ(t.column("tags.value").schema.list_depth(), 2);
  EXPECT_EQ(t.column("grid.v").schema.list_depth(), 2);
  EXPECT_FALSE(t.column("attrs.key").schema.element_nullable);  // a map's keys are required
  // Written back by us as top-level list columns, they read back the same.
  const std::string back = scratch_dir("duckdb-liststructs-back") + "/back.parquet";
  write_table(back, t);
  feedline::testing::expect_tables_equal(t, read_table(back));
}

// Our statistics, as another engine uses them: DuckDB checks a filter against each row group's min and max before
// it reads the rows (skipping a row group, or taking all of it), so a min or max in the wrong order or form gives
// it wrong counts. Each column's values rise from row group to row group, through the points where a wrong order
// would show (zero, 2^31, 2^63, the first byte over 0x7F) inside one row group; every filter's count from DuckDB
// is checked against the count of the values themselves. (The order at those points is checked directly by
// ParquetRoundTrip's statistics tests: DuckDB reads this file's counts right even when only that one row group's
// min and max are swapped.)
TEST(ParquetDuckDb, FiltersOnOurStatisticsCountWhatTheValuesHold) {
  const int64_t n = 4000;
  Table t;
  t.num_rows = n;
  t.columns.reserve(10);
  const auto add = [&](const std::string& name, PhysicalType type, std::optional<IntAnnotation> ints = {},
                       LogicalKind kind = LogicalKind::kNone) -> Column& {
    ColumnSchema s;
    s.name = name;
    s.type = type;
    s.nullable = true;
    s.int_annotation = ints;
    s.logical.kind = kind;
    if (kind == LogicalKind::kDecimal) {
      s.type_length = 9;
      s.logical.precision = 20;
      s.logical.scale = 3;
    }
    if (kind == LogicalKind::kTimestamp) s.logical.unit = TimeUnit::kMicros;
    s.is_string = type == PhysicalType::kByteArray;
    t.columns.push_back(make_column(s));
    t.columns.back().validity.assign(static_cast<size_t>(n), 1);
    return t.columns.back();
  };
  Column& i32 = add("i32", PhysicalType::kInt32);
  Column& u32 = add("u32", PhysicalType::kInt32, IntAnnotation{32, false});
  Column& u64 = add("u64", PhysicalType::kInt64, IntAnnotation{64, false});
  Column& i64 = add("i64", PhysicalType::kInt64);
  Column& f32 = add("f32", PhysicalType::kFloat);
  Column& f64 = add("f64", PhysicalType::kDouble);
  Column& str = add("s", PhysicalType::kByteArray);
  Column& dec = add("dec", PhysicalType::kFixedLenByteArray, {}, LogicalKind::kDecimal);
  Column& date = add("date", PhysicalType::kInt32, {}, LogicalKind::kDate);
  Column& ts = add("ts", PhysicalType::kInt64, {}, LogicalKind::kTimestamp);
  // The values, and the keys they compare by (nullopt: null).
  std::vector<std::optional<int64_t>> k_i32, k_i64, k_date, k_ts;
  std::vector<std::optional<uint64_t>> k_u32, k_u64;
  std::vector<std::optional<double>> k_f32, k_f64;
  std::vector<std::optional<std::string>> k_str;
  std::vector<std::optional<__int128>> k_dec;
  const auto utf8 = [](uint32_t cp) {
    std::string out;
    if (cp < 0x80) return std::string(1, static_cast<char>(cp));
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
    return out;
  };
  for (int64_t i = 0; i < n; ++i) {
    const bool present = i % 97 != 5;
    for (Column& c : t.columns) c.validity[static_cast<size_t>(i)] = present ? 1 : 0;
    const auto keep = [&](auto& keys, auto key) {
      keys.push_back(present ? std::optional<decltype(key)>(key) : std::nullopt);
      return present ? key : decltype(key){};
    };
    // Each boundary falls inside the row group of rows 2000 to 2249, at row 2125.
    const int64_t d = i - 2125;
    i32.as<int32_t>().push_back(static_cast<int32_t>(keep(k_i32, d * 1000)));
    const uint64_t step = static_cast<uint64_t>(i) * 1000;
    u32.as<int32_t>().push_back(static_cast<int32_t>(keep(k_u32, (uint64_t{1} << 31) - 2125000 + step)));
    u64.as<int64_t>().push_back(static_cast<int64_t>(keep(k_u64, (uint64_t{1} << 63) - 2125000 + step)));
    i64.as<int64_t>().push_back(keep(k_i64, d * 1000000000000));
    const auto single = static_cast<float>(d * 0.37);
    f32.as<float>().push_back(static_cast<float>(keep(k_f32, static_cast<double>(single))));
    f64.as<double>().push_back(keep(k_f64, d * 0.37));
    // Code points from 'A' past 0x7F (two bytes from U+0080 on, at row 2125), then the row: strings that rise in
    // byte order.
    const int64_t point = 0x80 + (d >= 0 ? d / 32 : -1 - (-1 - d) / 32);  // U+003D to U+00BA
    const std::string text = utf8(static_cast<uint32_t>(point)) + fmt::format("{:04}", i);
    std::get<ByteArrays>(str.values).push_back(keep(k_str, text));
    const __int128 unscaled = __int128{d} * 12345678901;
    std::string be(9, '\0');
    for (size_t b = 0; b < 9; ++b) be[8 - b] = static_cast<char>(static_cast<uint8_t>(unscaled >> (8 * b)));
    std::get<ByteArrays>(dec.values).push_back(present ? be : std::string());
    k_dec.push_back(present ? std::optional<__int128>(unscaled) : std::nullopt);
    date.as<int32_t>().push_back(static_cast<int32_t>(keep(k_date, d * 3)));
    ts.as<int64_t>().push_back(keep(k_ts, d * int64_t{3600000000}));
  }
  const std::string path = scratch_dir("duckdb-statistics") + "/stats.parquet";
  WriteOptions options;
  options.row_group_rows = 250;
  write_table(path, t, options);
  ASSERT_EQ(read_file_info(path).row_groups.size(), 16u);

  // For each column, filters around a few of its values (the first, the last, and either side of the boundary).
  std::vector<std::string> conditions;
  std::vector<int64_t> expected;
  const auto filters = [&](const std::string& column, const auto& keys, const auto& literal) {
    for (const int64_t at : std::vector<int64_t>{0, 1, 1234, 2124, 2125, 2126, n - 1}) {
      const auto& pivot = keys[static_cast<size_t>(at)];
      if (!pivot) continue;
      const std::string lit = literal(*pivot);
      int64_t above = 0, below = 0, equal = 0;
      for (const auto& k : keys) {
        if (!k) continue;
        above += *k > *pivot;
        below += *k < *pivot;
        equal += *k == *pivot;
      }
      for (const auto& [op, count] : {std::pair<const char*, int64_t>{">", above}, {"<", below}, {"=", equal}}) {
        conditions.push_back(fmt::format("\"{}\" {} {}", column, op, lit));
        expected.push_back(count);
      }
    }
  };
  const auto integer = [](auto v) { return std::to_string(v); };
  filters("i32", k_i32, integer);
  filters("i64", k_i64, integer);
  filters("u32", k_u32, [](uint64_t v) { return fmt::format("CAST('{}' AS UINTEGER)", v); });
  filters("u64", k_u64, [](uint64_t v) { return fmt::format("CAST('{}' AS UBIGINT)", v); });
  filters("f32", k_f32, [](double v) { return fmt::format("CAST('{:.9g}' AS FLOAT)", v); });
  filters("f64", k_f64, [](double v) { return fmt::format("CAST('{:.17g}' AS DOUBLE)", v); });
  filters("s", k_str, [](const std::string& v) { return "'" + v + "'"; });
  filters("dec", k_dec, [](__int128 v) {
    const bool negative = v < 0;
    const unsigned __int128 m = negative ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
    return fmt::format("CAST('{}{}.{:03}' AS DECIMAL(20,3))", negative ? "-" : "", static_cast<uint64_t>(m / 1000),
                       static_cast<unsigned>(m % 1000));
  });
  filters("date", k_date, [](int64_t v) { return fmt::format("CAST(DATE '1970-01-01' + {} AS DATE)", v); });
  filters("ts", k_ts, [](int64_t v) { return fmt::format("make_timestamp(CAST({} AS BIGINT))", v); });

  std::string out;
  ASSERT_TRUE(run_duckdb({"count", path, nlohmann::json(conditions).dump()}, &out));
  std::vector<int64_t> counts;
  for (size_t at = 0, end; (end = out.find('\n', at)) != std::string::npos; at = end + 1) {
    counts.push_back(std::stoll(out.substr(at, end - at)));
  }
  ASSERT_EQ(counts.size(), conditions.size()) << out;
  for (size_t k = 0; k < conditions.size(); ++k) EXPECT_EQ(counts[k], expected[k]) << conditions[k];
}

// UUID columns (the logical type on FIXED_LEN_BYTE_ARRAY(16)), from two producers in DuckDB's test folder: every
// value as DuckDB reads it (its canonical text), and `cat` prints the same text.
TEST(DuckDbFolder, UuidColumnsReadAsDuckDbReadsThem) {
  for (const char* name : {"uuid_v2.parquet", "arrow/uuid-arrow.parquet"}) {
    SCOPED_TRACE(name);
    const std::string path = feedline::testing::test_data_dir() + "/duckdb-parquet-testing/" + name;
    const Table t = read_table(path);
    ASSERT_EQ(t.columns.size(), 1u);
    EXPECT_EQ(t.columns[0].schema.logical.kind, LogicalKind::kUuid);
    std::string out;
    ASSERT_TRUE(run_duckdb({"dump", path}, &out));
    expect_same_values(t, parse_dump(out));
  }
  // What `cat` and `inspect` print.
  const std::string path = feedline::testing::test_data_dir() + "/duckdb-parquet-testing/uuid_v2.parquet";
  EXPECT_EQ(value_text(read_table(path).columns[0], 0), "0196e8fb-0adf-7355-ba39-d4c2e62dc4bd");
  EXPECT_NE(inspect_json(path).find("\"logical_type\": \"UUID\""), std::string::npos) << inspect_json(path);
}

// Every column of `name` (in DuckDB's test folder) read as DuckDB reads it, cell for cell; nested fields by
// feedline's dotted names.
void expect_reads_as_duckdb(const std::string& name) {
  SCOPED_TRACE(name);
  const std::string path = feedline::testing::test_data_dir() + "/duckdb-parquet-testing/" + name;
  const Table t = read_table(path);
  std::string json = "[";
  for (size_t i = 0; i < t.columns.size(); ++i) json += (i ? ",\"" : "\"") + t.columns[i].schema.name + "\"";
  std::string out;
  ASSERT_TRUE(run_duckdb({"dump", path, json + "]"}, &out));
  expect_same_values(t, parse_dump(out), /*check_types=*/false);
}

// Pages that other readers take and whose data is still unambiguous: a v2 data page whose header counts its
// values as rows (parquet-cpp 8), and a v2 page of nulls alone whose empty values section holds no codec frame
// (Spark 3.5).
TEST(DuckDbFolder, LenientPagesReadAsDuckDbReadsThem) {
  for (const char* codec : {"NONE", "SNAPPY", "GZIP", "LZ4", "BROTLI", "ZSTD"}) {
    expect_reads_as_duckdb(std::string("compression/generated/data_page=2_") + codec + ".parquet");
  }
  expect_reads_as_duckdb("compression/empty_datapage_v2.snappy.parquet");
}

// A flat column whose chunk metadata counts 0 values for its 8 rows; its pages hold the 8.
TEST(DuckDbFolder, AChunkCountThePagesContradictReadsAsDuckDbReadsIt) {
  expect_reads_as_duckdb("parquet_column_num_values_mismatch.parquet");
}

// DECIMAL(77, 38) in 32-byte values (parquet-mr through Avro): exact as text, and as the nearest double where
// DuckDB, which reads decimals this wide as DOUBLE, gives its double.
TEST(DuckDbFolder, DecimalsOfAnyPrecisionReadExactly) {
  const std::string path = feedline::testing::test_data_dir() + "/duckdb-parquet-testing/bigdecimal.parquet";
  const Table t = read_table(path);
  const Column& c = t.column("bigdec");
  EXPECT_EQ(c.schema.logical.precision, 77);
  EXPECT_EQ(value_text(c, 2), "123456789123456789123456789.12345678912345678912345678900000000000");
  // 2^255 - 1 and -2^255, over 10^38.
  EXPECT_EQ(value_text(c, 4), "578960446186580977117854925043439539266.34992332820282019728792003956564819967");
  EXPECT_EQ(value_text(c, 5), "-578960446186580977117854925043439539266.34992332820282019728792003956564819968");
  std::string out;
  ASSERT_TRUE(run_duckdb({"dump", path}, &out));
  const Dump duck = parse_dump(out);
  ASSERT_EQ(duck.rows.size(), static_cast<size_t>(t.num_rows));
  for (int64_t r = 0; r < t.num_rows; ++r) {
    const std::string& cell = duck.rows[static_cast<size_t>(r)][0];
    ASSERT_EQ(cell.rfind("d:", 0), 0u) << cell;
    const uint64_t bits = std::stoull(cell.substr(2), nullptr, 16);
    double theirs;
    std::memcpy(&theirs, &bits, sizeof theirs);
    EXPECT_NEAR(c.value_as_double(r), theirs, 1e-15 * std::abs(theirs)) << "row " << r;
  }
}

// ENUM columns written by parquet-mr (through Avro and Thrift): strings, named ENUM by inspect, flat and in lists.
TEST(DuckDbFolder, EnumColumnsFromParquetMrReadAsStrings) {
  for (const auto& [file, column] : {std::pair<std::string, std::string>{"enum.parquet", "tags.v_type"},
                                     {"complex.parquet", "manufacturer"}}) {
    SCOPED_TRACE(file);
    const std::string path = feedline::testing::test_data_dir() + "/duckdb-parquet-testing/" + file;
    const Table t = read_table(path);
    const Column& c = t.column(column);
    EXPECT_EQ(c.schema.logical.kind, LogicalKind::kEnum);
    EXPECT_TRUE(c.schema.is_string);
    EXPECT_NE(inspect_json(path).find("\"logical_type\": \"ENUM\""), std::string::npos) << inspect_json(path);
    expect_reads_as_duckdb(file);
  }
  // Row 0's list of tag types.
  const Table t = read_table(feedline::testing::test_data_dir() + "/duckdb-parquet-testing/enum.parquet");
  const Column& types = t.column("tags.v_type");
  ASSERT_GE(types.list_offsets.size(), 2u);
  std::vector<std::string> first;
  for (int64_t i = types.list_offsets[0]; i < types.list_offsets[1]; ++i) {
    first.emplace_back(types.byte_arrays().at(i));
  }
  EXPECT_EQ(first, (std::vector<std::string>{"STRING", "STRING", "STRING", "BOOL", "INT64", "FLOAT64", "BINARY",
                                             "STRING"}));
}

// A footer whose empty lists carry no element type (fastparquet 2024.5).
TEST(DuckDbFolder, EmptyThriftListsWithoutAnElementTypeReadAsDuckDbReadsThem) {
  expect_reads_as_duckdb("internal_5994.parquet");
}

// ---------------------------------------------------------------------------------------------------------
// The whole folder against DuckDB.

// A file on which feedline and DuckDB differ on purpose, and why. docs/parquet.md lists the same.
struct FolderDifference {
  const char* file;  // relative to tests/data
  const char* why;
  bool ask_duckdb = true;  // false: DuckDB's side is not run (its values cannot be printed)
};
const FolderDifference kFolderDifferences[] = {
    {"parquet-testing/data/int96_from_spark.parquet",
     "an INT96 timestamp of year 290000 that Spark's writer wrapped past 64-bit Julian microseconds: feedline "
     "wraps it back to the value Spark wrote (the corpus documents it), DuckDB reads a date before 226000 BC"},
    {"parquet-testing/data/datapage_v1-corrupt-checksum.parquet",
     "a page whose CRC does not match: feedline checks page checksums, DuckDB does not"},
    {"parquet-testing/data/rle-dict-uncompressed-corrupt-checksum.parquet",
     "a page whose CRC does not match: feedline checks page checksums, DuckDB does not"},
    {"parquet-testing/bad_data/ARROW-RS-GH-6229-LEVELS.parquet",
     "a page of 21 level entries in a chunk that declares 1: ambiguous, so feedline refuses it; DuckDB reads one "
     "row"},
    {"parquet-testing/data/hadoop_lz4_compressed.parquet",
     "the deprecated LZ4 codec (Hadoop's framing): feedline reads it, DuckDB refuses the codec"},
    {"parquet-testing/data/hadoop_lz4_compressed_larger.parquet",
     "the deprecated LZ4 codec (Hadoop's framing): feedline reads it, DuckDB refuses the codec"},
    {"parquet-testing/data/non_hadoop_lz4_compressed.parquet",
     "the deprecated LZ4 codec (a bare LZ4 block): feedline reads it, DuckDB refuses the codec"},
    {"duckdb-parquet-testing/arrow/hadoop_lz4_compressed.parquet",
     "the deprecated LZ4 codec (Hadoop's framing): feedline reads it, DuckDB refuses the codec"},
    {"duckdb-parquet-testing/arrow/non_hadoop_lz4_compressed.parquet",
     "the deprecated LZ4 codec (a bare LZ4 block): feedline reads it, DuckDB refuses the codec"},
    {"duckdb-parquet-testing/invalid.parquet",
     "strings that are not valid UTF-8: feedline keeps their bytes, DuckDB refuses the file"},
    {"duckdb-parquet-testing/invalid_utf8_dba.parquet",
     "strings that are not valid UTF-8: feedline keeps their bytes, DuckDB refuses the file"},
    {"duckdb-parquet-testing/invalid_utf8_dictionary.parquet",
     "strings that are not valid UTF-8: feedline keeps their bytes, DuckDB refuses the file"},
    {"parquet-testing/data/map_no_value.parquet",
     "a MAP of keys without values (the spec allows it): feedline reads the keys, DuckDB refuses the file"},
    {"duckdb-parquet-testing/seqs_table.parquet",
     "DELTA_LENGTH_BYTE_ARRAY pages of 170 MB of DNA sequences: feedline reads all 240,001 rows, DuckDB refuses the "
     "file ('Invalid string length')"},
    {"parquet-testing/data/large_string_map.brotli.parquet",
     "a 4 KB file that decodes to 2 GB (a page of 1 GiB): past this test's memory limit of 1 GiB, so refused here "
     "(ParquetCorpus.ReadsALargeStringMapUnderTheDefaultLimit reads it); its strings are too long for node to "
     "print, so the test does not ask DuckDB",
     false},
};

// DuckDB's JSON for a VARIANT value and feedline's, compared as values: objects and arrays element by element,
// numbers as doubles, and the strings of types JSON lacks as each tool writes them: timestamps ("2024-11-07
// 12:33:54.123456+00" in DuckDB, ISO 8601 "2024-11-07T12:33:54.123456Z" in feedline, which keeps nanoseconds
// where DuckDB rounds them to microseconds) and binary (DuckDB's "\x0A\x0B" escapes, feedline's base64).
bool same_json(const nlohmann::json& ours, const nlohmann::json& theirs);

std::string base64(const std::string& bytes) {
  static const char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = static_cast<uint8_t>(bytes[i]) << 16 | static_cast<uint8_t>(bytes[i + 1]) << 8 |
                       static_cast<uint8_t>(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kDigits[(v >> s) & 63];
  }
  if (i < bytes.size()) {
    const bool two = i + 1 < bytes.size();
    const uint32_t v = static_cast<uint8_t>(bytes[i]) << 16 | (two ? static_cast<uint8_t>(bytes[i + 1]) << 8 : 0);
    out += kDigits[v >> 18];
    out += kDigits[(v >> 12) & 63];
    out += two ? kDigits[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

bool same_string(const std::string& ours, const std::string& theirs) {
  if (ours == theirs) return true;
  // Binary: DuckDB escapes each byte outside printable ASCII as \xHH and keeps the others.
  if (theirs.rfind("\\x", 0) == 0) {
    std::string bytes;
    for (size_t i = 0; i < theirs.size();) {
      if (i + 4 <= theirs.size() && theirs.compare(i, 2, "\\x") == 0) {
        bytes += static_cast<char>(std::stoi(theirs.substr(i + 2, 2), nullptr, 16));
        i += 4;
      } else {
        bytes += theirs[i++];
      }
    }
    return base64(bytes) == ours;
  }
  // Timestamps: "YYYY-MM-DDTHH:MM:SS[.fraction][Z]" against "YYYY-MM-DD HH:MM:SS[.micros][+00]".
  if (ours.size() >= 19 && ours[10] == 'T') {
    std::string mine = ours;
    mine[10] = ' ';
    const bool utc = mine.back() == 'Z';
    if (utc) mine.pop_back();
    std::string fraction;
    if (mine.size() > 20 && mine[19] == '.') {
      fraction = mine.substr(20);
      mine.resize(19);
    }
    // Nanoseconds: DuckDB keeps them, or (timestamps with a time zone) cuts them to microseconds toward the
    // epoch, which after it is down and before it up.
    std::vector<std::string> fractions{fraction};
    if (fraction.size() == 9) {
      const int64_t micros = std::stoll(fraction) / 1000;
      fractions.push_back(fmt::format("{:06}", micros));
      if (micros + 1 < 1000000) fractions.push_back(fmt::format("{:06}", micros + 1));
    }
    for (std::string f : fractions) {
      while (!f.empty() && f.back() == '0') f.pop_back();
      if (mine + (f.empty() ? "" : "." + f) + (utc ? "+00" : "") == theirs) return true;
    }
    return false;
  }
  return false;
}

bool same_json(const nlohmann::json& ours, const nlohmann::json& theirs) {
  if (ours.is_number() && theirs.is_number()) {
    const double a = ours.get<double>(), b = theirs.get<double>();
    return a == b || std::abs(a - b) <= 1e-15 * std::abs(b);
  }
  if (ours.is_string() && theirs.is_string()) return same_string(ours.get<std::string>(), theirs.get<std::string>());
  if (ours.type() != theirs.type()) return false;
  if (ours.is_array()) {
    if (ours.size() != theirs.size()) return false;
    for (size_t i = 0; i < ours.size(); ++i) {
      if (!same_json(ours[i], theirs[i])) return false;
    }
    return true;
  }
  if (ours.is_object()) {
    if (ours.size() != theirs.size()) return false;
    for (auto it = ours.begin(); it != ours.end(); ++it) {
      if (!theirs.contains(it.key()) || !same_json(it.value(), theirs[it.key()])) return false;
    }
    return true;
  }
  return ours == theirs;
}

std::string unhex(const std::string& digits) {
  std::string bytes;
  for (size_t i = 0; i + 2 <= digits.size(); i += 2) bytes += static_cast<char>(std::stoi(digits.substr(i, 2), nullptr, 16));
  return bytes;
}

// How feedline's table and DuckDB's dump of the same file differ: "" when every row and cell agrees. Decimals
// wider than DuckDB's 38 digits, which DuckDB reads as DOUBLE, are compared as the nearest double.
std::string folder_mismatch(const Table& ours, const Dump& duck) {
  if (ours.columns.size() != duck.names.size()) {
    return fmt::format("{} columns, DuckDB {}", ours.columns.size(), duck.names.size());
  }
  if (static_cast<size_t>(ours.num_rows) != duck.rows.size()) {
    return fmt::format("{} rows, DuckDB {}", ours.num_rows, duck.rows.size());
  }
  for (int64_t r = 0; r < ours.num_rows; ++r) {
    const auto& row = duck.rows[static_cast<size_t>(r)];
    if (row.size() != ours.columns.size()) return fmt::format("row {}: DuckDB gives {} cells", r, row.size());
    for (size_t c = 0; c < ours.columns.size(); ++c) {
      const Column& col = ours.columns[c];
      const std::string mine = feedline::testing::cell(col, r), theirs = row[c];
      if (mine == theirs) continue;
      bool same = false;
      if (col.schema.logical.kind == LogicalKind::kVariant && mine == "s:6e756c6c" && theirs == "N") {
        same = true;  // a variant null: JSON null in feedline, SQL NULL in DuckDB
      } else if (col.schema.logical.kind == LogicalKind::kVariant && mine.rfind("s:", 0) == 0 && theirs.rfind("s:", 0) == 0) {
        const auto a = nlohmann::json::parse(unhex(mine.substr(2)), nullptr, false);
        const auto b = nlohmann::json::parse(unhex(theirs.substr(2)), nullptr, false);
        same = !a.is_discarded() && !b.is_discarded() && same_json(a, b);
      } else if ((mine.rfind("TSN:", 0) == 0 && theirs.rfind("TS:", 0) == 0) ||
                 (mine.rfind("TN:", 0) == 0 && theirs.rfind("T:", 0) == 0)) {
        // A nanosecond time or timestamp adjusted to UTC: DuckDB's TIME / TIMESTAMP WITH TIME ZONE holds
        // microseconds, the nanoseconds cut.
        const int64_t nanos = std::stoll(mine.substr(mine.find(':') + 1));
        const int64_t micros = std::stoll(theirs.substr(theirs.find(':') + 1));
        same = col.schema.logical.utc &&
               (nanos / 1000 == micros || (nanos - micros * 1000 >= 0 && nanos - micros * 1000 < 1000));
      } else if (col.schema.logical.kind == LogicalKind::kDecimal && !col.schema.is_list && theirs.rfind("d:", 0) == 0) {
        const uint64_t bits = std::stoull(theirs.substr(2), nullptr, 16);
        double d;
        std::memcpy(&d, &bits, sizeof d);
        const double v = col.value_as_double(r);
        same = v == d || std::abs(v - d) <= 1e-15 * std::abs(d);
      }
      if (!same) return fmt::format("column '{}' row {}: feedline {}, DuckDB {}", col.schema.name, r, mine, theirs);
    }
  }
  return "";
}

// VARIANT columns as DuckDB writes them: shredded into typed columns where a column's values agree (an object's
// fields, an array's elements), each other value in `value`. Every value of every type reads as DuckDB reads it
// back, the differences of form above aside (a variant null, DuckDB's SQL NULL among them, is JSON null here).
TEST(ParquetDuckDb, ReadsTheVariantsDuckDbWrites) {
  const std::string path = scratch_dir("duckdb-variants") + "/variants.parquet";
  const std::string select = R"(SELECT i,
    CASE i % 16
      WHEN 0 THEN NULL
      WHEN 1 THEN (i * 1000003)::BIGINT::VARIANT
      WHEN 2 THEN ('str ' || i || ' é')::VARIANT
      WHEN 3 THEN (i * 1.25)::DECIMAL(12,3)::VARIANT
      WHEN 4 THEN (i / 7.0)::DOUBLE::VARIANT
      WHEN 5 THEN (i % 3 = 0)::VARIANT
      WHEN 6 THEN (DATE '2020-02-29' + i::INTEGER)::VARIANT
      WHEN 7 THEN (TIMESTAMP '2024-01-02 03:04:05.123456' + to_seconds(i))::VARIANT
      WHEN 8 THEN (TIMESTAMPTZ '2024-01-02 03:04:05.123456+00' + to_seconds(i))::VARIANT
      WHEN 9 THEN ('\x00\x01'::BLOB || i::VARCHAR::BLOB)::VARIANT
      WHEN 10 THEN ('00000000-0000-0000-0000-' || lpad(i::VARCHAR, 12, '0'))::UUID::VARIANT
      WHEN 11 THEN {'k': i, 'nested': {'x': [i, i + 1]}}::VARIANT
      WHEN 12 THEN [i::VARIANT, 'a'::VARIANT, NULL]::VARIANT
      WHEN 13 THEN 'null'::JSON::VARIANT
      WHEN 14 THEN (i::FLOAT / 3)::FLOAT::VARIANT
      ELSE (i % 100)::TINYINT::VARIANT
    END AS mixed,
    CASE WHEN i % 9 = 4 THEN {'a': 'text' || i, 'b': i}::VARIANT
         WHEN i % 11 = 0 THEN NULL
         ELSE {'a': i, 'b': 'b' || i, 'c': {'d': DATE '2024-01-01' + (i % 30)::INTEGER}, 'e': [i, i * 2]}::VARIANT
    END AS objects,
    CASE WHEN i % 5 = 0 THEN ['x' || i]::VARIANT ELSE [i, i + 1, i + 2]::VARIANT END AS arrays
  FROM range(400) r(i))";
  std::string out;
  ASSERT_TRUE(run_duckdb({"copy", path, select}, &out));
  EXPECT_GE(std::stoi(out), 3) << "DuckDB wrote no shredded columns: the test no longer reads any";
  const Table t = read_table(path);
  ASSERT_EQ(t.num_rows, 400);
  for (const char* name : {"mixed", "objects", "arrays"}) {
    EXPECT_EQ(t.column(name).schema.logical.kind, LogicalKind::kVariant) << name;
  }
  ASSERT_TRUE(run_duckdb({"dump", path}, &out));
  EXPECT_EQ(folder_mismatch(t, parse_dump(out)), "");
  // A few values as JSON text, as `cat` prints them.
  EXPECT_EQ(value_text(t.column("objects"), 1), R"({"a":1,"b":"b1","c":{"d":"2024-01-02"},"e":[1,2]})");
  EXPECT_EQ(value_text(t.column("objects"), 4), R"({"a":"text4","b":4})");
  EXPECT_EQ(value_text(t.column("mixed"), 3), "3.750");
  EXPECT_EQ(value_text(t.column("mixed"), 12), R"([12,"a",null])");
}

// duckdb_parquet.mjs's `folder` output, file by file: each file's dump (or its "error<TAB>message" line).
std::map<std::string, std::string> dumps_by_file(const std::string& out) {
  std::map<std::string, std::string> dumps;
  std::string current;
  for (size_t pos = 0, end; pos < out.size(); pos = end + 1) {
    end = std::min(out.find('\n', pos), out.size());
    const std::string line = out.substr(pos, end - pos);
    if (line.rfind("file\t", 0) == 0) {
      current = line.substr(5);
      dumps[current];
    } else {
      dumps[current] += line + "\n";
    }
  }
  return dumps;
}

// The lines of a node script's listing: the paths of the files it wrote, a line each.
std::vector<std::string> listed_files(const std::string& listing) {
  std::vector<std::string> files;
  for (size_t pos = 0, end; (end = listing.find('\n', pos)) != std::string::npos; pos = end + 1) {
    files.push_back(listing.substr(pos, end - pos));
  }
  return files;
}

// The files another producer's script (tests/io/<script>: one table written under several writer setups) makes:
// `files` of them, each of 3000 rows and `columns` columns as feedline names them. Each reads as the same table, on
// one thread and on several, whole or a row group at a time, which feedline's writer writes back as it reads it;
// and as DuckDB reads it, every cell, but the files whose name holds `duckdb_refuses`: DuckDB refuses them, with a
// message that holds `because`.
void expect_producer_files_read_as_duckdb_reads_them(const std::string& script, size_t files_made, size_t columns,
                                                     const std::string& duckdb_refuses = "",
                                                     const std::string& because = "") {
  const std::string dir = scratch_dir(script);
  std::string listing;
  ASSERT_TRUE(feedline::testing::run_node_script(script, {dir}, &listing));
  const std::vector<std::string> files = listed_files(listing);
  ASSERT_EQ(files.size(), files_made) << listing;
  std::vector<Table> tables;
  nlohmann::json manifest = nlohmann::json::array();
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    ReadOptions one;
    one.num_threads = 1;
    tables.push_back(read_table(file, one));
    ASSERT_EQ(tables.back().num_rows, 3000);
    ASSERT_EQ(tables.back().columns.size(), columns);
    nlohmann::json names = nlohmann::json::array();
    for (const Column& c : tables.back().columns) names.push_back(c.schema.name);
    manifest.push_back({file, names});
    // Two threads, and a row group at a time, give the same table.
    ReadOptions two;
    two.num_threads = 2;
    feedline::testing::expect_tables_equal(tables.back(), read_table(file, two));
    const FileInfo info = read_file_info(file);
    Table by_groups;
    for (int g = 0; g < static_cast<int>(info.row_groups.size()); ++g) {
      ReadOptions group;
      group.row_groups = {g};
      append_rows(by_groups, read_table(file, group), 0, info.row_groups[static_cast<size_t>(g)].num_rows);
    }
    feedline::testing::expect_tables_equal(tables.back(), by_groups);
    // The same table as the first file's, written another way.
    feedline::testing::expect_tables_equal(tables.front(), tables.back());
  }
  // feedline's writer writes the table back as it reads it (structs and maps as their flattened columns, a VARIANT
  // as its JSON text annotated JSON).
  write_table(dir + "/written_back.parquet", tables.front());
  Table as_written = tables.front();
  for (Column& c : as_written.columns) {
    if (c.schema.logical.kind == feedline::LogicalKind::kVariant) c.schema.logical.kind = feedline::LogicalKind::kJson;
  }
  feedline::testing::expect_tables_equal(as_written, read_table(dir + "/written_back.parquet"));
  const std::string manifest_path = dir + "/manifest.json";
  std::ofstream(manifest_path) << manifest.dump();
  std::string out;
  ASSERT_TRUE(run_duckdb({"folder", manifest_path}, &out));
  std::map<std::string, std::string> theirs = dumps_by_file(out);
  for (size_t i = 0; i < files.size(); ++i) {
    SCOPED_TRACE(files[i]);
    ASSERT_TRUE(theirs.count(files[i])) << "DuckDB printed nothing for it";
    const std::string& dump = theirs[files[i]];
    if (!duckdb_refuses.empty() && files[i].find(duckdb_refuses) != std::string::npos) {
      EXPECT_EQ(dump.rfind("error\t", 0), 0u) << "DuckDB reads it now: compare it";
      EXPECT_NE(dump.find(because), std::string::npos) << dump;
      continue;
    }
    ASSERT_NE(dump.rfind("error\t", 0), 0u) << dump;
    EXPECT_EQ(folder_mismatch(tables[i], parse_dump(dump)), "");
  }
}

// arrow-rs's writer (tests/io/arrow_rs_parquet.mjs): most Arrow types under nine setups (codecs; data pages v1 and
// v2; dictionaries, PLAIN, DELTA_* and BYTE_STREAM_SPLIT encodings; dictionaries that fall back mid-chunk; small
// pages and row groups); 43 columns: 40, the struct's three fields and the map's two. DuckDB refuses
// BYTE_STREAM_SPLIT on integers and FIXED_LEN_BYTE_ARRAY, which the format allows since 2.11 and feedline reads.
TEST(ParquetProducers, FilesArrowRsWritesReadAsDuckDbReadsThem) {
  expect_producer_files_read_as_duckdb_reads_them("arrow_rs_parquet.mjs", 9, 43, "byte_stream_split_ints",
                                                  "BYTE_STREAM_SPLIT");
}

// Polars' own writer (tests/io/polars_parquet.mjs): Polars' types under seven setups (each codec it writes, small
// row groups and pages, statistics or not); 29 columns: 27, and the struct's three fields.
TEST(ParquetProducers, FilesPolarsWritesReadAsDuckDbReadsThem) {
  expect_producer_files_read_as_duckdb_reads_them("polars_parquet.mjs", 7, 29);
}

// hyparquet-writer (tests/io/hyparquet_parquet.mjs), a writer in plain JavaScript that writes data pages v2 only:
// its types under six setups (codecs; PLAIN, DELTA_* and BYTE_STREAM_SPLIT encodings; small pages and row groups;
// page indexes and Bloom filters; statistics or not); 32 columns: 26, the struct's two fields, the map's two, and two
// VARIANT columns, one shredded.
TEST(ParquetProducers, FilesHyparquetWritesReadAsDuckDbReadsThem) {
  expect_producer_files_read_as_duckdb_reads_them("hyparquet_parquet.mjs", 6, 32);
}

// parquet.js (tests/io/parquetjs_parquet.mjs), with the older layouts (bare repeated fields as lists, repeated groups,
// converted types alone, INT96 integers, INTERVAL) under five setups (data pages v1 and v2, each codec it writes,
// small pages and row groups, page indexes and Bloom filters); 29 columns: 25, the repeated group's two fields and the
// optional group's two.
TEST(ParquetProducers, FilesParquetJsWritesReadAsDuckDbReadsThem) {
  expect_producer_files_read_as_duckdb_reads_them("parquetjs_parquet.mjs", 5, 29);
}

// parquet.js also RLE-encodes integers when asked, with a bit width that the file does not hold: feedline refuses
// such a file, as DuckDB does, with a message that names the file, the column and the encoding.
TEST(ParquetProducers, RleEncodedIntegersAreRefusedAsDuckDbRefusesThem) {
  const std::string dir = scratch_dir("parquetjs-rle");
  std::string listing;
  ASSERT_TRUE(feedline::testing::run_node_script("parquetjs_parquet.mjs", {dir, "300", "rle"}, &listing));
  const std::vector<std::string> files = listed_files(listing);
  ASSERT_EQ(files.size(), 2u) << listing;
  nlohmann::json manifest = nlohmann::json::array();
  for (const std::string& file : files) manifest.push_back({file, {"id"}});
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    try {
      read_table(file);
      ADD_FAILURE() << "read";
    } catch (const InvalidFile& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(file), std::string::npos) << what;
      EXPECT_NE(what.find("column 'id'"), std::string::npos) << what;
      EXPECT_NE(what.find("RLE-encoded INT32 values: the format defines RLE values for BOOLEAN only"),
                std::string::npos) << what;
    }
  }
  const std::string manifest_path = dir + "/manifest.json";
  std::ofstream(manifest_path) << manifest.dump();
  std::string out;
  ASSERT_TRUE(run_duckdb({"folder", manifest_path}, &out));
  std::map<std::string, std::string> theirs = dumps_by_file(out);
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    EXPECT_EQ(theirs[file].rfind("error\t", 0), 0u) << "DuckDB reads it now: compare it";
    EXPECT_NE(theirs[file].find("RLE encoding is only supported for boolean data"), std::string::npos) << theirs[file];
  }
}

// Every cell of `actual` as `expected` prints it (names and rows too; nullability may differ).
void expect_same_cells(const Table& expected, const Table& actual) {
  ASSERT_EQ(actual.num_rows, expected.num_rows);
  ASSERT_EQ(actual.columns.size(), expected.columns.size());
  for (size_t c = 0; c < expected.columns.size(); ++c) {
    SCOPED_TRACE(expected.columns[c].schema.name);
    EXPECT_EQ(actual.columns[c].schema.name, expected.columns[c].schema.name);
    for (int64_t row = 0; row < expected.num_rows; ++row) {
      ASSERT_EQ(feedline::cell_text(actual.columns[c], row), feedline::cell_text(expected.columns[c], row)) << row;
    }
  }
}

// One table kept as shards of five writers (tests/io/mixed_shards.mjs: DuckDB, arrow-rs, Polars, hyparquet-writer,
// parquet.js), each annotating the same columns its own way, reads as one table with every cell of the whole table:
// at once on one thread or two, and a row group at a time.
TEST(ParquetProducers, ShardsOfFiveWritersReadAsOneTable) {
  const std::string dir = scratch_dir("mixed-shards");
  std::string listing;
  ASSERT_TRUE(feedline::testing::run_node_script("mixed_shards.mjs", {dir}, &listing));
  ASSERT_EQ(listed_files(listing).size(), 6u) << listing;
  const Table whole = read_table(dir + "/whole.parquet");
  ASSERT_EQ(whole.num_rows, 1000);
  ASSERT_EQ(whole.columns.size(), 7u);
  for (const int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    ReadOptions options;
    options.num_threads = threads;
    expect_same_cells(whole, read_dataset(dir + "/shards", options));
  }
  const DatasetReader dataset(dir + "/shards");
  ASSERT_EQ(dataset.num_files(), 5u);
  Table streamed;
  for (const DatasetReader::RowGroup& group : dataset.row_groups()) {
    ReadOptions one;
    one.row_groups = {group.row_group};
    append_rows(streamed, dataset.read_file(group.file, one), 0, group.num_rows);
  }
  expect_same_cells(whole, streamed);
}

// Every Parquet file of DuckDB's test folder and of the Parquet test corpus that DuckDB reads, feedline reads, with
// every row and cell equal; every file DuckDB refuses, feedline refuses too, with a message that names the file;
// the differences above, and only they, hold.
TEST(DuckDbFolder, EveryFileReadsAsDuckDbReadsIt) {
  const std::string shared = feedline::testing::test_data_dir();
  std::vector<std::string> files;
  for (const char* folder : {"duckdb-parquet-testing", "parquet-testing"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(shared + "/" + folder)) {
      const std::string ext = entry.path().extension().string();
      if (entry.is_regular_file() && (ext == ".parquet" || ext == ".PARQUET")) files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 300u) << shared;
  const auto difference = [&](const std::string& file) -> const FolderDifference* {
    const std::string rel = std::filesystem::relative(file, shared).string();
    for (const FolderDifference& d : kFolderDifferences) {
      if (rel == d.file) return &d;
    }
    return nullptr;
  };

  std::vector<std::optional<Table>> tables(files.size());
  std::vector<std::string> errors(files.size());
  nlohmann::json manifest = nlohmann::json::array();
  for (size_t i = 0; i < files.size(); ++i) {
    nlohmann::json columns = nullptr;
    try {
      tables[i] = read_table(files[i], feedline::testing::sweep_read_options());
      columns = nlohmann::json::array();
      for (const Column& c : tables[i]->columns) columns.push_back(c.schema.name);
    } catch (const Error& e) {
      errors[i] = e.what();
    }
    const FolderDifference* diff = difference(files[i]);
    if (diff == nullptr || diff->ask_duckdb) manifest.push_back({files[i], columns});
  }
  const std::string manifest_path = scratch_dir("duckdb-folder") + "/manifest.json";
  std::ofstream(manifest_path) << manifest.dump();
  std::string out;
  ASSERT_TRUE(run_duckdb({"folder", manifest_path}, &out));

  std::map<std::string, std::string> theirs = dumps_by_file(out);
  size_t compared = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& file = files[i];
    SCOPED_TRACE(file);
    const FolderDifference* diff = difference(file);
    if (diff != nullptr && !diff->ask_duckdb) {
      EXPECT_FALSE(tables[i].has_value()) << "listed as refused (" << diff->why << "), but feedline reads it";
      continue;
    }
    ASSERT_TRUE(theirs.count(file)) << "DuckDB printed nothing for it";
    const std::string& dump = theirs[file];
    const bool duck_reads = dump.rfind("error\t", 0) != 0;
    std::string mismatch;
    if (tables[i] && duck_reads) {
      mismatch = folder_mismatch(*tables[i], parse_dump(dump));
      ++compared;
    } else if (tables[i]) {
      mismatch = "DuckDB refuses it (" + dump.substr(6, dump.size() - 7) + "), feedline reads it";
    } else if (duck_reads) {
      mismatch = "feedline refuses it (" + errors[i] + "), DuckDB reads it";
    } else {
      EXPECT_NE(errors[i].find(file), std::string::npos) << "the message does not name the file: " << errors[i];
    }
    if (diff == nullptr) {
      EXPECT_EQ(mismatch, "");
    } else {
      EXPECT_NE(mismatch, "") << "listed as a difference (" << diff->why << "), but both agree";
    }
  }
  EXPECT_GT(compared, 250u);
}

}  // namespace
}  // namespace feedline::parquet
