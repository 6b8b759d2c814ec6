// Interop with DuckDB (the npm package @duckdb/node-api, driven through tests/io/duckdb_parquet.mjs):
// files our writer makes must read in DuckDB with every value equal, and files DuckDB writes must read in ours.
// A missing node or package is a failure, not a skip: scripts/install-deps.sh installs both.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "feedline/error.h"
#include "feedline/parquet.h"
#include "io/parquet_duckdb_support.h"
#include "io/parquet_test_support.h"
#include "test_paths.h"

namespace feedline::parquet {
namespace {

using feedline::testing::Dump;
using feedline::testing::expect_same_values;
using feedline::testing::parse_dump;
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

}  // namespace
}  // namespace feedline::parquet
