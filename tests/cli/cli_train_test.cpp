// End-to-end tests of `feedline prepare` and `feedline train` on small data the tests make themselves: the
// experiment's lines, chosen columns of any file, other image shapes and class counts, Parquet row groups and
// folders streamed, and column errors that name the file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <torch/cuda.h>

#include "cli/cli_support.h"
#include "cli/cli_table_support.h"
#include "feedline/dataset/dataset.h"
#include "feedline/io/csv.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/idx.h"
#include "feedline/io/parquet.h"
#include "feedline/train/models.h"
#include "test_paths.h"

namespace feedline {
namespace {

using testing::CliRun;
using testing::colour_table;
using testing::contains;
using testing::count_of;
using testing::file_bytes;
using testing::make_idx_dir;
using testing::renamed_table;
using testing::run_cli;

TEST(Cli, PrepareThenTrainPrintsTheExperimentsLines) {
  const std::string idx = make_idx_dir("cli_e2e_idx", 600, 200);
  const std::string data = testing::scratch_dir("cli_e2e_data");
  CliRun r = run_cli("prepare --dataset mnist --mnist-idx " + idx + " --data-dir " + data);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Storage")) << r.output;
  for (const char* f : {"train.csv", "test.csv", "train.parquet", "test.parquet"}) {
    EXPECT_TRUE(std::filesystem::exists(data + "/MNIST/" + f)) << f;
  }
  const std::string prepared = "--dataset mnist --data-dir " + data;
  std::vector<std::string> variants{
      "--device cpu " + prepared + " --format parquet --dataset-mode tensor --num-workers 2",
      "--device cpu " + prepared + " --format csv --dataset-mode row --num-workers 1 --persistent-workers",
      "--device cpu " + prepared + " --dataset-mode tensor-uint8 --num-workers 1",
      "--device cpu " + prepared + " --dataset-mode device",
      "--device cpu --data " + data + "/MNIST/train.parquet --test-data " + data + "/MNIST/test.csv"};
  // 600 samples in batches of 32: the last batch (24) runs uncaptured beside the replayed graph.
  if (torch::cuda::is_available()) variants.push_back("--device cuda " + prepared + " --dataset-mode device --cuda-graph");
  for (const std::string& variant : variants) {
    r = run_cli("train --epochs 3 --batch-size 32 " + variant);
    ASSERT_EQ(r.status, 0) << variant << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "SimpleCNN: 206922 parameters")) << r.output;
    for (const char* line : {"Average Train Time per Epoch: ", "Average Test Time per Epoch: ", "Total Train Time: ",
                             "Total Test Time: ", "Test Accuracy: "}) {
      EXPECT_TRUE(contains(r.output, line)) << line << "\n" << r.output;
    }
    // The classes are easy to separate: three epochs must get far past chance (10%).
    const auto at = r.output.find("Test Accuracy: ");
    ASSERT_NE(at, std::string::npos);
    EXPECT_GE(std::stod(r.output.substr(at + 15)), 80.0) << r.output;
    if (contains(variant, "--cuda-graph")) {
      EXPECT_TRUE(contains(r.output, "CUDA graph capture took")) << r.output;
    }
  }

  // --save writes the trained model: loaded back, it scores on the test split what train printed.
  const std::string model_path = data + "/models/mnist.pt";
  r = run_cli("train --epochs 1 --batch-size 32 --device cpu " + prepared + " --save " + model_path);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Saved the trained model to " + model_path)) << r.output;
  const auto at = r.output.find("Test Accuracy: ");
  ASSERT_NE(at, std::string::npos);
  SimpleCNN model;
  load_module(*model, model_path);
  model->eval();
  const ImageTensors test = decode_image_table(parquet::read_table(data + "/MNIST/test.parquet"));
  torch::NoGradGuard no_grad;
  const double accuracy =
      100.0 * model->forward(test.images).argmax(1).eq(test.labels).sum().item<double>() / test.labels.size(0);
  EXPECT_NEAR(accuracy, std::stod(r.output.substr(at + 15)), 0.006) << r.output;
  // A path that cannot be written is refused before any training.
  r = run_cli("train --device cpu " + prepared + " --save " + model_path + "/inside.pt");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, "--save " + model_path + "/inside.pt: cannot make the folder")) << r.output;
  EXPECT_FALSE(contains(r.output, "Epoch 1")) << r.output;
}

