// End-to-end tests of the `feedline` executable on small data the tests make themselves.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "test_paths.h"

namespace feedline {
namespace {

struct CliRun {
  int status;
  std::string output;  // stdout and stderr together
};

CliRun run_cli(const std::string& args) {
  const std::string cmd = std::string(FEEDLINE_CLI) + " " + args + " 2>&1";
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return {-1, "popen failed"};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = ::pclose(p);
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, out};
}

void write_idx(const std::string& path, const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data) {
  std::ofstream f(path, std::ios::binary);
  const uint8_t head[4] = {0, 0, 8, static_cast<uint8_t>(dims.size())};
  f.write(reinterpret_cast<const char*>(head), 4);
  for (uint32_t d : dims) {
    const uint8_t b[4] = {static_cast<uint8_t>(d >> 24), static_cast<uint8_t>(d >> 16), static_cast<uint8_t>(d >> 8),
                          static_cast<uint8_t>(d)};
    f.write(reinterpret_cast<const char*>(b), 4);
  }
  f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

// A tiny MNIST-shaped dataset: class c has a bright square at a class-specific place.
std::string make_idx_dir(const std::string& name, uint32_t train, uint32_t test) {
  const std::string dir = testing::scratch_dir(name);
  std::mt19937 gen(5);
  for (auto [prefix, count] : {std::pair<std::string, uint32_t>{"train", train}, {"t10k", test}}) {
    std::vector<uint8_t> images(count * 784), labels(count);
    for (uint32_t i = 0; i < count; ++i) {
      labels[i] = static_cast<uint8_t>(i % 10);
      for (int p = 0; p < 784; ++p) images[i * 784 + p] = static_cast<uint8_t>(gen() % 40);
      const int r0 = 2 + 2 * labels[i];
      for (int r = r0; r < r0 + 4; ++r)
        for (int c = 10; c < 16; ++c) images[i * 784 + r * 28 + c] = 250;
    }
    write_idx(dir + "/" + prefix + "-images-idx3-ubyte", {count, 28, 28}, images);
    write_idx(dir + "/" + prefix + "-labels-idx1-ubyte", {count}, labels);
  }
  return dir;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(Cli, RejectsUnknownFlagsAndBadValues) {
  CliRun r = run_cli("train --no-such-flag");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "no-such-flag")) << r.output;
  r = run_cli("train --batch-size 0");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "batch-size")) << r.output;
  r = run_cli("train --dataset cifar");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "cifar")) << r.output;
  r = run_cli("");
  EXPECT_NE(r.status, 0);
}

TEST(Cli, MissingDataNamesTheFileAndTheFix) {
  const std::string dir = testing::scratch_dir("cli_missing");
  CliRun r = run_cli("train --data-dir " + dir + " --device cpu");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, dir + "/FashionMNIST/train.parquet: not found")) << r.output;
  EXPECT_TRUE(contains(r.output, "feedline prepare")) << r.output;
  r = run_cli("prepare --dataset mnist --mnist-idx " + dir + " --data-dir " + dir + "/out");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, dir + "/train-images-idx3-ubyte[.gz]: not found")) << r.output;
}

TEST(Cli, CorruptIdxFailsCleanlyAndWritesNothing) {
  const std::string idx = make_idx_dir("cli_corrupt_idx", 20, 10);
  std::filesystem::resize_file(idx + "/train-images-idx3-ubyte", 1000);
  const std::string out = testing::scratch_dir("cli_corrupt_out");
  CliRun r = run_cli("prepare --dataset mnist --mnist-idx " + idx + " --data-dir " + out);
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, "train-images-idx3-ubyte: truncated")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out + "/MNIST/train.csv"));
  EXPECT_FALSE(std::filesystem::exists(out + "/MNIST/train.parquet"));
}

TEST(Cli, PrepareThenTrainPrintsTheExperimentsLines) {
  const std::string idx = make_idx_dir("cli_e2e_idx", 600, 200);
  const std::string data = testing::scratch_dir("cli_e2e_data");
  CliRun r = run_cli("prepare --dataset mnist --mnist-idx " + idx + " --data-dir " + data);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Storage")) << r.output;
  for (const char* f : {"train.csv", "test.csv", "train.parquet", "test.parquet"}) {
    EXPECT_TRUE(std::filesystem::exists(data + "/MNIST/" + f)) << f;
  }
  for (const std::string variant : {"--format parquet --dataset-mode tensor --num-workers 2",
                                    "--format csv --dataset-mode row --num-workers 1 --persistent-workers"}) {
    r = run_cli("train --dataset mnist --data-dir " + data + " --epochs 3 --batch-size 32 --device cpu " + variant);
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
  }
}

}  // namespace
}  // namespace feedline
