// DuckDB's test folder (tests/data/duckdb-parquet-testing) and the Parquet test corpus against DuckDB: chosen files
// (UUIDs, lenient pages, wide decimals, enums), then every file, read as DuckDB reads it or refused as DuckDB
// refuses it, but the differences listed here on purpose. A missing node or package is a failure, not a skip.
#include <gtest/gtest.h>

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
#include "io/inspect.h"
#include "io/parquet_duckdb_support.h"
#include "io/parquet_test_support.h"
#include "io/value_text.h"
#include "test_paths.h"

namespace feedline::parquet {
namespace {

using feedline::testing::Dump;
using feedline::testing::dumps_by_file;
using feedline::testing::expect_same_values;
using feedline::testing::folder_mismatch;
using feedline::testing::parse_dump;
using feedline::testing::run_duckdb;
using feedline::testing::scratch_dir;

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
