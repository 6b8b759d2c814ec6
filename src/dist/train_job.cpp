#include "feedline/dist/train_job.h"

#include <torch/cuda.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "dist/job_model.h"
#include "feedline/catalog/catalog.h"
#include "feedline/dataset/dataset.h"
#include "feedline/dataset/encoded.h"
#include "feedline/dataset/image_dataset.h"
#include "feedline/dataset/image_file.h"
#include "feedline/dataset/stream_dataset.h"
#include "feedline/dist/data_parallel.h"
#include "feedline/dist/dist.h"
#include "feedline/io/error.h"
#include "feedline/loader/loader.h"
#include "feedline/train/models.h"
#include "feedline/train/train.h"
#include "io/parallel.h"

namespace feedline::dist {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// ------------------------------------------------------------------------------------------ a rank's share

// The ranks of the job on this host (LOCAL_WORLD_SIZE, which torchrun and --nproc set; 1 when unset).
int64_t ranks_on_this_host() {
  const char* local = std::getenv("LOCAL_WORLD_SIZE");
  return local != nullptr ? std::max<int64_t>(1, std::atoll(local)) : 1;
}

// The CPU threads of one rank: the number asked for, else the host's cores shared between its ranks.
int rank_threads(const TrainJobOptions& o, const std::optional<WorldInfo>& world) {
  if (o.data.threads < 0) throw JobOptionError(JobOption::kThreads, "must be at least 1");
  if (o.data.threads > 0 || !world) return resolve_threads(o.data.threads);
  return static_cast<int>(std::max<int64_t>(1, resolve_threads(0) / ranks_on_this_host()));
}

// The device of one rank: a job's ranks given cuda (or auto on a GPU machine) take the GPU of their local rank.
torch::Device rank_device(const TrainJobOptions& o, const std::optional<WorldInfo>& world) {
  const torch::Device device = resolve_device(device_choice_text(o.device));
  if (!world || world->world_size == 1 || !device.is_cuda() || device.has_index()) return device;
  const auto gpus = static_cast<int64_t>(torch::cuda::device_count());
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(world->local_rank % std::max<int64_t>(1, gpus)));
}

// The backend of one rank. NCCL takes one GPU a rank: where this host's ranks would share a GPU (more ranks than
// GPUs, or every rank given one cuda:N), auto takes Gloo, which carries CUDA tensors too, and NCCL is refused
// before the rendezvous rather than by NCCL midway.
std::string rank_backend(const TrainJobOptions& o, torch::Device device) {
  const DistBackend backend = o.distributed.backend;
  const std::string name = backend == DistBackend::kGloo ? "gloo" : backend == DistBackend::kNccl ? "nccl" : "auto";
  if (!device.is_cuda() || backend == DistBackend::kGloo) return name;
  const int64_t ranks = ranks_on_this_host();
  const auto gpus = static_cast<int64_t>(torch::cuda::device_count());
  const bool one_gpu = o.device.index >= 0;
  const bool shared = ranks > 1 && (ranks > gpus || one_gpu);
  if (!shared) return name;
  if (backend == DistBackend::kNccl) {
    throw JobOptionError(JobOption::kDistBackend,
                         "nccl needs a GPU of its own for each rank, and the " + std::to_string(ranks) +
                             " ranks on this host share " +
                             (one_gpu ? "the one GPU " + device_choice_text(o.device)
                                      : std::to_string(gpus) + " GPU(s)") +
                             "; use gloo (which carries CUDA tensors too) or fewer ranks");
  }
  return "gloo";
}

// ------------------------------------------------------------------------------------------ before training

// Refuses, before any training, a save path that is a folder or whose folder cannot be made (made here, as the
// save would make it).
void check_save_path(const std::string& path) {
  if (path.empty()) return;
  const std::filesystem::path p(path);
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) throw JobOptionError(JobOption::kSave, path + ": is a folder, not a file");
  if (p.has_parent_path()) {
    std::filesystem::create_directories(p.parent_path(), ec);
    if (ec) {
      throw JobOptionError(JobOption::kSave,
                           path + ": cannot make the folder " + p.parent_path().string() + ": " + ec.message());
    }
  }
}

