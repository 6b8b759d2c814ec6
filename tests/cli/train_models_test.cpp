// `feedline train --model`: torchvision's ResNets and recipe from the command line on image files, resumed from a
// mid-run checkpoint to the uninterrupted run's saved model byte for byte; flags that cannot work together refused
// by name before any data is read.
#include <gtest/gtest.h>

#include <string>

#include "cli/cli_support.h"
#include "test_paths.h"

namespace feedline {
namespace {

using testing::CliRun;
using testing::run_cli;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// 120 train and 40 test images of 28x28 digits in class folders (`prepare --images`).
std::string image_folders() {
  static const std::string root = [] {
    const std::string idx = testing::make_idx_dir("train_models_idx", 120, 40);
    const std::string data = testing::scratch_dir("train_models_data");
    const CliRun r = run_cli("prepare --images --dataset mnist --mnist-idx " + idx + " --data-dir " + data);
    EXPECT_EQ(r.status, 0) << r.output;
    return data + "/MNIST/images/png/";
  }();
  return root;
}

std::string resnet_args(const std::string& extra) {
  const std::string root = image_folders();
  return "train --data " + root + "train --test-data " + root + "test --image-size 32 --model resnet18 "
         "--optimizer sgd --nesterov --weight-decay 1e-4 --norm-weight-decay 0 --lr 0.02 --lr-scheduler cosine "
         "--lr-warmup-epochs 1 --label-smoothing 0.1 --clip-grad-norm 5 --ema-decay 0.9 --ema-steps 2 "
         "--batch-size 24 --epochs 2 --num-workers 2 --threads 2 " + extra;
}

TEST(TrainModels, AResNetTrainsWithTorchvisionsRecipeAndResumesToTheSameModel) {
  const std::string whole = testing::scratch_dir("train_models_whole");
  CliRun r = run_cli(resnet_args("--save " + whole + "/model.pt"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "ResNet-18: 11181642 parameters; 3x32x32 images, 10 classes")) << r.output;
  EXPECT_TRUE(contains(r.output, "Epoch 2/2: the weights' average: test loss ")) << r.output;
  EXPECT_TRUE(contains(r.output, "into a ResNet-18 of the same options")) << r.output;

  // The same run with checkpoints every 3 steps (5 steps an epoch).
  const std::string parts = testing::scratch_dir("train_models_parts");
  r = run_cli(resnet_args("--checkpoint " + parts + "/ck --checkpoint-every 3 --keep-checkpoints 9"));
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string ck = parts + "/ck";
  const std::string resumed = testing::scratch_dir("train_models_resumed");
  // Only step 6's checkpoint left, as a job killed between steps 6 and 9 leaves it.
  r = testing::run_command("cd " + ck + " && for f in checkpoint-*.pt; do [ \"$f\" = checkpoint-000000006.pt ] || "
                           "rm \"$f\"; done && ls");
  ASSERT_EQ(r.status, 0) << r.output;
  ASSERT_TRUE(contains(r.output, "checkpoint-000000006.pt")) << r.output;
  r = run_cli(resnet_args("--resume " + ck + " --save " + resumed + "/model.pt"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Resuming from " + ck + "/checkpoint-000000006.pt: epoch 2, step 1")) << r.output;
  EXPECT_EQ(testing::file_bytes(resumed + "/model.pt"), testing::file_bytes(whole + "/model.pt"));
}

TEST(TrainModels, FlagsThatCannotWorkAreRefusedByName) {
  const std::string root = image_folders();
  const std::string images = "train --data " + root + "train --test-data " + root + "test --image-size 32 ";
  const struct {
    std::string args, says;
  } cases[] = {
      {"train --model resnet50 --limit 10 --epochs 1", "--model resnet50 takes RGB images"},
      {images + "--model resnet18 --precision bf16 --device cpu", "--precision bf16 runs on a CUDA device"},
      {images + "--weight-decay 0.1", "pass --optimizer sgd"},
      {images + "--lr-scheduler cosine --lr-warmup-epochs 5 --epochs 5", "--lr-warmup-epochs 5"},
      {images + "--model vgg16", "--model"},
  };
  for (const auto& c : cases) {
    const CliRun r = run_cli(c.args);
    EXPECT_NE(r.status, 0) << c.args;
    EXPECT_TRUE(contains(r.output, c.says)) << c.args << "\n" << r.output;
  }
}

}  // namespace
}  // namespace feedline