TEST(Cli, TrainOnAnyFileWithChosenColumns) {
  const std::string idx = make_idx_dir("cli_columns_idx", 600, 200);
  const std::string dir = testing::scratch_dir("cli_columns_data");
  write_csv(dir + "/train.csv", renamed_table(idx, "train"));
  parquet::write_table(dir + "/test.parquet", renamed_table(idx, "t10k"));
  const std::string files = " --data " + dir + "/train.csv --test-data " + dir + "/test.parquet";
  // The last pattern's literal is split: ?? and ' together make a trigraph.
  CliRun r = run_cli("train" + files + " --label-column digit --feature-columns 'px?,px??,px??" "?' --epochs 3 "
                     "--batch-size 32 --device cpu");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "600 train, 200 test samples")) << r.output;
  const auto at = r.output.find("Test Accuracy: ");
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_GE(std::stod(r.output.substr(at + 15)), 80.0) << r.output;

  // The row dataset and --columns take the same columns; --limit still applies.
  std::string only = "digit";
  for (int p = 0; p < 784; ++p) only += ",px" + std::to_string(p);
  r = run_cli("train" + files + " --label-column digit --feature-columns 'px*' --columns " + only +
              " --dataset-mode row --epochs 1 --limit 64 --batch-size 32 --device cpu");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "64 train, 64 test samples")) << r.output;
  EXPECT_TRUE(contains(r.output, "Test Accuracy: ")) << r.output;

  // Row groups of Parquet files: the test file has one.
  parquet::write_table(dir + "/train.parquet", renamed_table(idx, "train"));
  const std::string both = " --data " + dir + "/train.parquet --test-data " + dir + "/test.parquet";
  r = run_cli("train" + both + " --label-column digit --feature-columns 'px*' --row-groups 0 --epochs 1 "
              "--batch-size 64 --device cpu");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "600 train, 200 test samples")) << r.output;
  r = run_cli("train" + both + " --label-column digit --feature-columns 'px*' --row-groups 1 --device cpu");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, dir + "/train.parquet: no row group 1 (the file has 1)")) << r.output;
}