ImageShape checked_shape(const JobDataOptions& o) {
  if (o.image_size > 0) {
    if (o.image_size < 4) {
      throw JobOptionError(JobOption::kImageSize,
                           std::to_string(o.image_size) + ": SimpleCNN needs images of at least 4x4 pixels");
    }
    return ImageShape{3, o.image_size, o.image_size};
  }
  const ImageShape& shape = o.image_shape;
  if (shape.height < 4 || shape.width < 4) {
    throw JobOptionError(JobOption::kImageShape, std::to_string(shape.channels) + "x" + std::to_string(shape.height) +
                                                     "x" + std::to_string(shape.width) +
                                                     ": SimpleCNN needs images of at least 4x4 pixels");
  }
  return shape;
}

// Both splits, as datasets on `device`; fills the setup's data fields.
struct JobData {
  ImageFile train, test;
  int64_t named_classes = 0;  // image files: the classes the train source names (folders, ClassLabel names)
};

std::vector<std::string> step_texts(const std::vector<ImageStep>& steps) {
  std::vector<std::string> out;
  for (const ImageStep& step : steps) out.push_back(describe(step));
  return out;
}

// One split of image files, decoded and transformed by `steps` on the loader's workers.
ImageFile load_image_split(const std::string& spec, JobOption option, const std::vector<ImageStep>& steps,
                           OnError on_error, std::shared_ptr<const SampleSource>* source) {
  try {
    *source = open_image_source(spec);
  } catch (const IoError& e) {
    throw JobFileError(option, spec + ": " + e.what(), e.code());
  }
  ImageFile f;
  f.dataset = make_image_dataset(*source, steps, {}, on_error);
  for (const int64_t label : (*source)->labels()) f.max_label = std::max(f.max_label, label);
  return f;
}

// ------------------------------------------------------------------------------------------ a mixture

// Every train set of the job: train_file, then the mixture's others.
std::vector<std::string> train_files(const JobDataOptions& o) {
  std::vector<std::string> files{o.train_file};
  files.insert(files.end(), o.more_train_files.begin(), o.more_train_files.end());
  return files;
}

// One part a train set, named by its path: by mix_by's kind, or a repeat of 1 each without values.
std::vector<MixturePart> mix_parts(const JobDataOptions& o) {
  const std::vector<std::string> files = train_files(o);
  if (!o.mix.empty() && o.mix.size() != files.size()) {
    throw JobOptionError(JobOption::kMix, "has " + std::to_string(o.mix.size()) + " value" +
                                              (o.mix.size() == 1 ? "" : "s") + " and there are " +
                                              std::to_string(files.size()) + " train sets: give one value each");
  }
  std::vector<MixturePart> parts;
  for (size_t s = 0; s < files.size(); ++s) {
    MixturePart part = MixturePart::repeat(1.0);
    if (!o.mix.empty()) {
      const double v = o.mix[s];
      if (o.mix_by == MixBy::kCount && (v != std::floor(v) || v < 1 || v > 1e15)) {
        throw JobOptionError(JobOption::kMix, files[s] + ": a count is a whole number of samples above 0, not " +
                                                  std::to_string(v));
      }
      part = o.mix_by == MixBy::kProportion ? MixturePart::proportion(v)
             : o.mix_by == MixBy::kRepeat   ? MixturePart::repeat(v)
                                            : MixturePart::count(static_cast<int64_t>(v));
    }
    part.name = files[s];
    parts.push_back(std::move(part));
  }
  return parts;
}

std::string weight_text(const MixturePart& part) {
  std::ostringstream value;
  value << part.value;
  const char* kind = part.kind == MixturePart::Kind::kProportion ? "proportion"
                     : part.kind == MixturePart::Kind::kRepeat   ? "repeat"
                                                                 : "count";
  return std::string(kind) + " " + value.str();
}

// The mixture's sources as the setup reports them.
void describe_mixture(const MixturePlan& plan, TrainJobSetup& setup) {
  for (size_t s = 0; s < plan.sources(); ++s) {
    const std::string& path = plan.part(s).name;
    setup.mix_sources.push_back({path, plan.size(s), weight_text(plan.part(s)), plan.counts()[s]});
  }
  setup.mix_epoch_length = plan.epoch_length();
}

