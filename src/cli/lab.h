// `feedline bench`: the benchmark lab. Reproduces the experiment's tables side by side in one run (storage,
// a loader ladder without a model, the training ladder from the naive pipeline to the compute floor, and
// sweeps of batch size and workers) and writes results.json, results.md and plots.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/datasets.h"

namespace feedline::cli {

struct LabArgs {
  std::string data_dir = "data";
  std::string out_dir = "results";
  std::vector<std::string> datasets{"fashion-mnist", "mnist"};  // storage table and loader ladder
  std::vector<std::string> train_datasets{"fashion-mnist"};     // training ladder and sweeps
  // The default protocol fits in minutes on a small CPU machine; `full` is the experiment's (5 epochs, all data).
  bool full = false;
  int64_t epochs = 1;
  int64_t train_limit = 20000, test_limit = 5000;       // training ladder; 0: every sample
  int64_t sweep_train_limit = 10000, sweep_test_limit = 2000;
  int64_t loader_epochs = 2;                           // loader ladder: at least these timed epochs a rung,
  double loader_min_seconds = 1.0;                     // and at least this long, after a warm-up epoch
  int64_t floor_repeats = 9;                           // alternating runs of the best pipeline and the floor
  std::string device = "auto";
  int threads = 0;
  uint64_t seed = 42;
  bool skip_storage = false, skip_loader = false, skip_training = false, skip_sweeps = false, skip_plots = false;
  std::string mnist_idx, fashion_idx;  // IDX folders for the storage table (default: the packaged ones)
  // Your own data in place of `datasets` and `train_datasets`: a train and a test file, read as `train --data`
  // reads them (no storage table: it compares with the packaged IDX files).
  std::string train_file, test_file;
  ColumnChoice columns;
  ImageShape shape;
  int64_t num_classes = 0;  // 0: the largest label + 1
  std::string command;                 // the command line, for the record
  std::string allocator;               // how freed memory is treated, for the record (see keep_freed_memory())
  std::string blas;                    // the BLAS and its threads, for the record (see set_blas_threads())
};

// Applies --full to whatever the user did not set explicitly (the CLI calls it before run_lab).
void apply_full_protocol(LabArgs& args, bool epochs_set, bool limits_set, bool sweep_limits_set);

int run_lab(const LabArgs& args);

// `feedline bench --from results.json`: the tables, results.md and plots of a run made earlier, perhaps elsewhere
// (a GPU machine without gnuplot), written into `out_dir` without running anything.
int run_lab_from(const std::string& results_json, const std::string& out_dir, bool plots);

}  // namespace feedline::cli
