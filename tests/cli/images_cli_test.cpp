// End-to-end tests of the tool on image files: `prepare --images` writes the four layouts, `inspect` reports image
// sets (bad files counted, not fatal), and `train --image-size` trains on them, skipping corrupt images on request.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/cli_support.h"
#include "feedline/dataset/image_sources.h"
#include "feedline/io/file.h"
#include "feedline/io/idx.h"
#include "feedline/io/image_decode.h"
#include "feedline/io/parquet.h"
#include "test_paths.h"

namespace feedline {
namespace {

namespace fs = std::filesystem;
using testing::CliRun;
using testing::make_idx_dir;
using testing::run_cli;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

int64_t count_files(const std::string& dir, const std::string& ext) {
  int64_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) n += e.is_regular_file() && e.path().extension() == ext;
  return n;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

// `prepare --images` of a tiny MNIST-shaped dataset (labels i % 10): its MNIST folder.
std::string prepare_images(const std::string& name, uint32_t train, uint32_t test) {
  const std::string idx = make_idx_dir(name + "_idx", train, test);
  const std::string data = testing::scratch_dir(name + "_data");
  const CliRun r = run_cli("prepare --images --dataset mnist --mnist-idx " + idx + " --data-dir " + data);
  EXPECT_EQ(r.status, 0) << r.output;
  return data + "/MNIST";
}

TEST(ImagesCli, PrepareWritesFourLayoutsThatKeepEveryPixelAndLabel) {
  const std::string idx = make_idx_dir("images_prep_idx", 120, 40);
  const std::string data = testing::scratch_dir("images_prep_data");
  CliRun r = run_cli("prepare --images --dataset mnist --mnist-idx " + idx + " --data-dir " + data);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Images (")) << r.output;
  EXPECT_TRUE(contains(r.output, "Storage")) << r.output;  // the tables were missing: written too
  const std::string root = data + "/MNIST/images";
  const ImageSplit split = read_idx_split(idx + "/train-images-idx3-ubyte", idx + "/train-labels-idx1-ubyte");

  // Class folders: ImageFolder's order gives label = class number, and files keep the split's order.
  for (const auto& [layout, ext] : {std::pair<std::string, std::string>{"png", ".png"}, {"jpeg", ".jpg"}}) {
    EXPECT_EQ(count_files(root + "/" + layout + "/train", ext), 120) << layout;
    EXPECT_EQ(count_files(root + "/" + layout + "/test", ext), 40) << layout;
    const ImageFolderSource folder(root + "/" + layout + "/train");
    ASSERT_EQ(folder.size(), 120);
    EXPECT_EQ(folder.classes(), (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}));
    for (int64_t i = 0; i < folder.size(); ++i) {
      const auto& [path, label] = folder.samples()[i];
      const int64_t index = std::stoll(fs::path(path).stem().string());
      ASSERT_EQ(label, split.labels[index]) << path;
      const DecodedImage image = decode_image(read_file(path), path, DecodeOptions{true, kDefaultMaxImagePixels});
      ASSERT_EQ(image.width, 28);
      ASSERT_EQ(image.height, 28);
      const uint8_t* want = split.images.data() + index * 784;
      double diff = 0;
      for (int p = 0; p < 784; ++p) diff += std::abs(int(image.pixels[p]) - int(want[p]));
      if (ext == ".png") {
        ASSERT_EQ(diff, 0) << path;  // lossless
      } else {
        EXPECT_LT(diff / 784, 6.0) << path;  // quality 90
      }
    }
  }

  // Hugging Face's layout: image{bytes, path} as PNG, int64 labels, the ClassLabel names in the metadata.
  const Table table = parquet::read_table(root + "/parquet/train.parquet");
  ASSERT_EQ(table.num_rows, 120);
  const Column& bytes = table.column("image.bytes");
  const Column& label = table.column("label");
  ASSERT_EQ(label.schema.type, PhysicalType::kInt64);
  for (int64_t i = 0; i < 120; ++i) {
    EXPECT_EQ(label.as<int64_t>()[i], split.labels[i]);
    const DecodedImage image = decode_image(std::string(bytes.byte_arrays().at(i)), "row", DecodeOptions{true});
    EXPECT_TRUE(std::equal(image.pixels.begin(), image.pixels.end(), split.images.begin() + i * 784)) << i;
  }
  EXPECT_EQ(std::string(table.column("image.path").byte_arrays().at(7)), "00007.png");
  const parquet::FileInfo info = parquet::read_file_info(root + "/parquet/train.parquet");
  ASSERT_FALSE(info.key_value_metadata.empty());
  EXPECT_EQ(info.key_value_metadata[0].first, "huggingface");
  EXPECT_TRUE(contains(info.key_value_metadata[0].second, "\"ClassLabel\"")) << info.key_value_metadata[0].second;

  // WebDataset shards: 120 samples make one shard, read in order with their labels.
  const TarShardSource shards({root + "/shards/train-000000.tar"});
  ASSERT_EQ(shards.size(), 120);
  EXPECT_EQ(shards.entries()[5].member, "000005.png");
  for (int64_t i = 0; i < 120; ++i) EXPECT_EQ(shards.entries()[i].label, split.labels[i]);
  EXPECT_FALSE(fs::exists(root + "/shards/train-000001.tar"));

  // Again: the tables exist, so only the images are written; nothing temporary is left.
  const auto csv_time = fs::last_write_time(data + "/MNIST/train.csv");
  r = run_cli("prepare --images --dataset mnist --mnist-idx " + idx + " --data-dir " + data);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "Storage")) << r.output;
  EXPECT_EQ(fs::last_write_time(data + "/MNIST/train.csv"), csv_time);
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    EXPECT_FALSE(contains(e.path().string(), ".tmp-") || contains(e.path().string(), ".old-")) << e.path();
  }
  EXPECT_EQ(count_files(root + "/png/train", ".png"), 120);
}

