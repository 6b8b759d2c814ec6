// End-to-end tests of `feedline prepare --photos`: class folders and WebDataset shards of the same JPEGs, of the
// promised sizes and format, the same bytes for the same seed, and a missing photo named with its package. The
// photos come from the checkout (tests/data/images) under the names the packages give them (--photo-dir).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli/cli_support.h"
#include "feedline/dataset/image_sources.h"
#include "feedline/io/file.h"
#include "feedline/io/image_decode.h"
#include "test_paths.h"

namespace feedline {
namespace {

namespace fs = std::filesystem;
using testing::CliRun;
using testing::run_cli;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The files the set is made from, by class: what python3-skimage and python3-sklearn name them.
const std::vector<std::pair<std::string, std::string>> kPhotos{{"astronaut", "astronaut.png"},
                                                               {"chelsea", "chelsea.png"},
                                                               {"china", "china.jpg"},
                                                               {"coffee", "coffee.png"},
                                                               {"flower", "flower.jpg"},
                                                               {"hubble", "hubble_deep_field.jpg"},
                                                               {"ihc", "ihc.png"},
                                                               {"motorcycle", "motorcycle_left.png"},
                                                               {"retina", "retina.jpg"},
                                                               {"rocket", "rocket.jpg"}};

// A folder holding every photo the set needs, each a copy of chelsea.png (451 x 300) or china.jpg (640 x 427);
// `small` replaces rocket.jpg by a photo too small for the set.
std::string photo_dir(const std::string& name, bool small = false) {
  const std::string dir = testing::scratch_dir(name);
  const std::string images = testing::test_data_dir() + "/images/";
  for (size_t i = 0; i < kPhotos.size(); ++i) {
    std::string from = images + (i % 2 == 0 ? "chelsea.png" : "china.jpg");
    if (small && kPhotos[i].first == "rocket") from = images + "chelsea_gray.jpg";  // 225 x 150
    fs::copy_file(from, dir + "/" + kPhotos[i].second, fs::copy_options::overwrite_existing);
  }
  return dir;
}

// `prepare --photos N` into a fresh data folder: its photos folder.
std::string prepare_photos(const std::string& name, const std::string& photos, int64_t n, const std::string& extra) {
  const std::string data = testing::scratch_dir(name);
  const CliRun r =
      run_cli("prepare --photos " + std::to_string(n) + " --photo-dir " + photos + " --data-dir " + data + " " + extra);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Photos: " + std::to_string(n) + " images in 10 classes")) << r.output;
  return data + "/photos";
}

// Every file under `dir`, by path below it, with its bytes.
std::map<std::string, std::string> files_under(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out[fs::relative(e.path(), dir).string()] = read_file(e.path().string());
  }
  return out;
}

// The sampling factors of a baseline JPEG's components, from its SOF0 segment ("" when there is none).
std::string sampling_factors(const std::string& jpeg) {
  for (size_t i = 2; i + 9 < jpeg.size(); ++i) {
    if (static_cast<uint8_t>(jpeg[i]) == 0xFF && static_cast<uint8_t>(jpeg[i + 1]) == 0xC0) {
      const int components = static_cast<uint8_t>(jpeg[i + 9]);
      std::string out;
      for (int c = 0; c < components && i + 12 + 3 * c < jpeg.size(); ++c) {
        const int f = static_cast<uint8_t>(jpeg[i + 11 + 3 * c]);
        out += (c ? " " : "") + std::to_string(f >> 4) + "x" + std::to_string(f & 15);
      }
      return out;
    }
  }
  return "";
}

TEST(PhotosCli, ClassFoldersAndShardsHoldTheSameJpegsOfImageNetSizes) {
  const std::string data = testing::scratch_dir("photos_set_data");
  const CliRun r = run_cli("prepare --photos 40 --photo-dir " + photo_dir("photos_set_src") + " --data-dir " + data +
                           " --threads 2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Photos: 40 images in 10 classes")) << r.output;
  EXPECT_TRUE(contains(r.output, "40/40 images, 1 of 1 shards")) << r.output;
  // --photos alone: no MNIST tables, and nothing left of the staging folder.
  EXPECT_FALSE(contains(r.output, "Storage")) << r.output;
  std::vector<std::string> top;
  for (const auto& e : fs::directory_iterator(data)) top.push_back(e.path().filename().string());
  EXPECT_EQ(top, std::vector<std::string>{"photos"});
  const std::string root = data + "/photos";

  // Class folders: the photos' names, in ImageFolder's order; image i of class i % 10.
  const ImageFolderSource folder(root + "/jpeg/train");
  std::vector<std::string> classes;
  for (const auto& [name, file] : kPhotos) classes.push_back(name);
  ASSERT_EQ(folder.classes(), classes);
  ASSERT_EQ(folder.size(), 40);
  std::map<std::string, std::string> by_key;  // file stem -> bytes
  std::map<std::string, int64_t> label_of;
  for (const auto& [path, label] : folder.samples()) {
    const std::string key = fs::path(path).stem().string();
    EXPECT_EQ(fs::path(path).extension(), ".jpg") << path;
    EXPECT_EQ(label, std::stoll(key) % 10) << path;
    const std::string bytes = read_file(path);
    EXPECT_EQ(sampling_factors(bytes), "2x2 1x1 1x1") << path;  // colour, 4:2:0
    const DecodedImage image = decode_image(bytes, path);
    const int longer = std::max(image.width, image.height), shorter = std::min(image.width, image.height);
    EXPECT_GE(longer, 400) << path;
    EXPECT_LE(longer, 500) << path;
    EXPECT_GE(shorter * 3, longer * 2 - 3) << path << ": " << image.width << " x " << image.height;
    by_key[key] = bytes;
    label_of[key] = label;
  }
  EXPECT_EQ(by_key.size(), 40u);

