// Files other producers write (arrow-rs, Polars, hyparquet-writer, parquet.js, through the node scripts of
// tests/io), read alike whatever the threads or row groups, written back by ours, and read as DuckDB reads them;
// shards of five writers read as one table. A missing node or package is a failure, not a skip.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/parquet.h"
#include "feedline/io/parquet_dataset.h"
#include "io/parquet_duckdb_support.h"
#include "io/parquet_test_support.h"
#include "io/value_text.h"
#include "test_paths.h"

namespace feedline::parquet {
namespace {

using feedline::testing::dumps_by_file;
using feedline::testing::folder_mismatch;
using feedline::testing::parse_dump;
using feedline::testing::run_duckdb;
using feedline::testing::scratch_dir;

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

}  // namespace
}  // namespace feedline::parquet