TEST(Cli, TrainsOnOtherImageShapesAndClassCounts) {
  const std::string dir = testing::scratch_dir("cli_shape");
  write_csv(dir + "/train.csv", colour_table(400, 1));
  parquet::write_table(dir + "/test.parquet", colour_table(100, 2));
  const std::string files = " --data " + dir + "/train.csv --test-data " + dir + "/test.parquet --label-column y "
                            "--feature-columns 'v*' --device cpu --batch-size 32";
  CliRun r = run_cli("train" + files + " --image-shape 3x8x8 --epochs 3 --save " + dir + "/model.pt");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "3x8x8 images, 4 classes")) << r.output;
  const auto at = r.output.find("Test Accuracy: ");
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_GE(std::stod(r.output.substr(at + 15)), 90.0) << r.output;  // chance: 25%
  SimpleCNN model(SimpleCNNOptions().channels(3).height(8).width(8).classes(4));
  load_module(*model, dir + "/model.pt");  // the saved model has this shape
  SimpleCNN experiments;  // 1x28x28, 10 classes: refused, and left as it was
  const auto fc1 = experiments->named_parameters()["fc1.weight"].clone();
  try {
    load_module(*experiments, dir + "/model.pt");
    ADD_FAILURE() << "a model of another layout loaded";
  } catch (const InvalidFile& e) {
    EXPECT_TRUE(contains(e.what(), "not a saved model of this layout (conv1.weight is [16, 3, 3, 3] in the file, "
                                   "[16, 1, 3, 3] here)")) << e.what();
  }
  EXPECT_TRUE(torch::equal(experiments->named_parameters()["fc1.weight"], fc1));
  EXPECT_EQ(experiments->forward(torch::zeros({1, 1, 28, 28})).sizes(), (std::vector<int64_t>{1, 10}));

  // A class count that the labels exceed, and shapes that do not fit, are refused by name.
  r = run_cli("train" + files + " --image-shape 3x8x8 --num-classes 3");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, dir + "/train.csv: holds label 3, outside 0..2 (3 classes, --num-classes)")) << r.output;
  r = run_cli("train" + files);
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, "192 feature columns match 'v*', expected 784")) << r.output;
  for (const std::string bad : {"3x8", "3x8x8x1", "0x8x8", "ax8x8", "3x-8x8"}) {
    r = run_cli("train" + files + " --image-shape " + bad);
    EXPECT_EQ(r.status, 1) << bad;
    EXPECT_TRUE(contains(r.output, "--image-shape '" + bad + "': expected CxHxW")) << r.output;
  }
  r = run_cli("train" + files + " --image-shape 48x2x2");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, "SimpleCNN needs images of at least 4x4 pixels")) << r.output;
}

TEST(Cli, TrainStreamsParquetRowGroups) {
  const std::string idx = make_idx_dir("cli_stream_idx", 600, 200);
  const std::string dir = testing::scratch_dir("cli_stream");
  parquet::WriteOptions small_groups;
  small_groups.row_group_rows = 64;
  for (const std::string split : {"train", "t10k"}) {
    parquet::write_table(dir + "/" + split + ".parquet",
                         image_split_to_table(read_idx_split(idx + "/" + split + "-images-idx3-ubyte",
                                                             idx + "/" + split + "-labels-idx1-ubyte")),
                         small_groups);
  }
  const std::string files = " --data " + dir + "/train.parquet --test-data " + dir + "/t10k.parquet";
  CliRun r = run_cli("train" + files + " --dataset-mode stream --epochs 2 --batch-size 32 --num-workers 2 --device cpu");
  ASSERT_EQ(r.status, 0) << r.output;
  // 600 rows in 10 row groups: each read once an epoch (and the first once more when the dataset is made), at most.
  const auto at = r.output.find("Streamed: ");
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_LE(std::stoi(r.output.substr(at + 10)), 21) << r.output;
  EXPECT_TRUE(contains(r.output, "row group reads of the train file's 10 row groups, over 2 epochs")) << r.output;
  const auto acc = r.output.find("Test Accuracy: ");
  ASSERT_NE(acc, std::string::npos) << r.output;
  EXPECT_GE(std::stod(r.output.substr(acc + 15)), 80.0) << r.output;

  write_csv(dir + "/train.csv", parquet::read_table(dir + "/train.parquet"));
  r = run_cli("train --data " + dir + "/train.csv --test-data " + dir + "/t10k.parquet --dataset-mode stream --device cpu");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, dir + "/train.csv: a streamed dataset reads Parquet row groups")) << r.output;
  r = run_cli("train" + files + " --dataset-mode stream --row-groups 0 --device cpu");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, "--row-groups: a streamed dataset reads every row group")) << r.output;
}

