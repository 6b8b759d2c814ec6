// Interop with DuckDB (the npm package @duckdb/node-api, driven through tests/io/duckdb_parquet.mjs):
// files our writer makes must read in DuckDB with every value equal, and files DuckDB writes must read in ours.
// A missing node or package is a failure, not a skip: scripts/install-deps.sh installs both.
// Layouts (pandas, lists, structs and maps, row groups, statistics) are in parquet_duckdb_layouts_test.cpp, DuckDB's
// test folder in parquet_duckdb_folder_test.cpp, other writers' files in parquet_producers_test.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/parquet.h"
#include "io/parquet_duckdb_support.h"
#include "io/parquet_test_support.h"
#include "io/value_text.h"
#include "test_paths.h"

namespace feedline::parquet {
namespace {

using feedline::testing::Dump;
using feedline::testing::expect_same_values;
using feedline::testing::folder_mismatch;
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

}  // namespace
}  // namespace feedline::parquet
