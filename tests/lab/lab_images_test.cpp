// The lab's image rung: a short `bench images` over the photo set when it exists, one line saying why not when it
// does not, and its rows in results.json, results.md and the plots' data.
#include "feedline/lab/lab.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "feedline/io/file.h"
#include "io/image_encode.h"
#include "test_paths.h"

namespace feedline {
namespace {

struct LinesReporter : lab::Reporter {
  std::vector<std::string> sections, lines, tables;
  void section(const std::string& title) override { sections.push_back(title); }
  void line(const std::string& text) override { lines.push_back(text); }
  void table(const std::string& text) override { tables.push_back(text); }
};

// Only the image rung: every other part of the lab left out.
lab::LabOptions images_only(const std::string& dir) {
  lab::LabOptions o;
  o.data_dir = dir + "/data";
  o.out_dir = dir + "/results";
  o.skip_storage = o.skip_loader = o.skip_training = o.skip_sweeps = o.skip_plots = true;
  o.command = "lab_images_test";
  return o;
}

// `count` noisy colour JPEGs of 64x48 pixels in two class folders under `root`.
void write_photos(const std::string& root, int count) {
  std::mt19937 gen(7);
  std::vector<uint8_t> pixels(64 * 48 * 3);
  for (int i = 0; i < count; ++i) {
    for (auto& p : pixels) p = static_cast<uint8_t>(gen() % 256);
    const std::string folder = root + (i % 2 == 0 ? "/cat" : "/dog");
    std::filesystem::create_directories(folder);
    AtomicFile f(folder + "/" + std::to_string(i) + ".jpg");
    f.write(encode_jpeg({pixels.data(), 64, 48, 3}));
    f.commit();
  }
}

TEST(LabImages, SkippedWithItsReasonWithoutAPhotoSet) {
  const std::string dir = testing::scratch_dir("lab_images_none");
  const lab::LabOptions options = images_only(dir);
  LinesReporter reporter;
  const lab::LabResults r = lab::run_lab(options, reporter);
  const std::string expected =
      "images: skipped, no photo set at " + dir + "/data/photos/jpeg/train: run feedline prepare --photos";
  EXPECT_NE(std::find(reporter.lines.begin(), reporter.lines.end(), expected), reporter.lines.end());
  EXPECT_TRUE(reporter.sections.empty());
  EXPECT_TRUE(r.images.rows.empty());
  const auto json = nlohmann::json::parse(read_file(dir + "/results/results.json"));
  EXPECT_FALSE(json.contains("images"));
  EXPECT_NE(std::find(json["notes"].begin(), json["notes"].end(), expected), json["notes"].end()) << json["notes"];
}

TEST(LabImages, LeftOutWhenAsked) {
  const std::string dir = testing::scratch_dir("lab_images_left_out");
  lab::LabOptions options = images_only(dir);
  options.skip_images = true;
  LinesReporter reporter;
  lab::run_lab(options, reporter);
  for (const auto& line : reporter.lines) EXPECT_EQ(line.find("images:"), std::string::npos) << line;
}

TEST(LabImages, RunsOnATinyPhotoSetAndKeepsItsRows) {
  const std::string dir = testing::scratch_dir("lab_images_tiny");
  write_photos(dir + "/data/photos/jpeg/train", 12);
  lab::LabOptions options = images_only(dir);
  options.image_count = 10;
  LinesReporter reporter;
  const lab::LabResults r = lab::run_lab(options, reporter);

  ASSERT_EQ(reporter.sections.size(), 1u);
  EXPECT_EQ(reporter.sections[0], "Images: decoding and augmentation");
  EXPECT_EQ(r.images.images, 10);
  std::vector<std::string> keys;
  for (const auto& row : r.images.rows) {
    keys.push_back(row.key);
    if (row.key == "c" || row.key == "d" || row.key == "e") {
      EXPECT_FALSE(row.skipped) << row.key << ": " << row.note;
      EXPECT_GT(row.images_per_second, 0) << row.key;
      EXPECT_EQ(row.rates.size(), 1u) << row.key;  // one round
    }
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "b", "c", "d", "e"}));

  const auto json = nlohmann::json::parse(read_file(dir + "/results/results.json"));
  ASSERT_TRUE(json.contains("images")) << json.dump();
  EXPECT_EQ(json["images"]["images"], 10);
  ASSERT_EQ(json["images"]["rows"].size(), 5u);
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto& row = json["images"]["rows"][i];
    EXPECT_EQ(row["key"], keys[i]);
    EXPECT_DOUBLE_EQ(row["images_per_second"].get<double>(), r.images.rows[i].images_per_second);
  }
  EXPECT_NE(read_file(dir + "/results/results.md").find("## Images: decoding and augmentation"), std::string::npos);

  // Read back as `bench --from` reads it: the same rows, the same file again.
  lab::Reporter silent;
  const lab::LabResults again = lab::run_lab_from(dir + "/results/results.json", dir + "/again", false, silent);
  ASSERT_EQ(again.images.rows.size(), r.images.rows.size());
  EXPECT_EQ(read_file(dir + "/again/results.json"), read_file(dir + "/results/results.json"));
}

}  // namespace
}  // namespace feedline
