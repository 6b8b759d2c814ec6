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
};

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
