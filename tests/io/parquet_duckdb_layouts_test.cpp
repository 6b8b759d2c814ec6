// Interop with DuckDB (tests/io/duckdb_parquet.mjs), layout by layout: what pandas writes, list columns and lists
// of lists, chosen row groups, struct fields and lists of structs and maps, and filters on our statistics that
// count what the values hold. A missing node or package is a failure, not a skip.
#include <gtest/gtest.h>

#include <fmt/core.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/parquet.h"
#include "io/parquet_duckdb_support.h"
#include "io/parquet_test_support.h"
#include "test_paths.h"

namespace feedline::parquet {
namespace {

using feedline::testing::Dump;
using feedline::testing::expect_same_values;
using feedline::testing::parse_dump;
using feedline::testing::run_duckdb;
using feedline::testing::scratch_dir;

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

}  // namespace
}  // namespace feedline::parquet
