// A table kept as many Parquet files: folders of shards, globs, lists and Hive partitions read as one table.
#include "feedline/io/parquet_dataset.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "feedline/io/columns.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "feedline/io/table.h"
#include "io/parquet_test_support.h"
#include "test_paths.h"

namespace feedline {
namespace {

using parquet::DatasetReader;
using parquet::read_dataset;
using testing::id_name_table;

void touch(const std::string& path, const std::string& text = "not parquet") {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

void write(const std::string& path, const Table& table, int64_t row_group_rows = 1 << 20) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  parquet::WriteOptions options;
  options.row_group_rows = row_group_rows;
  parquet::write_table(path, table, options);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Three shards of a random table of every type, and files that readers of such folders leave out.
std::string shard_folder(const std::string& name, const Table& whole) {
  const std::string dir = testing::scratch_dir(name);
  const int64_t cuts[] = {0, 300, 301, whole.num_rows};
  for (int s = 0; s < 3; ++s) {
    write(dir + "/train-0000" + std::to_string(s) + "-of-00003.parquet", slice(whole, cuts[s], cuts[s + 1]), 128);
  }
  touch(dir + "/_SUCCESS", "");
  touch(dir + "/.train-00000-of-00003.parquet.crc");
  touch(dir + "/_temporary/0/part-9.parquet");
  touch(dir + "/README.md");
  return dir;
}

TEST(ParquetDataset, AFolderOfShardsReadsAsTheConcatenatedTable) {
  testing::RandomTableSpec spec;
  spec.rows = 777;
  const Table whole = testing::random_table(11, spec);
  const std::string dir = shard_folder("dataset_shards", whole);
  const Table read = read_dataset(dir);
  testing::expect_tables_equal(whole, read);

  const DatasetReader dataset(dir);
  ASSERT_EQ(dataset.num_files(), 3u);
  EXPECT_EQ(dataset.files().paths[0], dir + "/train-00000-of-00003.parquet");
  EXPECT_EQ(dataset.num_rows(), 777);
  EXPECT_EQ(dataset.row_groups().size(), 3u + 1u + 4u);  // 300 rows in groups of 128, 1, then 476
  EXPECT_TRUE(dataset.files().partition_columns.empty());

  // Chosen columns and row groups (of each file), as read_table chooses them.
  parquet::ReadOptions options;
  options.columns = {"str_opt", "i64_req"};
  options.row_groups = {0};
  const Table some = read_dataset(dir, options);
  Table expected;
  for (const Table& part : {slice(whole, 0, 128), slice(whole, 300, 301), slice(whole, 301, 429)}) {
    Table chosen;
    chosen.num_rows = part.num_rows;
    chosen.columns = {part.column("str_opt"), part.column("i64_req")};
    append_rows(expected, chosen, 0, chosen.num_rows);
  }
  testing::expect_tables_equal(expected, some);

  // Files beyond max_open_files are opened again when read, to the same rows (one file at a time, so that the
  // count of opens does not hang on the order in which threads open them).
  const DatasetReader one_open(dir, 2, /*max_open_files=*/1);
  EXPECT_EQ(one_open.file_opens(), 3);
  parquet::ReadOptions one_thread;
  one_thread.num_threads = 1;
  testing::expect_tables_equal(whole, one_open.read(one_thread));
  EXPECT_EQ(one_open.file_opens(), 3 + 2) << "file 0 was kept open from the footers; files 1 and 2 opened again";
  EXPECT_EQ(dataset.file_opens(), 3) << "three files kept open";
  testing::expect_tables_equal(whole, dataset.read());
  EXPECT_EQ(dataset.file_opens(), 3);
  EXPECT_THROW(DatasetReader(dir, 1, 0), InvalidArgument);

  // Files read several at once, on more threads than files, or fewer: the same rows in the same order.
  for (const int threads : {2, 3, 5}) {
    parquet::ReadOptions threaded;
    threaded.num_threads = threads;
    testing::expect_tables_equal(whole, dataset.read(threaded));
  }

  // A trailing slash, and the library's other readers of a path.
  testing::expect_tables_equal(whole, read_dataset(dir + "/"));
  testing::expect_tables_equal(whole, read_file_columns(dir, {}, 2));
  EXPECT_EQ(file_schema(dir).size(), whole.columns.size());
  EXPECT_TRUE(parquet::is_dataset_spec(dir));
  EXPECT_FALSE(parquet::is_dataset_spec(dir + "/train-00000-of-00003.parquet"));
}

// Hive names its files without an extension (000000_0, 000000_0_copy_1): a folder takes those that begin as
// Parquet files do, and leaves out other files without an extension.
TEST(ParquetDataset, HiveFilesWithoutAnExtensionAreRead) {
  testing::RandomTableSpec spec;
  spec.rows = 500;
  const Table whole = testing::random_table(12, spec);
  const std::string dir = testing::scratch_dir("dataset_hive_names");
  write(dir + "/key=a/000000_0", slice(whole, 0, 200));
  write(dir + "/key=a/000000_0_copy_1", slice(whole, 200, 300));
  write(dir + "/key=b/000000_0", slice(whole, 300, 500));
  touch(dir + "/key=b/NOTES", "not a Parquet file");
  touch(dir + "/key=b/000001_0.csv", "a,b\n1,2\n");
  const DatasetReader dataset(dir);
  ASSERT_EQ(dataset.num_files(), 3u);
  EXPECT_EQ(dataset.files().paths[1], dir + "/key=a/000000_0_copy_1");
  const Table read = read_dataset(dir);
  ASSERT_EQ(read.num_rows, 500);
  Table values = read;
  values.columns.pop_back();  // the Hive column `key`, last
  testing::expect_tables_equal(whole, values);
  const Column& key = read.columns.back();
  EXPECT_EQ(key.schema.name, "key");
  EXPECT_EQ(key.byte_arrays().at(0), "a");
  EXPECT_EQ(key.byte_arrays().at(499), "b");
}

TEST(ParquetDataset, AGlobAndAListReadAsTheFolderDoes) {
  testing::RandomTableSpec spec;
  spec.rows = 640;
  const Table whole = testing::random_table(12, spec);
  const std::string dir = shard_folder("dataset_glob", whole);
  const Table by_folder = read_dataset(dir);
  testing::expect_tables_equal(by_folder, read_dataset(dir + "/train-*-of-00003.parquet"));
  testing::expect_tables_equal(by_folder, read_dataset(dir + "/train-0000[0-2]-of-0000?.parquet"));
  // A list in any order reads in the order of the sorted paths, each file once.
  const std::string list = dir + "/train-00002-of-00003.parquet," + dir + "/train-00000-of-00003.parquet," + dir +
                           "/train-0000[01]-of-00003.parquet";
  testing::expect_tables_equal(by_folder, read_dataset(list));
  EXPECT_EQ(DatasetReader(list).num_files(), 3u);
}

TEST(ParquetDataset, HiveKeysBecomeTypedColumns) {
  const std::string dir = testing::scratch_dir("dataset_hive");
  write(dir + "/year=2024/month=02/region=eu/part-0.parquet", id_name_table(0, 3));
  write(dir + "/year=2023/month=11/region=us/part-0.parquet", id_name_table(3, 2));
  write(dir + "/year=2024/month=__HIVE_DEFAULT_PARTITION__/region=a%2Fb/part-0.parquet", id_name_table(5, 1));
  write(dir + "/year=2024/month=02/region=eu/part-1.parquet", id_name_table(6, 2));
  touch(dir + "/year=2024/_SUCCESS", "");

  const Table t = read_dataset(dir);
  ASSERT_EQ(t.num_rows, 8);
  ASSERT_EQ(t.columns.size(), 5u);
  const Column &year = t.column("year"), &month = t.column("month"), &region = t.column("region");
  EXPECT_EQ(t.columns[2].schema.name, "year");
  EXPECT_EQ(year.schema.type, PhysicalType::kInt64);
  EXPECT_FALSE(year.schema.nullable);
  EXPECT_EQ(month.schema.type, PhysicalType::kInt64);  // "02" is a whole number, read as 2
  EXPECT_TRUE(month.schema.nullable);
  EXPECT_EQ(region.schema.type, PhysicalType::kByteArray);
  EXPECT_TRUE(region.schema.is_string);
  // Sorted paths: year=2023 first, then year=2024/month=02 (part-0, part-1), then the null month.
  EXPECT_EQ(t.column("id").as<int64_t>(), (std::vector<int64_t>{3, 4, 0, 1, 2, 6, 7, 5}));
  EXPECT_EQ(year.as<int64_t>(), (std::vector<int64_t>{2023, 2023, 2024, 2024, 2024, 2024, 2024, 2024}));
  EXPECT_EQ(month.as<int64_t>(), (std::vector<int64_t>{11, 11, 2, 2, 2, 2, 2, 0}));
  EXPECT_EQ(month.validity, (std::vector<uint8_t>{1, 1, 1, 1, 1, 1, 1, 0}));
  EXPECT_EQ(region.byte_arrays().at(0), "us");
  EXPECT_EQ(region.byte_arrays().at(2), "eu");
  EXPECT_EQ(region.byte_arrays().at(7), "a/b");

  // Hive columns may be chosen as any other, alone or among the files' columns, in the order asked.
  parquet::ReadOptions options;
  options.columns = {"region", "id"};
  const Table chosen = read_dataset(dir, options);
  ASSERT_EQ(chosen.columns.size(), 2u);
  EXPECT_EQ(chosen.columns[0].schema.name, "region");
  EXPECT_EQ(chosen.columns[1].as<int64_t>(), t.column("id").as<int64_t>());
  options.columns = {"year"};
  const Table alone = read_dataset(dir, options);
  EXPECT_EQ(alone.num_rows, 8);
  EXPECT_EQ(alone.columns[0].as<int64_t>(), year.as<int64_t>());

  // A Hive column can be a dataset's label.
  DatasetColumns labelled;
  labelled.label_column = "year";
  labelled.feature_columns = {"id"};
  labelled.image_column.clear();
  const Table by_year = read_dataset_table(dir, labelled);
  ASSERT_EQ(by_year.columns.size(), 2u);
  EXPECT_EQ(by_year.columns[0].schema.name, "id");
  EXPECT_EQ(by_year.columns[1].as<int64_t>(), year.as<int64_t>());

  // A glob over the partitions reads the keys of the same paths; so does `**`, any number of folders (the
  // _SUCCESS file and folders starting with . or _ left out, as a folder's are).
  testing::expect_tables_equal(t, read_dataset(dir + "/year=*/month=*/region=*/*.parquet"));
  write(dir + "/year=2024/_temporary/month=01/region=eu/part-0.parquet", id_name_table(50, 1));
  write(dir + "/.staging/year=2024/month=01/region=eu/part-0.parquet", id_name_table(51, 1));
  testing::expect_tables_equal(t, read_dataset(dir + "/**/*.parquet"));
  testing::expect_tables_equal(t, read_dataset(dir + "/**"));
  testing::expect_tables_equal(t, read_dataset(dir + "/year=*/**/part-?.parquet"));
  EXPECT_EQ(DatasetReader(dir + "/**/region=eu/**/part-1.parquet").num_files(), 1u);
  EXPECT_EQ(DatasetReader(dir + "/year=2024/**/region=*/part-0.parquet").num_files(), 2u);
  // `**` matches no folder too: the files right in the folder before it.
  write(dir + "/flat/part-0.parquet", id_name_table(52, 1));
  EXPECT_EQ(DatasetReader(dir + "/flat/**/*.parquet").num_files(), 1u);
  ASSERT_TRUE(remove_tree(dir + "/flat"));
  EXPECT_EQ(error_of([&] { read_dataset(dir + "/**/nothing-*.parquet"); }),
            dir + "/**/nothing-*.parquet: no file matches this pattern");

  // Every path must name the same keys.
  write(dir + "/year=2025/part-0.parquet", id_name_table(8, 1));
  const std::string message = error_of([&] { read_dataset(dir); });
  EXPECT_TRUE(contains(message, dir + "/year=2025/part-0.parquet: its Hive keys (year) differ")) << message;
  EXPECT_TRUE(contains(message, "(year, month, region)")) << message;
}

TEST(ParquetDataset, AHiveKeyThatIsAlsoAColumnIsRefused) {
  const std::string dir = testing::scratch_dir("dataset_hive_clash");
  write(dir + "/id=1/part-0.parquet", id_name_table(0, 2));
  const std::string message = error_of([&] { read_dataset(dir); });
  EXPECT_TRUE(contains(message, "Hive key 'id'")) << message;
  EXPECT_TRUE(contains(message, dir + "/id=1/part-0.parquet")) << message;
}

TEST(ParquetDataset, FilesThatDisagreeAreNamedWithTheColumn) {
  const std::string dir = testing::scratch_dir("dataset_mismatch");
  write(dir + "/a.parquet", id_name_table(0, 2));
  Table narrow = id_name_table(2, 2);
  {
    Column x = make_column(ColumnSchema{"id", PhysicalType::kInt32});
    x.as<int32_t>() = {2, 3};
    narrow.columns[0] = x;
  }
  write(dir + "/b.parquet", narrow);
  std::string message = error_of([&] { read_dataset(dir); });
  EXPECT_EQ(message, dir + "/b.parquet: column 'id' is INT32, but " + dir + "/a.parquet has it as INT64");
  message = error_of([&] { parquet::read_dataset(dir + "/*.parquet"); });
  EXPECT_TRUE(contains(message, "column 'id' is INT32")) << message;

  // A column missing from one file, or one file's extra column.
  Table fewer = id_name_table(2, 2);
  fewer.columns.pop_back();
  write(dir + "/b.parquet", fewer);
  message = error_of([&] { read_dataset(dir); });
  EXPECT_EQ(message, dir + "/b.parquet: has no column 'name', which " + dir + "/a.parquet has");
  std::filesystem::remove(dir + "/a.parquet");
  write(dir + "/c.parquet", id_name_table(4, 2));
  message = error_of([&] { read_dataset(dir); });
  EXPECT_EQ(message, dir + "/c.parquet: has a column 'name', which " + dir + "/b.parquet has not");
  EXPECT_THROW(read_dataset(dir), InvalidArgument);
}

// A column the reader cannot read (a VARIANT annotation on a primitive, which the spec does not give) is refused
// in a folder as in one file, not left out.
TEST(ParquetDataset, AColumnThatCannotBeReadIsRefusedAsInOneFile) {
  const std::string dir = testing::scratch_dir("dataset_unreadable");
  const std::string source = dir + "/source.parquet.tmp";
  write(source, id_name_table(0, 3));
  testing::write_with_unreadable_column(source, dir + "/part-0.parquet", "name");
  std::filesystem::remove(source);
  const std::string one = error_of([&] { parquet::read_table(dir + "/part-0.parquet"); });
  const std::string many = error_of([&] { read_dataset(dir); });
  EXPECT_TRUE(contains(one, "VARIANT is not supported")) << one;
  EXPECT_EQ(many, one);
  parquet::ReadOptions options;
  options.columns = {"id"};
  EXPECT_EQ(read_dataset(dir, options).num_rows, parquet::read_table(dir + "/part-0.parquet", options).num_rows);
}

// Files read several at once fail as when read in order: the error is the first failing file's.
TEST(ParquetDataset, TheErrorIsTheFirstFailingFilesInOrder) {
  const std::string dir = testing::scratch_dir("dataset_corrupt");
  parquet::WriteOptions checked;
  checked.page_checksums = true;
  for (int f = 0; f < 5; ++f) {
    const std::string path = dir + "/part-" + std::to_string(f) + ".parquet";
    parquet::write_table(path, id_name_table(10 * f, 50), checked);
    if (f == 2 || f == 3) {  // a byte of the first page's values flipped: its CRC no longer matches
      std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
      file.seekg(40);
      const char c = static_cast<char>(file.get());
      file.seekp(40);
      file.put(static_cast<char>(c ^ 0x20));
    }
  }
  for (const int threads : {1, 2, 4}) {
    parquet::ReadOptions options;
    options.num_threads = threads;
    const std::string message = error_of([&] { read_dataset(dir, options); });
    EXPECT_TRUE(contains(message, dir + "/part-2.parquet: column 'id'")) << threads << ": " << message;
    EXPECT_TRUE(contains(message, "page checksum mismatch")) << message;
  }
}

TEST(ParquetDataset, ColumnOrderAndNullabilityMayDiffer) {
  const std::string dir = testing::scratch_dir("dataset_order");
  write(dir + "/a.parquet", id_name_table(0, 2));
  Table swapped = id_name_table(2, 2);
  std::swap(swapped.columns[0], swapped.columns[1]);
  swapped.columns[1].schema.nullable = true;
  swapped.columns[1].validity = {1, 0};
  swapped.columns[1].as<int64_t>()[1] = 0;
  write(dir + "/b.parquet", swapped);
  const Table t = read_dataset(dir);
  ASSERT_EQ(t.num_rows, 4);
  EXPECT_EQ(t.columns[0].schema.name, "id");
  EXPECT_TRUE(t.columns[0].schema.nullable);
  EXPECT_EQ(t.columns[0].as<int64_t>(), (std::vector<int64_t>{0, 1, 2, 0}));
  EXPECT_EQ(t.columns[0].validity, (std::vector<uint8_t>{1, 1, 1, 0}));
  EXPECT_EQ(t.columns[1].byte_arrays().at(3), "row 3");
}

// Writers annotate integers differently: DuckDB marks every INT32 column INT(32, signed) and every INT64 column
// INT(64, signed), which say no more than the physical type; most writers leave them bare. Shards of both read as
// one table; an unsigned annotation (or a narrower one, on INT32) is another type.
TEST(ParquetDataset, AnIntegerAnnotatedWithItsOwnWidthIsTheBareInteger) {
  const std::string dir = testing::scratch_dir("dataset_int_annotation");
  write(dir + "/a.parquet", id_name_table(0, 2));
  Table annotated = id_name_table(2, 2);
  annotated.columns[0].schema.int_annotation = IntAnnotation{64, true};
  write(dir + "/b.parquet", annotated);
  ASSERT_TRUE(parquet::read_table(dir + "/b.parquet").columns[0].schema.int_annotation.has_value());
  const Table t = read_dataset(dir);
  ASSERT_EQ(t.num_rows, 4);
  EXPECT_EQ(t.columns[0].as<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3}));
  annotated.columns[0].schema.int_annotation = IntAnnotation{64, false};
  write(dir + "/b.parquet", annotated);
  EXPECT_EQ(error_of([&] { read_dataset(dir); }),
            dir + "/b.parquet: column 'id' is INT64 (INT(64,unsigned)), but " + dir + "/a.parquet has it as INT64");
}

TEST(ParquetDataset, AnEmptyMatchNamesWhatWasAskedFor) {
  const std::string dir = testing::scratch_dir("dataset_empty");
  touch(dir + "/_SUCCESS", "");
  touch(dir + "/_metadata/part-0.parquet");
  touch(dir + "/notes.txt");
  std::string message = error_of([&] { read_dataset(dir); });
  EXPECT_TRUE(contains(message, dir + ": no .parquet file in this folder or its subfolders")) << message;
  EXPECT_THROW(read_dataset(dir), InvalidArgument);
  message = error_of([&] { read_dataset(dir + "/train-*.parquet"); });
  EXPECT_EQ(message, dir + "/train-*.parquet: no file matches this pattern");
  write(dir + "/a.parquet", id_name_table(0, 1));
  message = error_of([&] { read_dataset(dir + "/a.parquet," + dir + "/missing.parquet"); });
  EXPECT_EQ(message, dir + "/missing.parquet: no such file or folder");
  EXPECT_THROW(read_dataset(dir + "/a.parquet," + dir + "/missing.parquet"), IoError);
  // A file in the list that is no Parquet file is named by the reader.
  message = error_of([&] { read_dataset(dir + "/a.parquet," + dir + "/notes.txt"); });
  EXPECT_TRUE(contains(message, dir + "/notes.txt")) << message;
}

}  // namespace
}  // namespace feedline