  // Shards: one of 40 samples, each the class folder's file under the same key, with its label.
  const TarShardSource shards({root + "/shards/train-000000.tar"});
  ASSERT_EQ(shards.size(), 40);
  EXPECT_FALSE(fs::exists(root + "/shards/train-000001.tar"));
  for (int64_t i = 0; i < shards.size(); ++i) {
    const EncodedSample s = shards.get(i);
    const std::string member = shards.entries()[static_cast<size_t>(i)].member;
    const std::string key = member.substr(0, member.find('.'));
    EXPECT_EQ(member, key + ".jpg");
    ASSERT_EQ(by_key.count(key), 1u) << member;
    EXPECT_TRUE(s.bytes == by_key[key]) << member << " differs from its class folder's file";
    EXPECT_EQ(s.label, label_of[key]) << member;
  }
}

TEST(PhotosCli, TheSameSeedGivesTheSameBytesWhateverTheThreadsAndAnotherSeedOthers) {
  const std::string photos = photo_dir("photos_seed_src");
  const auto a = files_under(prepare_photos("photos_seed_a", photos, 24, "--threads 1"));
  const auto b = files_under(prepare_photos("photos_seed_b", photos, 24, "--threads 3 --seed 0"));
  const auto c = files_under(prepare_photos("photos_seed_c", photos, 24, "--seed 7"));
  ASSERT_EQ(a.size(), 25u);  // 24 JPEGs and one shard
  ASSERT_EQ(b.size(), a.size());
  ASSERT_EQ(c.size(), a.size());
  int same_as_other_seed = 0;
  for (const auto& [path, bytes] : a) {
    ASSERT_EQ(b.count(path), 1u) << path;
    EXPECT_TRUE(b.at(path) == bytes) << path << " differs between two runs of one seed";
    ASSERT_EQ(c.count(path), 1u) << path;
    same_as_other_seed += c.at(path) == bytes;
  }
  EXPECT_EQ(same_as_other_seed, 0);

  // Written again in place: the new set replaces the old one whole.
  const std::string data = testing::scratch_dir("photos_seed_again");
  for (const char* n : {"30", "12"}) {
    const CliRun r = run_cli("prepare --photos " + std::string(n) + " --photo-dir " + photos + " --data-dir " + data);
    ASSERT_EQ(r.status, 0) << r.output;
  }
  EXPECT_EQ(files_under(data + "/photos").size(), 13u);
}

TEST(PhotosCli, AMissingPhotoIsNamedWithThePackagesToInstall) {
  const std::string data = testing::scratch_dir("photos_missing_data");
  const std::string empty = testing::scratch_dir("photos_missing_src");
  const CliRun r = run_cli("prepare --photos 5 --photo-dir " + empty + " --data-dir " + data);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "python3-skimage and python3-sklearn")) << r.output;
  EXPECT_TRUE(contains(r.output, empty + "/astronaut.png")) << r.output;
  EXPECT_TRUE(contains(r.output, "nothing is downloaded")) << r.output;
  EXPECT_FALSE(fs::exists(data + "/photos"));

  const CliRun small =
      run_cli("prepare --photos 5 --photo-dir " + photo_dir("photos_small_src", true) + " --data-dir " + data);
  EXPECT_EQ(small.status, 1) << small.output;
  EXPECT_TRUE(contains(small.output, "rocket.jpg: 225 x 150 pixels")) << small.output;
  EXPECT_FALSE(fs::exists(data + "/photos"));

  const CliRun zero = run_cli("prepare --photos 0 --data-dir " + data);
  EXPECT_NE(zero.status, 0) << zero.output;
}

TEST(PhotosCli, APhotoSizeMakesASetOfThatLongerSideInItsOwnFolder) {
  const std::string photos = photo_dir("photos_size_src");
  const std::string data = testing::scratch_dir("photos_size_data");
  const CliRun r = run_cli("prepare --photos 20 --photo-size 1000 --photo-dir " + photos + " --data-dir " + data);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(fs::exists(data + "/photos"));
  const ImageFolderSource folder(data + "/photos-1000/jpeg/train");
  ASSERT_EQ(folder.size(), 20);
  int longest = 0, shortest_long = 1 << 30;
  for (const auto& [path, label] : folder.samples()) {
    const DecodedImage image = decode_image(read_file(path), path);
    const int longer = std::max(image.width, image.height);
    EXPECT_GE(longer, 1000 - 1000 / 9) << path;
    EXPECT_LE(longer, 1000 + 1000 / 9) << path;
    longest = std::max(longest, longer);
    shortest_long = std::min(shortest_long, longer);
  }
  EXPECT_GT(longest, shortest_long) << "every image has the same longer side";

  for (const char* size : {"63", "4097", "big"}) {
    const CliRun bad = run_cli("prepare --photos 20 --photo-size " + std::string(size) + " --photo-dir " + photos +
                               " --data-dir " + data);
    EXPECT_NE(bad.status, 0) << size;
    EXPECT_TRUE(contains(bad.output, "--photo-size")) << bad.output;
  }
}

}  // namespace
}  // namespace feedline
