#include "cli/train.h"

#include <fmt/core.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "feedline/catalog/catalog.h"
#include "feedline/dataset/image_file.h"
#include "feedline/dataset/stream_dataset.h"
#include "feedline/dist/data_parallel.h"
#include "feedline/dist/dist.h"
#include "feedline/io/error.h"
#include "feedline/loader/loader.h"
#include "feedline/train/model.h"
#include "feedline/train/train.h"
#include "io/progress.h"

namespace feedline::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void set_threads(int threads) {
  if (threads < 1) throw InvalidArgument("--threads must be at least 1");
  torch::set_num_threads(threads);
}

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

}  // namespace

namespace {

int train_ranked(const TrainArgs& args, const std::optional<dist::WorldInfo>& world, dist::ProcessGroup* group);

// The ranks of the job on this host (LOCAL_WORLD_SIZE, which torchrun and --nproc set; 1 when unset).
int64_t ranks_on_this_host() {
  const char* local = std::getenv("LOCAL_WORLD_SIZE");
  return local != nullptr ? std::max<int64_t>(1, std::atoll(local)) : 1;
}

// The CPU threads of one rank: --threads, else the host's cores shared between its ranks.
int rank_threads(const TrainArgs& args, const std::optional<dist::WorldInfo>& world) {
  if (args.threads_given || !world) return args.threads;
  return static_cast<int>(std::max<int64_t>(1, args.threads / ranks_on_this_host()));
}

// The device of one rank: a job's ranks given "cuda" (or "auto" on a GPU machine) take the GPU of their local rank.
torch::Device rank_device(const TrainArgs& args, const std::optional<dist::WorldInfo>& world) {
  const torch::Device device = resolve_device(args.device);
  if (!world || world->world_size == 1 || !device.is_cuda() || device.has_index()) return device;
  const auto gpus = static_cast<int64_t>(torch::cuda::device_count());
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(world->local_rank % std::max<int64_t>(1, gpus)));
}

// The backend of one rank. NCCL takes one GPU a rank: where this host's ranks would share a GPU (more ranks than
// GPUs, or every rank given one cuda:N), "auto" takes Gloo, which carries CUDA tensors too, and "nccl" is refused
// before the rendezvous rather than by NCCL midway.
std::string rank_backend(const TrainArgs& args, torch::Device device) {
  if (!device.is_cuda() || args.dist_backend == "gloo") return args.dist_backend;
  const int64_t ranks = ranks_on_this_host();
  const auto gpus = static_cast<int64_t>(torch::cuda::device_count());
  const bool shared = ranks > 1 && (ranks > gpus || resolve_device(args.device).has_index());
  if (!shared) return args.dist_backend;
  if (args.dist_backend == "nccl") {
    throw InvalidArgument("--dist-backend nccl needs a GPU of its own for each rank, and the " + std::to_string(ranks) +
                          " ranks on this host share " +
                          (resolve_device(args.device).has_index() ? std::string("the one GPU ") + args.device
                                                                   : std::to_string(gpus) + " GPU(s)") +
                          "; use --dist-backend gloo (which carries CUDA tensors too) or fewer ranks");
  }
  return "gloo";
}

}  // namespace

int run_train(const TrainArgs& args) {
  const auto world = dist::world_from_environment();
  if (!world || world->world_size == 1) return train_ranked(args, world, nullptr);
  if (args.batch_size % world->world_size != 0) {
    throw InvalidArgument("--batch-size " + std::to_string(args.batch_size) + " is the global batch, and it does not "
                          "split evenly between " + std::to_string(world->world_size) + " ranks");
  }
  // Only rank 0 speaks: the job's log lines come once. Errors still reach stderr from every rank.
  if (world->rank != 0 && std::freopen("/dev/null", "w", stdout) == nullptr) {
    throw IoError("rank " + std::to_string(world->rank) + ": cannot quiet stdout");
  }
  set_threads(rank_threads(args, world));
  dist::GroupOptions go;
  const torch::Device device = rank_device(args, world);
  go.backend = rank_backend(args, device);
  go.timeout = std::chrono::milliseconds(static_cast<int64_t>(args.dist_timeout * 1000.0));
  dist::ProcessGroup group(*world, device, go);
  try {
    const int code = train_ranked(args, world, &group);
    group.barrier();  // no rank leaves while another may still need it
    return code;
  } catch (const dist::DistError&) {
    throw;  // a peer's failure, named in the message: nothing of ours to report
  } catch (const std::exception& e) {
    group.report_failure(e.what());
    throw;
  }
}

