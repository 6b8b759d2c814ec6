// End-to-end tests of `feedline inspect` and `feedline cat`: schemas, row groups and metadata, list columns,
// rows as CSV or JSON lines, folders of Parquet files (convert too) and CSV files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_support.h"
#include "feedline/dataset/dataset.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "io/parquet_test_support.h"
#include "test_paths.h"

namespace feedline {
namespace {

using testing::CliRun;
using testing::contains;
using testing::file_bytes;
using testing::make_idx_dir;
using testing::run_cli;

std::string corpus_file(const std::string& name) { return testing::parquet_testing_dir() + "/data/" + name; }

TEST(Cli, InspectShowsSchemaRowGroupsAndMetadata) {
  const std::string file = corpus_file("delta_byte_array.parquet");
  CliRun r = run_cli("inspect " + file);
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* text : {"Rows: 1000 in 1 row group", "c_customer_id", "STRING", "optional", "DELTA_BYTE_ARRAY",
                           "Row group 0: 1000 rows", "AAAAAAAAAABAAAAA .. AAAAAAAAPPCAAAAA"}) {
    EXPECT_TRUE(contains(r.output, text)) << text << "\n" << r.output;
  }
  r = run_cli("inspect --json " + file);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["num_rows"].get<int64_t>(), 1000);
  EXPECT_EQ(j["schema"].size(), 9u);
  EXPECT_EQ(j["row_groups"][0]["columns"][1]["null_count"].get<int64_t>(), 30);
  EXPECT_EQ(j["row_groups"][0]["columns"][0]["encodings"][0], "DELTA_BYTE_ARRAY");

  // A VARIANT column: inspect names the type, cat prints each value's JSON (embedded as JSON in JSON lines).
  const std::string variant = testing::test_data_dir() + "/duckdb-parquet-testing/variant_string.parquet";
  r = run_cli("inspect " + variant);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Schema (2 columns)")) << r.output;
  EXPECT_TRUE(contains(r.output, "VARIANT")) << r.output;
  r = run_cli("cat --format jsonl " + variant);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "{\"id\":1,\"var\":\"iceberg\"}\n");

  // A file with a column we do not read (here a VARIANT annotation on a primitive, which the spec does not give):
  // inspect shows the readable columns and why the rest is not; cat reads those columns when asked for them, and
  // refuses the other naming it.
  const std::string unreadable = testing::scratch_dir("cli-unreadable") + "/unreadable.parquet";
  testing::write_with_unreadable_column(corpus_file("alltypes_plain.parquet"), unreadable, "string_col");
  r = run_cli("inspect " + unreadable);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Schema (10 columns)")) << r.output;
  EXPECT_TRUE(contains(r.output, "string_col               logical type VARIANT is not supported")) << r.output;
  r = run_cli("inspect --json " + unreadable);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto jv = nlohmann::json::parse(r.output);
  ASSERT_EQ(jv["unsupported_columns"].size(), 1u) << r.output;
  EXPECT_EQ(jv["unsupported_columns"][0]["name"], "string_col");
  r = run_cli("cat " + unreadable);
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, "column 'string_col': logical type VARIANT is not supported")) << r.output;
  r = run_cli("cat --columns id --limit 1 " + unreadable);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "id\n4\n");
  // A logical type of an id feedline does not know: the column is read by its physical type, and inspect says so.
  const std::string unknown = corpus_file("unknown-logical-type.parquet");
  r = run_cli("inspect " + unknown);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Schema (2 columns)")) << r.output;
  EXPECT_TRUE(contains(r.output, "column with unknown type logical type with unknown id 2555: read as BYTE_ARRAY"))
      << r.output;
  r = run_cli("inspect --json " + unknown);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto ju = nlohmann::json::parse(r.output);
  EXPECT_EQ(ju["schema"][1]["name"], "column with unknown type");
  EXPECT_EQ(ju["notes"][0]["name"], "column with unknown type");
  r = run_cli("cat --columns 'column with unknown type' " + unknown);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "column with unknown type\n756e6b6e6f776e20737472696e672031\n756e6b6e6f776e20737472696e672032\n"
                      "756e6b6e6f776e20737472696e672033\n");
  // A map of maps: lists of its keys and values, the inner map's lists of lists.
  const std::string nested = corpus_file("nested_maps.snappy.parquet");
  r = run_cli("inspect " + nested);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Schema (5 columns)")) << r.output;
  EXPECT_TRUE(contains(r.output, "a.value.key")) << r.output;
  EXPECT_FALSE(contains(r.output, "Not readable")) << r.output;
  r = run_cli("cat --format jsonl --columns a.key,a.value.value " + nested);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.substr(0, r.output.find('\n')), R"({"a.key":["a"],"a.value.value":[[true,false]]})");
  r = run_cli("inspect /no/such/file.parquet");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, "/no/such/file.parquet")) << r.output;
}

