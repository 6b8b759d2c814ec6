// End-to-end tests of `feedline bench` on small data the tests make themselves: the ladders on your own data,
// every table and its results, and bad flags and missing data refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_support.h"
#include "cli/cli_table_support.h"
#include "feedline/io/csv.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "feedline/train/models.h"
#include "test_paths.h"

namespace feedline {
namespace {

using testing::CliRun;
using testing::colour_table;
using testing::contains;
using testing::count_of;
using testing::file_bytes;
using testing::make_idx_dir;
using testing::run_cli;

bool gnuplot_installed() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

TEST(Cli, BenchRunsTheLaddersOnYourOwnData) {
  const std::string dir = testing::scratch_dir("cli_bench_own");
  write_csv(dir + "/train.csv", colour_table(300, 3));
  parquet::write_table(dir + "/test.parquet", colour_table(100, 4));
  const std::string own = " --data " + dir + "/train.csv --test-data " + dir + "/test.parquet --label-column y "
                          "--feature-columns 'v*' --image-shape 3x8x8";
  const CliRun r = run_cli("bench" + own + " --out " + dir + "/out --epochs 1 --loader-epochs 1 --loader-min-seconds 0 "
                           "--floor-repeats 1 --skip-sweeps --skip-plots --device cpu");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "No storage table for --data")) << r.output;
  EXPECT_TRUE(contains(r.output, "== Training ladder: " + dir + "/train.csv, SimpleCNN (3x8x8, 4 classes)")) << r.output;
  EXPECT_EQ(count_of(r.output, "Average Train Time per Epoch: "), 11u) << r.output;
  const auto j = nlohmann::json::parse(file_bytes(dir + "/out/results.json"));
  EXPECT_EQ(j["storage"].size(), 0u);
  ASSERT_EQ(j["loader_ladder"].size(), 9u);
  for (const auto& l : j["loader_ladder"]) {
    EXPECT_EQ(l["dataset"], dir + "/train.csv");
    EXPECT_EQ(l["samples_per_epoch"].get<int64_t>(), 300) << l.dump();
  }
  ASSERT_EQ(j["training_ladder"].size(), 14u);
  for (const auto& t : j["training_ladder"]) {
    if (t["skipped"].get<bool>()) continue;
    EXPECT_EQ(t["epochs"][0]["train_samples"].get<int64_t>(), 300) << t.dump();
  }
  // The batch-16 rung (19 steps) learns the colours: far above the 25% of chance after one epoch of 300 samples.
  EXPECT_GT(j["training_ladder"][0]["test_accuracy"].get<double>(), 0.6) << j["training_ladder"][0].dump();

  CliRun bad = run_cli("bench" + own + " --num-classes 3 --skip-storage --skip-loader --skip-sweeps --device cpu");
  EXPECT_EQ(bad.status, 1);
  EXPECT_TRUE(contains(bad.output, dir + "/train.csv: holds label 3, outside 0..2")) << bad.output;
  bad = run_cli("bench --data " + dir + "/train.csv --datasets mnist");
  EXPECT_NE(bad.status, 0);
  EXPECT_TRUE(contains(bad.output, "--datasets excludes --data")) << bad.output;
  bad = run_cli("bench --image-shape 3x8x8 --datasets mnist");
  EXPECT_NE(bad.status, 0);
  EXPECT_TRUE(contains(bad.output, "--image-shape requires --data")) << bad.output;
  bad = run_cli("bench --data " + dir + "/train.csv --test-data " + dir + "/none.csv");
  EXPECT_EQ(bad.status, 1);
  EXPECT_TRUE(contains(bad.output, dir + "/none.csv: not found")) << bad.output;
}