TEST(ImagesCli, InspectReportsFoldersShardsAndParquetCountingBadFiles) {
  const std::string mnist = prepare_images("images_inspect", 60, 20);
  const std::string root = mnist + "/images";
  // A corrupt image in a class folder, and a shard whose second sample is corrupt.
  write_bytes(root + "/png/train/3/99999.png", "\x89PNG\r\n\x1a\n not really a png");
  const std::string work = testing::scratch_dir("images_inspect_bad");
  write_bytes(work + "/000000.png", read_file(root + "/png/train/0/00000.png"));
  write_bytes(work + "/000000.cls", "0");
  write_bytes(work + "/000001.png", "garbage");
  write_bytes(work + "/000001.cls", "7");
  ASSERT_EQ(testing::run_command("tar -cf " + work + "/bad.tar -C " + work +
                                 " 000000.png 000000.cls 000001.png 000001.cls").status, 0);

  CliRun r = run_cli("inspect " + root + "/png/train");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Layout: folder")) << r.output;
  EXPECT_TRUE(contains(r.output, "Samples: 61")) << r.output;
  EXPECT_TRUE(contains(r.output, "Classes (10)")) << r.output;
  EXPECT_TRUE(contains(r.output, "PNG            60")) << r.output;
  EXPECT_TRUE(contains(r.output, "Sizes: 28..28 wide, 28..28 high")) << r.output;
  EXPECT_TRUE(contains(r.output, "Unreadable: 1")) << r.output;
  EXPECT_TRUE(contains(r.output, "99999.png")) << r.output;

  // A list of shards: the good one and the bad one; the bad member is named by shard and member.
  r = run_cli("inspect " + root + "/shards/train-000000.tar," + work + "/bad.tar");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Layout: tar shards")) << r.output;
  EXPECT_TRUE(contains(r.output, "Samples: 62")) << r.output;
  EXPECT_TRUE(contains(r.output, "numbers only")) << r.output;
  EXPECT_TRUE(contains(r.output, "Unreadable: 1")) << r.output;
  EXPECT_TRUE(contains(r.output, "bad.tar:000001.png")) << r.output;

  // A brace pattern; and sampling: 10 of 60 probed, and said so.
  r = run_cli("inspect '" + root + "/shards/train-{000000..000000}.tar' --sample 10");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Samples: 60")) << r.output;
  EXPECT_TRUE(contains(r.output, "10 of 60 read and probed")) << r.output;
  EXPECT_FALSE(contains(r.output, "Unreadable")) << r.output;

  // Hugging Face Parquet: the class names from its metadata; a plain table keeps the table's output.
  r = run_cli("inspect " + root + "/parquet/test.parquet");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Layout: parquet")) << r.output;
  EXPECT_TRUE(contains(r.output, "Samples: 20")) << r.output;
  EXPECT_FALSE(contains(r.output, "numbers only")) << r.output;
  r = run_cli("inspect " + mnist + "/test.parquet");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Schema (785 columns)")) << r.output;
  EXPECT_FALSE(contains(r.output, "Layout:")) << r.output;
}

