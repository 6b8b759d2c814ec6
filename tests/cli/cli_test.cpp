// End-to-end tests of the `feedline` executable on small data the tests make themselves: flags, missing and
// corrupt data, plain-words refusals, which commands load LibTorch, and the docs that hold every command's help.
// Each command's own tests are in cli_train_test.cpp, cli_convert_test.cpp, cli_bench_test.cpp and
// cli_inspect_test.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli_support.h"
#include "feedline/io/file.h"
#include "test_paths.h"

namespace feedline {
namespace {

using testing::CliRun;
using testing::contains;
using testing::file_bytes;
using testing::make_idx_dir;
using testing::run_cli;

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
  r = run_cli("train --dataset-mode gpu");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "gpu")) << r.output;
  // Refused before any data is read (the data folder does not exist).
  r = run_cli("train --cuda-graph --device cpu --data-dir /nonexistent");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, "--cuda-graph needs a CUDA device")) << r.output;
  EXPECT_FALSE(contains(r.output, "nonexistent")) << r.output;
  r = run_cli("");
  EXPECT_NE(r.status, 0);
  // A bad allocator setting is named and refused; --help still answers.
  r = run_cli("train --data-dir /nonexistent", "FEEDLINE_MALLOC=fast");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, "FEEDLINE_MALLOC must be 'feedline' (the default) or 'system', not 'fast'"))
      << r.output;
  r = run_cli("train --help", "FEEDLINE_MALLOC=fast");
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(contains(r.output, "--batch-size")) << r.output;
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

// Every flag's value is checked before any work, and refused in words a person can act on, naming the flag.
TEST(Cli, BadValuesAreRefusedInPlainWords) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"train --epochs abc", "--epochs: 'abc' is not a whole number"},
      {"train --epochs 0", "--epochs: must be at least 1, not 0"},
      {"train --epochs 1.5", "--epochs: '1.5' is not a whole number"},
      {"train --num-workers -1", "--num-workers: must be 0 or more, not -1"},
      {"train --batch-size 99999999999999999999", "--batch-size: 99999999999999999999 is too large"},
      {"train --lr abc", "--lr: 'abc' is not a number"},
      {"train --lr 0", "--lr: must be above 0, not 0"},
      {"train --seed -3", "--seed: '-3' is not a whole number of 0 or more"},
      {"train --num-classes 1", "--num-classes: must be from 2 to 16777216, not 1"},
      {"train --dataset cifar", "--dataset: 'cifar' is not one of mnist, fashion-mnist"},
      {"train --row-groups 1,x", "--row-groups: 'x' is not a whole number"},
      {"cat x.parquet --limit many", "--limit: 'many' is not a whole number"},
      {"convert /nonexistent.csv out.parquet", "input: '/nonexistent.csv': no such file"},
      {"convert --level z " + std::string(FEEDLINE_CLI) + " out.parquet", "--level: 'z' is not a whole number"},
      {"prepare --codec lzma", "--codec: 'lzma' is not one of uncompressed, snappy, gzip, zstd, lz4_raw, brotli"},
  };
  for (const auto& [args, message] : cases) {
    const CliRun r = run_cli(args);
    EXPECT_NE(r.status, 0) << args;
    EXPECT_TRUE(contains(r.output, message)) << args << "\n" << r.output;
    EXPECT_FALSE(contains(r.output, "1797693134862315708")) << args << "\n" << r.output;
  }
}

// The tool itself does not link LibTorch (so prepare, inspect, cat, convert, --help and --version start in
// milliseconds); train and bench run in feedline-torch, which does.
TEST(Cli, OnlyTrainAndBenchLoadLibTorch) {
  const auto needed = [](const std::string& program) {
    return testing::run_command("readelf -d " + program + " | grep NEEDED").output;
  };
  const std::string tool = needed(FEEDLINE_CLI);
  ASSERT_TRUE(contains(tool, "libc.so")) << tool;
  for (const char* lib : {"torch", "c10"}) EXPECT_FALSE(contains(tool, lib)) << tool;
  const std::string torch_program = std::filesystem::path(FEEDLINE_CLI).parent_path() / "feedline-torch";
  EXPECT_TRUE(contains(needed(torch_program), "c10")) << needed(torch_program);
  CliRun r = run_cli("--version");
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(contains(r.output, "feedline 0.1.0 (LibTorch ")) << r.output;
}

// docs/cli.md holds every command's --help verbatim (scripts/cli-docs.sh writes it), so it cannot drift.
TEST(Cli, DocsHoldEveryCommandsHelp) {
  const std::string docs = read_file(testing::source_dir() + "/docs/cli.md");
  for (const std::string command : {"", "prepare", "train", "bench", "bench loader", "bench images", "bench remote",
                                    "inspect", "cat", "convert"}) {
    const CliRun r = run_cli(command + (command.empty() ? "" : " ") + "--help");
    ASSERT_EQ(r.status, 0) << command << "\n" << r.output;
    EXPECT_TRUE(contains(docs, "```\n" + r.output + "```\n"))
        << "docs/cli.md lacks `feedline " << command << " --help` as it is now: run scripts/cli-docs.sh\n" << r.output;
  }
}

}  // namespace
}  // namespace feedline
