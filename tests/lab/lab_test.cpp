// The lab as a library: run_lab() called from C++ on a program's own files, as `feedline bench --data` runs it.
#include "feedline/lab/lab.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>

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

TEST(Lab, RunsFromCppOnAProgramsOwnFiles) {
  const std::string dir = testing::scratch_dir("lab_from_cpp");
  lab::LabOptions options;
  options.train_file = write_split(dir + "/train.csv", 96, 1);
  options.test_file = write_split(dir + "/test.csv", 32, 2);
  options.out_dir = dir + "/results";
  options.skip_training = options.skip_sweeps = options.skip_plots = true;
  options.loader_epochs = 1;
  options.loader_min_seconds = 0;
  options.threads = 1;
  options.command = "lab_test";
  ASSERT_EQ(lab::run_lab(options), 0);

  const auto results = nlohmann::json::parse(read_file(dir + "/results/results.json"));
  EXPECT_EQ(results["command"], "lab_test");
  ASSERT_FALSE(results["loader_ladder"].empty());
  for (const auto& rung : results["loader_ladder"]) EXPECT_GT(rung["samples_per_second"].get<double>(), 0) << rung;
  EXPECT_TRUE(results["training_ladder"].empty());
  EXPECT_TRUE(std::filesystem::exists(dir + "/results/results.md"));

  // The same results again from the file, as `bench --from` makes them.
  ASSERT_EQ(lab::run_lab_from(dir + "/results/results.json", dir + "/again", false), 0);
  EXPECT_EQ(read_file(dir + "/again/results.json"), read_file(dir + "/results/results.json"));
}

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
