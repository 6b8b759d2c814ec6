// The flags of `feedline train`: its data, loader, model and recipe, and job (data-parallel ranks, checkpoints).
#include <fmt/core.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "feedline/dist/device_choice.h"
#include "feedline/io/error.h"

namespace feedline::cli {
namespace {

// A mixture of the --data sets: their weights and the epoch's samples.
void add_mix_flags(CLI::App* c, dist::JobDataOptions& tr, CLI::Option* data) {
  auto* mix = c->add_option("--mix", tr.mix,
                            "With --data given more than once: one value for each, in order (comma-separated), "
                            "read as --mix-by says (default: a repeat of 1 each, every sample once an epoch)")
                  ->delimiter(',')
                  ->check(positive_number())
                  ->needs(data);
  add_choice<dist::MixBy>(c, "--mix-by", tr.mix_by,
                          {{"proportion", dist::MixBy::kProportion},
                           {"repeat", dist::MixBy::kRepeat},
                           {"count", dist::MixBy::kCount}},
                          "What --mix's values are: proportion (each set's share of the epoch, relative: 0.8,0.2 "
                          "or 4,1), repeat (each set's samples an epoch over its size: 0.5 half of them, 2 each "
                          "twice) or count (samples an epoch)")
      ->needs(mix);
  c->add_option("--epoch-size", tr.mix_epoch_size,
                "A mixture's samples an epoch, split by --mix (0: for proportions the sum of the sets' sizes, else "
                "the sum of each set's samples an epoch)")
      ->check(whole(0))
      ->needs(data)
      ->capture_default_str();
}

// The data: the experiment's datasets or any files, their columns, the dataset mode and the limit. Returns the
// feature columns' option (which the command checks after parsing).
CLI::Option* add_data_flags(CLI::App* c, TrainArgs& args, std::string& shape) {
  dist::JobDataOptions& tr = args.data;
  auto* data_dir = c->add_option("--data-dir", tr.data_dir, "Folder written by `feedline prepare`")->capture_default_str();
  auto* dataset = c->add_option("--dataset", tr.dataset, "mnist or fashion-mnist")
                      ->check(one_of(kDatasets))
                      ->capture_default_str();
  auto* format = add_choice(c, "--format", tr.format, format_choices(), "parquet or csv");
  auto* data = c->add_option("--data", args.data_files,
                             "Train split: any .parquet or .csv file, or Parquet files read as one table: " +
                                 kManyFiles + " (with --test-data; replaces --dataset, --data-dir and --format). "
                                 "Given more than once: a mixture of train sets, weighed by --mix")
                   ->expected(1)
                   ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  auto* test_data =
      c->add_option("--test-data", tr.test_file, "Test split: any .parquet or .csv file, or Parquet files as --data");
  data->needs(test_data)->excludes(dataset)->excludes(data_dir)->excludes(format);
  test_data->needs(data);
  add_mix_flags(c, tr, data);
  c->add_option("--label-column", tr.columns.label, "The label column")->capture_default_str();
  CLI::Option* features = c->add_option("--feature-columns", tr.columns.features,
                                  "Feature columns, C*H*W of them (784) in file order: names or globs with * and ?, "
                                  "comma-separated (default: pixel*, or the image column when the file has one)")
                        ->delimiter(',');
  c->add_option("--columns", tr.columns.only, "Read only these columns (comma-separated names)")->delimiter(',');
  c->add_option("--row-groups", tr.columns.row_groups,
                "Read only these row groups of each Parquet file, in this order (comma-separated indices)")
      ->delimiter(',')
      ->check(whole(0));
  add_choice(c, "--dataset-mode", tr.mode, dataset_mode_choices(/*with_stream=*/true),
             "row (naive, per-sample conversion), tensor (decoded once), tensor-uint8 (decoded once, normalised on "
             "the device), device (uint8, copied to the device once) or stream (Parquet read a row group at a time, "
             "for data larger than memory)");
  c->add_option("--limit", tr.limit, "Use only the first N samples of each split (0: all)")
      ->check(whole(0))
      ->capture_default_str();
  c->add_option("--threads", tr.threads,
                "Threads (default: every core, shared between the ranks of a job on one host)")
      ->check(whole(1));
  c->add_option("--save", args.save, "Write the trained model's weights to this file (LibTorch's format)");
  c->add_option("--image-shape", shape,
                "Channels x height x width of each image (the features, in row-major order)")
      ->capture_default_str();
  c->add_option("--num-classes", tr.num_classes,
                "Classes (labels 0..N-1; default: 10 for --dataset; for --data the class folders or the Parquet "
                "file's ClassLabel names, else the largest label + 1)")
      ->check(whole(2, int64_t{1} << 24));
  return features;
}

void add_loader_flags(CLI::App* c, TrainArgs& args) {
  dist::JobLoaderOptions& tr = args.loader;
  c->add_option("--batch-size", tr.batch_size, "Samples per batch")->check(whole(1))->capture_default_str();
  c->add_option("--epochs", args.epochs, "Epochs")->check(whole(1))->capture_default_str();
  c->add_option("--num-workers", tr.num_workers, "Loader worker threads (0: the training thread loads)")
      ->check(whole(0))
      ->capture_default_str();
  c->add_flag("--persistent-workers", tr.persistent_workers, "Keep workers across epochs");
  c->add_flag("--pin-memory", tr.pin_memory, "Page-locked host batches (CUDA only)");
  c->add_option("--prefetch-blocks", tr.prefetch_blocks,
                "Remote data: shuffle blocks (tar shards, row groups) fetched ahead of the reads, in the sampler's "
                "order; a folder of images fetches this many batches' files ahead (0: none)")
      ->check(whole(0))
      ->capture_default_str();
  c->add_option("--prefetch-factor", tr.prefetch_factor, "Batches in flight per worker")
      ->check(whole(1))
      ->capture_default_str();
  add_device_flag(c, args.device);
  c->add_flag("--cuda-graph", args.cuda_graph,
              "Capture the train and test steps as CUDA graphs and replay them (CUDA only)");
  c->add_option("--seed", args.seed, "Seed for the model and the shuffle")->check(unsigned_whole())->capture_default_str();
  c->add_option("--lr", args.model.lr, "The learning rate (Adam's or SGD's, before the scheduler)")->check(positive_number())->capture_default_str();
}

// Image files in place of a table, and their augmentation.
void add_image_flags(CLI::App* c, TrainArgs& args) {
  dist::JobDataOptions& tr = args.data;
  auto* image_size = c->add_option(
      "--image-size", tr.image_size,
      "Read --data and --test-data as image files (a folder of class folders, tar shards: a .tar, a brace pattern "
      "or a comma-separated list, or Parquet with an image{bytes, path} column), decoded as RGB on the loader's "
      "workers and made NxN: the model takes 3xNxN. Test images: Resize(N), CenterCrop(N); train images as "
      "--augment says. --image-shape, --dataset-mode and the column flags do not apply, --limit is refused");
  image_size->check(whole(4, 4096))->needs("--data")->excludes("--image-shape");
  add_choice<dist::Augment>(c, "--augment", tr.augment,
                            {{"crop-flip", dist::Augment::kCropFlip},
                             {"none", dist::Augment::kNone},
                             {"ta-wide", dist::Augment::kTaWide},
                             {"rand-augment", dist::Augment::kRandAugment},
                             {"auto-augment", dist::Augment::kAutoAugment}},
                            "With --image-size, the train images: crop-flip (RandomResizedCrop(N, scale=(--crop-scale, "
                            "1)), RandomHorizontalFlip()); crop-flip then, as torchvision's reference recipe "
                            "(--auto-augment) has them, ta-wide (TrivialAugmentWide), rand-augment (RandAugment) or "
                            "auto-augment (AutoAugment, ImageNet's policy), bilinear; or none (as the test images)")
      ->needs(image_size);
  c->add_option("--random-erase", tr.random_erase,
                "With --image-size: RandomErasing(p) on the train images' tensor, as the reference recipe's "
                "--random-erase (erased to 0: the images are not normalised)")
      ->check(CLI::Range(0.0, 1.0))
      ->needs(image_size)
      ->capture_default_str();
  c->add_option("--mixup-alpha", tr.mixup_alpha,
                "With --image-size: MixUp over each train batch, lambda ~ Beta(A, A) (0: none); with --cutmix-alpha "
                "too, one of the two per batch, as the reference recipe chooses. The targets become soft, the "
                "train images float")
      ->check(non_negative_number())
      ->needs(image_size)
      ->capture_default_str();
  c->add_option("--cutmix-alpha", tr.cutmix_alpha,
                "With --image-size: CutMix over each train batch, lambda ~ Beta(A, A) (0: none)")
      ->check(non_negative_number())
      ->needs(image_size)
      ->capture_default_str();
  c->add_option("--crop-scale", tr.crop_scale_min,
                "With --augment crop-flip (and the presets built on it): the smallest share of the image's area a "
                "crop keeps (torchvision's "
                "default 0.08; small images such as 28x28 digits keep more of their class with a larger one)")
      ->check(share())
      ->needs(image_size)
      ->capture_default_str();
  add_choice<dist::BadImages>(c, "--on-error", tr.on_error,
                              {{"raise", dist::BadImages::kRaise}, {"skip", dist::BadImages::kSkip}},
                              "With --image-size, an image that cannot be read or decoded: raise (stop) or skip (left "
                              "out of its batch; after each epoch the count and the first names are printed)")
      ->needs(image_size);
}

// The model, its optimizer and torchvision's classification recipe.
void add_model_flags(CLI::App* c, TrainArgs& args) {
  dist::JobModelOptions& tr = args.model;
  using dist::TrainModel;
  add_choice<TrainModel>(c, "--model", tr.model,
                         {{"simplecnn", TrainModel::kSimpleCnn},
                          {"resnet18", TrainModel::kResNet18},
                          {"resnet34", TrainModel::kResNet34},
                          {"resnet50", TrainModel::kResNet50}},
                         "simplecnn (the experiment's), or torchvision's resnet18, resnet34, resnet50 (RGB images: "
                         "--image-size)");
  add_choice<dist::TrainOptimizer>(c, "--optimizer", tr.optimizer,
                                   {{"adam", dist::TrainOptimizer::kAdam}, {"sgd", dist::TrainOptimizer::kSgd}},
                                   "adam (--lr alone) or sgd (--momentum, --nesterov, --weight-decay)");
  c->add_option("--momentum", tr.momentum, "SGD's momentum")->check(below_one())->capture_default_str();
  c->add_flag("--nesterov", tr.nesterov, "SGD with Nesterov momentum");
  c->add_option("--weight-decay", tr.weight_decay, "SGD's weight decay")
      ->check(non_negative_number())
      ->capture_default_str();
  c->add_option("--norm-weight-decay", tr.norm_weight_decay,
                "SGD's weight decay of batch norm's parameters and every bias (default: --weight-decay's)")
      ->check(non_negative_number());
  using dist::LrSchedule;
  add_choice<LrSchedule>(c, "--lr-scheduler", tr.lr_schedule,
                         {{"constant", LrSchedule::kConstant}, {"cosine", LrSchedule::kCosine},
                          {"step", LrSchedule::kStep}},
                         "constant, cosine (to 0 over the epochs after the warm-up) or step (times --lr-gamma every "
                         "--lr-step-size epochs after it); set by step");
  c->add_option("--lr-warmup-epochs", tr.lr_warmup_epochs, "Epochs of linear warm-up from --lr times --lr-warmup-decay")
      ->check(whole(0))
      ->capture_default_str();
  c->add_option("--lr-warmup-decay", tr.lr_warmup_decay, "The warm-up's first factor")
      ->check(share())
      ->capture_default_str();
  c->add_option("--lr-step-size", tr.lr_step_size, "Epochs between the step scheduler's cuts")
      ->check(whole(1))
      ->capture_default_str();
  c->add_option("--lr-gamma", tr.lr_gamma, "The step scheduler's factor")->check(share())->capture_default_str();
  c->add_option("--label-smoothing", tr.label_smoothing, "Cross-entropy's label smoothing")
      ->check(below_one())
      ->capture_default_str();
  c->add_option("--clip-grad-norm", tr.clip_grad_norm, "Clip the gradients' total L2 norm to this (0: off)")
      ->check(non_negative_number())
      ->capture_default_str();
  c->add_option("--ema-decay", tr.ema_decay,
                "Keep an exponential moving average of the weights (torchvision's --model-ema-decay, adjusted to "
                "the global batch, --ema-steps and the epochs) and test it too (0: none)")
      ->check(below_one())
      ->capture_default_str();
  c->add_option("--ema-steps", tr.ema_steps, "Steps between the average's updates")
      ->check(whole(1))
      ->capture_default_str();
  add_choice<dist::TrainPrecision>(
      c, "--precision", tr.precision,
      {{"fp32", dist::TrainPrecision::kFloat32},
       {"bf16", dist::TrainPrecision::kBFloat16},
       {"fp16", dist::TrainPrecision::kFloat16}},
      "fp32, bf16 or fp16 (autocast, CUDA only; fp16 with dynamic loss scaling)");
}

// Data-parallel ranks, checkpoints and resume.
void add_job_flags(CLI::App* c, TrainArgs& args) {
  dist::TrainJobOptions& tr = args;
  c->add_option("--nproc", args.nproc,
                "Train data-parallel in N processes on this host, one rank each (as torchrun --standalone "
                "--nproc-per-node N does); --batch-size is the global batch, split between them")
      ->check(whole(1, 1024));
  using dist::DistBackend;
  add_choice<DistBackend>(c, "--dist-backend", tr.distributed.backend,
                          {{"auto", DistBackend::kAuto}, {"gloo", DistBackend::kGloo}, {"nccl", DistBackend::kNccl}},
                          "Data-parallel backend: gloo, nccl (CUDA, where this LibTorch has it) or auto");
  c->add_option("--dist-timeout", tr.distributed.timeout,
                "Seconds a rank waits for the others (rendezvous, each collective) before the job fails")
      ->check(positive_number())
      ->capture_default_str();
  auto* checkpoint = c->add_option("--checkpoint", tr.checkpoints.dir,
                                   "Folder for checkpoints (model, optimizer, RNG and loader state), to resume from: "
                                   "files checkpoint-<steps done>.pt. Alone: one at the end of every epoch's "
                                   "training. SIGTERM or SIGINT stops the job after the step in progress, with a "
                                   "checkpoint there (exit code 143 or 130)");
  c->add_option_function<std::string>(
       "--checkpoint-every",
       [&tr](const std::string& text) {
         const dist::CheckpointEvery every = dist::parse_checkpoint_every(text);
         tr.checkpoints.every = every.steps;
         tr.checkpoints.interval = every.seconds;
       },
       "Write a checkpoint every N training steps (100) or every so long (90s, 10m, 1h: after the first step that "
       "ends that long after the last checkpoint)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            try {
              dist::parse_checkpoint_every(text);
            } catch (const InvalidArgument& e) {
              return e.what();
            }
            return "";
          },
          "STEPS|DURATION"))
      ->needs(checkpoint);
  c->add_option("--keep-checkpoints", tr.checkpoints.keep, "Keep the newest K checkpoints, removing older ones")
      ->check(whole(1))
      ->needs(checkpoint)
      ->capture_default_str();
  c->add_option_function<std::string>(
       "--resume",
       [&tr](const std::string& text) {
         tr.checkpoints.resume = text == "auto" ? dist::ResumeFrom{dist::ResumeFrom::Kind::kAuto, ""}
                                               : dist::ResumeFrom{dist::ResumeFrom::Kind::kFolder, text};
       },
                "Continue the run whose checkpoint is in this folder (the same flags as the run that wrote it; the "
                "number of ranks may differ when --batch-size is the same), or 'auto': from the --checkpoint "
                "folder's newest checkpoint when it holds one, else start afresh (one command line for every start "
                "of a job)");
}