// The train batches' mix as torchvision's reference train.py builds it (RandomChoice of RandomMixup and
// RandomCutmix with p=1.0); empty without one.
std::string batch_mix_text(const JobDataOptions& o) {
  const auto alpha = [](double a) {
    std::ostringstream text;
    text << a;
    return text.str().find_first_of(".e") == std::string::npos ? text.str() + ".0" : text.str();
  };
  std::vector<std::string> mixes;
  if (o.mixup_alpha > 0) mixes.push_back("RandomMixup(p=1.0, alpha=" + alpha(o.mixup_alpha) + ")");
  if (o.cutmix_alpha > 0) mixes.push_back("RandomCutmix(p=1.0, alpha=" + alpha(o.cutmix_alpha) + ")");
  if (mixes.empty()) return "";
  return "batches: RandomChoice([" + mixes[0] + (mixes.size() > 1 ? ", " + mixes[1] : "") + "])";
}

// Image files (JobDataOptions::image_size): uint8 batches, which the training loop normalises on the device (float
// ones in [0, 1] where MixUp or CutMix mixes them).
JobData load_images(const JobDataOptions& o, TrainJobSetup& setup) {
  if (!(o.crop_scale_min > 0 && o.crop_scale_min <= 1)) {
    throw JobOptionError(JobOption::kCropScale, std::to_string(o.crop_scale_min) + ": must be above 0 and at most 1");
  }
  const OnError on_error = o.on_error == BadImages::kSkip ? OnError::kSkip : OnError::kRaise;
  const int64_t n = o.image_size;
  const std::vector<ImageStep> test_steps{image_steps::Resize{{n}}, image_steps::CenterCrop{n, n},
                                          image_steps::PILToTensor{}};
  std::vector<ImageStep> train_steps = test_steps;
  if (o.augment != Augment::kNone) {
    image_steps::RandomResizedCrop crop;
    crop.height = crop.width = n;
    crop.scale_min = o.crop_scale_min;
    train_steps = {crop, image_steps::RandomHorizontalFlip{}};
    // torchvision's reference presets (ClassificationPresetTrain) run the policies bilinear.
    constexpr auto bilinear = image_steps::WarpInterpolation::kBilinear;
    if (o.augment == Augment::kTaWide) {
      image_steps::TrivialAugmentWide policy;
      policy.interpolation = bilinear;
      train_steps.emplace_back(policy);
    } else if (o.augment == Augment::kRandAugment) {
      image_steps::RandAugment policy;
      policy.interpolation = bilinear;
      train_steps.emplace_back(policy);
    } else if (o.augment == Augment::kAutoAugment) {
      image_steps::AutoAugment policy;
      policy.interpolation = bilinear;
      train_steps.emplace_back(policy);
    }
    train_steps.emplace_back(image_steps::PILToTensor{});
  }
  // MixUp and CutMix mix float images: ToTensor's [0, 1], which the training loop takes as it is.
  if (o.mixup_alpha > 0 || o.cutmix_alpha > 0) train_steps.back() = image_steps::ToTensor{};
  if (o.random_erase > 0) {
    image_steps::RandomErasing erase;
    erase.p = o.random_erase;
    train_steps.emplace_back(erase);
  }
  JobData d;
  std::shared_ptr<const SampleSource> train_source, test_source;
  if (o.more_train_files.empty()) {
    d.train = load_image_split(o.train_file, JobOption::kTrainFile, train_steps, on_error, &train_source);
  } else {
    // A mixture: each set's source, mixed under the one transform.
    std::vector<std::shared_ptr<const SampleSource>> sources;
    for (const std::string& file : train_files(o)) {
      try {
        sources.push_back(open_image_source(file));
      } catch (const IoError& e) {
        throw JobFileError(JobOption::kTrainFile, file + ": " + e.what(), e.code());
      }
    }
    const auto mixture = std::make_shared<const MixtureSource>(sources, mix_parts(o), o.mix_epoch_size);
    describe_mixture(mixture->plan(), setup);
    train_source = mixture;
    d.train.dataset = make_image_dataset(train_source, train_steps, {}, on_error);
    for (const int64_t label : train_source->labels()) d.train.max_label = std::max(d.train.max_label, label);
  }
  d.test = load_image_split(o.test_file, JobOption::kTestFile, test_steps, on_error, &test_source);
  d.named_classes = static_cast<int64_t>(train_source->class_names().size());
  // A mixture's layouts, each named once: "folder + tar shards".
  for (const std::string& file : train_files(o)) {
    const std::string kind = image_source_kind_name(image_source_kind(file));
    if (setup.image_source.find(kind) == std::string::npos) {
      setup.image_source += (setup.image_source.empty() ? "" : " + ") + kind;
    }
  }
  setup.train_transform = step_texts(train_steps);
  setup.train_transform.push_back(batch_mix_text(o));
  if (setup.train_transform.back().empty()) setup.train_transform.pop_back();
  setup.test_transform = step_texts(test_steps);
  return d;
}