TEST(Cli, CatAndInspectShowListColumns) {
  // list<int64> and list<string>, with null lists, null elements: a JSON array per cell.
  const std::string lists = corpus_file("list_columns.parquet");
  CliRun r = run_cli("cat " + lists);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output,
            "int64_list,utf8_list\n"
            "\"[1,2,3]\",\"[\"\"abc\"\",\"\"efg\"\",\"\"hij\"\"]\"\n"
            "\"[null,1]\",\n"
            "[4],\"[\"\"efg\"\",null,\"\"hij\"\",\"\"xyz\"\"]\"\n");
  r = run_cli("cat --format jsonl --limit 2 " + lists);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output,
            "{\"int64_list\":[1,2,3],\"utf8_list\":[\"abc\",\"efg\",\"hij\"]}\n"
            "{\"int64_list\":[null,1],\"utf8_list\":null}\n");
  r = run_cli("inspect " + lists);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "LIST<INT64>")) << r.output;
  EXPECT_TRUE(contains(r.output, "optional, optional elements")) << r.output;
  r = run_cli("inspect --json " + lists);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["schema"][1]["list"], true);
  EXPECT_EQ(j["schema"][1]["logical_type"], "STRING");

  // Lists of lists of lists of strings: nested arrays, null at any level.
  const std::string nested = corpus_file("nested_lists.snappy.parquet");
  r = run_cli("cat --limit 1 " + nested);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "a,b\n\"[[[\"\"a\"\",\"\"b\"\"],[\"\"c\"\"]],[null,[\"\"d\"\"]]]\",1\n");
  r = run_cli("cat --format jsonl --limit 1 " + nested);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "{\"a\":[[[\"a\",\"b\"],[\"c\"]],[null,[\"d\"]]],\"b\":1}\n");
  r = run_cli("cat --format jsonl --columns int_array_Array " + corpus_file("nullable.impala.parquet"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "{\"int_array_Array\":[[null,1,2,null],[3,null,4],[],null]}\n")) << r.output;
  r = run_cli("inspect " + nested);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "LIST<LIST<LIST<BYTE_ARRAY>>>")) << r.output;
  EXPECT_TRUE(contains(r.output, "optional, inner lists optional/optional, optional elements")) << r.output;
  r = run_cli("inspect --json " + nested);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto jn = nlohmann::json::parse(r.output);
  EXPECT_EQ(jn["schema"][0]["list_depth"], 3);
  EXPECT_EQ(jn["schema"][0]["inner_lists_nullable"], nlohmann::json::array({true, true}));
  EXPECT_TRUE(jn["unsupported_columns"].empty());

  // convert to CSV writes what cat prints: each list as its JSON array.
  const std::string dir = testing::scratch_dir("cli_lists_to_csv");
  for (const std::string& file : {lists, nested}) {
    r = run_cli("convert " + file + " " + dir + "/out.csv");
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(file_bytes(dir + "/out.csv"), run_cli("cat " + file).output) << file;
  }
}

TEST(Cli, CatPrintsRowsAsCsvOrJsonLines) {
  // Nulls: empty in CSV (`""` for a lone column's, since an empty line is no record), null in JSON;
  // FIXED_LEN_BYTE_ARRAY as hex.
  const std::string flba = corpus_file("fixed_length_byte_array.parquet");
  CliRun r = run_cli("cat " + flba + " --limit 2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "flba_field\n000003e8\n\"\"\n");
  r = run_cli("cat " + flba + " --limit 2 --format jsonl");
  EXPECT_EQ(r.output, "{\"flba_field\":\"000003e8\"}\n{\"flba_field\":null}\n");
  // Floats in shortest round-trip form; columns chosen and ordered.
  r = run_cli("cat " + corpus_file("byte_stream_split.zstd.parquet") + " --columns f64 f32 --limit 1 --format jsonl");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "{\"f64\":-1.3065268517353166,\"f32\":1.7640524}\n");
  // Strings that need quoting are quoted.
  r = run_cli("cat " + corpus_file("delta_byte_array.parquet") + " --columns c_salutation,c_first_name --limit 1");
  EXPECT_EQ(r.output, "c_salutation,c_first_name\nSir,Mark\n");
  // Timestamps in ISO 8601 (INT96, not UTC-adjusted: no Z), decimals exact, FLOAT16 as numbers.
  r = run_cli("cat " + corpus_file("alltypes_plain.parquet") + " --columns id timestamp_col --limit 2");
  EXPECT_EQ(r.output, "id,timestamp_col\n4,2009-03-01T00:00:00.000000\n5,2009-03-01T00:01:00.000000\n");
  r = run_cli("cat " + corpus_file("fixed_length_decimal.parquet") + " --limit 2 --format jsonl");
  EXPECT_EQ(r.output, "{\"value\":\"1.00\"}\n{\"value\":\"2.00\"}\n");
  r = run_cli("cat " + corpus_file("float16_nonzeros_and_nans.parquet") + " --limit 4 --format jsonl");
  EXPECT_EQ(r.output, "{\"x\":null}\n{\"x\":1}\n{\"x\":-2}\n{\"x\":\"NaN\"}\n");
  r = run_cli("cat " + flba + " --columns nope");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, "nope")) << r.output;
  r = run_cli("cat " + flba + " --format xml");
  EXPECT_NE(r.status, 0);
}