// Whether the flags ask for the experiment's recipe alone (SimpleCNN with Adam, nothing more), which a CUDA graph
// captures.
bool plain_recipe(const dist::JobModelOptions& m) {
  return m.model == dist::TrainModel::kSimpleCnn && m.optimizer == dist::TrainOptimizer::kAdam &&
         m.lr_schedule == dist::LrSchedule::kConstant && m.lr_warmup_epochs == 0 && m.label_smoothing == 0 &&
         m.clip_grad_norm == 0 && m.ema_decay == 0 && m.precision == dist::TrainPrecision::kFloat32;
}

// --mix and --epoch-size weigh several --data sets: one value a set, and counts whole.
void check_mix_args(const TrainArgs& args) {
  const dist::JobDataOptions& d = args.data;
  const size_t sets = args.data_files.size();
  if (!d.mix.empty() && sets < 2) {
    throw InvalidArgument("--mix weighs the sets of a mixture: give --data more than once (one --data is read "
                          "whole, every sample once an epoch)");
  }
  if (d.mix_epoch_size > 0 && sets < 2) {
    throw InvalidArgument("--epoch-size sets a mixture's samples an epoch: give --data more than once");
  }
  if (!d.mix.empty() && d.mix.size() != sets) {
    throw InvalidArgument("--mix has " + std::to_string(d.mix.size()) + " value" + (d.mix.size() == 1 ? "" : "s") +
                          " and --data is given " + std::to_string(sets) + " times: give one value for each --data, "
                          "in order");
  }
  if (d.mix_by == dist::MixBy::kCount) {
    for (size_t s = 0; s < d.mix.size(); ++s) {
      if (d.mix[s] != std::floor(d.mix[s]) || d.mix[s] > 1e15) {
        throw InvalidArgument("--mix: " + args.data_files[s] + ": --mix-by count takes whole numbers of samples, "
                              "not " + fmt::format("{}", d.mix[s]));
      }
    }
  }
}

}  // namespace