JobData load_data(const TrainJobOptions& options, const ImageShape& shape, torch::Device device,
                  TrainJobSetup& setup) {
  const JobDataOptions& o = options.data;
  std::string train_path = o.train_file, test_path = o.test_file;
  if (train_path.empty()) {
    const DatasetSpec spec = dataset_spec(o.dataset);
    const std::string format = file_format_name(o.format);
    train_path = split_path(o.data_dir, spec, "train", format);
    test_path = split_path(o.data_dir, spec, "test", format);
    setup.dataset = spec.folder;
    setup.format = format;
  }
  if (!o.mix.empty() && o.more_train_files.empty()) {
    throw JobOptionError(JobOption::kMix, "weighs the train sets of a mixture, and there is one train set: give "
                                          "more, or leave the values out");
  }
  const auto start = Clock::now();
  if (o.image_size > 0) {
    JobData d = load_images(o, setup);
    setup.train_path = train_path;
    setup.test_path = test_path;
    setup.train_samples = d.train.dataset->size();
    setup.test_samples = d.test.dataset->size();
    setup.load_seconds = seconds_since(start);
    return d;
  }
  ImageFileOptions file;
  file.columns = o.columns;
  file.shape = shape;
  file.mode = o.mode;
  file.limit = o.limit;
  file.threads = resolve_threads(o.threads);
  file.device = device;
  // A streamed epoch holds the one or two row groups a batch straddles, and about one more per worker.
  file.cached_row_groups = 3 + options.loader.num_workers;
  JobData d;
  d.train = load_image_file(train_path, file);
  if (!o.more_train_files.empty()) {
    // A mixture of tables: each set read alike, mixed whole samples.
    std::vector<std::shared_ptr<const Dataset>> sources{d.train.dataset};
    for (const std::string& more : o.more_train_files) {
      const ImageFile f = load_image_file(more, file);
      sources.push_back(f.dataset);
      d.train.max_label = std::max(d.train.max_label, f.max_label);
    }
    const auto mixture = std::make_shared<const MixtureDataset>(sources, mix_parts(o), o.mix_epoch_size);
    describe_mixture(mixture->plan(), setup);
    d.train.dataset = mixture;
  }
  d.test = load_image_file(test_path, file);
  setup.train_path = train_path;
  setup.test_path = test_path;
  setup.mode = o.mode;
  setup.train_samples = d.train.dataset->size();
  setup.test_samples = d.test.dataset->size();
  setup.load_seconds = seconds_since(start);
  return d;
}

// The experiment's datasets have 10 classes whatever the limit keeps; image files as many as their class folders
// or ClassLabel names, where they have them; other files as many as their labels say.
int64_t classes_of(const JobDataOptions& o, const JobData& d, const TrainJobSetup& setup) {
  return class_count(o.num_classes, o.train_file.empty() ? 10 : d.named_classes,
                     {{setup.train_path, d.train.max_label}, {setup.test_path, d.test.max_label}});
}