namespace {

int train_ranked(const TrainArgs& args, const std::optional<dist::WorldInfo>& world, dist::ProcessGroup* group) {
  if (group == nullptr) set_threads(rank_threads(args, world));
  const int64_t ranks = group != nullptr ? group->world_size() : 1;
  const bool lead = group == nullptr || group->rank() == 0;
  const torch::Device device = rank_device(args, world);
  if (args.cuda_graph && !device.is_cuda()) {
    throw InvalidArgument("--cuda-graph needs a CUDA device, and the device is " + device.str() +
                          " (pass --device cuda on a machine with a GPU and a LibTorch with CUDA)");
  }

  check_save_path(args.save);
  // A checkpoint that is not there, or is no checkpoint, is refused before the data is loaded.
  const std::optional<CheckpointInfo> resume_at =
      args.resume_dir.empty() ? std::nullopt : std::optional<CheckpointInfo>(read_checkpoint_info(args.resume_dir));
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
  ImageFileOptions file_options;
  file_options.columns = args.columns;
  file_options.shape = shape;
  file_options.mode = parse_dataset_mode(args.mode);
  file_options.limit = args.limit;
  file_options.threads = args.threads;
  file_options.device = device;
  file_options.cached_row_groups = cached_row_groups;
  const ImageFile train_file = load_image_file(train_path, file_options);
  const ImageFile test_file = load_image_file(test_path, file_options);
  const auto& train_set = train_file.dataset;
  const auto& test_set = test_file.dataset;
  fmt::print("Loaded {}, {} dataset): {} train, {} test samples in {:.2f}s\n", what, args.mode, train_set->size(),
             test_set->size(), seconds_since(t));
  // The experiment's datasets have 10 classes whatever --limit keeps; other files as many as their labels say.
  const int64_t classes = class_count(args.num_classes, args.train_file.empty() ? 10 : 0,
                                      {{train_path, train_file.max_label}, {test_path, test_file.max_label}});

  const auto options = [&](bool shuffle) {
    return LoaderOptions(args.batch_size / ranks)
        .rank(group != nullptr ? group->rank() : 0)
        .world_size(ranks)
        // The test set's shares hold each sample once, so that the summed counts are one process's.
        .even_shards(shuffle)
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
  model->to(device);
  std::optional<dist::DataParallel> parallel;
  if (group != nullptr) {
    parallel.emplace(*group, *model);
    fmt::print("Data-parallel: {} ranks over {}, {} threads each; global batch {} ({} a rank)\n", ranks,
               group->backend(), torch::get_num_threads(), args.batch_size, args.batch_size / ranks);
  }
  fmt::print("SimpleCNN: {} parameters; {}x{}x{} images, {} classes; device {}; {} threads; batch {}, "
             "{} workers{}{}{}\n",
             parameter_count(*model), shape.channels, shape.height, shape.width, classes, device.str(), torch::get_num_threads(),
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
    // Data-parallel: what averaging the gradients cost this rank in the train phase.
    std::string allreduce;
    if (parallel) {
      const double seconds = parallel->take_allreduce_seconds();
      allreduce = fmt::format(", allreduce {:.3f}s = {:.1f}%", seconds,
                              r.train_seconds > 0 ? 100.0 * seconds / r.train_seconds : 0.0);
    }
    fmt::print("Epoch {}/{}: train {:.2f}s (loss {:.4f}, data wait {:.1f}%{}), test {:.2f}s, test loss {:.4f}, "
               "test accuracy {:.2f}%\n",
               r.epoch, args.epochs, r.train_seconds, r.train_loss, 100.0 * r.data_wait_share(), allreduce,
               r.test_seconds, r.test_loss, 100.0 * r.test_accuracy);
    std::fflush(stdout);
  };
  TrainOptions topts;
  topts.epochs = args.epochs;
  topts.lr = args.lr;
  topts.device = device;
  topts.cuda_graph = args.cuda_graph;
  if (parallel) parallel->apply(topts);
  topts.checkpoint_dir = args.checkpoint_dir;
  // --checkpoint alone: once an epoch.
  topts.checkpoint_every = args.checkpoint_dir.empty()    ? 0
                           : args.checkpoint_every > 0 ? args.checkpoint_every
                                                       : train_loader.batches_per_epoch();
  topts.write_checkpoints = lead;
  topts.resume_dir = args.resume_dir;
  if (resume_at) {
    fmt::print("Resuming from {}: epoch {}, step {} of {}\n", checkpoint_path(args.resume_dir), resume_at->epoch,
               resume_at->step, train_loader.batches_per_epoch());
  }
  callbacks.on_checkpoint = [&](const CheckpointInfo& c) {
    if (bar.enabled()) return;
    fmt::print("Checkpoint: epoch {}, step {} -> {}\n", c.epoch, c.step, checkpoint_path(args.checkpoint_dir));
    std::fflush(stdout);
  };
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
    const size_t files = stream->num_files();
    fmt::print("Streamed: {} row group reads of the train {}'s {} row groups, over {} epoch{}\n",
               stream->row_group_reads(),
               files == 1 ? std::string("file") : fmt::format("dataset ({} files)", files),
               stream->shuffle_blocks().size(), args.epochs, args.epochs == 1 ? "" : "s");
  }
  if (!args.save.empty() && lead) {
    save_module(*model, args.save);
    fmt::print("Saved the trained model to {} (feedline::load_module reads it into a SimpleCNN of the same options: "
               "{}x{}x{} images, {} classes)\n",
               args.save, shape.channels, shape.height, shape.width, classes);
  }
  return 0;
}

}  // namespace

}  // namespace feedline::cli
