// Images as one dataset whatever their layout: the spec told apart as a class-folder tree, Parquet files or tar
// shards and opened as its source, and make_image_dataset's decoding and transforms served by the loader, the same
// with any worker count, with a corrupt file skipped or named.
#include "feedline/dataset/image_dataset.h"

#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "feedline/dataset/image_sources.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/loader/loader.h"
#include "test_errors.h"
#include "test_paths.h"

namespace feedline {
namespace {

namespace fs = std::filesystem;

std::string images_dir() { return testing::test_data_dir() + "/images"; }
std::string hf_dir() { return images_dir() + "/hf"; }

using testing::expect_error;

std::string train_file(int k) {
  return hf_dir() + "/train/train-0000" + std::to_string(k) + "-of-00002.parquet";
}

void touch(const std::string& path, const std::string& bytes = "") {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(ImageSourceKind, TellsTheLayoutFromTheSpec) {
  const std::string dir = testing::scratch_dir("image_source_kind");
  touch(dir + "/shards/s-0.tar");
  touch(dir + "/shards/s-1.tar");
  touch(dir + "/tree/cat/sub/a.JPG");
  touch(dir + "/tree/dog/b.png");
  touch(dir + "/tree/notes.parquet");  // beside class folders: not a Parquet dataset's file
  fs::create_directories(dir + "/hub/data");
  fs::copy_file(hf_dir() + "/plain.parquet", dir + "/hub/data/train-00000-of-00001.parquet");
  EXPECT_EQ(image_source_kind(dir + "/shards/s-0.tar"), ImageSourceKind::kTarShards);
  EXPECT_EQ(image_source_kind(dir + "/shards/s-{0..1}.tar"), ImageSourceKind::kTarShards);
  EXPECT_EQ(image_source_kind(dir + "/shards/s-0.tar," + dir + "/shards/s-1.tar"), ImageSourceKind::kTarShards);
  EXPECT_EQ(image_source_kind(dir + "/shards/s-*.tar"), ImageSourceKind::kTarShards);
  EXPECT_EQ(image_source_kind(hf_dir() + "/plain.parquet"), ImageSourceKind::kParquet);
  EXPECT_EQ(image_source_kind(hf_dir() + "/train"), ImageSourceKind::kParquet);
  EXPECT_EQ(image_source_kind(hf_dir() + "/train/*.parquet"), ImageSourceKind::kParquet);
  EXPECT_EQ(image_source_kind(train_file(0) + "," + train_file(1)), ImageSourceKind::kParquet);
  EXPECT_EQ(image_source_kind(dir + "/hub"), ImageSourceKind::kParquet);  // Parquet files one folder down
  EXPECT_EQ(image_source_kind(dir + "/tree"), ImageSourceKind::kFolder);
  EXPECT_STREQ(image_source_kind_name(ImageSourceKind::kTarShards), "tar shards");

  expect_error<IoError>([&] { image_source_kind(dir + "/nothing"); }, {dir + "/nothing"});
  expect_error<IoError>([&] { image_source_kind(dir + "/shards/x-{0..1}.tar"); }, {dir + "/shards/x-{0..1}.tar"});
  expect_error<IoError>([&] { image_source_kind(dir + "/shards/x-*.tar"); }, {dir + "/shards/x-*.tar"});
  expect_error<IoError>([&] { open_image_source(dir + "/nothing.parquet"); }, {dir + "/nothing.parquet"});

  // Each opened as its source.
  const auto tree = open_image_source(dir + "/tree");
  ASSERT_NE(dynamic_cast<const ImageFolderSource*>(tree.get()), nullptr);
  EXPECT_EQ(tree->class_names(), (std::vector<std::string>{"cat", "dog"}));
  const auto hub = open_image_source(dir + "/hub");
  ASSERT_NE(dynamic_cast<const ParquetImageSource*>(hub.get()), nullptr);
  EXPECT_EQ(hub->size(), 5);
  touch(dir + "/real/staging/k.png", read_file(images_dir() + "/gray16.png"));
  touch(dir + "/real/staging/k.cls", "1");
  const std::string tar = "tar -cf '" + dir + "/real/real-0.tar' -C '" + dir + "/real/staging' k.png k.cls";
  ASSERT_EQ(std::system(tar.c_str()), 0) << tar;
  const auto shards = open_image_source(dir + "/real/real-*.tar");
  ASSERT_NE(dynamic_cast<const TarShardSource*>(shards.get()), nullptr);
  EXPECT_EQ(shards->get(0).name, dir + "/real/real-0.tar:k.png");
  EXPECT_EQ(shards->labels(), (std::vector<int64_t>{1}));
  const auto pair = open_image_source(hf_dir() + "/train/train-0000{0..1}-of-00002.parquet");
  EXPECT_EQ(pair->size(), 8);
  ImageSourceOptions options;
  options.parquet.label_column = "nothing";
  expect_error<InvalidArgument>([&] { open_image_source(dir + "/hub", options); }, {"no label column nothing"});
}

// A class-folder tree of real photos, and `extra` files (relative path, bytes) beside them.
std::string photo_tree(const std::string& name, const std::vector<std::pair<std::string, std::string>>& extra) {
  const std::string root = testing::scratch_dir(name);
  const std::vector<std::pair<std::string, std::string>> photos{
      {"a/1.webp", "chelsea_lossy.webp"},      {"a/2.jpg", "chelsea_gray.jpg"},  {"a/3.png", "png_named.jpg"},
      {"b/1.jpg", "chelsea_444_progressive.jpg"}, {"b/2.png", "chelsea_palette_trns.png"},
      {"b/3.png", "green_palette.png"},        {"b/4.webp", "chelsea_alpha.webp"}};
  for (const auto& [to, from] : photos) touch(root + "/" + to, read_file(images_dir() + "/" + from));
  for (const auto& [to, bytes] : extra) touch(root + "/" + to, bytes);
  return root;
}

std::vector<Example> all_batches(Loader& loader) {
  std::vector<Example> out;
  Epoch epoch = loader.epoch();
  while (auto batch = epoch.next()) out.push_back(std::move(*batch));
  return out;
}

const std::vector<ImageStep> kSteps{image_steps::RandomResizedCrop{32, 32}, image_steps::ToTensor{}};

TEST(ImageDataset, APhotoFolderGivesTheSameBatchesWithAnyWorkers) {
  const auto dataset = make_image_dataset(open_image_source(photo_tree("photos", {})), kSteps);
  std::vector<std::vector<Example>> runs;
  for (const int64_t workers : {0, 2}) {
    Loader loader(dataset, LoaderOptions(3).shuffle(true).seed(4).num_workers(workers));
    runs.push_back(all_batches(loader));
    runs.push_back(all_batches(loader));
  }
  ASSERT_EQ(runs[0].size(), 3u);  // 7 photos in batches of 3
  EXPECT_EQ(runs[0][0].data.sizes(), (std::vector<int64_t>{3, 3, 32, 32}));
  EXPECT_EQ(runs[0][0].data.scalar_type(), torch::kFloat32);
  for (size_t r = 2; r < runs.size(); ++r) {
    ASSERT_EQ(runs[r].size(), runs[r % 2].size());
    for (size_t k = 0; k < runs[r].size(); ++k) {
      EXPECT_TRUE(torch::equal(runs[r][k].data, runs[r % 2][k].data)) << "run " << r << ", batch " << k;
      EXPECT_TRUE(torch::equal(runs[r][k].target, runs[r % 2][k].target)) << "run " << r << ", batch " << k;
    }
  }
  // Epochs differ (another order and other crops), and every value is a pixel / 255.
  EXPECT_FALSE(torch::equal(runs[0][0].data, runs[1][0].data));
  EXPECT_GE(runs[0][0].data.min().item<float>(), 0.0f);
  EXPECT_LE(runs[0][0].data.max().item<float>(), 1.0f);
  expect_error<InvalidArgument>([] { make_image_dataset(open_image_source(hf_dir() + "/plain.parquet"),
                                                        {image_steps::ToTensor{}}); }, {"RandomResizedCrop"});
}

// What the training loop expects of image batches: uint8 (it normalises on the device), page-locked when the loader
// pins, which it does where CUDA is.
TEST(ImageDataset, BatchesAreUint8AndPinnedWherePinningTakesEffect) {
  const auto dataset = make_image_dataset(open_image_source(photo_tree("photos_pinned", {})),
                                          {image_steps::RandomResizedCrop{24, 24}, image_steps::PILToTensor{}});
  Loader loader(dataset, LoaderOptions(3).num_workers(2).pin_memory(true));
  const bool cuda = torch::cuda::is_available();
  EXPECT_EQ(loader.pin_memory_active(), cuda);
  const std::vector<Example> batches = all_batches(loader);
  ASSERT_EQ(batches.size(), 3u);
  for (const Example& b : batches) {
    EXPECT_EQ(b.data.scalar_type(), torch::kUInt8);
    EXPECT_EQ(b.data.size(1), 3);
    EXPECT_EQ(b.data.is_pinned(), cuda);
    EXPECT_EQ(b.target.is_pinned(), cuda);
  }
}

TEST(ImageDataset, ACorruptPhotoIsSkippedOrNamed) {
  const std::string root = photo_tree("photos_corrupt", {{"a/0.jpg", read_file(images_dir() + "/not_an_image.jpg")},
                                                         {"b/5.png", ""}});
  const std::string bad_a = root + "/a/0.jpg", bad_b = root + "/b/5.png";
  const auto source = open_image_source(root);
  ASSERT_EQ(source->size(), 9);
  const auto skipping = make_image_dataset(source, kSteps, {}, OnError::kSkip);
  const auto transform = std::make_shared<ImageTransform>(kSteps);
  const std::vector<int64_t> good{1, 2, 3, 4, 5, 6, 7};  // a/0.jpg is sample 0, b/5.png sample 8
  for (const int64_t workers : {0, 2}) {
    Loader loader(skipping, LoaderOptions(4).seed(8).num_workers(workers));
    size_t at = 0;
    for (const Example& batch : all_batches(loader)) {
      for (int64_t r = 0; r < batch.data.size(0); ++r, ++at) {
        ASSERT_LT(at, good.size()) << workers << " workers";
        // The row is the sample made with its own draw, as if nothing had been left out.
        const EncodedSample sample = source->get(good[at]);
        SampleRng rng(8, 0, good[at]);
        const torch::Tensor expected = torch::empty({3, 32, 32});
        transform->apply(sample, rng, expected);
        EXPECT_TRUE(torch::equal(batch.data[r], expected)) << workers << " workers, " << sample.name;
        EXPECT_EQ(batch.target[r].item<int64_t>(), sample.label);
      }
    }
    EXPECT_EQ(at, good.size()) << workers << " workers";
    const SkippedSamples skipped = skipping->take_skipped();
    EXPECT_EQ(skipped.count, 2);
    ASSERT_EQ(skipped.first.size(), 2u);
    const std::set<std::string> names(skipped.first.begin(), skipped.first.end());
    EXPECT_EQ(names.begin()->rfind(bad_a + ": ", 0), 0u) << *names.begin();
    EXPECT_EQ(names.rbegin()->rfind(bad_b + ": ", 0), 0u) << *names.rbegin();
  }
  const auto raising = make_image_dataset(source, kSteps);
  Loader loader(raising, LoaderOptions(4).num_workers(2));
  expect_error<Error>([&] { all_batches(loader); }, {bad_a});
}

}  // namespace
}  // namespace feedline