LoaderOptions loader_options(const TrainJobOptions& options, ProcessGroup* group, bool shuffle) {
  const JobLoaderOptions& o = options.loader;
  const int64_t ranks = group != nullptr ? group->world_size() : 1;
  return LoaderOptions(o.batch_size / ranks)
      .rank(group != nullptr ? group->rank() : 0)
      .world_size(ranks)
      // The test set's shares hold each sample once, so that the summed counts are one process's.
      .even_shards(shuffle)
      .shuffle(shuffle)
      .num_workers(o.num_workers)
      .persistent_workers(o.persistent_workers)
      .pin_memory(o.pin_memory)
      .prefetch_factor(o.prefetch_factor)
      .prefetch_blocks(o.prefetch_blocks)
      .seed(options.seed);
}

TrainOptions train_options(const TrainJobOptions& o, const std::string& resume_dir, torch::Device device, bool lead,
                           int64_t batches_per_epoch) {
  TrainOptions t;
  t.epochs = o.epochs;
  t.lr = o.model.lr;
  t.device = device;
  t.cuda_graph = o.cuda_graph;
  const JobCheckpointOptions& c = o.checkpoints;
  t.checkpoint_dir = c.dir;
  // A checkpoint folder alone: once an epoch.
  const bool timed = c.every > 0 || c.interval > 0;
  t.checkpoint_every = c.dir.empty() ? 0 : timed ? c.every : batches_per_epoch;
  t.checkpoint_interval = c.dir.empty() ? 0 : c.interval;
  t.keep_checkpoints = c.keep;
  t.async_checkpoints = c.async;
  t.write_checkpoints = lead;
  t.resume_dir = resume_dir;
  if (o.stop != nullptr) t.stop_requested = [stop = o.stop] { return stop->load(std::memory_order_relaxed); };
  return t;
}

// ------------------------------------------------------------------------------------------ resuming elsewhere

// A checkpoint of another world size resumes when the global batch is the same (the loader then hands out the
// global batches the saved job would have) and the training split is not read in blocks. Checked before the data
// is loaded where the options tell, so that the refusal names them.
void check_resume_world(const TrainJobOptions& o, const CheckpointInfo& at, const std::string& file, int64_t ranks) {
  const LoaderState& saved = at.train_loader;
  if (saved.world_size == ranks) return;
  const std::string where = ": " + file + " was written by a job of " + std::to_string(saved.world_size) +
                            " rank" + (saved.world_size == 1 ? "" : "s") + " and this one has " +
                            std::to_string(ranks);
  if (saved.world_size * saved.batch_size != o.loader.batch_size) {
    throw JobOptionError(JobOption::kResume,
                         where + "; another number of ranks resumes with the same global batch, and the "
                                 "checkpoint's is " + std::to_string(saved.world_size * saved.batch_size) + " (" +
                             std::to_string(saved.world_size) + " x " + std::to_string(saved.batch_size) +
                             "), not this job's " + std::to_string(o.loader.batch_size));
  }
  if (o.data.image_size == 0 && o.data.mode == DatasetMode::kStream) {
    throw JobOptionError(JobOption::kResume,
                         where + "; a streamed training split (dataset mode stream) cannot change its number of "
                                 "ranks: each rank reads a stretch of row groups that depends on the world size. "
                                 "Resume on " + std::to_string(saved.world_size) +
                             " ranks, or with another dataset mode");
  }
}

// The same for image files read in blocks (Parquet images, tar shards), once their source is open.
void check_resume_blocks(const CheckpointInfo& at, const std::string& file, int64_t ranks, const Dataset& train) {
  if (at.train_loader.world_size == ranks || train.shuffle_blocks().empty()) return;
  const std::string saved = std::to_string(at.train_loader.world_size);
  throw JobOptionError(JobOption::kResume,
                       ": " + file + " was written by a job of " + saved + " ranks and this one has " +
                           std::to_string(ranks) + "; training images read in blocks (row groups, tar shards) cannot "
                           "change their number of ranks: each rank reads a stretch of blocks that depends on the "
                           "world size. Resume on " + saved + " ranks");
}

// ------------------------------------------------------------------------------------------ the job

