// The training loop: the experiment's recipe (Adam, cross-entropy, train then test each epoch) over feedline
// loaders, timing each phase and recording how long the loop waited for data. Single-threaded driver; the
// loaders bring their own workers.
//
// The process-wide settings under which feedline trains on the CPU: glibc's malloc keeps the memory a step frees for
// the next one, and OpenBLAS runs one thread inside each of LibTorch's. The feedline tool applies them at start; a
// program of its own that trains with feedline calls apply_process_settings() once, before other threads start. The
// library never changes them by itself.
#pragma once

#include <torch/optim/optimizer.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "feedline/loader/loader.h"
#include "feedline/train/models.h"

namespace feedline {

// A model as the training loop sees it: any torch::nn::Module and its forward pass (a Module has no virtual
// forward, so the loop is handed the call). Made from a TORCH_MODULE holder by itself: fit(MyNet(), ...), where
// MyNetImpl has `torch::Tensor forward(torch::Tensor)`; or from a module and a function for any other call.
struct Model {
  Model(std::shared_ptr<torch::nn::Module> module, std::function<torch::Tensor(const torch::Tensor&)> forward)
      : module(std::move(module)), forward(std::move(forward)) {}
  template <typename Impl>
  Model(const torch::nn::ModuleHolder<Impl>& holder)  // NOLINT(google-explicit-constructor): a holder is a model
      : Model(holder.ptr(), [impl = holder.ptr().get()](const torch::Tensor& x) { return impl->forward(x); }) {}

  std::shared_ptr<torch::nn::Module> module;
  std::function<torch::Tensor(const torch::Tensor&)> forward;
};

// A batch's loss: (the model's output, the batch's targets) -> a scalar, the mean over the batch's samples.
using Loss = std::function<torch::Tensor(const torch::Tensor& output, const torch::Tensor& target)>;

// A learning-rate schedule: the factor each parameter group's learning rate (as the optimizer was made with it) is
// multiplied by for the step after `steps_done` steps, counted from the start of training over all epochs. A
// function of the step alone, so a resumed run continues it where the checkpoint stood.
using Schedule = std::function<double(int64_t steps_done)>;

// torchvision's schedules, by step: a linear warm-up over `warmup_steps` from `warmup_factor` to 1 (none when
// warmup_steps is 0), then cosine annealing to 0 over the remaining steps up to `total_steps`
// (CosineAnnealingLR, eta_min 0), or the factor multiplied by `gamma` every `step_size` steps after the warm-up
// (StepLR). Throw InvalidArgument for total_steps or step_size below 1, a negative warmup_steps, warmup_steps not
// below total_steps, or a factor outside (0, 1].
Schedule cosine_schedule(int64_t total_steps, int64_t warmup_steps = 0, double warmup_factor = 0.01);
Schedule step_schedule(int64_t step_size, double gamma, int64_t warmup_steps = 0, double warmup_factor = 0.01);

// The forward pass's arithmetic: float32, or bfloat16 or float16 where autocast picks it (CUDA only).
enum class Precision { kFloat32, kBFloat16, kFloat16 };

// Dynamic loss scaling for Precision::kFloat16, as torch.cuda.amp.GradScaler does it and with its defaults: the
// loss is multiplied by the scale before backward and the gradients divided by it before the optimizer's step. A
// step whose gradients hold an inf or a NaN is skipped and the scale multiplied by `backoff_factor`; after
// `growth_interval` steps in a row without one, the scale is multiplied by `growth_factor`.
struct LossScaling {
  double init_scale = 65536.0;            // above 0
  double growth_factor = 2.0;             // above 1
  double backoff_factor = 0.5;            // in (0, 1)
  int64_t growth_interval = 2000;         // 1 or more
};

// How a model is trained, beyond its optimizer: torchvision's classification recipe as options.
struct Recipe {
  // Empty: cross-entropy with `label_smoothing` (torch's CrossEntropyLoss(label_smoothing=)). The test phase
  // reports the same loss.
  Loss loss;
  double label_smoothing = 0;
  Schedule schedule;  // empty: the learning rates as the optimizer has them
  // Above 0: the gradients' total L2 norm is clipped to this before each optimizer step (after they are averaged
  // over the ranks of a job), as torch.nn.utils.clip_grad_norm_.
  double clip_grad_norm = 0;
  // Above 0: an exponential moving average of the weights (parameters and buffers), torchvision's
  // ExponentialMovingAverage: every `ema_every` steps, ema = decay * ema + (1 - decay) * weights, the first
  // update a copy. The test phase evaluates it too (EpochResult::ema_test_loss, ema_test_accuracy); checkpoints
  // hold it. Below 1.
  double ema_decay = 0;
  int64_t ema_every = 1;
  // kBFloat16, kFloat16: the forward passes (training and test) under CUDA autocast with that type; refused on
  // another device. bfloat16 needs no loss scaling; float16 scales the loss (`loss_scaling`), the gradients are
  // unscaled before clipping and the optimizer's step, and checkpoints hold the scale.
  Precision precision = Precision::kFloat32;
  LossScaling loss_scaling;
};

// "auto" (CUDA when available, else CPU), "cpu" or "cuda" / "cuda:N". Throws InvalidArgument for anything else
// and for "cuda" when no CUDA device is available.
torch::Device resolve_device(const std::string& name);

struct TrainOptions {
  int64_t epochs = 5;
  double lr = 1e-3;  // train_model's Adam (fit() takes the user's optimizer as it was made)
  torch::Device device = torch::kCPU;
  // Capture the training step and the test step as CUDA graphs and replay them for every full batch: one launch a
  // step instead of one per kernel. Batches are copied into static device buffers first; a last, shorter batch
  // runs uncaptured. The optimizer is then an Adam that keeps its step count on the device (the same updates as
  // torch::optim::Adam, to float rounding). The capture, with its warm-up steps (undone before training), happens
  // before the first epoch's clock starts: EpochResult::capture_seconds says what it cost. CUDA only: throws
  // InvalidArgument on another device and Unsupported in a build against a LibTorch without CUDA.
  bool cuda_graph = false;

