// A training job, as `feedline train` runs it: SimpleCNN on one of the experiment's datasets or on any image files,
// in one process or as one rank of a data-parallel job (torchrun's environment, or `feedline train --nproc`), with
// checkpoints, resume and a saved model. The job reports what it does through callbacks and prints nothing.
//
// No LibTorch here, so that a command line can be parsed into TrainJobOptions before LibTorch is loaded; the
// results hold feedline::EpochResult, which feedline/train/train.h defines: include it to read them.
//
// Thread-safety: call run_train_job() from one thread at a time. It sets LibTorch's intra-op thread count for the
// process, and the callbacks run on the calling thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "feedline/dataset/dataset_mode.h"
#include "feedline/dist/device_choice.h"
#include "feedline/io/columns.h"
#include "feedline/io/error.h"

namespace feedline {

struct EpochResult;     // feedline/train/train.h
struct CheckpointInfo;  // feedline/train/train.h
struct SkippedSamples;  // feedline/dataset/encoded.h

namespace dist {

// The choices of a job, each an enum: a front end reads their names once (the CLI: the flags' values).
enum class TrainModel { kSimpleCnn, kResNet18, kResNet34, kResNet50 };  // torchvision's ResNets: RGB images
enum class TrainOptimizer { kAdam, kSgd };
// constant; cosine: to 0 over the epochs after the warm-up; step: times lr_gamma every lr_step_size epochs after it.
enum class LrSchedule { kConstant, kCosine, kStep };
// bf16 and fp16: autocast, on CUDA; fp16 with dynamic loss scaling (fit()).
enum class TrainPrecision { kFloat32, kBFloat16, kFloat16 };
// Gloo, NCCL, or auto: NCCL where each rank has a GPU of its own and this LibTorch has it, else Gloo.
enum class DistBackend { kAuto, kGloo, kNccl };
// Train images: RandomResizedCrop(image_size, scale=(crop_scale_min, 1)) and RandomHorizontalFlip(), then for the
// presets of torchvision's reference classification recipe (its --auto-augment) TrivialAugmentWide, RandAugment or
// AutoAugment (ImageNet's policy), bilinear as the reference's presets ask; or none: the test images' transform.
enum class Augment { kCropFlip, kNone, kTaWide, kRandAugment, kAutoAugment };
enum class BadImages { kRaise, kSkip };  // an image that cannot be read or decoded: stop, or leave it out (counted)
// How the values of a mixture weigh its train sets (feedline/dataset/dataset.h: MixturePart): each set's share of
// the epoch, its samples an epoch over its size, or its samples an epoch.
enum class MixBy { kProportion, kRepeat, kCount };

// What a job trains on: the experiment's dataset in data_dir, or any files (train_file, test_file), as a table or
// as image files (image_size above 0).
struct JobDataOptions {
  std::string data_dir = "data";
  std::string dataset = "fashion-mnist";
  FileFormat format = FileFormat::kParquet;
  std::string train_file, test_file;  // any files, in place of data_dir, dataset and format
  ColumnChoice columns;
  DatasetMode mode = DatasetMode::kTensor;
  ImageShape image_shape;  // of a table's features
  int64_t num_classes = 0;  // 0: 10 for `dataset`, the class folders or ClassLabel names, else the largest label + 1
  int64_t limit = 0;        // the first N samples of each split of a table (0: all)
  // The threads that decode the files, and LibTorch's intra-op threads. 0: every core of the host, the intra-op
  // ones shared between the job's ranks on this host (LOCAL_WORLD_SIZE).
  int threads = 0;

  // Image files in place of a table (feedline/dataset/image_dataset.h: a folder of class folders, Parquet with an
  // image column, tar shards): above 0, train_file and test_file are read as images, decoded as RGB on the
  // loader's workers and made image_size x image_size; the model takes 3 x image_size x image_size, and
  // image_shape, columns, mode and limit do not apply. Test images: Resize(image_size), CenterCrop(image_size).
  int64_t image_size = 0;
  Augment augment = Augment::kCropFlip;
  double crop_scale_min = 0.08;  // torchvision's default
  // The reference recipe's batch-level augmentations, for image files. random_erase above 0: RandomErasing(p) on
  // the train images' tensor (erased to 0, black: the job's images are not normalised). mixup_alpha, cutmix_alpha
  // above 0: the train loader's BatchMix (feedline/loader/loader.h; one of the two chosen per batch when both are
  // on, as the reference's RandomChoice does), which mixes float images ([0, 1], ToTensor in place of PILToTensor)
  // and soft targets for the cross-entropy.
  double random_erase = 0;
  double mixup_alpha = 0;
  double cutmix_alpha = 0;
  BadImages on_error = BadImages::kRaise;

