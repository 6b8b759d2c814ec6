// The apache/parquet-testing corpus, kept in tests/data/parquet-testing: every file either reads or
// throws a feedline::Error (never crashes); files within our scope read with the values DuckDB sees or that
// the corpus documents, and write back through our writer as the same table; files needing features outside it
// give Unsupported / InvalidFile.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/parquet.h"
#include "io/parquet/reader_internal.h"
#include "io/parquet_duckdb_support.h"
#include "io/value_text.h"
#include "io/parquet_test_support.h"
#include "test_paths.h"

namespace feedline::parquet {
namespace {

namespace fs = std::filesystem;
using feedline::testing::expect_same_values;
using feedline::testing::parse_dump;
using feedline::testing::parquet_testing_dir;
using feedline::testing::run_duckdb;

enum class Outcome { kRead, kUnsupported, kInvalid };

const char* name(Outcome o) {
  switch (o) {
    case Outcome::kRead: return "reads";
    case Outcome::kUnsupported: return "Unsupported";
    case Outcome::kInvalid: return "InvalidFile";
  }
  return "?";
}

struct Result {
  Outcome outcome;
  std::string message;
};

// Reads the file; any exception other than feedline's Unsupported/InvalidFile fails the test.
using feedline::testing::sweep_read_options;

Result try_read(const std::string& path, const ReadOptions& options = sweep_read_options()) {
  try {
    read_table(path, options);
    return {Outcome::kRead, ""};
  } catch (const Unsupported& e) {
    return {Outcome::kUnsupported, e.what()};
  } catch (const InvalidFile& e) {
    return {Outcome::kInvalid, e.what()};
  } catch (const Error& e) {
    ADD_FAILURE() << path << ": unexpected feedline::Error kind: " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << path << ": non-feedline exception: " << e.what();
  }
  return {Outcome::kInvalid, "?"};
}

std::vector<std::string> corpus_files(const std::string& sub) {
  std::vector<std::string> files;
  const fs::path dir = fs::path(parquet_testing_dir()) / sub;
  if (!fs::is_directory(dir)) return files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file()) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string data_file(const std::string& name) { return parquet_testing_dir() + "/data/" + name; }

TEST(ParquetCorpus, EveryFileReadsOrThrowsFeedlineError) {
  const auto data = corpus_files("data");
  const auto bad = corpus_files("bad_data");
  ASSERT_GT(data.size(), 40u) << "parquet-testing corpus missing at " << parquet_testing_dir();
  ASSERT_GT(bad.size(), 3u);
  std::map<Outcome, int> counts;
  for (const auto* files : {&data, &bad}) {
    for (const std::string& path : *files) {
      SCOPED_TRACE(path);
      const Result r = try_read(path);
      ++counts[r.outcome];
      if (r.outcome != Outcome::kRead) {
        // Messages name the file.
        EXPECT_NE(r.message.find(fs::path(path).filename().string()), std::string::npos) << r.message;
      }
      std::cout << "[corpus] " << fs::path(path).parent_path().filename().string() << "/"
                << fs::path(path).filename().string() << ": " << name(r.outcome)
                << (r.message.empty() ? "" : " (" + r.message.substr(r.message.find(": ") + 2) + ")") << "\n";
      try {
        read_file_info(path);
      } catch (const Error&) {
      } catch (const std::exception& e) {
        ADD_FAILURE() << "read_file_info: non-feedline exception: " << e.what();
      }
    }
  }
  EXPECT_GE(counts[Outcome::kRead], 10);
}

// FIXED_LEN_BYTE_ARRAY chunks with their pages decoded apart (forced, on three threads), in every file of the
// corpus and of DuckDB's test folder that has such a column and reads: the table a read on one thread gives.
// Their values go straight to their rows: PLAIN, dictionary and DELTA_BYTE_ARRAY pages are among them
// (BYTE_STREAM_SPLIT ones, which no file here has, are in the hostile tests).
TEST(ParquetCorpus, FixedLengthPagesDecodedApartReadAsOnOneThread) {
  std::vector<std::string> files;
  for (const std::string folder : {parquet_testing_dir() + "/data", feedline::testing::test_data_dir() +
                                                                        "/duckdb-parquet-testing"}) {
    if (!fs::is_directory(folder)) continue;
    for (const auto& e : fs::recursive_directory_iterator(folder)) {
      if (e.is_regular_file() && e.path().extension() == ".parquet") files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  std::set<std::string> encodings;
  int compared = 0;
  for (const std::string& path : files) {
    FileInfo info;
    Table serial;
    ReadOptions one = sweep_read_options();
    one.num_threads = 1;
    try {
      info = read_file_info(path);
      const bool fixed = std::any_of(info.schema.begin(), info.schema.end(), [](const ColumnSchema& c) {
        return c.type == PhysicalType::kFixedLenByteArray;
      });
      if (!fixed) continue;
      serial = read_table(path, one);
    } catch (const Error&) {
      continue;  // (what such files throw is checked elsewhere)
    }
    SCOPED_TRACE(path);
    for (const RowGroupInfo& rg : info.row_groups) {
      for (size_t c = 0; c < rg.columns.size() && c < info.schema.size(); ++c) {
        if (info.schema[c].type != PhysicalType::kFixedLenByteArray) continue;
        encodings.insert(rg.columns[c].encodings.begin(), rg.columns[c].encodings.end());
      }
    }
    ReadOptions three = one;
    three.num_threads = 3;
    three.page_threads = 3;
    feedline::testing::expect_tables_equal(serial, read_table(path, three));
    ++compared;
  }
  EXPECT_GE(compared, 10);
  for (const char* e : {"PLAIN", "RLE_DICTIONARY", "DELTA_BYTE_ARRAY"}) {
    EXPECT_EQ(encodings.count(e), 1u) << e;
  }
}

// Every file that reads, written by our writer and read back, gives the table it read: the writer writes
// whatever the reader reads (every type, annotation, nesting of lists; structs as their flattened fields), in
// one row group with the default options, and cut into row groups of 7 rows and pages of about 100 bytes
// without a dictionary.
TEST(ParquetCorpus, EveryReadableFileWritesBackAsRead) {
  const std::string out = feedline::testing::scratch_dir("corpus-write-back") + "/back.parquet";
  int written = 0;
  for (const std::string& path : corpus_files("data")) {
    if (try_read(path).outcome != Outcome::kRead) continue;
    SCOPED_TRACE(path);
    const Table table = read_table(path, sweep_read_options());
    for (const bool small : {false, true}) {
      SCOPED_TRACE(small ? "row groups of 7 rows, small pages, PLAIN, SNAPPY" : "default options");
      WriteOptions w;
      if (small) {
        w.row_group_rows = 7;
        w.page_bytes = 100;
        w.dictionary = false;
        w.codec = Codec::kSnappy;
      }
      write_table(out, table, w);
      feedline::testing::expect_tables_equal(table, read_table(out));
    }
    ++written;
  }
  EXPECT_GE(written, 40);
}

TEST(ParquetCorpus, ExpectedOutcomes) {
  const std::map<std::string, Outcome> expected = {
      {"binary.parquet", Outcome::kRead},
      {"binary_truncated_min_max.parquet", Outcome::kRead},
      {"column_chunk_key_value_metadata.parquet", Outcome::kRead},
      {"data_index_bloom_encoding_stats.parquet", Outcome::kRead},
      {"datapage_v1-snappy-compressed-checksum.parquet", Outcome::kRead},
      {"datapage_v1-uncompressed-checksum.parquet", Outcome::kRead},
      {"dict-page-offset-zero.parquet", Outcome::kRead},
      {"nation.dict-malformed.parquet", Outcome::kRead},  // parquet-mr 1.2.8 chunk size bug, compensated
      {"overflow_i16_page_cnt.parquet", Outcome::kRead},
      {"sort_columns.parquet", Outcome::kRead},
      {"nan_in_stats.parquet", Outcome::kRead},
      {"fixed_length_byte_array.parquet", Outcome::kRead},  // FIXED_LEN_BYTE_ARRAY(4), nullable
      // DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT, data page v2.
      {"delta_binary_packed.parquet", Outcome::kRead},
      {"delta_byte_array.parquet", Outcome::kRead},
      {"delta_encoding_optional_column.parquet", Outcome::kRead},
      {"delta_encoding_required_column.parquet", Outcome::kRead},
      {"delta_length_byte_array.parquet", Outcome::kRead},
      {"byte_stream_split.zstd.parquet", Outcome::kRead},
      {"page_v2_empty_compressed.parquet", Outcome::kRead},
      // INT96 values Spark wrote past the nanosecond range, one of them (year 290000) wrapped by Spark's writer.
      {"int96_from_spark.parquet", Outcome::kRead},
      // INT96 timestamps, DECIMAL (INT32, INT64, FIXED_LEN_BYTE_ARRAY, BYTE_ARRAY), FLOAT16.
      {"alltypes_plain.parquet", Outcome::kRead},
      {"int32_decimal.parquet", Outcome::kRead},
      {"int64_decimal.parquet", Outcome::kRead},
      {"fixed_length_decimal.parquet", Outcome::kRead},
      {"byte_array_decimal.parquet", Outcome::kRead},
      {"float16_nonzeros_and_nans.parquet", Outcome::kRead},
      {"hadoop_lz4_compressed.parquet", Outcome::kRead},
      {"hadoop_lz4_compressed_larger.parquet", Outcome::kRead},
      {"non_hadoop_lz4_compressed.parquet", Outcome::kRead},
      {"lz4_raw_compressed.parquet", Outcome::kRead},
      // Lists of primitives: three-level LIST (nullable lists and elements, empty lists), bare repeated
      // primitives; data page v2 with repetition levels.
      {"datapage_v2.snappy.parquet", Outcome::kRead},
      {"list_columns.parquet", Outcome::kRead},
      {"null_list.parquet", Outcome::kRead},
      // Lists of lists: three levels of nullable three-level LISTs; the legacy two-level form whose repeated
      // group `array` is itself a LIST.
      {"nested_lists.snappy.parquet", Outcome::kRead},
      {"old_list_structure.parquet", Outcome::kRead},
      // Lists inside a struct (bare repeated primitives), beside two lists.
      {"repeated_primitive_no_list.parquet", Outcome::kRead},
      // Maps (read as lists of their keys and values, `m.key` and `m.value`), lists of maps and of structs (lists of
      // each field), and repeated groups (a list of structs each), at every depth.
      {"nested_maps.snappy.parquet", Outcome::kRead},
      {"map_no_value.parquet", Outcome::kRead},
      {"incorrect_map_schema.parquet", Outcome::kRead},
      {"nonnullable.impala.parquet", Outcome::kRead},
      {"nullable.impala.parquet", Outcome::kRead},
      {"repeated_no_annotation.parquet", Outcome::kRead},
      // A map whose keys' one page takes 1 GiB of memory (the chunk holds over 2 GB of strings): past the sweep's
      // limit of 1 GiB (ReadsALargeStringMapWithinTheMemoryLimit reads it under the default limit's kind).
      {"large_string_map.brotli.parquet", Outcome::kInvalid},
      // Structs of primitives: flat columns named by their dotted path.
      {"nested_structs.rust.parquet", Outcome::kRead},
      // A logical type of an unknown id: read as its physical type (BYTE_ARRAY), with a note.
      {"unknown-logical-type.parquet", Outcome::kRead},
      // Corrupt page data caught by the page CRC.
      {"datapage_v1-corrupt-checksum.parquet", Outcome::kInvalid},
      {"rle-dict-uncompressed-corrupt-checksum.parquet", Outcome::kInvalid},
  };
  for (const auto& [file, outcome] : expected) {
    const Result r = try_read(data_file(file));
    EXPECT_STREQ(name(r.outcome), name(outcome)) << file << ": " << r.message;
  }
  const Table unknown = read_table(data_file("unknown-logical-type.parquet"));
  EXPECT_EQ(std::string(unknown.column("column with unknown type").byte_arrays().at(0)), "unknown string 1");
  const FileInfo unknown_info = read_file_info(data_file("unknown-logical-type.parquet"));
  ASSERT_EQ(unknown_info.notes.size(), 1u);
  EXPECT_EQ(unknown_info.notes[0].second, "logical type with unknown id 2555: read as BYTE_ARRAY");
  const Result crc = try_read(data_file("datapage_v1-corrupt-checksum.parquet"));
  EXPECT_NE(crc.message.find("checksum"), std::string::npos) << crc.message;
  EXPECT_NE(crc.message.find("column 'a'"), std::string::npos) << crc.message;
  // A refused file names the column and the reason.
  for (const auto& [file, needle] : std::vector<std::pair<std::string, std::string>>{
           {"large_string_map.brotli.parquet", "column 'arr.key', row group 0, page at offset 4: page of 1073741828 "
                                               "bytes exceeds the read's memory limit of 1073741824 bytes"}}) {
    const Result r = try_read(data_file(file));
    EXPECT_NE(r.message.find(needle), std::string::npos) << r.message;
  }
}

// The process's peak resident memory, started again from what it holds now (Linux 4.0: clear_refs 5 resets
// VmHWM); false where it cannot be.
bool restart_peak_memory() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return clear.good();
}

// A figure of /proc/self/status in bytes ("VmRSS:", "VmHWM:"), -1 when absent.
int64_t status_bytes(const std::string& key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.compare(0, key.size(), key) == 0) return std::stoll(line.substr(key.size())) * 1024;
  }
  return -1;
}

// A file of 4 KB whose dictionary page and one data page each decompress to 1 GiB (a string of a GiB of 'a's),
// and whose two rows are maps of that key to 1 (2 GB of strings): read under the default limit's rule (here
// stated, so that the test does not depend on the machine's memory), taking at most 1.5 times the strings' size
// beyond what the process held before (the dictionary decoded where it is decompressed and given back after its
// last page, the PLAIN page decompressed into the column's bytes, which are sized from the page headers);
// refused under a limit below its page.
TEST(ParquetCorpus, ReadsALargeStringMapUnderTheDefaultLimit) {
  const std::string path = data_file("large_string_map.brotli.parquet");
  ReadOptions r;
  r.max_output_bytes = int64_t{6} << 30;
#if defined(__SANITIZE_ADDRESS__)
  const bool measured = false;  // (the sanitizer's allocator keeps freed memory, and its shadow grows)
#else
  const bool measured = restart_peak_memory() && status_bytes("VmRSS:") > 0;
#endif
  const int64_t held_before = measured ? status_bytes("VmRSS:") : 0;
  Table t = read_table(path, r);
  if (measured) {
    const int64_t decoded = static_cast<int64_t>(t.column("arr.key").byte_arrays().bytes.size());
    const int64_t peak = status_bytes("VmHWM:") - held_before;
    EXPECT_LE(peak, decoded + decoded / 2) << "peak " << peak << " bytes for " << decoded << " bytes of strings";
  }
  ASSERT_EQ(t.num_rows, 2);
  const Column& keys = t.column("arr.key");
  const Column& values = t.column("arr.value");
  EXPECT_EQ(keys.list_offsets, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(values.list_offsets, (std::vector<int64_t>{0, 1, 2}));
  ASSERT_EQ(keys.byte_arrays().size(), 2);
  for (int64_t i = 0; i < 2; ++i) {
    const std::string_view key = keys.byte_arrays().at(i);
    EXPECT_EQ(key.size(), size_t{1} << 30);
    EXPECT_EQ(key.find_first_not_of('a'), std::string_view::npos);
  }
  EXPECT_EQ(values.as<int32_t>(), (std::vector<int32_t>{1, 1}));
  t = Table();
  r.max_output_bytes = (int64_t{1} << 30) - 1;
  const Result refused = try_read(path, r);
  EXPECT_EQ(refused.outcome, Outcome::kInvalid);
  EXPECT_NE(refused.message.find("page of 1073741828 bytes exceeds the read's memory limit of 1073741823 bytes"),
            std::string::npos)
      << refused.message;
  r.max_output_bytes = -1;
  EXPECT_THROW(read_table(path, r), InvalidArgument);
}

// Maps, lists of structs and repeated groups, by value where the corpus documents them (DuckDB agrees on every
// file but map_no_value: ReadableFilesMatchDuckDb).
TEST(ParquetCorpus, MapsAndListsOfStructsKnownValues) {
  using feedline::testing::cell;
  // "MAP with null values, MAP with INT32 keys and no values, and LIST<INT32> column with same values as the MAP
  // keys": each map is a list of its keys (and one of its values), as long as the list.
  const Table m = read_table(data_file("map_no_value.parquet"));
  ASSERT_EQ(m.num_rows, 3);
  std::vector<std::string> names;
  for (const Column& c : m.columns) names.push_back(c.schema.name);
  EXPECT_EQ(names, (std::vector<std::string>{"my_map.key", "my_map.value", "my_map_no_v.key", "my_list"}));
  for (int64_t r = 0; r < 3; ++r) {
    const std::string keys = cell(m.column("my_list"), r);
    EXPECT_EQ(keys, "L[" + std::to_string(3 * r + 1) + "," + std::to_string(3 * r + 2) + "," +
                        std::to_string(3 * r + 3) + "]");
    EXPECT_EQ(cell(m.column("my_map.key"), r), keys);
    EXPECT_EQ(cell(m.column("my_map_no_v.key"), r), keys);
    EXPECT_EQ(cell(m.column("my_map.value"), r), "L[N,N,N]");
  }
  EXPECT_FALSE(m.column("my_map.key").schema.element_nullable);
  EXPECT_TRUE(m.column("my_map.value").schema.element_nullable);

  // A repeated group of two fields in an optional struct: a list of each field, null where the struct is.
  const Table phones = read_table(data_file("repeated_no_annotation.parquet"));
  const Column& number = phones.column("phoneNumbers.phone.number");
  const Column& kind = phones.column("phoneNumbers.phone.kind");
  EXPECT_TRUE(number.schema.nullable);
  EXPECT_FALSE(number.schema.element_nullable);
  EXPECT_TRUE(kind.schema.element_nullable);
  ASSERT_EQ(phones.num_rows, 6);
  const std::vector<std::string> numbers = {"N", "N", "L[]", "L[5555555555]", "L[1111111111]",
                                            "L[1111111111,2222222222,3333333333]"};
  // "home", "mobile" as hex.
  const std::vector<std::string> kinds = {"N", "N", "L[]", "L[N]", "L[s:686f6d65]", "L[s:686f6d65,N,s:6d6f62696c65]"};
  for (int64_t r = 0; r < 6; ++r) {
    EXPECT_EQ(cell(number, r), numbers[static_cast<size_t>(r)]) << r;
    EXPECT_EQ(cell(kind, r), kinds[static_cast<size_t>(r)]) << r;
  }

  // A map of string keys to maps of INT32 to BOOLEAN: the inner map's keys and values are lists of lists.
  const Table nested = read_table(data_file("nested_maps.snappy.parquet"));
  EXPECT_EQ(nested.column("a.value.key").schema.list_depth(), 2);
  EXPECT_EQ(cell(nested.column("a.key"), 0), "L[s:61]");
  EXPECT_EQ(cell(nested.column("a.value.key"), 0), "L[L[1,2]]");
  EXPECT_EQ(cell(nested.column("a.value.value"), 0), "L[L[1,0]]");
  EXPECT_EQ(cell(nested.column("a.value.key"), 2), "L[N]");  // a null inner map
  EXPECT_EQ(cell(nested.column("a.value.key"), 3), "L[L[]]");
}

// Lists of lists, by value where the corpus documents them (DuckDB agrees: ReadableFilesMatchDuckDb).
TEST(ParquetCorpus, ListsOfListsKnownValues) {
  using feedline::testing::cell;
  const Table nested = read_table(data_file("nested_lists.snappy.parquet"));
  const Column& a = nested.column("a");
  EXPECT_EQ(a.schema.list_depth(), 3);
  EXPECT_TRUE(a.schema.nullable);
  EXPECT_EQ(a.schema.inner_list_nullable, (std::vector<bool>{true, true}));
  EXPECT_TRUE(a.schema.element_nullable);
  EXPECT_TRUE(a.schema.is_string);
  ASSERT_EQ(nested.num_rows, 3);
  // [[["a","b"],["c"]],[null,["d"]]]: strings as hex.
  EXPECT_EQ(cell(a, 0), "L[L[L[s:61,s:62],L[s:63]],L[N,L[s:64]]]");
  EXPECT_EQ(cell(a, 2), "L[L[L[s:61,s:62],L[s:63,s:64],L[s:65]],L[N,L[s:66]]]");
  EXPECT_EQ(a.list_offsets, (std::vector<int64_t>{0, 2, 4, 6}));
  ASSERT_EQ(a.inner_lists.size(), 2u);
  EXPECT_EQ(a.inner_lists[0].offsets, (std::vector<int64_t>{0, 2, 4, 6, 8, 11, 13}));
  EXPECT_TRUE(a.inner_lists[0].validity.empty());
  EXPECT_EQ(a.inner_lists[1].validity, (std::vector<uint8_t>{1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1}));

  // The legacy two-level form, required at every level.
  const Table old = read_table(data_file("old_list_structure.parquet"));
  EXPECT_EQ(old.column("a").schema.list_depth(), 2);
  EXPECT_FALSE(old.column("a").schema.nullable);
  EXPECT_EQ(old.column("a").schema.inner_list_nullable, (std::vector<bool>{false}));
  EXPECT_EQ(cell(old.column("a"), 0), "L[L[1,2],L[3,4]]");

  // Impala's nullable lists of nullable lists of nullable INT32: nulls and empty lists at every level.
  ReadOptions r;
  r.columns = {"id", "int_array_Array"};
  const Table impala = read_table(data_file("nullable.impala.parquet"), r);
  const Column& ia = impala.column("int_array_Array");
  const std::vector<std::string> want = {"L[L[1,2],L[3,4]]", "L[L[N,1,2,N],L[3,N,4],L[],N]", "L[N]", "L[]", "N", "N",
                                         "L[N,L[5,6]]"};
  ASSERT_EQ(impala.num_rows, static_cast<int64_t>(want.size()));
  for (int64_t row = 0; row < impala.num_rows; ++row) EXPECT_EQ(cell(ia, row), want[static_cast<size_t>(row)]) << row;
}

// Every column of alltypes_* except the INT96 timestamp.
const std::vector<std::string> kAllTypesColumns = {"id", "bool_col", "tinyint_col", "smallint_col", "int_col",
                                                   "bigint_col", "float_col", "double_col", "date_string_col",
                                                   "string_col"};

TEST(ParquetCorpus, AllTypesPlainKnownValues) {
  ReadOptions r;
  r.columns = kAllTypesColumns;
  const Table t = read_table(data_file("alltypes_plain.parquet"), r);
  ASSERT_EQ(t.num_rows, 8);
  EXPECT_EQ(t.column("id").as<int32_t>(), (std::vector<int32_t>{4, 5, 6, 7, 2, 3, 0, 1}));
  const auto& ids = t.column("id").as<int32_t>();
  for (int64_t i = 0; i < t.num_rows; ++i) {
    const int32_t odd = ids[i] % 2;
    EXPECT_EQ(t.column("bool_col").as<uint8_t>()[i], odd ? 0 : 1);
    EXPECT_EQ(t.column("tinyint_col").as<int32_t>()[i], odd);
    EXPECT_EQ(t.column("int_col").as<int32_t>()[i], odd);
    EXPECT_EQ(t.column("bigint_col").as<int64_t>()[i], odd * 10);
    EXPECT_EQ(t.column("float_col").as<float>()[i], odd * 1.1f);
    EXPECT_EQ(t.column("double_col").as<double>()[i], odd * 10.1);
    EXPECT_EQ(t.column("string_col").byte_arrays().at(i), odd ? "1" : "0");
  }
  EXPECT_EQ(t.column("date_string_col").byte_arrays().at(0), "03/01/09");
  EXPECT_TRUE(t.column("id").schema.nullable);
  EXPECT_TRUE(t.column("id").validity.empty());  // no nulls

  // INT96 timestamps become INT64 microseconds: row 0 (id 4) is 2009-03-01 00:00:00, row 1 a minute later.
  ReadOptions with_timestamp;
  with_timestamp.columns = {"id", "timestamp_col"};
  const Table ts = read_table(data_file("alltypes_plain.parquet"), with_timestamp);
  const Column& col = ts.column("timestamp_col");
  EXPECT_EQ(col.schema.type, PhysicalType::kInt64);
  EXPECT_EQ(col.schema.logical.kind, LogicalKind::kTimestamp);
  EXPECT_EQ(col.schema.logical.unit, TimeUnit::kMicros);
  EXPECT_FALSE(col.schema.logical.utc);
  EXPECT_EQ(col.as<int64_t>()[0], int64_t{1235865600} * 1000000);
  EXPECT_EQ(col.as<int64_t>()[1], int64_t{1235865660} * 1000000);

  // Spark's INT96 values past the range of 64-bit nanoseconds read as the microseconds the corpus documents
  // (int96_from_spark.md). The last, year 290000, overflowed Spark's 64-bit Julian microseconds when written (its
  // Julian day is -105862232, before 226000 BC); reading wraps back as Spark does. DuckDB differs on that row
  // only (DuckDbFolder's list of differences).
  const Table spark = read_table(data_file("int96_from_spark.parquet"));
  const Column& a = spark.column("a");
  EXPECT_EQ(a.schema.logical.kind, LogicalKind::kTimestamp);
  EXPECT_EQ(a.schema.logical.unit, TimeUnit::kMicros);
  const std::vector<int64_t> documented = {1704141296123456, 1704070800000000, 253402225200000000,
                                           1735599600000000, 0, 9089380393200000000};
  ASSERT_EQ(spark.num_rows, 6);
  for (int64_t r = 0; r < 6; ++r) {
    EXPECT_EQ(a.is_null(r), r == 4) << r;
    if (r != 4) EXPECT_EQ(a.as<int64_t>()[static_cast<size_t>(r)], documented[static_cast<size_t>(r)]) << r;
  }
  EXPECT_EQ(value_text(a, 5), "290000-12-30T23:00:00.000000");
}

// The lists inside repeated_primitive_no_list's struct `group_of_lists` hold what its top-level lists hold (the
// file was written so), bare repeated primitives at both places.
TEST(ParquetCorpus, ListsInsideAStructKnownValues) {
  using feedline::testing::cell;
  const Table t = read_table(data_file("repeated_primitive_no_list.parquet"));
  ASSERT_EQ(t.num_rows, 4);
  using Names = std::pair<std::string, std::string>;
  for (const auto& [top, inner] : {Names{"Int32_list", "group_of_lists.Int32_list_in_group"},
                                   Names{"String_list", "group_of_lists.String_list_in_group"}}) {
    const Column& a = t.column(top);
    const Column& b = t.column(inner);
    ASSERT_TRUE(b.schema.is_list) << inner;
    EXPECT_FALSE(b.schema.nullable) << inner;  // a required struct of required lists
    for (int64_t r = 0; r < 4; ++r) EXPECT_EQ(cell(b, r), cell(a, r)) << inner << " row " << r;
  }
  EXPECT_EQ(cell(t.column("group_of_lists.Int32_list_in_group"), 1), "L[]");
  EXPECT_EQ(t.column("group_of_lists.Int32_list_in_group").list_size(3), 4);
}

// DECIMAL in every physical form, and FLOAT16, by value.
TEST(ParquetCorpus, DecimalsAndFloat16) {
  for (const char* file : {"int32_decimal.parquet", "int64_decimal.parquet", "fixed_length_decimal.parquet",
                           "byte_array_decimal.parquet"}) {
    SCOPED_TRACE(file);
    const Table t = read_table(data_file(file));
    ASSERT_EQ(t.num_rows, 24);
    const Column& v = t.column("value");
    EXPECT_EQ(v.schema.logical.kind, LogicalKind::kDecimal);
    EXPECT_EQ(v.schema.logical.scale, 2);
    for (int64_t r = 0; r < 24; ++r) EXPECT_DOUBLE_EQ(v.value_as_double(r), static_cast<double>(r + 1)) << r;
  }
  const Table h = read_table(data_file("float16_nonzeros_and_nans.parquet"));
  const Column& x = h.column("x");
  EXPECT_EQ(x.schema.logical.kind, LogicalKind::kFloat16);
  EXPECT_TRUE(x.is_null(0));
  EXPECT_EQ(x.value_as_double(1), 1.0);
  EXPECT_EQ(x.value_as_double(2), -2.0);
  EXPECT_TRUE(std::isnan(x.value_as_double(3)));
}

// Every file we read, compared value by value with what DuckDB reads.
TEST(ParquetCorpus, ReadableFilesMatchDuckDb) {
  struct Target {
    std::string file;
    std::vector<std::string> columns;  // empty: all
  };
  std::vector<Target> targets;
  // DuckDB cannot read Hadoop-framed LZ4, nor a map of keys alone ("MAP_KEY_VALUE requires two children"), and
  // reads int96_from_spark's wrapped year 290000 as a date before 226000 BC; those files are checked against known
  // values (Lz4FilesInEveryFraming, MapsAndListsOfStructsKnownValues, AllTypesPlainKnownValues).
  const std::set<std::string> duckdb_cannot = {"hadoop_lz4_compressed.parquet", "hadoop_lz4_compressed_larger.parquet",
                                               "non_hadoop_lz4_compressed.parquet", "map_no_value.parquet",
                                               "int96_from_spark.parquet"};
  for (const std::string& path : corpus_files("data")) {
    if (path.size() < 8 || path.substr(path.size() - 8) != ".parquet") continue;
    if (duckdb_cannot.count(fs::path(path).filename().string())) continue;
    try {
      read_file_info(path);
      read_table(path, sweep_read_options());
      targets.push_back({path, {}});
    } catch (const Error&) {
    }
  }
  for (const char* f : {"alltypes_plain.parquet", "alltypes_plain.snappy.parquet", "alltypes_dictionary.parquet",
                        "alltypes_tiny_pages.parquet", "alltypes_tiny_pages_plain.parquet"}) {
    if (fs::exists(data_file(f))) targets.push_back({data_file(f), kAllTypesColumns});
  }
  ASSERT_GE(targets.size(), 20u);
  for (const Target& target : targets) {
    SCOPED_TRACE(target.file);
    ReadOptions r;
    r.columns = target.columns;
    const Table ours = read_table(target.file, r);
    // DuckDB is asked for our columns by name: struct fields come back flattened as ours are.
    std::string json = "[";
    for (size_t i = 0; i < ours.columns.size(); ++i) json += (i ? ",\"" : "\"") + ours.columns[i].schema.name + "\"";
    std::vector<std::string> args = {"dump", target.file, json + "]"};
    std::string out;
    ASSERT_TRUE(run_duckdb(args, &out));
    expect_same_values(ours, parse_dump(out), /*check_types=*/false);
  }
}

// The deprecated LZ4 codec in both framings writers used, and LZ4_RAW, all holding the same four rows.
TEST(ParquetCorpus, Lz4FilesInEveryFraming) {
  for (const char* file : {"hadoop_lz4_compressed.parquet", "non_hadoop_lz4_compressed.parquet",
                           "lz4_raw_compressed.parquet"}) {
    SCOPED_TRACE(file);
    const Table t = read_table(data_file(file));
    ASSERT_EQ(t.num_rows, 4);
    EXPECT_EQ(t.column("c0").as<int64_t>(), (std::vector<int64_t>{1593604800, 1593604800, 1593604801, 1593604801}));
    const ByteArrays& c1 = t.column("c1").byte_arrays();
    EXPECT_EQ(c1.at(0), "abc");
    EXPECT_EQ(c1.at(1), "def");
    EXPECT_EQ(c1.at(2), "abc");
    EXPECT_EQ(c1.at(3), "def");
    EXPECT_EQ(t.column("v11").as<double>(), (std::vector<double>{42.0, 7.7, 42.125, 7.7}));
  }
  const Table larger = read_table(data_file("hadoop_lz4_compressed_larger.parquet"));
  EXPECT_EQ(larger.num_rows, 10000);
  ASSERT_EQ(larger.columns.size(), 1u);
  EXPECT_EQ(larger.columns[0].byte_arrays().at(0).size(), 36u);  // UUID strings
}

// A CSV cell: nullopt for an unquoted empty field (a null), else the text ("" quoted is an empty string).
std::vector<std::optional<std::string>> parse_csv_line(const std::string& line) {
  std::vector<std::optional<std::string>> cells;
  size_t i = 0;
  while (true) {
    std::optional<std::string> cell;
    if (i < line.size() && line[i] == '"') {
      std::string text;
      for (++i; i < line.size(); ++i) {
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            text += '"';
            ++i;
          } else {
            ++i;
            break;
          }
        } else {
          text += line[i];
        }
      }
      cell = text;
    } else {
      const size_t end = std::min(line.find(',', i), line.size());
      if (end > i) cell = line.substr(i, end - i);
      i = end;
    }
    cells.push_back(cell);
    if (i >= line.size()) break;
    ++i;  // the comma
  }
  return cells;
}

