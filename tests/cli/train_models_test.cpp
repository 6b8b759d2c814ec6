// `feedline train --model`: torchvision's ResNets and recipe from the command line on image files, resumed from a
// mid-run checkpoint to the uninterrupted run's saved model byte for byte; flags that cannot work together refused
// by name before any data is read.
#include <gtest/gtest.h>

#include <string>

#include "cli/cli_support.h"
#include "feedline/dist/device_choice.h"
#include "feedline/dist/train_job.h"
#include "feedline/io/error.h"
#include "feedline/train/train.h"
#include "test_paths.h"

namespace feedline {
namespace {

using testing::CliRun;
using testing::run_cli;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The photo set (`prepare --photos`): 100 crops of the ten photos that skimage and sklearn ship, a class each, in
// class folders.
std::string photos() {
  static const std::string folder = [] {
    const std::string data = testing::scratch_dir("train_models_photos");
    const CliRun r = run_cli("prepare --photos 100 --data-dir " + data);
    EXPECT_EQ(r.status, 0) << r.output;
    return data + "/photos/jpeg/train";
  }();
  return folder;
}

std::string resnet_args(const std::string& extra) {
  return "train --data " + photos() + " --test-data " + photos() + " --image-size 32 --model resnet18 "
         "--optimizer sgd --nesterov --weight-decay 1e-4 --norm-weight-decay 0 --lr 0.02 --lr-scheduler cosine "
         "--lr-warmup-epochs 1 --label-smoothing 0.1 --clip-grad-norm 5 --ema-decay 0.9 --ema-steps 2 "
         "--batch-size 20 --epochs 2 --num-workers 2 --threads 2 " + extra;
}

// The mean train loss an epoch line reports ("Epoch 2/2: train 1.20s (loss 2.1234, ...").
double train_loss(const std::string& output, int epoch) {
  const std::string line = "Epoch " + std::to_string(epoch) + "/2: train ";
  const auto at = output.find(line);
  if (at == std::string::npos) return -1;
  const auto loss = output.find("(loss ", at);
  return loss == std::string::npos ? -1 : std::stod(output.substr(loss + 6));
}

TEST(TrainModels, AResNetTrainsWithTorchvisionsRecipeAndResumesToTheSameModel) {
  const std::string whole = testing::scratch_dir("train_models_whole");
  CliRun r = run_cli(resnet_args("--save " + whole + "/model.pt"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "ResNet-18: 11181642 parameters; 3x32x32 images, 10 classes")) << r.output;
  // The loss falls: ten photos, cropped at random, are told apart within two epochs.
  EXPECT_GT(train_loss(r.output, 1), 0) << r.output;
  EXPECT_LT(train_loss(r.output, 2), train_loss(r.output, 1)) << r.output;
  EXPECT_TRUE(contains(r.output, "Epoch 2/2: the weights' average: test loss ")) << r.output;
  EXPECT_TRUE(contains(r.output, "into a ResNet-18 of the same options")) << r.output;

  // The same run with checkpoints every 3 steps (5 steps an epoch: 100 photos in batches of 20).
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
  const std::string images = "train --data " + photos() + " --test-data " + photos() + " --image-size 32 ";
  const struct {
    std::string args, says;
  } cases[] = {
      {"train --model resnet50 --limit 10 --epochs 1", "--model resnet50 takes RGB images"},
      {images + "--model resnet18 --precision bf16 --device cpu", "--precision bf16 runs on a CUDA device"},
      {images + "--precision fp16 --device cpu", "--precision fp16 runs on a CUDA device"},
      {images + "--device gpu", "--device: 'gpu' is not a device: auto, cpu, cuda or cuda:N"},
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

// The job driver's own refusals name the option (TrainJobOptions' field), never a flag: the CLI puts its flags in.
TEST(TrainModels, TheJobNamesTheOptionNotTheFlag) {
  dist::TrainJobOptions options;
  options.data.image_shape = ImageShape{1, 2, 2};
  options.device = parse_device_choice("cpu");
  try {
    dist::run_train_job(options);
    FAIL() << "a 2x2 image was accepted";
  } catch (const dist::JobOptionError& e) {
    EXPECT_EQ(e.which, dist::JobOption::kImageShape);
    EXPECT_EQ(std::string(e.what()), "data.image_shape 1x2x2: SimpleCNN needs images of at least 4x4 pixels");
  }
}

TEST(TrainModels, DeviceChoicesReadBackAsTheirText) {
  for (const std::string text : {"auto", "cpu", "cuda", "cuda:0", "cuda:12"}) {
    EXPECT_EQ(device_choice_text(parse_device_choice(text)), text);
  }
  EXPECT_EQ(parse_device_choice("cuda:3").index, 3);
  for (const std::string bad : {"gpu", "cuda:", "cuda:-1", "cuda:x", "CPU", ""}) {
    EXPECT_THROW(parse_device_choice(bad), InvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace feedline