// cat, inspect and convert read a folder of Parquet files, a glob or a list as one table, in the order of the
// sorted paths, with a column for each Hive key of the paths.
TEST(Cli, CatInspectAndConvertReadAFolderOfParquetFiles) {
  const std::string dir = testing::scratch_dir("cli_folder");
  std::filesystem::create_directories(dir + "/split=train");
  std::filesystem::create_directories(dir + "/split=test");
  parquet::write_table(dir + "/split=train/part-0.parquet", testing::id_name_table(0, 3));
  parquet::write_table(dir + "/split=train/part-1.parquet", testing::id_name_table(3, 2));
  parquet::write_table(dir + "/split=test/part-0.parquet", testing::id_name_table(5, 1));
  std::ofstream(dir + "/_SUCCESS") << "";
  CliRun r = run_cli("cat " + dir);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output,
            "id,name,split\n5,row 5,test\n0,row 0,train\n1,row 1,train\n2,row 2,train\n3,row 3,train\n4,row 4,train\n");
  r = run_cli("cat '" + dir + "/split=train/*.parquet' --format jsonl --limit 1 --columns split,id");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "{\"split\":\"train\",\"id\":0}\n");
  r = run_cli("cat " + dir + "/split=train/part-1.parquet," + dir + "/split=test/part-0.parquet --columns id");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "id\n5\n3\n4\n");

  r = run_cli("inspect " + dir);
  ASSERT_EQ(r.status, 0) << r.output;
  for (const std::string text : {"Dataset: " + dir + " (3 files", std::string("Rows: 6 in 3 row groups"),
                                 std::string("Schema (3 columns, the last 1 from the paths' Hive keys)"),
                                 std::string("split"), dir + "/split=train/part-1.parquet"}) {
    EXPECT_TRUE(contains(r.output, text)) << text << "\n" << r.output;
  }
  r = run_cli("inspect --json " + dir);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["num_files"].get<int64_t>(), 3);
  EXPECT_EQ(j["num_rows"].get<int64_t>(), 6);
  EXPECT_EQ(j["schema"][2]["name"], "split");
  EXPECT_EQ(j["schema"][2]["partition"], true);
  EXPECT_EQ(j["files"][0]["partition"]["split"], "test");

  // convert writes the one table: the same rows, from one file.
  r = run_cli("convert " + dir + " " + dir + "/../cli_folder_all.parquet");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(run_cli("cat " + dir + "/../cli_folder_all.parquet").output, run_cli("cat " + dir).output);

  // What is missing or disagrees is named.
  r = run_cli("cat '" + dir + "/split=valid/*.parquet'");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, dir + "/split=valid/*.parquet: no file matches this pattern")) << r.output;
  const std::string empty = testing::scratch_dir("cli_folder_empty");
  r = run_cli("inspect " + empty);
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, empty + ": no .parquet file in this folder")) << r.output;
  Table narrow = testing::id_name_table(9, 1);
  Column id = make_column(ColumnSchema{"id", PhysicalType::kInt32});
  id.as<int32_t>() = {9};
  narrow.columns[0] = id;
  parquet::write_table(dir + "/split=valid/part-0.parquet", narrow);
  r = run_cli("cat " + dir);
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, dir + "/split=valid/part-0.parquet: column 'id' is INT32, but " + dir +
                                     "/split=test/part-0.parquet has it as INT64"))
      << r.output;
}

// cat and inspect read a CSV file as train does: its columns typed (numbers INT64 or DOUBLE, text STRING).
TEST(Cli, CatAndInspectReadCsv) {
  const std::string dir = testing::scratch_dir("cli_cat_csv");
  const std::string csv = dir + "/t.csv";
  {
    std::ofstream f(csv);
    f << "label,x,name\n3,0.5,\"a, b\"\n7,,c\n";
  }
  CliRun r = run_cli("cat " + csv);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "label,x,name\n3,0.5,\"a, b\"\n7,,c\n");
  r = run_cli("cat " + csv + " --columns name,label --format jsonl --limit 1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "{\"name\":\"a, b\",\"label\":3}\n");
  r = run_cli("inspect " + csv);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Format: CSV")) << r.output;
  EXPECT_TRUE(contains(r.output, "Rows: 2")) << r.output;
  r = run_cli("inspect --json " + csv);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["format"], "csv");
  EXPECT_EQ(j["num_rows"], 2);
  ASSERT_EQ(j["schema"].size(), 3u);
  EXPECT_EQ(j["schema"][0]["physical_type"], "INT64");
  EXPECT_EQ(j["schema"][1]["physical_type"], "DOUBLE");
  EXPECT_EQ(j["schema"][1]["nullable"], true);
  EXPECT_EQ(j["schema"][2]["logical_type"], "STRING");
  r = run_cli("cat " + dir + "/missing.csv");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, dir + "/missing.csv")) << r.output;
}

}  // namespace
}  // namespace feedline