void check_train_args(const TrainArgs& args) {
  const dist::JobModelOptions& m = args.model;
  check_mix_args(args);
  if (args.data.image_size > 0 && args.data.limit > 0) {
    throw InvalidArgument("--limit keeps the first rows of a table; with --image-size, pass fewer images");
  }
  if (m.optimizer == dist::TrainOptimizer::kAdam && (m.weight_decay != 0 || m.nesterov || m.norm_weight_decay >= 0)) {
    throw InvalidArgument("--weight-decay, --norm-weight-decay and --nesterov are SGD's: pass --optimizer sgd");
  }
  if (m.lr_schedule == dist::LrSchedule::kCosine && m.lr_warmup_epochs >= args.epochs) {
    throw InvalidArgument("--lr-warmup-epochs " + std::to_string(m.lr_warmup_epochs) + ": the warm-up must end before "
                          "the last epoch (--epochs " + std::to_string(args.epochs) + ")");
  }
  if (args.cuda_graph && (args.data.mixup_alpha > 0 || args.data.cutmix_alpha > 0)) {
    throw InvalidArgument("--cuda-graph captures a step on class-number targets: leave out --mixup-alpha and "
                          "--cutmix-alpha, or --cuda-graph");
  }
  if (args.cuda_graph && !plain_recipe(m)) {
    throw InvalidArgument("--cuda-graph captures SimpleCNN's step with Adam alone: leave out --model, --optimizer and "
                          "the recipe's flags, or --cuda-graph");
  }
  if (args.checkpoints.resume.kind == dist::ResumeFrom::Kind::kAuto && args.checkpoints.dir.empty()) {
    throw InvalidArgument("--resume auto resumes from the --checkpoint folder's newest checkpoint; pass "
                          "--checkpoint DIR too");
  }
}

void Commands::define_train() {
  auto* c = train_cmd_ =
      app_.add_subcommand("train", "Train SimpleCNN or a ResNet through the configurable loader, or any model of yours "
                                   "through the C++ library");
  train_features_ = add_data_flags(c, train, train_shape_);
  add_loader_flags(c, train);
  add_image_flags(c, train);
  add_model_flags(c, train);
  add_job_flags(c, train);
}

}  // namespace feedline::cli
