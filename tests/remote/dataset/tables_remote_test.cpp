// Tables read from URLs as from paths: a Parquet dataset folder with Hive keys, its globs and lists mixing URLs and
// paths, single files over http(s), CSV files whole and streamed, and the streamed Parquet dataset through the
// loader; each compared with the same files read locally.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dataset_remote_data.h"
#include "dataset_remote_support.h"
#include "feedline/dataset/stream_dataset.h"
#include "feedline/io/columns.h"
#include "feedline/io/csv.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "feedline/io/parquet_dataset.h"
#include "io/remote_glob.h"

namespace feedline {
namespace {

using testing::hive_dataset;
using testing::HiveDataset;
using testing::pixel_table;
using testing::RemoteDatasetTest;
using testing::write_parquet;

// The dataset's files, each relative to its root, and their Hive values, for comparing two listings.
std::vector<std::string> relative_files(const parquet::DatasetFiles& files, const std::string& root) {
  std::vector<std::string> out;
  for (size_t i = 0; i < files.paths.size(); ++i) {
    std::string line = files.paths[i].compare(0, root.size(), root) == 0 ? files.paths[i].substr(root.size())
                                                                           : files.paths[i];
    for (const auto& v : files.partition_values[i]) line += " " + v.value_or("null");
    out.push_back(line);
  }
  return out;
}

TEST_F(RemoteDatasetTest, ParquetFolderWithHiveKeysReadsAsTheLocalOne) {
  const HiveDataset& d = hive_dataset();
  const std::string local_root = d.local + "/", url_root = d.url;
  for (const std::string& url : {d.url, d.url.substr(0, d.url.size() - 1)}) {  // with and without the '/'
    SCOPED_TRACE(url);
    EXPECT_TRUE(parquet::is_dataset_spec(url));
    const parquet::DatasetReader remote(url);
    const parquet::DatasetReader local(d.local);
    EXPECT_EQ(relative_files(remote.files(), url_root), relative_files(local.files(), local_root));
    EXPECT_EQ(remote.files().paths.size(), 4u);
    ASSERT_EQ(remote.schema().size(), local.schema().size());
    EXPECT_EQ(remote.schema().back().name, "year");
    EXPECT_EQ(remote.schema().back().type, PhysicalType::kInt64);
    EXPECT_EQ(testing::table_text(remote.read()), testing::table_text(local.read()));
  }
  // The one-table readers over the same: columns chosen, row groups of each file.
  parquet::ReadOptions some;
  some.columns = {"year", "pixel3", "label"};
  some.row_groups = {1, 3};
  EXPECT_EQ(testing::table_text(parquet::read_dataset(d.url, some)),
            testing::table_text(parquet::read_dataset(d.local, some)));
  EXPECT_EQ(testing::table_text(read_file_columns(d.url, {"label", "year"}, 2, {}, false)),
            testing::table_text(read_file_columns(d.local, {"label", "year"}, 2, {}, false)));
  EXPECT_EQ(file_schema(d.url).size(), file_schema(d.local).size());
}

TEST_F(RemoteDatasetTest, ParquetGlobsAndListsMatchAsLocalOnes) {
  const HiveDataset& d = hive_dataset();
  for (const std::string& pattern : {"year=*/part-*.parquet", "year=*", "**/*.parquet", "year=202[4]/*.parquet",
                                     "year=2023/part-?.parquet", "*/part-1.parquet"}) {
    SCOPED_TRACE(pattern);
    const std::string url = d.url + pattern;
    EXPECT_TRUE(remote::has_wildcard(url));
    EXPECT_TRUE(parquet::is_dataset_spec(url));
    const parquet::DatasetFiles remote_files = parquet::list_dataset_files(url);
    const parquet::DatasetFiles local_files = parquet::list_dataset_files(d.local + "/" + pattern);
    EXPECT_EQ(relative_files(remote_files, d.url), relative_files(local_files, d.local + "/"));
    EXPECT_EQ(testing::table_text(parquet::read_dataset(url)),
              testing::table_text(parquet::read_dataset(d.local + "/" + pattern)));
  }
  // A list mixing a URL, a path and a URL pattern.
  const std::string mixed = d.url + "year=2023/part-1.parquet," + d.local + "/year=2024/part-0.parquet," + d.url +
                            "year=2024/part-1*";
  const parquet::DatasetFiles files = parquet::list_dataset_files(mixed);
  ASSERT_EQ(files.paths.size(), 3u);
  const std::string local_list = d.local + "/year=2023/part-1.parquet," + d.local + "/year=2024/part-0.parquet," +
                                 d.local + "/year=2024/part-1.parquet";
  Table expected = parquet::read_dataset(local_list);
  Table got = parquet::read_dataset(mixed);
  // Sorted by path: the local file first, then the URLs; compare the rows of each file.
  EXPECT_EQ(testing::table_text(got).size(), testing::table_text(expected).size());
  EXPECT_EQ(got.num_rows, expected.num_rows);
  EXPECT_EQ(files.paths[0], d.local + "/year=2024/part-0.parquet");
  EXPECT_EQ(files.paths[1], d.url + "year=2023/part-1.parquet");
  EXPECT_EQ(files.paths[2], d.url + "year=2024/part-1.parquet");
}

TEST_F(RemoteDatasetTest, ParquetSpecsThatNameNothingAreErrorsNamingThem) {
  const HiveDataset& d = hive_dataset();
  const std::string nothing = d.url + "year=*/nothing-*.parquet";
  EXPECT_THROW(parquet::list_dataset_files(nothing), InvalidArgument);
  EXPECT_NE(testing::error_text([&] { parquet::list_dataset_files(nothing); }).find(nothing), std::string::npos);
  const std::string missing = d.url + "no-such-folder";
  EXPECT_TRUE(parquet::is_dataset_spec(missing));  // no object there: looked for as a folder
  const std::string why = testing::error_text([&] { parquet::DatasetReader r(missing); });
  EXPECT_NE(why.find(missing), std::string::npos) << why;
  EXPECT_NE(why.find("no such object"), std::string::npos) << why;
  // A folder without Parquet objects (what a walk leaves out only).
  const std::string hidden = d.url + "_temporary/";
  EXPECT_NO_THROW(parquet::list_dataset_files(hidden));  // the folder itself is named: its files are below it
  const std::string empty = testing::upload_dir(
      [] {
        const std::string dir = testing::scratch_dir("remote-no-parquet");
        testing::write_file(dir + "/a.csv", "x\n1\n");
        testing::write_file(dir + "/_b.parquet", "PAR1");
        return dir;
      }(),
      "no-parquet");
  const std::string none = testing::error_text([&] { parquet::list_dataset_files(empty); });
  EXPECT_NE(none.find("no .parquet object"), std::string::npos) << none;

  // http(s) has no listing: a pattern or a folder there is refused, saying so.
  const std::string served = testing::serve_dir(d.local, "hive");
  for (const std::string& spec : {served + "year=*/part-0.parquet", served}) {
    SCOPED_TRACE(spec);
    const std::string error = testing::error_text([&] { parquet::list_dataset_files(spec); });
    EXPECT_NE(error.find("no listing"), std::string::npos) << error;
  }
}

TEST_F(RemoteDatasetTest, HttpFilesAndListsReadAsLocalOnes) {
  const HiveDataset& d = hive_dataset();
  const std::string served = testing::serve_dir(d.local, "hive");
  const std::string one = served + "year=2024/part-1.parquet";
  EXPECT_FALSE(parquet::is_dataset_spec(one));
  EXPECT_EQ(input_format(one), FileFormat::kParquet);
  EXPECT_EQ(testing::table_text(parquet::read_table(one)),
            testing::table_text(parquet::read_table(d.local + "/year=2024/part-1.parquet")));
  const std::string list = served + "year=2023/part-0.parquet," + served + "year=2024/part-0.parquet";
  const parquet::DatasetReader dataset(list);
  EXPECT_EQ(dataset.schema().back().name, "year");  // Hive keys from the URLs' paths
  EXPECT_EQ(testing::table_text(dataset.read()),
            testing::table_text(parquet::read_dataset(d.local + "/year=2023/part-0.parquet," + d.local +
                                                      "/year=2024/part-0.parquet")));
}

TEST_F(RemoteDatasetTest, CsvReadsWholeAndStreamedAsTheLocalFile) {
  const std::string dir = testing::scratch_dir("remote-csv");
  std::string csv = "label,pixel1,pixel2,name\n";
  for (int r = 0; r < 3000; ++r) {
    csv += std::to_string(r % 10) + "," + std::to_string(r % 256) + "," + std::to_string((r * 7) % 256) +
           ",\"row, " + std::to_string(r) + "\"\n";
  }
  testing::write_file(dir + "/train.csv", csv);
  // A Parquet file without an extension: told by its magic, read remotely.
  write_parquet(dir + "/000000_0", pixel_table(20, 5), 8);
  const std::string url = testing::upload_dir(dir, "csv");
  const std::string served = testing::serve_dir(dir, "csv");
  for (const std::string& file : {url + "train.csv", served + "train.csv"}) {
    SCOPED_TRACE(file);
    EXPECT_EQ(read_csv_header(file), read_csv_header(dir + "/train.csv"));
    CsvReadOptions whole;
    whole.text_columns = true;
    EXPECT_EQ(testing::table_text(read_csv(file, whole)), testing::table_text(read_csv(dir + "/train.csv", whole)));
    CsvStreamOptions blocks;
    blocks.block_bytes = 4096;
    blocks.text_columns = true;
    CsvStreamReader remote_stream(file, blocks), local_stream(dir + "/train.csv", blocks);
    Table a, b;
    int64_t n = 0;
    while (local_stream.next(&a)) {
      ASSERT_TRUE(remote_stream.next(&b));
      EXPECT_EQ(testing::table_text(a), testing::table_text(b)) << "block " << n;
      ++n;
    }
    EXPECT_FALSE(remote_stream.next(&b));
    EXPECT_GT(n, 10);
  }
  EXPECT_EQ(input_format(url + "000000_0"), FileFormat::kParquet);
  EXPECT_EQ(testing::table_text(read_file_columns(url + "000000_0", {}, 1, {}, false)),
            testing::table_text(read_file_columns(dir + "/000000_0", {}, 1, {}, false)));
}

TEST_F(RemoteDatasetTest, StreamedParquetDatasetMakesTheLocalBatches) {
  const HiveDataset& d = hive_dataset();
  ParquetStreamOptions o;
  o.layout.height = o.layout.width = 4;
  o.cached_row_groups = 3;
  const auto local = std::make_shared<ParquetStreamDataset>(d.local, o);
  const auto remote = std::make_shared<ParquetStreamDataset>(d.url, o);
  ASSERT_EQ(remote->size(), local->size());
  EXPECT_EQ(remote->shuffle_blocks(), local->shuffle_blocks());
  for (const int64_t workers : {0, 1, 2}) {
    SCOPED_TRACE("workers " + std::to_string(workers));
    const LoaderOptions options =
        LoaderOptions().batch_size(9).shuffle(true).num_workers(workers).seed(17).prefetch_blocks(2);
    testing::expect_same_run(testing::run_loader(local, options), testing::run_loader(remote, options));
  }
  // Without fetching ahead, the same.
  const LoaderOptions none = LoaderOptions().batch_size(9).shuffle(true).num_workers(2).seed(3).prefetch_blocks(0);
  testing::expect_same_run(testing::run_loader(local, none), testing::run_loader(remote, none));
}

}  // namespace
}  // namespace feedline
