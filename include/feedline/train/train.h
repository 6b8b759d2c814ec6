// The training loop: the experiment's recipe (Adam, cross-entropy, train then test each epoch) over feedline
// loaders, timing each phase and recording how long the loop waited for data. Single-threaded driver; the
// loaders bring their own workers.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "feedline/loader/loader.h"
#include "feedline/train/model.h"

namespace feedline {

// "auto" (CUDA when available, else CPU), "cpu" or "cuda" / "cuda:N". Throws InvalidArgument for anything else
// and for "cuda" when no CUDA device is available.
torch::Device resolve_device(const std::string& name);

struct TrainOptions {
  int64_t epochs = 5;
  double lr = 1e-3;
  torch::Device device = torch::kCPU;
  // Capture the training step and the test step as CUDA graphs and replay them for every full batch: one launch a
  // step instead of one per kernel. Batches are copied into static device buffers first; a last, shorter batch
  // runs uncaptured. The optimizer is then an Adam that keeps its step count on the device (the same updates as
  // torch::optim::Adam, to float rounding). The capture, with its warm-up steps (undone before training), happens
  // before the first epoch's clock starts: EpochResult::capture_seconds says what it cost. CUDA only: throws
  // InvalidArgument on another device and Unsupported in a build against a LibTorch without CUDA.
  bool cuda_graph = false;

  // Data-parallel training (feedline::dist::DataParallel sets these): `after_backward` runs after each training
  // step's backward pass and before the optimizer's step (to average the gradients over the ranks);
  // `reduce_totals` gets each phase's totals as float64 {loss sum, samples, correct} and sums them over the ranks
  // in place, so that the results are the whole job's. Empty: one process. Not with cuda_graph.
  std::function<void()> after_backward;
  std::function<void(torch::Tensor&)> reduce_totals;

  // Exact resume. Every `checkpoint_every` training steps (counted from the first epoch's first step), the
  // model, the optimizer, torch's CPU generator and both loaders' positions go to `checkpoint_dir`/checkpoint.pt,
  // written to a temporary file and renamed (a crash leaves the previous checkpoint whole). `write_checkpoints`
  // false counts the steps without writing (the ranks of a job other than rank 0). `resume_dir`: continue from
  // the checkpoint there instead of from the start: the model's and optimizer's state are replaced by the saved
  // ones and training goes on at the saved step, so that on a CPU, with the same thread count, the final
  // weights equal an uninterrupted run's bit for bit. Not with cuda_graph.
  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;
  bool write_checkpoints = true;
  std::string resume_dir;
};

// What a checkpoint holds besides the tensors: where training stood.
struct CheckpointInfo {
  int64_t epoch = 1;          // the epoch in progress, 1-based
  int64_t step = 0;           // its training steps done
  int64_t steps_done = 0;     // training steps done since the start, over all epochs
  LoaderState train_loader;   // the training loader's position
};

// The file a checkpoint folder holds.
std::string checkpoint_path(const std::string& dir);
// Reads the position a checkpoint holds. Throws IoError when the file cannot be read and InvalidFile, naming
// the file, when it is no feedline checkpoint.
CheckpointInfo read_checkpoint_info(const std::string& dir);

struct EpochResult {
  int64_t epoch = 0;  // 1-based
  double train_seconds = 0, test_seconds = 0;
  double train_loss = 0, test_loss = 0;  // mean per sample
  double test_accuracy = 0;              // fraction in [0, 1]
  EpochStats train_stats, test_stats;
  double capture_seconds = 0;  // TrainOptions::cuda_graph: warm-up and capture, before epoch 1 (0 for the others)
  // TrainOptions::cuda_graph: the steps replayed from the captured graphs; the others (a last, shorter batch)
  // ran uncaptured. 0 without graphs.
  int64_t train_graph_replays = 0, test_graph_replays = 0;
  // Share of the train phase the loop spent waiting for batches.
  double data_wait_share() const { return train_seconds > 0 ? train_stats.wait_seconds / train_seconds : 0; }
};

struct TrainCallbacks {
  // After each training step: (epoch, batch index, batches in the epoch, running mean loss).
  std::function<void(int64_t, int64_t, int64_t, double)> on_train_step;
  // After a checkpoint was written (TrainOptions::checkpoint_every): where training stood.
  std::function<void(const CheckpointInfo&)> on_checkpoint;
  std::function<void(const EpochResult&)> on_epoch_end;
};

// Trains `model` for options.epochs epochs. Batches whose data is uint8 are normalised on the device
// (float, divided by 255), so uint8 datasets copy 4x fewer bytes.
std::vector<EpochResult> train_model(SimpleCNN& model, Loader& train, Loader& test, const TrainOptions& options,
                                     const TrainCallbacks& callbacks = {});

// The compute floor: the same model and optimizer (Adam, options.lr) trained on synthetic data made once on
// options.device, cut into batches in order: no dataset, no loader, no host work. `train_samples` and
// `test_samples` (at least 1 each) per epoch; accuracies are chance-level by construction. With
// options.cuda_graph, the steps are the CUDA-graph path's, captured as train_model captures them: the floor of
// that pipeline.
std::vector<EpochResult> train_compute_floor(SimpleCNN& model, int64_t train_samples, int64_t test_samples,
                                             int64_t batch_size, const TrainOptions& options,
                                             const TrainCallbacks& callbacks = {});

// The same floor on given data: images already in the model's input form (float32 [N, C, H, W]) and int64 [N]
// labels, all on options.device, cut into batches in order. What the model costs on these very images with no
// loader at all: on a CPU, a dataset's images may cost the model more or less than uniform noise does.
std::vector<EpochResult> train_compute_floor(SimpleCNN& model, const torch::Tensor& train_images,
                                             const torch::Tensor& train_labels, const torch::Tensor& test_images,
                                             const torch::Tensor& test_labels, int64_t batch_size,
                                             const TrainOptions& options, const TrainCallbacks& callbacks = {});

// One evaluation pass in eval mode with no gradients: returns {mean loss, accuracy}.
std::pair<double, double> evaluate(SimpleCNN& model, Loader& loader, torch::Device device, EpochStats* stats = nullptr);

}  // namespace feedline