std::optional<std::string> text_of(const Column& c, int64_t row) {
  if (c.is_null(row)) return std::nullopt;
  switch (c.schema.type) {
    case PhysicalType::kInt32: return std::to_string(c.as<int32_t>()[row]);
    case PhysicalType::kInt64: return std::to_string(c.as<int64_t>()[row]);
    case PhysicalType::kByteArray: return std::string(c.byte_arrays().at(row));
    default: return "?";
  }
}

// The corpus' *_expect.csv files: every value, column by column in file order.
TEST(ParquetCorpus, DeltaEncodedFilesMatchTheirExpectedCsv) {
  for (const char* stem : {"delta_binary_packed", "delta_byte_array", "delta_encoding_optional_column",
                           "delta_encoding_required_column"}) {
    SCOPED_TRACE(stem);
    const Table t = read_table(data_file(std::string(stem) + ".parquet"));
    std::ifstream csv(data_file(std::string(stem) + "_expect.csv"));
    std::string line;
    ASSERT_TRUE(std::getline(csv, line));
    ASSERT_EQ(parse_csv_line(line).size(), t.columns.size());
    int64_t row = 0;
    size_t mismatches = 0;
    while (std::getline(csv, line)) {
      if (line.empty()) continue;
      ASSERT_LT(row, t.num_rows);
      const auto cells = parse_csv_line(line);
      ASSERT_EQ(cells.size(), t.columns.size()) << "row " << row;
      for (size_t c = 0; c < cells.size(); ++c) {
        if (text_of(t.columns[c], row) != cells[c] && ++mismatches <= 5) {
          ADD_FAILURE() << "column " << t.columns[c].schema.name << " row " << row << ": feedline '"
                        << text_of(t.columns[c], row).value_or("null") << "', expected '" << cells[c].value_or("null")
                        << "'";
        }
      }
      ++row;
    }
    EXPECT_EQ(row, t.num_rows);
    EXPECT_EQ(mismatches, 0u);
  }
}

TEST(ParquetCorpus, FileInfoOfAChecksummedFile) {
  const FileInfo info = read_file_info(data_file("datapage_v1-snappy-compressed-checksum.parquet"));
  EXPECT_EQ(info.num_rows, 5120);
  ASSERT_FALSE(info.row_groups.empty());
  EXPECT_EQ(info.row_groups[0].columns.at(0).codec, "snappy");
}

}  // namespace
}  // namespace feedline::parquet
