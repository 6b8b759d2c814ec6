// The command line given URLs where it takes paths, as a new user types them: `inspect` of a remote Parquet
// dataset, CSV file, tar shards and class folders, `cat` and `convert` from a URL (the output local), and `train`
// with --data and --test-data URLs; each against the same command on the local files.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dataset_remote_data.h"
#include "dataset_remote_support.h"
#include "feedline/train/models.h"
#include "test_paths.h"

namespace feedline {
namespace {

using testing::RemoteDatasetTest;

testing::CommandResult feedline_cli(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {FEEDLINE_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::run_command(argv);
}

// The command's output, which must succeed.
std::string output_of(const std::vector<std::string>& args) {
  const testing::CommandResult r = feedline_cli(args);
  EXPECT_EQ(r.exit_code, 0) << args.at(0) << " " << args.at(1) << ":\n" << r.output;
  return r.output;
}

// `text` without its first line (which names what was inspected).
std::string after_first_line(const std::string& text) { return text.substr(std::min(text.size(), text.find('\n'))); }

TEST_F(RemoteDatasetTest, InspectCatAndConvertTakeUrls) {
  const testing::HiveDataset& d = testing::hive_dataset();
  // A dataset: the same rows, schema, sizes and files.
  const auto remote = nlohmann::json::parse(output_of({"inspect", "--json", d.url}));
  const auto local = nlohmann::json::parse(output_of({"inspect", "--json", d.local}));
  for (const char* key : {"num_files", "bytes", "num_rows", "num_row_groups", "schema"}) {
    EXPECT_EQ(remote[key], local[key]) << key;
  }
  ASSERT_EQ(remote["files"].size(), local["files"].size());
  for (size_t i = 0; i < local["files"].size(); ++i) {
    EXPECT_EQ(remote["files"][i]["file"].get<std::string>().substr(d.url.size()),
              local["files"][i]["file"].get<std::string>().substr(d.local.size() + 1));
    EXPECT_EQ(remote["files"][i]["partition"], local["files"][i]["partition"]);
  }
  // One file, a glob, and text inspection.
  const std::string file = "year=2024/part-1.parquet";
  EXPECT_EQ(after_first_line(output_of({"inspect", d.url + file})),
            after_first_line(output_of({"inspect", d.local + "/" + file})));
  EXPECT_NE(output_of({"inspect", d.url + "year=*/*.parquet"}).find("Rows: 148 in 16 row groups"), std::string::npos);

  // cat: the same rows, as CSV and JSON lines; columns chosen, Hive keys among them.
  for (const std::string& format : {"csv", "jsonl"}) {
    EXPECT_EQ(output_of({"cat", "--format", format, d.url}), output_of({"cat", "--format", format, d.local}));
  }
  EXPECT_EQ(output_of({"cat", "--columns", "year,label", d.url + "year=*/part-0.parquet"}),
            output_of({"cat", "--columns", "year,label", d.local + "/year=*/part-0.parquet"}));

  // convert: the local output a local input gives.
  const std::string out = testing::scratch_dir("remote-cli-convert");
  output_of({"convert", d.url, out + "/remote.parquet", "--narrow-ints"});
  output_of({"convert", d.local, out + "/local.parquet", "--narrow-ints"});
  EXPECT_EQ(testing::file_bytes(out + "/remote.parquet"), testing::file_bytes(out + "/local.parquet"));

  // A CSV file by URL, inspected and converted.
  const std::string csv_dir = testing::scratch_dir("remote-cli-csv");
  testing::write_file(csv_dir + "/t.csv", "label,pixel1,name\n1,2,a\n3,4,\"b, c\"\n");
  const std::string csv_url = testing::upload_dir(csv_dir, "cli-csv") + "t.csv";
  EXPECT_EQ(after_first_line(output_of({"inspect", csv_url})),
            after_first_line(output_of({"inspect", csv_dir + "/t.csv"})));
  output_of({"convert", csv_url, out + "/csv-remote.parquet"});
  output_of({"convert", csv_dir + "/t.csv", out + "/csv-local.parquet"});
  EXPECT_EQ(testing::file_bytes(out + "/csv-remote.parquet"), testing::file_bytes(out + "/csv-local.parquet"));

  // Names that match nothing, said so.
  const testing::CommandResult nothing = feedline_cli({"cat", d.url + "year=*/none-*.parquet"});
  EXPECT_NE(nothing.exit_code, 0);
  EXPECT_NE(nothing.output.find("no object matches this pattern"), std::string::npos) << nothing.output;
}

TEST_F(RemoteDatasetTest, InspectOfRemoteImagesIsTheLocalOnes) {
  const testing::Shards& s = testing::shards();
  const testing::Tree& t = testing::tree();
  for (const auto& [remote, local] : std::vector<std::pair<std::string, std::string>>{
           {s.url + "train-*.tar", s.local + "/train-*.tar"},
           {s.url + "train-{000000..000003}.tar", s.local + "/train-{000000..000003}.tar"},
           {t.url, t.local},
           {t.url.substr(0, t.url.size() - 1), t.local}}) {
    SCOPED_TRACE(remote);
    const std::string got = output_of({"inspect", remote});
    EXPECT_EQ(got.substr(0, got.find('\n')), "Images: " + remote);
    EXPECT_EQ(after_first_line(got), after_first_line(output_of({"inspect", local})));
  }
}

TEST_F(RemoteDatasetTest, TrainTakesUrlsForDataAndTestData) {
  const testing::HiveDataset& d = testing::hive_dataset();
  const std::string table = output_of({"train", "--data", d.url, "--test-data", d.url + "year=2023/part-0.parquet",
                                       "--image-shape", "1x4x4", "--epochs", "1", "--batch-size", "16"});
  EXPECT_NE(table.find("Test Accuracy:"), std::string::npos) << table;
  const testing::Shards& s = testing::shards();
  const testing::Tree& t = testing::tree();
  const std::string images =
      output_of({"train", "--data", s.url + "train-*.tar", "--test-data", t.url, "--image-size", "4", "--epochs", "1",
                 "--batch-size", "8", "--num-workers", "2", "--num-classes", "5"});
  EXPECT_NE(images.find("Test Accuracy:"), std::string::npos) << images;
  EXPECT_NE(images.find("Loaded " + s.url + "train-*.tar"), std::string::npos) << images;
}

// A saved SimpleCNN's weights, for a model of `options`.
std::vector<torch::Tensor> weights_of(const std::string& path, const SimpleCNNOptions& options) {
  SimpleCNN model{options};
  load_module(*model, path);
  std::vector<torch::Tensor> out;
  for (const auto& p : model->parameters()) out.push_back(p.detach().clone());
  return out;
}

// Two ranks train from s3:// tar shards to the model they train from the same shards on disk, bit for bit: the
// same samples in the same order, whatever was fetched ahead, cached or read directly. A second run over the cache
// the first one filled trains the same model again without downloading the shards again.
TEST_F(RemoteDatasetTest, TwoRanksTrainFromRemoteShardsAsFromLocalOnes) {
  const testing::Shards& s = testing::shards();
  const std::string dir = testing::scratch_dir("remote_two_ranks");
  const auto train = [&](const std::string& shards, const std::string& save, const std::string& cache) {
    std::vector<std::string> args = {"train", "--data", shards + "train-00000{0..2}.tar", "--test-data",
                                     shards + "train-000003.tar", "--image-size", "4", "--augment", "none",
                                     "--epochs", "2", "--batch-size", "8", "--num-workers", "2", "--num-classes", "5",
                                     "--device", "cpu", "--threads", "1", "--nproc", "2", "--save", save};
    if (!cache.empty()) args.insert(args.end(), {"--cache-dir", cache});
    return output_of(args);
  };
  train(s.local + "/", dir + "/local.pt", "");
  const std::string first = train(s.url, dir + "/remote.pt", dir + "/cache");
  EXPECT_NE(first.find("Remote reads: "), std::string::npos) << first;
  const std::string again = train(s.url, dir + "/again.pt", dir + "/cache");
  EXPECT_NE(again.find(" 0 downloads"), std::string::npos) << "the second run downloaded again:\n" << again;
  const auto options = SimpleCNNOptions().channels(3).height(4).width(4).classes(5);
  const auto local = weights_of(dir + "/local.pt", options);
  for (const char* name : {"/remote.pt", "/again.pt"}) {
    const auto remote = weights_of(dir + name, options);
    ASSERT_EQ(remote.size(), local.size());
    for (size_t i = 0; i < local.size(); ++i) EXPECT_TRUE(torch::equal(remote[i], local[i])) << name << ", parameter " << i;
  }
}

}  // namespace
}  // namespace feedline