  // A mixture: more train sets, read with train_file as one train split (a MixtureDataset of tables, or for image
  // files one EncodedDataset over a MixtureSource), each giving its share of every epoch. mix: one value for each
  // set, train_file first, read as mix_by says (empty: a repeat of 1 each, every sample once an epoch);
  // mix_epoch_size: the epoch's samples (0: the mixture's default). Image sets must name the same classes by
  // number.
  std::vector<std::string> more_train_files;
  MixBy mix_by = MixBy::kProportion;
  std::vector<double> mix;
  int64_t mix_epoch_size = 0;
};

// The loader of each split (feedline::LoaderOptions).
struct JobLoaderOptions {
  int64_t batch_size = 512;  // the global batch: split evenly between the ranks of a job
  int64_t num_workers = 0;
  bool persistent_workers = false;
  bool pin_memory = false;
  int64_t prefetch_factor = 2;
  int64_t prefetch_blocks = 4;  // for remote data
};

// The model, its optimizer and torchvision's classification recipe. Adam takes lr and nothing else; SGD momentum,
// nesterov, weight_decay, and norm_weight_decay for batch norm's parameters and every bias (below 0: the same as
// weight_decay). lr_warmup_epochs of linear warm-up from lr * lr_warmup_decay. ema_decay above 0: an average of the
// weights, updated every ema_steps steps with torchvision's adjustment of the decay to the global batch, ema_steps
// and the epochs. The ranges are fit()'s (feedline/train/train.h).
struct JobModelOptions {
  TrainModel model = TrainModel::kSimpleCnn;
  TrainOptimizer optimizer = TrainOptimizer::kAdam;
  double lr = 1e-3;
  double momentum = 0.9;
  bool nesterov = false;
  double weight_decay = 0;
  double norm_weight_decay = -1;
  LrSchedule lr_schedule = LrSchedule::kConstant;
  int64_t lr_warmup_epochs = 0;
  double lr_warmup_decay = 0.01;
  int64_t lr_step_size = 30;
  double lr_gamma = 0.1;
  double label_smoothing = 0;
  double clip_grad_norm = 0;
  double ema_decay = 0;
  int64_t ema_steps = 32;
  TrainPrecision precision = TrainPrecision::kFloat32;
};

// Where a job resumes: nowhere (a fresh start), a folder's newest checkpoint, or kAuto: the checkpoint folder's
// newest checkpoint when it holds one, else a fresh start, so that one command line serves every start of a job
// that a launcher restarts.
struct ResumeFrom {
  enum class Kind { kNone, kAuto, kFolder };
  Kind kind = Kind::kNone;
  std::string folder;  // kFolder
};

// Checkpoints (TrainOptions): a folder with neither `every` nor `interval`: one at the end of every epoch's
// training. A checkpoint that is there but cannot be read is refused by name, never skipped. The world size may
// differ from the checkpoint's when the global batch is the same and the training split is not streamed (a
// streamed file's ranks read stretches of row groups that depend on it).
struct JobCheckpointOptions {
  std::string dir;
  int64_t every = 0;    // training steps (parse_checkpoint_every())
  double interval = 0;  // seconds
  int64_t keep = 1;
  bool async = true;
  ResumeFrom resume;
};

struct JobDistOptions {
  DistBackend backend = DistBackend::kAuto;
  double timeout = 300;  // seconds a rank waits for the others
};

// What a job trains on and how. Its errors name the options, never a front end's flags: an option's value that
// cannot work is a JobOptionError saying which.
struct TrainJobOptions {
  JobDataOptions data;
  JobLoaderOptions loader;
  JobModelOptions model;
  JobCheckpointOptions checkpoints;
  JobDistOptions distributed;
  int64_t epochs = 5;
  uint64_t seed = 42;
  DeviceChoice device;  // a job's ranks given cuda (or auto on a GPU machine) take their local GPU
  bool cuda_graph = false;  // SimpleCNN with plain Adam alone, on CUDA
  std::string save;         // the trained model's file (written by rank 0)
  // Preemption: once this flag is true (the CLI's SIGTERM and SIGINT handlers set it), every rank finishes the
  // step in progress, rank 0 writes a checkpoint at that position (with a checkpoint folder), and run_train_job
  // returns with TrainJobResult::stopped set. Read from the training thread; null: never.
  const std::atomic<bool>* stop = nullptr;
};

// The options whose values a job can refuse, as JobOptionError names them.
enum class JobOption {
  kBatchSize, kThreads, kSave, kImageSize, kImageShape, kCropScale, kTrainFile, kTestFile, kResume, kCudaGraph,
  kDistBackend, kModel, kPrecision, kMix
};

// The option's name in TrainJobOptions ("loader.batch_size").
inline const char* job_option_name(JobOption option) {
  switch (option) {
    case JobOption::kBatchSize: return "loader.batch_size";
    case JobOption::kThreads: return "data.threads";
    case JobOption::kSave: return "save";
    case JobOption::kImageSize: return "data.image_size";
    case JobOption::kImageShape: return "data.image_shape";
    case JobOption::kCropScale: return "data.crop_scale_min";
    case JobOption::kTrainFile: return "data.train_file";
    case JobOption::kTestFile: return "data.test_file";
    case JobOption::kResume: return "checkpoints.resume";
    case JobOption::kCudaGraph: return "cuda_graph";
    case JobOption::kDistBackend: return "distributed.backend";
    case JobOption::kModel: return "model.model";
    case JobOption::kPrecision: return "model.precision";
    case JobOption::kMix: return "data.mix";
  }
  return "?";
}

// An option's value that cannot work: what() is the option's name and `detail`, which a front end may put after its
// own name for the option instead.
struct JobOptionError : OptionError {
  JobOptionError(JobOption option, const std::string& detail)
      : OptionError(job_option_name(option), detail), which(option) {}
  JobOption which;  // option() is its name
};

// A file an option names that cannot be read: the same, as an IoError with the system's code.
struct JobFileError : IoError {
  JobFileError(JobOption option, const std::string& detail, int code)
      : IoError(std::string(job_option_name(option)) + " " + detail, code), option(option), detail(detail) {}
  JobOption option;
  std::string detail;
};

// How often a job writes checkpoints, as text: a number of training steps ("100") or a duration ("90s", "10m",
// "1h"): JobCheckpointOptions::every or interval.
struct CheckpointEvery {
  int64_t steps = 0;
  double seconds = 0;
};

// Reads "N" (steps) or "Ns", "Nm", "Nh", N a whole number above 0. Throws InvalidArgument, quoting the text, for
// anything else ("10x", "-5", "0m", "1.5h").
inline CheckpointEvery parse_checkpoint_every(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  const std::string unit = text.substr(digits);
  const bool known = unit.empty() || unit == "s" || unit == "m" || unit == "h";
  // Twelve digits: a trillion steps or seconds, far past any job, and no overflow below.
  const int64_t n = digits > 0 && digits <= 12 && known ? std::stoll(text.substr(0, digits)) : 0;
  if (n <= 0) {
    throw InvalidArgument("'" + text + "' is neither a number of steps above 0 (100) nor a duration above 0 in "
                          "seconds, minutes or hours (90s, 10m, 1h)");
  }
  if (unit.empty()) return {n, 0};
  return {0, static_cast<double>(n) * (unit == "s" ? 1 : unit == "m" ? 60 : 3600)};
}

// Where the job stands once its data is loaded (the fields up to load_seconds) and once its model is made.
struct TrainJobSetup {
  std::string dataset;  // the experiment's dataset's folder ("FashionMNIST"); empty for train_file
  std::string format;   // of `dataset`: "parquet", "csv"
  std::string train_path, test_path;
  DatasetMode mode = DatasetMode::kTensor;
  int64_t train_samples = 0, test_samples = 0;
  double load_seconds = 0;

