// Every `feedline` command and flag, defined once with CLI11. Both programs parse with these definitions: the
// `feedline` tool itself, which runs the commands that need no LibTorch (prepare, inspect, cat, convert, --help,
// --version) and hands train and bench over to `feedline-torch`, which parses the same line again and runs them.
// No LibTorch here. Used from the main thread, once.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "cli/prepare_photos.h"
#include "cli/remote_flags.h"
#include "feedline/dist/train_job.h"
#include "feedline/io/columns.h"
#include "feedline/lab/lab.h"
#include "feedline/lab/remote_bench.h"

namespace feedline::cli {

int default_threads();

struct PrepareArgs {
  std::string data_dir = "data";
  std::vector<std::string> datasets{"mnist", "fashion-mnist"};
  std::string mnist_idx, fashion_idx;
  std::string codec = "zstd";
  int threads = default_threads();
  bool images = false;  // also the image layouts (PNG and JPEG class folders, Parquet, tar shards)
  int64_t photos = 0;   // images of the photo set (prepare_photos.h); 0: none
  uint64_t seed = 0;    // of the photo set
  int photo_size = kPhotoLongSide;  // the photo set's longer side
  std::vector<std::string> photo_dirs;  // folders holding the photos in place of the packages' (tests)
  bool tables = true;   // MNIST and FashionMNIST: false when --photos alone was asked for
};

// The job's options, which the flags fill, and the ranks to start.
struct TrainArgs : dist::TrainJobOptions {
  // Data-parallel training: --nproc local ranks started by this process (0: none; the environment of torchrun
  // or another launcher may still make this process one rank of a job).
  int64_t nproc = 0;
  // Every --data, in order: the first is data.train_file, the others data.more_train_files (a mixture).
  std::vector<std::string> data_files;
};

// Refuses flags of `feedline train` that cannot work together, naming them, before LibTorch is loaded.
void check_train_args(const TrainArgs& args);

struct InspectArgs {
  std::string path;  // the first of paths
  // More than one: a mixture of these sets (as `train --data A --data B` reads them), weighed by mix as mix_by
  // says (empty: a repeat of 1 each), over epoch_size samples (0: the mixture's default).
  std::vector<std::string> paths;
  std::vector<double> mix;
  dist::MixBy mix_by = dist::MixBy::kProportion;
  int64_t epoch_size = 0;
  bool json = false;
  int64_t sample = 10000;  // image sets: images probed at most (0: every one)
  int threads = default_threads();
};

// Whether `inspect PATH` names image files rather than a table: tar shards (a .tar, a brace pattern or a list of
// them), a folder holding no Parquet file (class folders), or Parquet whose schema has Hugging Face's image
// struct (an `image.bytes` column). feedline-torch inspects those, with the dataset layer's sources.
bool names_images(const std::string& path);

struct CatArgs {
  std::string path;
  std::vector<std::string> columns;  // empty: all, in file order
  int64_t limit = -1;                // rows; -1: all
  std::string format = "csv";        // csv or jsonl
  int threads = default_threads();
};

struct ConvertArgs {
  std::string input, output;         // .csv or .parquet each
  std::vector<std::string> columns;  // names or globs; empty: every column
  int64_t limit = 0;                 // first N rows; 0: all
  std::vector<std::string> packs;    // NAME=PATTERN[,PATTERN...], applied in order
  std::string pack_as = "bytes";     // bytes or list
  bool narrow_ints = false;
  std::string codec = "zstd";
  int level = 0;
  bool level_given = false;
  int64_t row_group_rows = 0;  // 0: up to 2^20, fewer to keep one row group near 256 MB in memory
  bool dictionary = true;
  int threads = default_threads();
};

// The subcommand a parsed line chose.
enum class Command {
  kPrepare, kTrain, kBench, kBenchFrom, kBenchLoader, kBenchDist, kBenchImages, kBenchRemote, kInspect,
  kInspectImages, kInspectMixture, kCat, kConvert
};

// Every command's arguments and the parser that fills them. After parse(), command() says which ran, and the
// arguments are complete (flags that depend on others, such as --full or --level, already applied).
class Commands {
 public:
  Commands(int argc, const char* const* argv);
  Commands(const Commands&) = delete;
  Commands& operator=(const Commands&) = delete;

  // Parses the line; on --help, --version or a bad flag prints what CLI11 prints and returns its exit code,
  // else returns -1 and command() is set.
  int parse(int argc, const char* const* argv);
  Command command() const { return command_; }
  // Whether the command needs LibTorch (train, bench, inspect of image files): run by feedline-torch.
  bool needs_torch() const;

  PrepareArgs prepare;
  TrainArgs train;
  lab::LabOptions lab;
  std::string bench_from;
  lab::LoaderBenchOptions loader_bench;
  lab::DistBenchOptions dist_bench;
  lab::ImageBenchOptions image_bench;
  lab::RemoteBenchOptions remote_bench;
  InspectArgs inspect;
  CatArgs cat;
  ConvertArgs convert;
  RemoteArgs remote;  // the remote flags of whichever command ran

 private:
  void define_prepare();
  void define_train();
  void define_bench();
  void define_bench_loader(CLI::App* bench);
  void define_bench_dist(CLI::App* bench);
  void define_bench_images(CLI::App* bench);
  void define_bench_remote(CLI::App* bench);
  void define_inspect_and_cat();
  void define_convert();
  void finish();
  void apply_full_protocol();

  CLI::App app_;
  Command command_ = Command::kPrepare;
  std::string train_shape_ = "1x28x28";
  std::string bench_shape_ = "1x28x28";
  CLI::App* prepare_cmd_ = nullptr;
  CLI::App* train_cmd_ = nullptr;
  CLI::App* bench_dist_cmd_ = nullptr;
  CLI::App* bench_images_cmd_ = nullptr;
  CLI::App* bench_remote_cmd_ = nullptr;
  CLI::App* bench_cmd_ = nullptr;
  CLI::App* bench_loader_cmd_ = nullptr;
  CLI::App* inspect_cmd_ = nullptr;
  CLI::App* cat_cmd_ = nullptr;
  CLI::App* convert_cmd_ = nullptr;
  CLI::Option* train_features_ = nullptr;
  CLI::Option* bench_features_ = nullptr;
  CLI::Option* bench_from_ = nullptr;
  CLI::Option* bench_epochs_ = nullptr;
  CLI::Option* bench_limits_[4] = {};
  CLI::Option* level_ = nullptr;
};

// feedline's version line: "feedline 0.1.0 (LibTorch 1.13.1)".
std::string version_text();

}  // namespace feedline::cli
