// The benchmark lab, `feedline bench` as a library: reproduces the experiment's tables side by side in one run
// (storage, a loader ladder without a model, the training ladder from the naive pipeline to the compute floor,
// and sweeps of batch size and workers), announces them to a Reporter as it goes, writes results.json, results.md
// and plots, and returns the results. It prints nothing itself.
//
// Call run_lab() from one thread at a time: it sets LibTorch's intra-op thread count for the process, and calls
// its Reporter on that thread. Every timing it reports is a ratio against a baseline run in the same call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "feedline/dataset/dataset_mode.h"
#include "feedline/dist/device_choice.h"
#include "feedline/io/columns.h"
#include "feedline/lab/results.h"

namespace feedline::lab {

// What the lab announces as it runs, for a front end to show: override what you show. Every method of Reporter
// itself does nothing, so a plain Reporter is the silent one.
class Reporter {
 public:
  virtual ~Reporter() = default;
  // A part of the run begins (the storage table, a ladder, the sweeps); `title` says what and how it measures.
  virtual void section(const std::string& /*title*/) {}
  // A training run of a ladder or a sweep begins: the `index`-th of `count`; `what` names the pipeline.
  virtual void run_started(int64_t /*index*/, int64_t /*count*/, const std::string& /*what*/) {}
  // A line of results or of the run's record: a rung's figures, an epoch's, the machine, a run skipped and why.
  virtual void line(const std::string& /*text*/) {}
  // A note apart from the lines around it: a check about to run, a part left out, the files written.
  virtual void note(const std::string& /*text*/) {}
  // A finished table (Markdown), one row a line.
  virtual void table(const std::string& /*text*/) {}
  // Whether progress() shows anything. When false the lab leaves it uncalled: a progress label is made inside
  // timed loops, and a training step's loss read for it waits for the device.
  virtual bool shows_progress() const { return false; }
  // Work in progress under `label`: `done` of `total`, with a detail ("epoch 2"). The next other call ends it.
  virtual void progress(const std::string& /*label*/, int64_t /*done*/, int64_t /*total*/,
                        const std::string& /*detail*/) {}
};

struct LabOptions {
  std::string data_dir = "data";
  std::string out_dir = "results";
  std::vector<std::string> datasets{"fashion-mnist", "mnist"};  // storage table and loader ladder
  std::vector<std::string> train_datasets{"fashion-mnist"};     // training ladder and sweeps
  // The default protocol fits in minutes on a small CPU machine. `full`: the caller set the experiment's (5 epochs,
  // all the data); the record calls any other protocol a shortened one.
  bool full = false;
  int64_t epochs = 1;
  int64_t train_limit = 20000, test_limit = 5000;  // training ladder; 0: every sample
  int64_t sweep_train_limit = 10000, sweep_test_limit = 2000;
  int64_t loader_epochs = 2;        // loader ladder: at least these timed epochs a rung,
  double loader_min_seconds = 1.0;  // and at least this long, after a warm-up epoch
  int64_t floor_repeats = 9;        // alternating runs of the best pipeline and the floor
  DeviceChoice device;  // auto: a GPU when there is one
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
  // The image rung: a short `bench images` over the photo set of `prepare --photos` when it exists, else a line
  // saying it was skipped. Empty `photos_dir`: <data_dir>/photos/jpeg/train.
  bool skip_images = false;
  std::string photos_dir;
  int64_t image_count = 400;  // images of the set measured (spread over it), 1 round of 1 epoch a pipeline
  std::string program;        // this program's path: image_bench.py and the Python package are looked for beside it
};

// Runs the lab and returns its results. Throws feedline::Error for missing data or bad options, naming what is
// wrong.
LabResults run_lab(const LabOptions& options, Reporter& reporter);
LabResults run_lab(const LabOptions& options);  // reporting nothing

// The tables, results.md and plots of a run made earlier, perhaps elsewhere (a GPU machine without gnuplot),
// written into `out_dir` without running anything; returns that run's results. Throws naming the file and the
// field for a bad results.json.
LabResults run_lab_from(const std::string& results_json, const std::string& out_dir, bool plots, Reporter& reporter);

// `feedline bench loader`: loader-only throughput (no model), samples/s for every dataset mode x worker count,
// shuffled, on the train split of one of the experiment's datasets.
struct LoaderBenchOptions {
  std::string data_dir = "data";
  std::string dataset = "fashion-mnist";
  FileFormat format = FileFormat::kParquet;
  std::vector<DatasetMode> modes{DatasetMode::kRow, DatasetMode::kTensor};
  std::vector<int64_t> workers{0, 2};
  int64_t batch_size = 512;
  int64_t epochs = 2;        // at least these timed epochs per configuration, after one warm-up epoch,
  double min_seconds = 1.0;  // and at least this long (time_loader_epochs())
  int threads = 1;
};
// One configuration's throughput.
struct LoaderBenchResult {
  DatasetMode mode = DatasetMode::kRow;
  int64_t workers = 0;
  double samples_per_second = 0;
  double wait_share = 0;  // of the timed epochs, spent waiting for batches
};
std::vector<LoaderBenchResult> run_loader_bench(const LoaderBenchOptions& options, Reporter& reporter);

// `feedline bench dist`: data-parallel CPU training of SimpleCNN on this host against one process, feedline's and
// PyTorch's side by side on the same data, model, global batch, optimizer (Adam 1e-3) and cores. Five
// configurations in alternating rounds, `repeat` rounds: feedline with one process of threads / nproc threads (its
// scale), PyTorch likewise (plain, no DDP), feedline with one process of `threads` threads, feedline with `nproc`
// processes of threads / nproc threads (data-parallel over Gloo), and PyTorch's DistributedDataParallel likewise.
// feedline's runs are `program` (feedline-torch) running `train`; PyTorch's are `python_program` running `script`
// (scripts/python/ddp_bench.py), with the process settings feedline applies in the environment. A run's epoch time
// is the median of its epochs after the first (a warm-up). Ratios are taken round by round and their medians
// reported: feedline's processes over DDP's, and each one's scaling efficiency over its own one process (T1 / (N x
// TN)). PyTorch's rows are skipped, with the reason, where the Python cannot run them (no torch, say); the others
// run. Reports a table; writes it to `out_dir`/dist.json and dist.md (written whole, then renamed).
struct DistBenchOptions {
  std::string data_dir = "data";
  std::string dataset = "fashion-mnist";
  FileFormat format = FileFormat::kParquet;
  DatasetMode mode = DatasetMode::kTensor;
  int64_t limit = 20480;  // the first N samples of each split (train --limit)
  int64_t batch_size = 512;
  int64_t epochs = 3;
  int64_t nproc = 2;
  int threads = 2;
  int64_t repeat = 2;
  std::string out_dir = "bench-results";
  bool python = true;  // PyTorch's rows (false: feedline's alone)
  std::string python_program = "/usr/bin/python3";
  std::string script;  // ddp_bench.py; empty: looked for beside the checkout or the program
};
// The five configurations, in the order a round runs them.
enum class DistConfig { kFeedlineSingle, kPyTorchSingle, kFeedlineThreads, kFeedlineProcesses, kPyTorchDdp };
inline constexpr int kDistConfigs = 5;
// One configuration's runs, round by round.
struct DistBenchRow {
  DistConfig config = DistConfig::kFeedlineSingle;
  std::string name;  // "feedline, 2 processes x 1 thread"
  int64_t processes = 1;
  int threads = 1;   // a process
  bool skipped = false;
  std::string note;  // why it was skipped; for PyTorch's rows run, torch's version
  std::vector<double> epoch_seconds;     // a run's epoch time (the median of its epochs after the first)
  std::vector<double> allreduce_shares;  // feedline's processes: allreduce's share of an epoch, run by run
  double test_accuracy = 0;              // after the last run
};
// A ratio taken in each round, and its median.
struct RoundRatio {
  std::vector<double> rounds;
  double median = 0;  // 0 when no round had both sides
};
struct DistBenchResult {
  std::vector<DistBenchRow> rows;  // indexed by DistConfig
  RoundRatio processes_over_ddp;   // feedline's processes' epoch over DDP's (below 1: feedline faster)
  RoundRatio threads_over_processes;  // feedline's one process of every thread over its processes
  RoundRatio feedline_efficiency;  // T1 / (nproc x TN), feedline's processes over feedline's one process
  RoundRatio ddp_efficiency;       // the same for DDP over PyTorch's one process
  const DistBenchRow& row(DistConfig c) const { return rows.at(static_cast<size_t>(c)); }
};
DistBenchResult run_dist_bench(const DistBenchOptions& options, const std::string& program, Reporter& reporter);

// `feedline bench images`: images per second of the same augmentation (RandomResizedCrop, RandomHorizontalFlip,
// PILToTensor) over the same folder of JPEGs on the same cores, side by side in one run: torchvision's ImageFolder
// in torch's DataLoader and feedline.DataLoader over feedline.ImageFolder (Python, scripts/python/image_bench.py,
// each in a process of its own), feedline's Loader in C++ with and without reduced decoding, and the limit:
// libjpeg-turbo decoding the whole files on as many threads. Then where the C++ pipeline's time goes, piece by
// piece on one thread. Reports a table (images/s, against torchvision and against the decoding limit) and writes
// JSON when asked.
struct ImageBenchOptions {
  std::string data_dir = "data/photos/jpeg/train";  // a folder of class folders of images
  int64_t workers = 0;      // worker threads (processes for torchvision) and decoding threads; 0: every core
  int64_t batch_size = 256;
  int64_t image_size = 224;
  int64_t images = 0;       // 0: every image of the folder; else this many, spread evenly over it
  int64_t epochs = 2;       // timed epochs a run, after one untimed warm-up epoch of each pipeline
  int64_t repeat = 1;       // rounds, each pipeline once a round; a row's figure is its median run
  int64_t sample = 200;     // images timed piece by piece for the breakdown
  bool to_tensor = true;    // also torchvision with ToTensor (float32)
  // Also torchvision's reference training recipe (TrivialAugmentWide after the crop and flip, float32, Normalize,
  // RandomErasing) against feedline's of the same transforms, both in Python.
  bool recipe = true;
  bool python = true;       // the Python rows (false: C++ rows only)
  std::string python_program = "/usr/bin/python3";
  std::string script;       // image_bench.py; empty: looked for beside the checkout or the program
  std::string python_path;  // the folder holding the feedline package; empty: <program's folder>/python if there
  std::string json_path;    // empty: no JSON
  std::string plot_dir;     // the plot of images/s (images.svg, images.png) goes here; empty: no plot
  uint64_t seed = 42;
  std::string command;      // the command line, for the record
};
// ImageBenchRow, ImageBreakdown and ImageBenchResult: feedline/lab/results.h.
ImageBenchResult run_image_bench(const ImageBenchOptions& options, const std::string& program, Reporter& reporter);

}  // namespace feedline::lab