  int64_t ranks = 1;
  std::string backend;    // the process group's backend; empty for one process
  int threads = 0;        // LibTorch's intra-op threads of this rank
  std::string device;     // "cpu", "cuda:0"
  std::string model;  // "SimpleCNN", "ResNet-18", ...
  int64_t parameters = 0;
  ImageShape shape;
  int64_t classes = 0;
  bool pinned = false;    // the loader pins its batches (asked for and possible)
  int64_t batches_per_epoch = 0;
  // Resuming: where the checkpoint stood (epoch, step), its file, and the world size that wrote it.
  std::optional<std::pair<int64_t, int64_t>> resume_at;
  std::string resume_file;
  int64_t resume_world_size = 0;
  // Who started this process (WorldInfo::launcher: "torchrun", "slurm", "feedline --nproc", "environment"; empty
  // for one process) and which start of the job this is (TORCHELASTIC_RESTART_COUNT; 0 for the first).
  std::string launcher;
  int64_t restart = 0;
  // Image files: the source's layout ("folder", "parquet", "tar shards"; empty for a table) and each split's
  // transform, in torchvision's words.
  std::string image_source;
  std::vector<std::string> train_transform, test_transform;
  // A mixture (JobDataOptions::more_train_files): each train set's path, samples, weight in words ("proportion
  // 0.8", "repeat 1", "count 5000") and samples an epoch, and the epoch's samples. Empty for one train set.
  struct MixSource {
    std::string path;
    int64_t size = 0;
    std::string weight;
    int64_t per_epoch = 0;
  };
  std::vector<MixSource> mix_sources;
  int64_t mix_epoch_length = 0;
};

struct TrainJobCallbacks {
  // After both splits are loaded, before the loaders and the model are made.
  std::function<void(const TrainJobSetup&)> on_loaded;
  // Before the first step: every field of the setup filled in.
  std::function<void(const TrainJobSetup&)> on_ready;
  // After each training step: (epoch, batch index, batches in the epoch, running mean loss). Reading the loss
  // waits for the device: leave it unset unless it is shown.
  std::function<void(int64_t, int64_t, int64_t, double)> on_train_step;
  // After each epoch; in a job also the seconds this rank spent averaging gradients in its train phase.
  std::function<void(const EpochResult&, std::optional<double> allreduce_seconds)> on_epoch_end;
  // After a checkpoint was written, with its file.
  std::function<void(const CheckpointInfo&, const std::string& file)> on_checkpoint;
  // Image files with on_error kSkip: after each epoch's on_epoch_end, the samples this rank left out of the train
  // and the test phase.
  std::function<void(const SkippedSamples& train, const SkippedSamples& test)> on_skipped;
};

struct TrainJobResult {
  std::vector<EpochResult> epochs;
  // The stream mode: row groups read over the job, of how many in how many files.
  int64_t row_group_reads = 0, row_groups = 0, files = 0;
  bool streamed = false;
  std::string saved_to;  // the model's file, when this process wrote one
  // The job stopped early (TrainJobOptions::stop) and did not save its model; `checkpoint` is the file where it
  // stopped, when this process wrote one.
  bool stopped = false;
  std::string checkpoint;
};

// The folder a job resumes from: the one named, or for kAuto the checkpoint folder when it holds a checkpoint, else
// "" (a fresh start). A checkpoint there is not read here: a corrupt one is refused when the job reads it. Throws
// JobOptionError for kAuto without a checkpoint folder and IoError when the folder cannot be listed.
std::string resolve_resume_dir(const TrainJobOptions& options);

// Runs the job this process is part of (world_from_environment(); one process when WORLD_SIZE is unset): the
// process group, the data, the model, the epochs and the save. Throws JobOptionError for options that cannot work
// (a batch that does not split between the ranks, a CUDA graph on a CPU, NCCL on ranks that share a GPU, a save
// path that is a folder), JobFileError, IoError or InvalidFile for files that cannot be read, and DistError
// when a peer fails; a rank's own failure is told to its peers before it is rethrown.
TrainJobResult run_train_job(const TrainJobOptions& options, const TrainJobCallbacks& callbacks = {});

}  // namespace dist
}  // namespace feedline