TEST(Cli, BenchRunsEveryTableAndWritesItsResults) {
  const std::string idx = make_idx_dir("cli_bench_idx", 400, 100);
  const std::string data = testing::scratch_dir("cli_bench_data");
  ASSERT_EQ(run_cli("prepare --dataset mnist --mnist-idx " + idx + " --data-dir " + data).status, 0);
  const std::string out = testing::scratch_dir("cli_bench_out");
  const CliRun r = run_cli("bench --datasets mnist --train-datasets mnist --mnist-idx " + idx + " --data-dir " + data +
                           " --out " + out +
                           " --epochs 1 --train-limit 300 --test-limit 100 --sweep-train-limit 100 --sweep-test-limit 50"
                           " --loader-epochs 1 --loader-min-seconds 0 --floor-repeats 2 --device cpu" +
                           (gnuplot_installed() ? "" : " --skip-plots"));
  ASSERT_EQ(r.status, 0) << r.output;
  // Every training run prints the experiment's lines: 11 ladder rows that run (the three CUDA graph ones are
  // skipped on the CPU) and 22 sweep points.
  EXPECT_EQ(count_of(r.output, "Average Train Time per Epoch: "), 33u) << r.output;
  EXPECT_TRUE(contains(r.output, "vs the compute floor")) << r.output;

  const auto j = nlohmann::json::parse(file_bytes(out + "/results.json"));
  EXPECT_EQ(j["machine"]["cores"].get<int>(), static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_FALSE(j["libtorch_version"].get<std::string>().empty());
  // OpenBLAS (Debian's LibTorch): one thread per call, feedline's default, unless the environment chose.
  const std::string blas = j["blas"].get<std::string>();
  if (blas.rfind("not OpenBLAS", 0) != 0) {  // "not OpenBLAS (...)" where LibTorch's BLAS is another
    const char* env = std::getenv("OPENBLAS_NUM_THREADS");
    const bool env_set = env != nullptr && *env != '\0';
    EXPECT_TRUE(env_set ? contains(blas, "(OPENBLAS_NUM_THREADS=") : contains(blas, ", 1 thread per call (feedline's"))
        << blas;
  } else {
    EXPECT_EQ(blas, "not OpenBLAS (feedline's setting does not apply)");
  }

  ASSERT_EQ(j["storage"].size(), 10u);  // 2 splits x (CSV + 4 Parquet layouts)
  std::map<std::string, double> csv_bytes;
  for (const auto& s : j["storage"]) {
    EXPECT_GT(s["bytes"].get<int64_t>(), 0);
    EXPECT_GT(s["read_to_tensor_seconds"].get<double>(), 0.0);
    const std::string split = s["split"].get<std::string>();
    if (s["format"] == "csv") csv_bytes[split] = s["bytes"].get<double>();
    // Noise images this small may come out larger than CSV: check the ratio is what the sizes say.
    EXPECT_NEAR(s["ratio_to_csv"].get<double>() * s["bytes"].get<double>(), csv_bytes[split], 1e-6) << s.dump();
  }
  EXPECT_EQ(j["storage"][3]["format"], "parquet-row-major");
  EXPECT_EQ(j["storage"][4]["format"], "parquet-png");
  ASSERT_EQ(j["idx_zstd3"].size(), 2u);
  EXPECT_EQ(j["idx_zstd3"][0]["raw_bytes"].get<int64_t>(), 16 + 400 * 784);

  ASSERT_EQ(j["loader_ladder"].size(), 9u);
  EXPECT_DOUBLE_EQ(j["loader_ladder"][0]["speedup"].get<double>(), 1.0);
  for (const auto& l : j["loader_ladder"]) {
    EXPECT_EQ(l["samples_per_epoch"].get<int64_t>(), 400) << l.dump();
    EXPECT_GT(l["samples_per_second"].get<double>(), 0.0);
    EXPECT_EQ(l["epoch_seconds"].size(), 1u);
  }

  ASSERT_EQ(j["training_ladder"].size(), 14u);
  int skipped = 0;
  for (const auto& t : j["training_ladder"]) {
    if (t["skipped"].get<bool>()) {
      ++skipped;
      EXPECT_TRUE(t["config"]["cuda_graph"].get<bool>()) << t.dump();
      continue;
    }
    ASSERT_EQ(t["epochs"].size(), 1u) << t.dump();
    EXPECT_EQ(t["epochs"][0]["train_samples"].get<int64_t>(), 300) << t.dump();
    EXPECT_GT(t["avg_train_seconds"].get<double>(), 0.0);
    EXPECT_GE(t["test_accuracy"].get<double>(), 0.0);
    EXPECT_LE(t["test_accuracy"].get<double>(), 1.0);
  }
  EXPECT_EQ(skipped, 3);
  // The floors: on noise, then on the dataset's own images, in order.
  const auto& ladder = j["training_ladder"];
  EXPECT_EQ(ladder[10]["config"]["dataset_mode"], "synthetic");
  EXPECT_EQ(ladder[12]["config"]["dataset_mode"], "in-order");
  EXPECT_EQ(ladder[12]["rung"], "compute floor (its images, no loader)");
  EXPECT_EQ(ladder[12]["epochs"][0]["train_samples"].get<int64_t>(), 300) << ladder[12].dump();
  EXPECT_TRUE(ladder.back()["skipped"].get<bool>());
  ASSERT_EQ(j["floor_check"].size(), 2u);
  // On the CPU the eager pipelines: the device-resident rung against the eager floors, the synthetic one first.
  // The best runs are shared: each round runs the best once, between the two floors.
  EXPECT_EQ(j["floor_check"][0]["best_rung"], "+ device-resident dataset");
  EXPECT_EQ(j["floor_check"][0]["floor_rung"], "compute floor (synthetic, no loader)");
  EXPECT_EQ(j["floor_check"][1]["best_rung"], "+ device-resident dataset");
  EXPECT_EQ(j["floor_check"][1]["floor_rung"], "compute floor (its images, no loader)");
  EXPECT_EQ(j["floor_check"][1]["best_train_seconds"], j["floor_check"][0]["best_train_seconds"]);
  EXPECT_NE(j["floor_check"][1]["floor_train_seconds"], j["floor_check"][0]["floor_train_seconds"]);
  EXPECT_EQ(j["floor_check"][0]["best_train_seconds"].size(), 2u);
  EXPECT_EQ(j["floor_check"][0]["floor_train_seconds"].size(), 2u);
  EXPECT_EQ(j["floor_check"][1]["floor_train_seconds"].size(), 2u);
  EXPECT_EQ(count_of(r.output, "(median of 2 pairs; too few for a 95% confidence interval"), 2u) << r.output;
  {
    // Two runs each: the medians are their means, the quartiles a quarter of the way in from each end.
    const auto& f = j["floor_check"][0];
    const double a = f["floor_train_seconds"][0], b = f["floor_train_seconds"][1];
    const double best_mean = (f["best_train_seconds"][0].get<double>() + f["best_train_seconds"][1].get<double>()) / 2;
    EXPECT_GT(f["floor_median"].get<double>(), 0.0);
    EXPECT_NEAR(f["floor_median"].get<double>(), (a + b) / 2, 1e-9);
    EXPECT_NEAR(f["best_median"].get<double>(), best_mean, 1e-9);
    EXPECT_NEAR(f["floor_spread"].get<double>(), std::abs(a - b) / 2 / ((a + b) / 2), 1e-9);
    EXPECT_NEAR(f["gap"].get<double>(), best_mean / ((a + b) / 2) - 1, 1e-9);
    // Run by run: each best run against its neighbour among the floor runs; two pairs give no 95% interval.
    ASSERT_EQ(f["paired_gaps"].size(), 2u);
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_NEAR(f["paired_gaps"][k].get<double>(),
                  f["best_train_seconds"][k].get<double>() / f["floor_train_seconds"][k].get<double>() - 1, 1e-9);
    }
    EXPECT_TRUE(f["paired_gap_interval"].is_null());
  }
  EXPECT_EQ(j["sweeps"].size(), 22u);

  const std::string md = file_bytes(out + "/results.md");
  for (const char* heading : {"## Storage", "## Loader ladder", "## Training ladder: MNIST", "## Sweep of batch size: MNIST",
                              "## Sweep of workers: MNIST"}) {
    EXPECT_TRUE(contains(md, heading)) << heading;
  }
  if (gnuplot_installed()) {
    for (const char* plot : {"loader_ladder", "training_ladder_MNIST", "sweep_batch_MNIST", "sweep_workers_MNIST"}) {
      EXPECT_TRUE(contains(file_bytes(out + "/plots/" + plot + ".svg"), "<svg")) << plot;
      EXPECT_EQ(file_bytes(out + "/plots/" + plot + ".png").substr(1, 3), "PNG") << plot;
    }
  }

  // --from makes the same outputs again from results.json alone (a GPU machine's run, plotted elsewhere).
  const std::string again = testing::scratch_dir("cli_bench_again");
  const CliRun from = run_cli("bench --from " + out + "/results.json --out " + again +
                              (gnuplot_installed() ? "" : " --skip-plots"));
  ASSERT_EQ(from.status, 0) << from.output;
  EXPECT_EQ(file_bytes(again + "/results.json"), file_bytes(out + "/results.json"));
  EXPECT_EQ(file_bytes(again + "/results.md"), md);
  EXPECT_TRUE(contains(from.output, "vs the compute floor")) << from.output;
  EXPECT_EQ(count_of(from.output, "MNIST (sweep-"), 2u) << from.output;
  if (gnuplot_installed()) {
    for (const char* plot : {"loader_ladder", "training_ladder_MNIST", "sweep_batch_MNIST", "sweep_workers_MNIST"}) {
      EXPECT_EQ(file_bytes(again + "/plots/" + plot + ".svg"), file_bytes(out + "/plots/" + plot + ".svg")) << plot;
    }
  }
  {
    // Nine pairs, the floor at 1 s and the best 0% to 8% above it: the pairs' median is +4%, and the sign test's
    // 96.1% interval runs from the second smallest gap to the second largest, read from the runs alone.
    auto nine = nlohmann::json::parse(file_bytes(out + "/results.json"));
    auto& f = nine["floor_check"][0];
    f["floor_train_seconds"] = std::vector<double>(9, 1.0);
    f["best_train_seconds"] = std::vector<double>{1.05, 1.01, 1.08, 1.00, 1.03, 1.07, 1.02, 1.06, 1.04};
    f.erase("paired_gaps");
    f.erase("paired_gap_interval");
    const std::string crafted = testing::scratch_dir("cli_bench_nine");
    std::ofstream(crafted + "/results.json") << nine.dump(2);
    const CliRun nine_run = run_cli("bench --from " + crafted + "/results.json --skip-plots --out " + crafted + "/out");
    ASSERT_EQ(nine_run.status, 0) << nine_run.output;
    EXPECT_TRUE(contains(nine_run.output, "+4.0% (median of 9 pairs; with 96.1% confidence the median gap lies "
                                          "between +1.0% and +7.0%)"))
        << nine_run.output;
    const auto written = nlohmann::json::parse(file_bytes(crafted + "/out/results.json"));
    const auto& interval = written["floor_check"][0]["paired_gap_interval"];
    EXPECT_NEAR(interval["low"].get<double>(), 0.01, 1e-9);
    EXPECT_NEAR(interval["high"].get<double>(), 0.07, 1e-9);
    EXPECT_NEAR(written["floor_check"][0]["paired_gap_median"].get<double>(), 0.04, 1e-9);
  }
  // What it refuses, naming the file or the flag, and writing nothing.
  const std::string refused = testing::scratch_dir("cli_bench_refused");
  std::string bad = file_bytes(out + "/results.json");
  bad.replace(bad.find("\"loader_ladder\""), 15, "\"loader_ladders\"");
  std::ofstream(refused + "/renamed.json") << bad;
  std::ofstream(refused + "/other.json") << "{\"tool\": \"something else\"}";
  std::ofstream(refused + "/cut.json") << file_bytes(out + "/results.json").substr(0, 500);
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"--from " + refused + "/missing.json", refused + "/missing.json"},
           {"--from " + refused + "/renamed.json", "loader_ladder"},
           {"--from " + refused + "/other.json", "not the results.json of feedline bench"},
           {"--from " + refused + "/cut.json", refused + "/cut.json: not a results.json"},
           {"--from " + out + "/results.json --epochs 2", "not --epochs"}}) {
    const CliRun r2 = run_cli("bench " + args + " --skip-plots --out " + refused + "/out");
    EXPECT_NE(r2.status, 0) << args;
    EXPECT_TRUE(contains(r2.output, says)) << args << "\n" << r2.output;
    EXPECT_FALSE(std::filesystem::exists(refused + "/out")) << args;
  }
}

TEST(Cli, BenchRejectsBadFlagsAndMissingData) {
  CliRun r = run_cli("bench --epochs 0");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "epochs")) << r.output;
  for (const std::string flag : {"bench --loader-min-seconds", "bench loader --min-seconds"}) {
    for (const std::string value : {"-1", "abc", "1e400", "2s"}) {
      r = run_cli(flag + " " + value);
      EXPECT_NE(r.status, 0) << flag << " " << value;
      EXPECT_TRUE(contains(r.output, "must be a number of seconds, 0 or more, not '" + value + "'")) << r.output;
    }
  }
  const std::string dir = testing::scratch_dir("cli_bench_missing");
  r = run_cli("bench --data-dir " + dir + " --out " + dir + "/results --device cpu --skip-storage");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, dir + "/FashionMNIST/train.parquet: not found")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/results/results.json"));
}

}  // namespace
}  // namespace feedline