// Every rank's counts added up (each rank calls it with as many).
std::vector<int64_t> summed_over_ranks(ProcessGroup& group, const std::vector<int64_t>& counts, torch::Device device) {
  torch::Tensor t = torch::tensor(counts, torch::kInt64).to(device);
  group.allreduce_sum(t);
  t = t.cpu();
  return std::vector<int64_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
}

// One rank's part of the job (the whole job for one process): `group` is null for one process.
TrainJobResult train_rank(const TrainJobOptions& o, const std::optional<WorldInfo>& world, ProcessGroup* group,
                          const TrainJobCallbacks& callbacks) {
  const bool lead = group == nullptr || group->rank() == 0;
  const torch::Device device = rank_device(o, world);
  if (o.cuda_graph && !device.is_cuda()) {
    throw JobOptionError(JobOption::kCudaGraph, "needs a CUDA device, and the device is " + device.str() +
                                                    " (choose cuda on a machine with a GPU and a LibTorch with CUDA)");
  }
  check_save_path(o.save);
  const int64_t ranks = group != nullptr ? group->world_size() : 1;
  // A checkpoint that is not there, or is no checkpoint, is refused before the data is loaded.
  const std::string resume_dir = resolve_resume_dir(o);
  const std::string resume_file = resume_dir.empty() ? "" : latest_checkpoint(resume_dir);
  const std::optional<CheckpointInfo> resume_at =
      resume_dir.empty() ? std::nullopt : std::optional<CheckpointInfo>(read_checkpoint_info(resume_dir));
  if (resume_at) check_resume_world(o, *resume_at, resume_file, ranks);
  const ImageShape shape = checked_shape(o.data);
  detail::check_job_model(o, shape, device);

  TrainJobSetup setup;
  const JobData data = load_data(o, shape, device, setup);
  if (callbacks.on_loaded) callbacks.on_loaded(setup);
  if (resume_at) check_resume_blocks(*resume_at, resume_file, ranks, *data.train.dataset);
  setup.classes = classes_of(o.data, data, setup);

  LoaderOptions train_loader_options = loader_options(o, group, true);
  if (o.data.image_size > 0 && (o.data.mixup_alpha > 0 || o.data.cutmix_alpha > 0)) {
    train_loader_options.mix(
        BatchMix().num_classes(setup.classes).mixup_alpha(o.data.mixup_alpha).cutmix_alpha(o.data.cutmix_alpha));
  }
  Loader train_loader(data.train.dataset, train_loader_options);
  Loader test_loader(data.test.dataset, loader_options(o, group, false));
  torch::manual_seed(o.seed);
  detail::JobModel job_model = detail::make_job_model(o, shape, setup.classes);
  torch::nn::Module& model = *job_model.model->module;
  model.to(device);
  std::optional<DataParallel> parallel;
  if (group != nullptr) parallel.emplace(*group, model);

  setup.ranks = ranks;
  setup.backend = group != nullptr ? group->backend() : "";
  setup.threads = torch::get_num_threads();
  setup.device = device.str();
  setup.model = job_model.name;
  setup.parameters = parameter_count(model);
  setup.shape = shape;
  setup.pinned = train_loader.pin_memory_active();
  setup.batches_per_epoch = train_loader.batches_per_epoch();
  if (resume_at) {
    setup.resume_at = std::make_pair(resume_at->epoch, resume_at->step);
    setup.resume_file = resume_file;
    setup.resume_world_size = resume_at->train_loader.world_size;
  }
  if (world) {
    setup.launcher = world->launcher;
    setup.restart = world->attempt;
  }
  if (callbacks.on_ready) callbacks.on_ready(setup);

  TrainOptions topts = train_options(o, resume_dir, device, lead, train_loader.batches_per_epoch());
  if (parallel) parallel->apply(topts);
  TrainCallbacks tc;
  tc.on_train_step = callbacks.on_train_step;
  tc.on_epoch_end = [&](const EpochResult& r) {
    const std::optional<double> allreduce =
        parallel ? std::optional<double>(parallel->take_allreduce_seconds()) : std::nullopt;
    if (group != nullptr && !r.train_stats.source_samples.empty()) {
      // A mixture's samples by source over every rank: the epoch's, not this rank's share.
      EpochResult summed = r;
      summed.train_stats.source_samples = summed_over_ranks(*group, r.train_stats.source_samples, device);
      if (callbacks.on_epoch_end) callbacks.on_epoch_end(summed, allreduce);
    } else if (callbacks.on_epoch_end) {
      callbacks.on_epoch_end(r, allreduce);
    }
    const auto* train_images = dynamic_cast<const EncodedDataset*>(data.train.dataset.get());
    const auto* test_images = dynamic_cast<const EncodedDataset*>(data.test.dataset.get());
    if (callbacks.on_skipped && train_images != nullptr && test_images != nullptr) {
      callbacks.on_skipped(train_images->take_skipped(), test_images->take_skipped());
    }
  };
  std::string last_checkpoint;
  tc.on_checkpoint = [&](const CheckpointInfo& c, const std::string& file) {
    last_checkpoint = file;
    if (callbacks.on_checkpoint) callbacks.on_checkpoint(c, file);
  };
  TrainJobResult result;
  if (detail::plain_recipe(o)) {
    result.epochs = train_model(*job_model.simple_cnn, train_loader, test_loader, topts, tc);
  } else {
    const auto optimizer = detail::make_job_optimizer(o, model);
    const Recipe recipe = detail::make_job_recipe(o, train_loader.batches_per_epoch(), o.loader.batch_size);
    result.epochs = fit(*job_model.model, *optimizer, train_loader, test_loader, topts, recipe, tc);
  }
  // Stopped early: the checkpoint written at the step where it stopped (the last one), and no model saved.
  result.stopped = !result.epochs.empty() && result.epochs.back().interrupted;
  if (result.stopped) result.checkpoint = last_checkpoint;
  if (const auto* stream = dynamic_cast<const ParquetStreamDataset*>(data.train.dataset.get())) {
    result.streamed = true;
    result.row_group_reads = stream->row_group_reads();
    result.row_groups = static_cast<int64_t>(stream->shuffle_blocks().size());
    result.files = static_cast<int64_t>(stream->num_files());
  }
  if (!o.save.empty() && lead && !result.stopped) {
    save_module(model, o.save);
    result.saved_to = o.save;
  }
  return result;
}

}  // namespace

