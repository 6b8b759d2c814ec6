// The lab as a library: run_lab() called from C++ on a program's own files, as `feedline bench --data` runs it,
// returning its results and telling a Reporter what it does, printing nothing itself.
#include "feedline/lab/lab.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "feedline/io/csv.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/idx.h"
#include "test_paths.h"

namespace feedline {
namespace {

// A small MNIST-shaped split (label + 784 pixel columns) as a CSV file.
std::string write_split(const std::string& path, int64_t rows, unsigned seed) {
  ImageSplit split;
  split.count = rows;
  split.rows = split.cols = 28;
  std::mt19937 gen(seed);
  for (int64_t i = 0; i < rows * 784; ++i) split.images.push_back(static_cast<uint8_t>(gen() % 256));
  for (int64_t i = 0; i < rows; ++i) split.labels.push_back(static_cast<uint8_t>(i % 10));
  write_csv(path, image_split_to_table(split));
  return path;
}

// Keeps what the lab announces, in order.
struct RecordingReporter : lab::Reporter {
  std::vector<std::string> sections, lines, notes, tables;
  void section(const std::string& title) override { sections.push_back(title); }
  void line(const std::string& text) override { lines.push_back(text); }
  void note(const std::string& text) override { notes.push_back(text); }
  void table(const std::string& text) override { tables.push_back(text); }
};

bool any_starts_with(const std::vector<std::string>& texts, const std::string& prefix) {
  for (const auto& t : texts) {
    if (t.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

TEST(Lab, RunsFromCppOnAProgramsOwnFiles) {
  const std::string dir = testing::scratch_dir("lab_from_cpp");
  lab::LabOptions options;
  options.train_file = write_split(dir + "/train.csv", 96, 1);
  options.test_file = write_split(dir + "/test.csv", 32, 2);
  options.out_dir = dir + "/results";
  options.data_dir = dir;  // (not the current folder's data, whose photo set would add the image rung)
  options.skip_training = options.skip_sweeps = options.skip_plots = true;
  options.loader_epochs = 1;
  options.loader_min_seconds = 0;
  options.threads = 1;
  options.command = "lab_test";
  RecordingReporter reporter;
  ::testing::internal::CaptureStdout();
  const lab::LabResults returned = lab::run_lab(options, reporter);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");  // the library prints nothing itself

  ASSERT_EQ(returned.loader.size(), 9u);
  for (const auto& rung : returned.loader) EXPECT_EQ(rung.samples_per_epoch, 96) << rung.config.name;
  EXPECT_TRUE(returned.training.empty());
  ASSERT_EQ(reporter.sections.size(), 1u);
  EXPECT_EQ(reporter.sections[0].rfind("Loader ladder: ", 0), 0u) << reporter.sections[0];
  EXPECT_TRUE(any_starts_with(reporter.lines, "feedline bench: ")) << reporter.lines.size();
  EXPECT_TRUE(any_starts_with(reporter.notes, "(No storage table for --data")) << reporter.notes.size();
  EXPECT_TRUE(any_starts_with(reporter.notes, "Wrote " + dir + "/results/results.json")) << reporter.notes.size();
  ASSERT_EQ(reporter.tables.size(), 1u);
  EXPECT_NE(reporter.tables[0].find(returned.loader.front().config.name), std::string::npos) << reporter.tables[0];

  const auto results = nlohmann::json::parse(read_file(dir + "/results/results.json"));
  EXPECT_EQ(results["command"], "lab_test");
  ASSERT_FALSE(results["loader_ladder"].empty());
  for (const auto& rung : results["loader_ladder"]) EXPECT_GT(rung["samples_per_second"].get<double>(), 0) << rung;
  EXPECT_TRUE(results["training_ladder"].empty());
  EXPECT_TRUE(std::filesystem::exists(dir + "/results/results.md"));

  // The same results again from the file, as `bench --from` makes them.
  lab::Reporter silent;
  const lab::LabResults again = lab::run_lab_from(dir + "/results/results.json", dir + "/again", false, silent);
  EXPECT_EQ(again.loader.size(), returned.loader.size());
  EXPECT_EQ(read_file(dir + "/again/results.json"), read_file(dir + "/results/results.json"));
}

// The formats' names are the catalog's spelling, read back to the same format; any other name is refused by name.
TEST(Lab, RefusesMissingFilesByName) {
  lab::LabOptions options;
  options.train_file = "/nonexistent/train.parquet";
  options.test_file = "/nonexistent/test.parquet";
  options.out_dir = testing::scratch_dir("lab_missing") + "/results";
  options.skip_plots = true;
  try {
    lab::run_lab(options);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/train.parquet"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(options.out_dir + "/results.json"));
}

}  // namespace
}  // namespace feedline
