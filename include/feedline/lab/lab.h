// The benchmark lab, `feedline bench` as a library: reproduces the experiment's tables side by side in one run
// (storage, a loader ladder without a model, the training ladder from the naive pipeline to the compute floor,
// and sweeps of batch size and workers), prints them as it goes and writes results.json, results.md and plots.
//
// Call run_lab() from one thread at a time: it sets LibTorch's intra-op thread count for the process and prints
// to standard output. Every timing it reports is a ratio against a baseline run in the same call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "feedline/io/column_choice.h"

namespace feedline::lab {

struct LabOptions {
  std::string data_dir = "data";
  std::string out_dir = "results";
  std::vector<std::string> datasets{"fashion-mnist", "mnist"};  // storage table and loader ladder
  std::vector<std::string> train_datasets{"fashion-mnist"};     // training ladder and sweeps
  // The default protocol fits in minutes on a small CPU machine; `full` is the experiment's (5 epochs, all data).
  bool full = false;
  int64_t epochs = 1;
  int64_t train_limit = 20000, test_limit = 5000;  // training ladder; 0: every sample
  int64_t sweep_train_limit = 10000, sweep_test_limit = 2000;
  int64_t loader_epochs = 2;        // loader ladder: at least these timed epochs a rung,
  double loader_min_seconds = 1.0;  // and at least this long, after a warm-up epoch
  int64_t floor_repeats = 9;        // alternating runs of the best pipeline and the floor
  std::string device = "auto";
  int threads = 1;
  uint64_t seed = 42;
  bool skip_storage = false, skip_loader = false, skip_training = false, skip_sweeps = false, skip_plots = false;
  std::string mnist_idx, fashion_idx;  // IDX folders for the storage table (default: the packaged ones)
  // Your own data in place of `datasets` and `train_datasets`: a train and a test file, read as `train --data`
  // reads them (no storage table: it compares with the packaged IDX files).
  std::string train_file, test_file;
  ColumnChoice columns;
  ImageShape shape;
  int64_t num_classes = 0;  // 0: the largest label + 1
  std::string command;      // the command line, for the record
  std::string allocator;    // how freed memory is treated, for the record (see keep_freed_memory())
  std::string blas;         // the BLAS and its threads, for the record (see set_blas_threads())
};

// Applies `full` to whatever the caller did not set explicitly: 5 epochs, all the data.
inline void apply_full_protocol(LabOptions& options, bool epochs_set, bool limits_set, bool sweep_limits_set) {
  if (!options.full) return;
  if (!epochs_set) options.epochs = 5;
  if (!limits_set) options.train_limit = options.test_limit = 0;
  if (!sweep_limits_set) options.sweep_train_limit = options.sweep_test_limit = 0;
}

// Runs the lab; returns 0. Throws feedline::Error for missing data or bad options, naming what is wrong.
int run_lab(const LabOptions& options);

// The tables, results.md and plots of a run made earlier, perhaps elsewhere (a GPU machine without gnuplot),
// written into `out_dir` without running anything. Throws naming the file and the field for a bad results.json.
int run_lab_from(const std::string& results_json, const std::string& out_dir, bool plots);

// `feedline bench loader`: loader-only throughput (no model), samples/s for every dataset mode x worker count,
// shuffled, on the train split of one of the experiment's datasets.
struct LoaderBenchOptions {
  std::string data_dir = "data";
  std::string dataset = "fashion-mnist";
  std::string format = "parquet";
  std::vector<std::string> modes{"row", "tensor"};
  std::vector<int64_t> workers{0, 2};
  int64_t batch_size = 512;
  int64_t epochs = 2;        // at least these timed epochs per configuration, after one warm-up epoch,
  double min_seconds = 1.0;  // and at least this long (time_loader_epochs())
  int threads = 1;
};
int run_loader_bench(const LoaderBenchOptions& options);

// `feedline bench dist`: one process with `threads` threads beside `nproc` processes with threads / nproc each
// (data-parallel over Gloo), training the same global batches of the same data on this host's CPU, in turns,
// `repeat` times each, with one process of threads / nproc threads as the scale both are read against. Each run is `program` (feedline-torch) running `train`; a run's epoch time is the median
// of its epochs after the first (a warm-up), and a configuration's the best of its runs. Prints a table with the
// speed-up and the share of the data-parallel step spent in allreduce; writes it to `out_dir`/dist.json and
// dist.md (written whole, then renamed).
struct DistBenchOptions {
  std::string data_dir = "data";
  std::string dataset = "fashion-mnist";
  std::string format = "parquet";
  std::string mode = "tensor";
  int64_t limit = 20480;  // the first N samples of each split (train --limit)
  int64_t batch_size = 512;
  int64_t epochs = 3;
  int64_t nproc = 2;
  int threads = 2;
  int64_t repeat = 2;
  std::string out_dir = "bench-results";
};
int run_dist_bench(const DistBenchOptions& options, const std::string& program);

}  // namespace feedline::lab