std::string resolve_resume_dir(const TrainJobOptions& o) {
  const JobCheckpointOptions& c = o.checkpoints;
  switch (c.resume.kind) {
    case ResumeFrom::Kind::kNone:
      return "";
    case ResumeFrom::Kind::kFolder:
      return c.resume.folder;
    case ResumeFrom::Kind::kAuto:
      break;
  }
  if (c.dir.empty()) {
    throw JobOptionError(JobOption::kResume, "auto resumes from the checkpoint folder's newest checkpoint, and there "
                                             "is no checkpoint folder");
  }
  return latest_checkpoint(c.dir).empty() ? std::string() : c.dir;
}

TrainJobResult run_train_job(const TrainJobOptions& o, const TrainJobCallbacks& callbacks) {
  const auto world = world_from_environment();
  if (!world || world->world_size == 1) {
    torch::set_num_threads(rank_threads(o, world));
    return train_rank(o, world, nullptr, callbacks);
  }
  if (o.loader.batch_size % world->world_size != 0) {
    throw JobOptionError(JobOption::kBatchSize, std::to_string(o.loader.batch_size) + " is the global batch, and it "
                                                "does not split evenly between " + std::to_string(world->world_size) +
                                                " ranks");
  }
  torch::set_num_threads(rank_threads(o, world));
  GroupOptions go;
  const torch::Device device = rank_device(o, world);
  go.backend = rank_backend(o, device);
  go.timeout = std::chrono::milliseconds(static_cast<int64_t>(o.distributed.timeout * 1000.0));
  ProcessGroup group(*world, device, go);
  try {
    TrainJobResult result = train_rank(o, world, &group, callbacks);
    group.barrier();  // no rank leaves while another may still need it
    return result;
  } catch (const DistError&) {
    throw;  // a peer's failure, named in the message: nothing of ours to report
  } catch (const std::exception& e) {
    group.report_failure(e.what());
    throw;
  }
}

}  // namespace feedline::dist
