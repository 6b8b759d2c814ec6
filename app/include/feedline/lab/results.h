// The benchmark lab's results: plain data, what run_lab() returns and results.json holds. No LibTorch.
//
// Thread-safety: plain values; share them as any struct.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace feedline::lab {

// Where and how the lab ran.
struct LabContext {
  std::string date;           // ISO 8601, UTC
  std::string command;        // the command line
  std::string cpu;            // model name from /proc/cpuinfo
  int cores = 0;              // hardware threads
  double memory_gib = 0;
  std::string libtorch;       // LibTorch version
  std::string device;         // "cpu" or "cuda:0"
  std::string device_name;    // the GPU's name on CUDA, else the CPU's
  std::string allocator;      // how malloc treats freed memory: feedline's setting or the system's
  std::string blas;           // the BLAS under LibTorch's CPU kernels and its threads per call
  int threads = 0;            // intra-op threads
  std::string protocol;       // e.g. "1 epoch, first 10000 train / 2000 test samples" or "full (5 epochs, all data)"
  int64_t epochs = 0;
  int64_t train_limit = 0;    // 0: every sample
  int64_t test_limit = 0;
  int64_t sweep_train_limit = 0;
  int64_t sweep_test_limit = 0;
  int64_t loader_epochs = 0;
  double loader_min_seconds = 0;
  std::vector<std::string> notes;  // anything the reader must know (skipped rows and why)
};

// A pipeline: one rung of a ladder or one point of a sweep.
struct PipelineConfig {
  std::string name;            // the row's label
  std::string dataset_mode;    // row | tensor | tensor-uint8 | device | synthetic | in-order (the last two: floors)
  int64_t batch_size = 512;
  int64_t num_workers = 0;
  bool persistent_workers = false;
  bool pin_memory = false;
  bool batch_fetch = false;
  bool cuda_graph = false;
  std::string describe() const;  // "row dataset, batch 16, 0 workers" etc.
  // A compute floor (no loader): on synthetic data, or on the dataset's images in order.
  bool is_floor() const { return dataset_mode == "synthetic" || dataset_mode == "in-order"; }
};

// One storage-table row: a split written in one format/layout, then read back into image tensors.
struct StorageResult {
  std::string dataset, split, format;  // format: csv | parquet-pandas | parquet-uint8 | parquet-row-major
  std::string layout;                  // what the file holds, in words
  int64_t bytes = 0;
  double ratio_to_csv = 0;             // CSV bytes / these bytes
  double write_seconds = 0, read_seconds = 0;  // read: file to [N,1,28,28] float tensor + labels
};

// The reference for the row-major layout's target: `zstd -3` of the raw IDX image file.
struct IdxZstdResult {
  std::string dataset, split;
  int64_t raw_bytes = 0, zstd3_bytes = 0;
};

struct LoaderResult {
  std::string dataset;
  PipelineConfig config;
  int64_t samples_per_epoch = 0;
  std::vector<double> epoch_seconds, epoch_wait_seconds;  // raw samples
  double samples_per_second = 0;
  double speedup = 0;  // over the first rung of the same dataset
};

struct EpochFigures {
  double train_seconds = 0, test_seconds = 0;
  double train_loss = 0, test_loss = 0, test_accuracy = 0;
  double train_wait_seconds = 0, test_wait_seconds = 0;
  int64_t train_samples = 0;
  int64_t train_graph_replays = 0, test_graph_replays = 0;  // CUDA graph rungs: steps replayed from the graphs
};

struct TrainResult {
  std::string dataset;
  std::string group;     // ladder | sweep-batch | sweep-workers
  std::string pipeline;  // sweeps: naive | best; ladder: empty
  PipelineConfig config;
  bool skipped = false;
  std::string note;      // why skipped, or what to keep in mind
  double capture_seconds = 0;  // CUDA graph rungs: warm-up and capture, before epoch 1 and outside its time
  std::vector<EpochFigures> epochs;
  double avg_train_seconds = 0, avg_test_seconds = 0, total_seconds = 0;
  double speedup = 0;       // total time of the group's first run / this one's
  double wait_share = 0;    // train-phase time spent waiting for data
  double test_accuracy = 0; // after the last epoch
  double samples_per_second = 0;  // training samples per second of train time
  void summarise();         // fills the averages from `epochs`
};

// How close the best pipeline comes to one compute floor. The best and the floors run in rounds with the best
// between the floors, so that drift in the machine's speed falls on all alike; compared by their medians, and
// run by run.
struct FloorCheck {
  std::string dataset, best_rung, floor_rung;
  std::vector<double> best_train_seconds, floor_train_seconds;  // per run, one epoch each
  double best_median = 0, floor_median = 0;
  double floor_spread = 0;  // the floor runs' interquartile range over their median: the machine's noise
  double gap() const { return floor_median > 0 ? best_median / floor_median - 1.0 : 0; }
  // Each best run against the floor run beside it, as best / floor - 1, in run order: the k-th runs of each
  // are round k's, neighbours, so a pair shares the machine's state of the moment, and the pairs' median, with
  // its confidence interval, says what the data path costs.
  std::vector<double> paired_gaps() const;
};

// `feedline bench images` and the lab's image rung: one pipeline's images per second.
struct ImageBenchRow {
  std::string key;   // a, a-totensor, b, c, d, e
  std::string name;
  bool skipped = false;
  std::string note;  // why skipped, or what to know
  std::vector<double> rates;  // images/s of each run
  int64_t images_per_run = 0;
  double images_per_second = 0;  // the median run
  double peak_rss_mib = 0;       // Python rows: the main process (0: not measured)
  double worker_peak_rss_mib = 0;  // torchvision: its largest worker process
};
// Mean seconds per image of each piece of the C++ pipeline, on one thread.
struct ImageBreakdown {
  int64_t sample = 0;
  double read = 0, decode = 0, resize = 0, rest = 0, assembly = 0;
  double total() const { return read + decode + resize + rest + assembly; }
};
struct ImageBenchResult {
  std::vector<ImageBenchRow> rows;
  ImageBreakdown breakdown;
  int64_t images = 0;  // in the folder measured
  int64_t workers = 0;
};

struct LabResults {
  LabContext context;
  std::vector<StorageResult> storage;
  std::vector<IdxZstdResult> idx_zstd;
  std::vector<LoaderResult> loader;
  std::vector<TrainResult> training;  // ladder rows, then sweep points
  std::vector<FloorCheck> floor_checks;
  ImageBenchResult images;  // the image rung; no rows when it did not run
};

}  // namespace feedline::lab