TEST(Cli, TrainColumnErrorsNameTheFile) {
  const std::string idx = make_idx_dir("cli_columns_bad_idx", 20, 10);
  const std::string dir = testing::scratch_dir("cli_columns_bad_data");
  write_csv(dir + "/train.csv", renamed_table(idx, "train"));
  parquet::write_table(dir + "/test.parquet", renamed_table(idx, "t10k"));
  const std::string train = dir + "/train.csv", test = dir + "/test.parquet";
  const std::string files = " --data " + train + " --test-data " + test + " --device cpu --epochs 1";
  const auto fails_with = [&](const std::string& args, const std::string& message) {
    const CliRun r = run_cli("train" + files + " " + args);
    EXPECT_EQ(r.status, 1) << args << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "feedline: error: " + message)) << args << "\n" << r.output;
    EXPECT_EQ(count_of(r.output, "\n"), 1u) << args << "\n" << r.output;  // one line, no crash
  };
  fails_with("", train + ": no label column 'label' (the file has id, note, digit, px0, px1, ... (787 columns))");
  fails_with("--label-column digit", train + ": no column matches 'pixel*'");
  fails_with("--label-column digit --feature-columns 'px*,img*'", train + ": no column matches 'img*'");
  fails_with("--label-column digit --feature-columns 'px1*'", train + ": 111 feature columns match 'px1*', expected 784");
  fails_with("--label-column digit --feature-columns 'px*' --columns digit,px0,px1",
             train + ": 2 feature columns match 'px*', expected 784");
  fails_with("--label-column digit --feature-columns 'px*' --columns digit,nope", train + ": no column 'nope'");
  fails_with("--label-column id --feature-columns note", train + ": 1 feature columns match 'note', expected 784");
  fails_with("--label-column digit --feature-columns 'px*' --row-groups 0",
             train + ": row groups are chosen in Parquet files; CSV has none");

  // --data and --test-data go together and replace --dataset, --data-dir and --format.
  CliRun r = run_cli("train --data " + train + " --device cpu");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "--test-data")) << r.output;
  r = run_cli("train --test-data " + test + " --device cpu");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "--data")) << r.output;
  r = run_cli("train" + files + " --dataset mnist");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "--dataset")) << r.output;
  r = run_cli("train --data " + dir + "/none.parquet --test-data " + test + " --device cpu");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, dir + "/none.parquet")) << r.output;
}

// train --data reads a folder of Parquet files as one split, streamed a row group at a time across the files.
TEST(Cli, TrainStreamsAFolderOfParquetFiles) {
  const std::string idx = make_idx_dir("cli_stream_folder_idx", 600, 200);
  const std::string dir = testing::scratch_dir("cli_stream_folder");
  const Table train =
      image_split_to_table(read_idx_split(idx + "/train-images-idx3-ubyte", idx + "/train-labels-idx1-ubyte"));
  parquet::WriteOptions small_groups;
  small_groups.row_group_rows = 64;
  for (int s = 0; s < 3; ++s) {
    parquet::write_table(dir + "/train-0000" + std::to_string(s) + "-of-00003.parquet",
                         slice(train, 200 * s, 200 * s + 200), small_groups);
  }
  parquet::write_table(dir + "/test.parquet", image_split_to_table(read_idx_split(idx + "/t10k-images-idx3-ubyte",
                                                                                 idx + "/t10k-labels-idx1-ubyte")));
  const std::string files = " --data '" + dir + "/train-*.parquet' --test-data " + dir + "/test.parquet";
  CliRun r =
      run_cli("train" + files + " --dataset-mode stream --epochs 2 --batch-size 32 --num-workers 2 --device cpu");
  ASSERT_EQ(r.status, 0) << r.output;
  // 600 rows in 3 files of 4 row groups (64, 64, 64, 8).
  EXPECT_TRUE(contains(r.output, "600 train, 200 test samples")) << r.output;
  EXPECT_TRUE(contains(r.output, "of the train dataset (3 files)'s 12 row groups, over 2 epochs")) << r.output;
  const auto acc = r.output.find("Test Accuracy: ");
  ASSERT_NE(acc, std::string::npos) << r.output;
  EXPECT_GE(std::stod(r.output.substr(acc + 15)), 80.0) << r.output;
  r = run_cli("train" + files + " --epochs 1 --batch-size 32 --device cpu");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "600 train, 200 test samples")) << r.output;
}

}  // namespace
}  // namespace feedline