  // Data-parallel training (feedline::dist::DataParallel sets these): `after_backward(stop)` runs after each
  // training step's backward pass and before the optimizer's step: it averages the gradients over the ranks and
  // returns whether any rank passed stop = true (the flag rides in the same allreduce, so agreeing costs no
  // collective of its own), so that every rank of a job stops after the same step. `reduce_totals` gets each
  // phase's totals as float64 {loss sum, samples, correct} and sums them over the ranks in place, so that the
  // results are the whole job's. `before_forward` runs before each training step's forward pass: it gives every
  // rank rank 0's buffers (batch norm's running statistics), as DistributedDataParallel does. Empty: one process.
  // Not with cuda_graph.
  std::function<bool(bool stop)> after_backward;
  std::function<void(torch::Tensor&)> reduce_totals;
  std::function<void()> before_forward;

  // Stopping early (preemption: SIGTERM). Polled once a training step, after its backward pass (and passed to
  // after_backward in a job). When it says true (on any rank of a job), the run ends after that step: it writes a
  // checkpoint at that position when checkpoint_dir is set (on the process that writes them), runs no test phase,
  // and returns with the last EpochResult's `interrupted` set (on_epoch_end gets that epoch too). Empty: never.
  std::function<bool()> stop_requested;

  // Checkpoints, for an exact resume. One is due after every `checkpoint_every` training steps (counted from the
  // first epoch's first step), after the first step that ends `checkpoint_interval` seconds or more after the last
  // checkpoint (or the start) when that is above 0, and when the run stops early (a checkpoint_dir alone: only
  // then). Each is a file
  // checkpoint-<steps done, 9 digits>.pt in `checkpoint_dir` (checkpoint_file()) holding the model, the optimizer,
  // torch's CPU generator and the training loader's position, written to a temporary file and renamed, so that a
  // crash while writing leaves the earlier ones whole. The newest `keep_checkpoints` stay: older ones are removed
  // once a newer one is whole. With `async_checkpoints`, the training thread copies the state into memory and a
  // background thread serializes and writes it while training goes on; one write at a time (a checkpoint due while
  // the last is still being written waits for it), and train_model returns only after the last write ended; a
  // write's failure is rethrown on the training thread (at the next step or checkpoint, or before train_model
  // returns). Temporary files of an unfinished write are removed by the next write. `write_checkpoints` false
  // counts the steps without writing (the ranks of a job other than rank 0). Throws InvalidArgument for
  // keep_checkpoints below 1, a negative checkpoint_interval, and checkpoint_every or checkpoint_interval without
  // a checkpoint_dir. Not with cuda_graph.
  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;
  double checkpoint_interval = 0;  // seconds; 0: off
  int64_t keep_checkpoints = 1;
  bool async_checkpoints = true;
  bool write_checkpoints = true;
  // Continue from the newest checkpoint in `resume_dir` (latest_checkpoint()) instead of from the start: the
  // model's and optimizer's state are replaced by the saved ones and training goes on at the saved step, so that
  // on a CPU, with the same thread count and world size, the final weights equal an uninterrupted run's bit for
  // bit. The world size may differ from the checkpoint's when the global batch is the same
  // (Loader::load_state_dict): the run then sees the global batches an uninterrupted run would, and its weights
  // end within float rounding of that run's. Throws InvalidFile naming the file when the newest checkpoint is
  // corrupt (it never falls back to an older one by itself) and IoError when the folder holds none. Not with
  // cuda_graph.
  std::string resume_dir;
};

// What a checkpoint holds besides the tensors: where training stood.
struct CheckpointInfo {
  int64_t epoch = 1;          // the epoch in progress, 1-based
  int64_t step = 0;           // its training steps done
  int64_t steps_done = 0;     // training steps done since the start, over all epochs
  LoaderState train_loader;   // the training loader's position
};

// The file of the checkpoint taken after `steps_done` training steps: dir/checkpoint-<9 digits>.pt.
std::string checkpoint_file(const std::string& dir, int64_t steps_done);
// The checkpoint files in `dir`, oldest (fewest steps) first; temporary files of an unfinished write are not
// among them. Empty when `dir` does not exist or holds none. Throws IoError when it cannot be listed.
std::vector<std::string> list_checkpoints(const std::string& dir);
// The newest of them; empty when there is none.
std::string latest_checkpoint(const std::string& dir);
// Reads the position a checkpoint holds: `path` is a checkpoint file, or a folder whose newest checkpoint is read.
// Throws IoError when there is none or it cannot be read and InvalidFile, naming the file, when it is no feedline
// checkpoint (truncated, corrupt, another program's).
CheckpointInfo read_checkpoint_info(const std::string& path);

struct EpochResult {
  int64_t epoch = 0;  // 1-based
  double train_seconds = 0, test_seconds = 0;
  double train_loss = 0, test_loss = 0;  // mean per sample
  double test_accuracy = 0;              // fraction in [0, 1]; 0 when the targets are not class indices
  double ema_test_loss = 0, ema_test_accuracy = 0;  // Recipe::ema_decay: the same of the weights' average
  EpochStats train_stats, test_stats;
  double capture_seconds = 0;  // TrainOptions::cuda_graph: warm-up and capture, before epoch 1 (0 for the others)
  // TrainOptions::cuda_graph: the steps replayed from the captured graphs; the others (a last, shorter batch)
  // ran uncaptured. 0 without graphs.
  int64_t train_graph_replays = 0, test_graph_replays = 0;
  // The run stopped early in this epoch (TrainOptions::stop_requested): its train figures cover the steps taken,
  // and it had no test phase (test figures 0).
  bool interrupted = false;
  // Share of the train phase the loop spent waiting for batches.
  double data_wait_share() const { return train_seconds > 0 ? train_stats.wait_seconds / train_seconds : 0; }
};

struct TrainCallbacks {
  // After each training step: (epoch, batch index, batches in the epoch, running mean loss).
  std::function<void(int64_t, int64_t, int64_t, double)> on_train_step;
  // After a checkpoint's file is whole: where training stood, and the file. On the training thread; with
  // TrainOptions::async_checkpoints, at the first step after the write ended, or before train_model returns.
  std::function<void(const CheckpointInfo&, const std::string& file)> on_checkpoint;
  std::function<void(const EpochResult&)> on_epoch_end;
};

// Trains any model with the caller's optimizer (made over the model's parameters) for options.epochs epochs, each a
// training pass over `train` and an evaluation pass over `test`: for each batch, the loss of the model's output
// against the batch's targets (Recipe::loss), backward, then the optimizer's step at the schedule's learning
// rate. Everything in TrainOptions holds for it: checkpoints (the model, the optimizer's state, the RNG state,
// the loader's position; the schedule's step is the position's), exact resume, data-parallel training through
// dist::DataParallel, stopping early. A checkpoint refuses to load into a model whose parameters or buffers
// differ from the ones it was written by, naming the first that differs. Batches whose data is uint8 are
// normalised on the device (float, divided by 255), so uint8 datasets copy 4x fewer bytes; the targets go to
// the device as they are. The accuracy counts outputs whose largest entry is at the target class, for int64
// targets of one class index a sample. Throws InvalidArgument for cuda_graph (train_model's alone) and for a
// recipe out of range.
std::vector<EpochResult> fit(const Model& model, torch::optim::Optimizer& optimizer, Loader& train, Loader& test,
                             const TrainOptions& options, const Recipe& recipe = {},
                             const TrainCallbacks& callbacks = {});

// Trains SimpleCNN as the experiment does: fit() with torch::optim::Adam(options.lr) and cross-entropy; with
// options.cuda_graph, the captured static steps.
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

// One evaluation pass in eval mode with no gradients: returns {mean cross-entropy loss, accuracy}.
std::pair<double, double> evaluate(const Model& model, Loader& loader, torch::Device device,
                                   EpochStats* stats = nullptr);

// What holds after apply_process_settings(), in words, for a benchmark's record.
struct ProcessSettings {
  std::string allocator;
  std::string blas;
};

// Applies both settings unless the environment chooses otherwise: FEEDLINE_MALLOC=system keeps the system's malloc
// settings (FEEDLINE_MALLOC=feedline or unset applies them), and OPENBLAS_NUM_THREADS, when set, is left to OpenBLAS.
// A setting that does not apply (not glibc, not OpenBLAS) changes nothing and says so. Throws InvalidArgument for
// another FEEDLINE_MALLOC.
ProcessSettings apply_process_settings();

}  // namespace feedline