TEST(ImagesCli, TrainsOnAJpegFolderSkippingACorruptImage) {
  const std::string mnist = prepare_images("images_train", 300, 100);
  const std::string jpeg = mnist + "/images/jpeg";
  write_bytes(jpeg + "/train/5/99999.jpg", "\xff\xd8\xff not a jpeg");
  const std::string common = "train --device cpu --data " + jpeg + "/train --test-data " + jpeg +
                             "/test --image-size 28 --batch-size 32 --num-workers 2";

  CliRun r = run_cli(common + " --epochs 1 --on-error skip");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "image files, folder")) << r.output;
  EXPECT_TRUE(contains(r.output, "301 train, 100 test samples")) << r.output;
  EXPECT_TRUE(contains(r.output, "3x28x28 images, 10 classes")) << r.output;
  EXPECT_TRUE(contains(r.output, "RandomResizedCrop(size=(28, 28)")) << r.output;
  EXPECT_TRUE(contains(r.output, "Skipped 1 train sample this epoch")) << r.output;
  EXPECT_TRUE(contains(r.output, "99999.jpg")) << r.output;
  EXPECT_TRUE(contains(r.output, "Test Accuracy: ")) << r.output;

  // Raised by default, naming the file.
  r = run_cli(common + " --epochs 1");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "99999.jpg")) << r.output;

  // Without augmentation the easy classes are learnt from the tar shards.
  r = run_cli("train --device cpu --data " + mnist + "/images/shards/train-000000.tar --test-data " + mnist +
              "/images/shards/test-000000.tar --image-size 28 --batch-size 32 --epochs 4 --augment none");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "image files, tar shards")) << r.output;
  const auto at = r.output.find("Test Accuracy: ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_GE(std::stod(r.output.substr(at + 15)), 80.0) << r.output;
}

// torchvision's reference recipe's presets: TrivialAugmentWide after the crop and flip, RandomErasing on the tensor,
// and MixUp or CutMix over each batch, whose float images and soft targets the training loop takes.
TEST(ImagesCli, TrainsWithTheReferenceRecipesAugmentations) {
  const std::string mnist = prepare_images("images_recipe", 120, 40);
  const std::string jpeg = mnist + "/images/jpeg";
  const std::string common = "train --device cpu --data " + jpeg + "/train --test-data " + jpeg +
                             "/test --image-size 28 --batch-size 32 --num-workers 2 --epochs 1";
  CliRun r = run_cli(common + " --augment ta-wide --random-erase 0.25 --mixup-alpha 0.2 --cutmix-alpha 1.0 "
                              "--label-smoothing 0.1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "RandomHorizontalFlip(p=0.5), TrivialAugmentWide(num_magnitude_bins=31, "
                                 "interpolation=InterpolationMode.BILINEAR")) << r.output;
  EXPECT_TRUE(contains(r.output, "ToTensor(), RandomErasing(p=0.25")) << r.output;
  EXPECT_TRUE(contains(r.output, "batches: RandomChoice([RandomMixup(p=1.0, alpha=0.2), RandomCutmix(p=1.0, "
                                 "alpha=1.0)])")) << r.output;
  EXPECT_TRUE(contains(r.output, "Test Accuracy: ")) << r.output;

  r = run_cli(common + " --augment rand-augment --cutmix-alpha 0.5");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "RandAugment(")) << r.output;
  EXPECT_TRUE(contains(r.output, "batches: RandomChoice([RandomCutmix(p=1.0, alpha=0.5)])")) << r.output;
  EXPECT_FALSE(contains(r.output, "RandomErasing")) << r.output;

  r = run_cli("train --mixup-alpha 0.2");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "--image-size")) << r.output;
}

TEST(ImagesCli, TrainNamesAMissingDataPath) {
  const std::string missing = testing::scratch_dir("images_missing") + "/no-such-folder";
  CliRun r = run_cli("train --device cpu --data " + missing + " --test-data " + missing + " --image-size 28");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--data " + missing)) << r.output;
  r = run_cli("train --augment none");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "--image-size")) << r.output;
}

}  // namespace
}  // namespace feedline
