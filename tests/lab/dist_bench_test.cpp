// `feedline bench dist` as a library: run_dist_bench() on a tiny prepared folder, with feedline-torch and
// scripts/python/ddp_bench.py, checking that every configuration appears (PyTorch's run, or are skipped with the
// reason) and what it writes. Nothing here asserts on speed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "feedline/io/csv.h"
#include "feedline/io/error.h"
#include "feedline/io/idx.h"
#include "feedline/io/parquet.h"
#include "feedline/lab/lab.h"
#include "test_paths.h"

namespace feedline {
namespace {

namespace fs = std::filesystem;

// <dir>/FashionMNIST/{train,test}.{parquet,csv} as `feedline prepare` lays them out, of random 28x28 images.
std::string write_prepared(const std::string& dir, int64_t train_rows, int64_t test_rows) {
  fs::create_directories(dir + "/FashionMNIST");
  std::mt19937 gen(7);
  for (const auto& [split, rows] : {std::pair<std::string, int64_t>{"train", train_rows}, {"test", test_rows}}) {
    ImageSplit s;
    s.count = rows;
    s.rows = s.cols = 28;
    for (int64_t i = 0; i < rows * 784; ++i) s.images.push_back(static_cast<uint8_t>(gen() % 256));
    for (int64_t i = 0; i < rows; ++i) s.labels.push_back(static_cast<uint8_t>(i % 10));
    const Table t = image_split_to_table(s);
    parquet::write_table(dir + "/FashionMNIST/" + split + ".parquet", t);
    write_csv(dir + "/FashionMNIST/" + split + ".csv", t);
  }
  return dir;
}

lab::DistBenchOptions tiny_options(const std::string& name) {
  const std::string dir = testing::scratch_dir(name);
  lab::DistBenchOptions o;
  o.data_dir = write_prepared(dir + "/data", 64, 32);
  o.limit = 64;
  o.batch_size = 32;
  o.epochs = 1;
  o.nproc = 2;
  o.threads = 2;
  o.repeat = 1;
  o.out_dir = dir + "/results";
  o.script = testing::source_dir() + "/scripts/python/ddp_bench.py";
  return o;
}

std::string feedline_torch() { return (fs::path(FEEDLINE_CLI).parent_path() / "feedline-torch").string(); }

bool python_has_torch() { return std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0; }

nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

void expect_feedline_rows_ran(const lab::DistBenchResult& r) {
  for (const auto c : {lab::DistConfig::kFeedlineSingle, lab::DistConfig::kFeedlineThreads,
                       lab::DistConfig::kFeedlineProcesses}) {
    const lab::DistBenchRow& row = r.row(c);
    EXPECT_FALSE(row.skipped) << row.name;
    ASSERT_EQ(row.epoch_seconds.size(), 1u) << row.name;
    EXPECT_GT(row.epoch_seconds[0], 0) << row.name;
  }
  EXPECT_EQ(r.row(lab::DistConfig::kFeedlineProcesses).processes, 2);
  EXPECT_EQ(r.row(lab::DistConfig::kFeedlineProcesses).allreduce_shares.size(), 1u);
  EXPECT_EQ(r.feedline_efficiency.rounds.size(), 1u);
}

TEST(DistBench, RunsPyTorchsDdpBesideFeedline) {
  if (!python_has_torch()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch";
  const lab::DistBenchOptions o = tiny_options("dist_bench_ddp");
  lab::Reporter quiet;
  const lab::DistBenchResult r = lab::run_dist_bench(o, feedline_torch(), quiet);
  ASSERT_EQ(r.rows.size(), static_cast<size_t>(lab::kDistConfigs));
  expect_feedline_rows_ran(r);
  const lab::DistBenchRow& ddp = r.row(lab::DistConfig::kPyTorchDdp);
  const lab::DistBenchRow& plain = r.row(lab::DistConfig::kPyTorchSingle);
  for (const lab::DistBenchRow* row : {&plain, &ddp}) {
    EXPECT_FALSE(row->skipped) << row->name << ": " << row->note;
    ASSERT_EQ(row->epoch_seconds.size(), 1u) << row->name;
    EXPECT_GT(row->epoch_seconds[0], 0);
    EXPECT_EQ(row->note.rfind("torch ", 0), 0u) << row->note;
  }
  EXPECT_EQ(ddp.name, "PyTorch DDP, 2 processes x 1 thread");
  EXPECT_EQ(ddp.processes, 2);
  EXPECT_EQ(ddp.threads, 1);
  ASSERT_EQ(r.processes_over_ddp.rounds.size(), 1u);
  EXPECT_DOUBLE_EQ(r.processes_over_ddp.median, r.row(lab::DistConfig::kFeedlineProcesses).epoch_seconds[0] /
                                                    ddp.epoch_seconds[0]);
  EXPECT_EQ(r.ddp_efficiency.rounds.size(), 1u);

  const nlohmann::json j = read_json(o.out_dir + "/dist.json");
  ASSERT_EQ(j.at("configurations").size(), 5u);
  const nlohmann::json& row = j.at("configurations")[4];
  EXPECT_EQ(row.at("name"), "PyTorch DDP, 2 processes x 1 thread");
  EXPECT_TRUE(row.at("pytorch").get<bool>());
  EXPECT_FALSE(row.at("skipped").get<bool>());
  EXPECT_EQ(row.at("epoch_seconds").size(), 1u);
  EXPECT_EQ(j.at("processes_over_ddp").at("rounds").size(), 1u);
  const std::string text = testing::file_bytes(o.out_dir + "/dist.md");
  EXPECT_NE(text.find("| PyTorch DDP, 2 processes x 1 thread | "), std::string::npos) << text;
  EXPECT_NE(text.find("over DDP's"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(o.out_dir + "/.ddp_bench.run.json"));
}

TEST(DistBench, SkipsPyTorchsRowsWithTheReasonWhereThePythonCannotImportIt) {
  lab::DistBenchOptions o = tiny_options("dist_bench_no_torch");
  // A Python without its site packages: neither numpy nor torch can be imported.
  o.python_program = (fs::path(o.out_dir).parent_path() / "python-without-site").string();
  {
    std::ofstream f(o.python_program);
    f << "#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n";
  }
  fs::permissions(o.python_program, fs::perms::owner_all);
  lab::Reporter quiet;
  const lab::DistBenchResult r = lab::run_dist_bench(o, feedline_torch(), quiet);
  expect_feedline_rows_ran(r);
  for (const auto c : {lab::DistConfig::kPyTorchSingle, lab::DistConfig::kPyTorchDdp}) {
    const lab::DistBenchRow& row = r.row(c);
    EXPECT_TRUE(row.skipped) << row.name;
    EXPECT_NE(row.note.find("cannot import"), std::string::npos) << row.note;
    EXPECT_TRUE(row.epoch_seconds.empty());
  }
  EXPECT_TRUE(r.processes_over_ddp.rounds.empty());
  const nlohmann::json j = read_json(o.out_dir + "/dist.json");
  EXPECT_TRUE(j.at("configurations")[4].at("skipped").get<bool>());
  const std::string text = testing::file_bytes(o.out_dir + "/dist.md");
  EXPECT_NE(text.find("| PyTorch DDP, 2 processes x 1 thread | skipped: ddp_bench.py: cannot import"),
            std::string::npos)
      << text;
}

TEST(DistBench, RefusesThreadsThatDoNotSplitBetweenTheProcesses) {
  lab::DistBenchOptions o;
  o.nproc = 2;
  o.threads = 3;
  lab::Reporter quiet;
  try {
    lab::run_dist_bench(o, feedline_torch(), quiet);
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    // The option's name, not a flag's: a C++ caller has no flags.
    EXPECT_EQ(std::string(e.what()), "bench dist: threads 3 must split evenly between 2 processes");
  }
}

}  // namespace
}  // namespace feedline
