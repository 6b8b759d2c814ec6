#include "feedline/train/train.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>

#include "feedline/io/error.h"
#include "train/checkpoints.h"
#include "train/cuda_support.h"
#include "train/device_adam.h"
#include "train/loss_scale.h"
#include "train/static_step.h"
#include "train/weight_average.h"

namespace feedline {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Waits for queued device work so wall-clock phases are honest on CUDA.
void synchronize(torch::Device device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

// CUDA autocast at bfloat16 or float16 while it lives (Recipe::precision), off again after.
class Autocast {
 public:
  explicit Autocast(Precision precision) : on_(precision != Precision::kFloat32) {
    if (!on_) return;
    const auto dtype = precision == Precision::kFloat16 ? at::kHalf : at::kBFloat16;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    at::autocast::set_autocast_dtype(at::kCUDA, dtype);
    at::autocast::set_autocast_enabled(at::kCUDA, true);
#else
    at::autocast::set_autocast_gpu_dtype(dtype);
    at::autocast::set_enabled(true);
#endif
  }
  ~Autocast() {
    if (!on_) return;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    at::autocast::set_autocast_enabled(at::kCUDA, false);
#else
    at::autocast::set_enabled(false);
#endif
    at::autocast::clear_cache();
  }
  Autocast(const Autocast&) = delete;
  Autocast& operator=(const Autocast&) = delete;

 private:
  bool on_;
};

// uint8 images become float in [0, 1] where they are, so uint8 datasets copy 4x fewer bytes to the device.
torch::Tensor as_float(torch::Tensor x) {
  if (x.scalar_type() == torch::kUInt8) x = x.to(torch::kFloat32).div_(255.0);
  return x;
}

torch::Tensor to_device(const torch::Tensor& t, torch::Device device) { return t.to(device, t.is_pinned()); }

}  // namespace

namespace {

const SimpleCNNOptions& checked(const SimpleCNNOptions& o) {
  if (o.channels() < 1 || o.height() < 4 || o.width() < 4 || o.classes() < 2) {
    throw InvalidArgument("SimpleCNN needs images of at least 1x4x4 and at least 2 classes, not " +
                          std::to_string(o.channels()) + "x" + std::to_string(o.height()) + "x" +
                          std::to_string(o.width()) + " and " + std::to_string(o.classes()) + " classes");
  }
  return o;
}

}  // namespace

SimpleCNNImpl::SimpleCNNImpl(const SimpleCNNOptions& options)
    : options_(checked(options)),
      conv1_(register_module("conv1",
                             torch::nn::Conv2d(torch::nn::Conv2dOptions(options.channels(), 16, 3).padding(1)))),
      conv2_(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 3).padding(1)))),
      // Each 2x2 max pooling floors: 28 -> 14 -> 7, 30 -> 15 -> 7.
      fc1_(register_module("fc1", torch::nn::Linear(32 * (options.height() / 2 / 2) * (options.width() / 2 / 2), 128))),
      fc2_(register_module("fc2", torch::nn::Linear(128, options.classes()))) {}

torch::Tensor SimpleCNNImpl::forward(torch::Tensor x) {
  x = torch::max_pool2d(torch::relu(conv1_->forward(x)), 2);
  x = torch::max_pool2d(torch::relu(conv2_->forward(x)), 2);
  x = x.flatten(1);
  x = torch::relu(fc1_->forward(x));
  return fc2_->forward(x);
}

int64_t parameter_count(const torch::nn::Module& module) {
  int64_t n = 0;
  for (const auto& p : module.parameters()) {
    if (p.requires_grad()) n += p.numel();
  }
  return n;
}

torch::Device resolve_device(const std::string& name) {
  if (name == "auto") return torch::cuda::is_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
  if (name == "cpu") return torch::kCPU;
  if (name == "cuda" || name.rfind("cuda:", 0) == 0) {
    if (!torch::cuda::is_available()) {
      throw InvalidArgument("device '" + name + "' requested but CUDA is not available (LibTorch " +
                            "without CUDA, or no GPU); use the CPU, or auto");
    }
    return torch::Device(name);
  }
  throw InvalidArgument("unknown device '" + name + "' (use auto, cpu or cuda)");
}

namespace {

// A source of batches for one phase: a loader epoch, or synthetic batches for the compute floor.
using NextBatch = std::function<std::optional<Example>()>;

// A batch's summed loss, for the test phase's totals.
using TestLoss = std::function<torch::Tensor(const torch::Tensor& output, const torch::Tensor& target)>;

namespace F = torch::nn::functional;

Loss loss_of(const Recipe& recipe) {
  if (recipe.loss) return recipe.loss;
  const double smoothing = recipe.label_smoothing;
  return [smoothing](const torch::Tensor& out, const torch::Tensor& y) {
    return F::cross_entropy(out, y, F::CrossEntropyFuncOptions().label_smoothing(smoothing));
  };
}

// Cross-entropy summed by torch itself (the sum of a mean times the count would round differently), any other
// loss as its mean times the batch's samples.
TestLoss test_loss_of(const Recipe& recipe) {
  if (recipe.loss) {
    return [loss = recipe.loss](const torch::Tensor& out, const torch::Tensor& y) {
      return loss(out, y) * static_cast<double>(y.size(0));
    };
  }
  const double smoothing = recipe.label_smoothing;
  return [smoothing](const torch::Tensor& out, const torch::Tensor& y) {
    return F::cross_entropy(out, y, F::CrossEntropyFuncOptions().reduction(torch::kSum).label_smoothing(smoothing));
  };
}

struct PhaseTotals {
  double loss_sum = 0;
  int64_t seen = 0, correct = 0;
  bool stopped = false;  // a training phase that ended early (TrainOptions::stop_requested)
};

// How batches become work, the one thing the loops below leave open: plain eager steps with torch's Adam, or
// the CUDA-graph path's static steps. The running totals stay on the device (reading them syncs it).
class Steps {
 public:
  // `stop_requested`: TrainOptions's, polled once a training step (empty: never). `test_loss_sum`: a batch's
  // summed loss, for the test phase's totals.
  Steps(torch::Device device, std::function<bool()> stop_requested, TestLoss test_loss)
      : stop_requested_(std::move(stop_requested)), test_loss_sum_(std::move(test_loss)) {
    const auto on = torch::TensorOptions().device(device);
    train_loss_ = torch::zeros({}, on.dtype(torch::kFloat64));
    test_loss_ = torch::zeros({}, on.dtype(torch::kFloat64));
    correct_ = torch::zeros({}, on.dtype(torch::kInt64));
  }
  virtual ~Steps() = default;
  // One optimizer step, the one after `steps_done` steps; adds the batch's summed loss. Returns whether the run
  // stops after it (stop_requested, or any rank's in a job: after_backward).
  virtual bool train(const Example& batch, int64_t steps_done) = 0;
  virtual void test(const Example& batch) = 0;  // adds the batch's summed loss and correct count

  void clear_totals() {
    train_loss_.zero_();
    test_loss_.zero_();
    correct_.zero_();
  }
  // Steps replayed from a captured graph since the last call (StaticSteps; 0 for the others).
  std::pair<int64_t, int64_t> take_replays() { return {std::exchange(train_replays_, 0), std::exchange(test_replays_, 0)}; }
  double train_loss_sum() const { return train_loss_.item<double>(); }
  double test_loss_sum() const { return test_loss_.item<double>(); }
  int64_t correct() const { return correct_.item<int64_t>(); }

 protected:
  bool stop_requested() const { return stop_requested_ && stop_requested_(); }
  // The totals' share of a step, the same for both kinds (a captured step adds them on the device too).
  void add_train_loss(const torch::Tensor& loss, int64_t n) { train_loss_.add_(loss.detach().to(torch::kFloat64) * n); }
  void add_test(const torch::Tensor& out, const torch::Tensor& y) {
    test_loss_.add_(test_loss_sum_(out, y).to(torch::kFloat64));
    if (y.dim() == 1 && y.scalar_type() == torch::kInt64 && out.dim() == 2) correct_.add_(out.argmax(1).eq(y).sum());
  }
  int64_t train_replays_ = 0, test_replays_ = 0;

 private:
  std::function<bool()> stop_requested_;
  TestLoss test_loss_sum_;
  torch::Tensor train_loss_, test_loss_, correct_;
};

// The eager step: the user's optimizer, a fresh graph of kernels launched for every batch.
class EagerSteps : public Steps {
 public:
  EagerSteps(const Model& model, torch::optim::Optimizer& optimizer, const Recipe& recipe, torch::Device device,
             std::function<bool()> stop_requested = {}, std::function<bool(bool)> after_backward = {},
             detail::WeightAverage* average = nullptr, std::function<void()> before_forward = {},
             detail::LossScaler* scaler = nullptr)
      : Steps(device, std::move(stop_requested), test_loss_of(recipe)), model_(model), device_(device),
        optimizer_(optimizer), loss_(loss_of(recipe)), schedule_(recipe.schedule), clip_(recipe.clip_grad_norm),
        average_(average), average_every_(recipe.ema_every), precision_(recipe.precision),
        after_backward_(std::move(after_backward)),
        before_forward_(std::move(before_forward)), scaler_(scaler) {
    for (const auto& g : optimizer_.param_groups()) base_lr_.push_back(g.options().get_lr());
  }

  bool train(const Example& batch, int64_t steps_done) override {
    if (schedule_) {
      const double factor = schedule_(steps_done);
      auto& groups = optimizer_.param_groups();
      for (size_t g = 0; g < groups.size(); ++g) groups[g].options().set_lr(base_lr_[g] * factor);
    }
    const auto y = to_device(batch.target, device_);
    optimizer_.zero_grad();
    if (before_forward_) before_forward_();
    torch::Tensor loss;
    {
      Autocast autocast(precision_);
      loss = loss_(model_.forward(as_float(to_device(batch.data, device_))), y);
    }
    (scaler_ != nullptr ? scaler_->scaled(loss) : loss).backward();
    bool stop = stop_requested();
    // A job's ranks average the scaled gradients: an inf on one rank reaches all, so all skip the same steps.
    if (after_backward_) stop = after_backward_(stop);
    const auto clip = [this] {
      if (clip_ > 0) torch::nn::utils::clip_grad_norm_(model_.module->parameters(), clip_);
    };
    if (scaler_ != nullptr) {
      scaler_->step(optimizer_, clip);  // a skipped step leaves the weights as they are: the average may go on
    } else {
      clip();
      optimizer_.step();
    }
    if (average_ != nullptr && (steps_done + 1) % average_every_ == 0) average_->update();
    add_train_loss(loss, y.size(0));
    return stop;
  }
  void test(const Example& batch) override {
    torch::NoGradGuard no_grad;
    const auto y = to_device(batch.target, device_);
    torch::Tensor out;
    {
      Autocast autocast(precision_);
      out = model_.forward(as_float(to_device(batch.data, device_)));
    }
    add_test(out.to(torch::kFloat32), y);
  }

 private:
  Model model_;
  torch::Device device_;
  torch::optim::Optimizer& optimizer_;
  Loss loss_;
  Schedule schedule_;
  double clip_;
  detail::WeightAverage* average_;
  int64_t average_every_;
  Precision precision_;
  std::function<bool(bool)> after_backward_;
  std::function<void()> before_forward_;
  detail::LossScaler* scaler_;  // Precision::kFloat16 only
  std::vector<double> base_lr_;  // each group's learning rate as the optimizer was made
};

// One batch's worth of device memory that batches are copied into, so a captured step always reads the same
// addresses. Shaped like a full batch.
struct StaticBatch {
  torch::Tensor x, y;

  bool fits(const Example& b) const {
    return b.data.sizes() == x.sizes() && b.data.scalar_type() == x.scalar_type() && b.target.sizes() == y.sizes() &&
           b.target.scalar_type() == y.scalar_type();
  }
  void fill(const Example& b) {
    x.copy_(b.data, b.data.is_pinned());
    y.copy_(b.target, b.target.is_pinned());
  }
};

// The first min(batch size, N) samples of a loader's dataset: a full batch's shape, and data to warm up on.
Example first_batch(const Loader& loader) {
  const int64_t n = std::min(loader.options().batch_size(), loader.dataset().size());
  std::vector<int64_t> indices(static_cast<size_t>(n));
  std::iota(indices.begin(), indices.end(), int64_t{0});
  return loader.dataset().get_batch(indices);
}

// The CUDA-graph path's step: everything it touches (parameters, gradients, DeviceAdam's state, the totals) is
// made once and changed in place, so one code serves the eager step and the captured one. With graphs, a batch
// that fits the static buffers is copied in and the graph replayed; any other batch (a last, shorter one) runs
// the same step uncaptured. Without graphs (capture = false: the CPU, in tests) every step runs uncaptured.
// While the steps live, DeviceAdam keeps the model's parameters in one buffer and their gradients in another, so
// its update is 17 kernels for the whole model rather than as many per parameter.
class StaticSteps : public Steps {
 public:
  StaticSteps(const Model& model, double lr, torch::Device device, std::function<bool()> stop_requested)
      : Steps(device, std::move(stop_requested), test_loss_of(Recipe{})), model_(model), device_(device),
        adam_(model.module->parameters(), lr) {}

  // Warm-up and capture of both steps, on static buffers shaped like (and first filled with) the two batches
  // given; the warm-up's updates are undone. Returns the seconds it took.
  double capture(const Example& train_batch, const Example& test_batch) {
    const auto start = Clock::now();
    const auto copy = [this](const Example& b) {
      return StaticBatch{b.data.to(device_, /*non_blocking=*/false, /*copy=*/true),
                         b.target.to(device_, /*non_blocking=*/false, /*copy=*/true)};
    };
    train_in_ = copy(train_batch);
    test_in_ = copy(test_batch);
    std::vector<torch::Tensor> saved;
    for (const auto& p : adam_.params()) saved.push_back(p.detach().clone());
    model_.module->train();
    train_graph_.emplace(device_);
    train_graph_->capture([this] { train_step(train_in_.x, train_in_.y); }, kWarmups);
    model_.module->eval();
    test_graph_.emplace(device_);
    test_graph_->capture([this] { test_step(test_in_.x, test_in_.y); }, kWarmups);
    {
      torch::NoGradGuard no_grad;
      const auto& params = adam_.params();
      for (size_t i = 0; i < params.size(); ++i) params[i].copy_(saved[i]);
    }
    adam_.reset();
    clear_totals();
    synchronize(device_);
    return seconds_since(start);
  }

  bool train(const Example& batch, int64_t /*steps_done*/) override {
    if (!replayed(train_graph_, train_in_, batch, train_replays_)) {
      train_step(to_device(batch.data, device_), to_device(batch.target, device_));
    }
    return stop_requested();
  }
  void test(const Example& batch) override {
    if (!replayed(test_graph_, test_in_, batch, test_replays_)) {
      test_step(to_device(batch.data, device_), to_device(batch.target, device_));
    }
  }

 private:
  static constexpr int kWarmups = 3;

  // Copies `batch` into `in` and replays `graph`, when there is one and the batch fits the buffers it was captured
  // on; false leaves the batch to the uncaptured step.
  static bool replayed(std::optional<detail::CudaGraph>& graph, StaticBatch& in, const Example& batch,
                       int64_t& replays) {
    if (!graph || !in.fits(batch)) return false;
    in.fill(batch);
    graph->replay();
    ++replays;
    return true;
  }

  void train_step(const torch::Tensor& x, const torch::Tensor& y) {
    // Zeroed in place, never freed: a captured step writes the gradients at the addresses it was captured with.
    adam_.zero_grad();
    const auto loss = F::cross_entropy(model_.forward(as_float(x)), y);
    loss.backward();
    adam_.step();
    add_train_loss(loss, y.size(0));
  }
  void test_step(const torch::Tensor& x, const torch::Tensor& y) {
    torch::NoGradGuard no_grad;
    add_test(model_.forward(as_float(x)), y);
  }

  Model model_;
  torch::Device device_;
  detail::DeviceAdam adam_;
  StaticBatch train_in_, test_in_;
  std::optional<detail::CudaGraph> train_graph_, test_graph_;
};

// Sums a phase's totals over the ranks of a data-parallel job (TrainOptions::reduce_totals); one process keeps
// its own.
void reduce(const TrainOptions& options, PhaseTotals& t) {
  if (!options.reduce_totals) return;
  auto v = torch::tensor({t.loss_sum, static_cast<double>(t.seen), static_cast<double>(t.correct)},
                         torch::kFloat64);
  options.reduce_totals(v);
  t.loss_sum = v[0].item<double>();
  t.seen = static_cast<int64_t>(v[1].item<double>());
  t.correct = static_cast<int64_t>(v[2].item<double>());
}

// One training pass: every batch from `next`, one step each, the first numbered `first_step` + 1 (a resumed
// epoch's), or the batches up to the step after which the run stops early.
PhaseTotals train_phase(torch::nn::Module& model, Steps& steps, const NextBatch& next, const TrainOptions& options,
                        int64_t epoch, int64_t batches, int64_t first_step, int64_t& steps_done,
                        detail::Checkpoints* checkpoints, const TrainCallbacks& callbacks) {
  model.train();
  steps.clear_totals();
  PhaseTotals totals;
  int64_t step = first_step;
  while (auto batch = next()) {
    totals.stopped = steps.train(*batch, steps_done);
    totals.seen += batch->target.size(0);
    ++step;
    ++steps_done;
    if (callbacks.on_train_step) {
      // Reading the loss syncs the device: only pay for it when someone is watching.
      callbacks.on_train_step(epoch, step, batches, steps.train_loss_sum() / static_cast<double>(totals.seen));
    }
    if (checkpoints != nullptr) checkpoints->after_step(epoch, step, steps_done, totals.stopped, callbacks);
    if (totals.stopped) break;
  }
  synchronize(options.device);
  totals.loss_sum = steps.train_loss_sum();
  reduce(options, totals);
  return totals;
}

// One evaluation pass in eval mode with no gradients.
PhaseTotals eval_phase(torch::nn::Module& model, Steps& steps, const NextBatch& next, const TrainOptions& options) {
  model.eval();
  steps.clear_totals();
  PhaseTotals totals;
  while (auto batch = next()) {
    steps.test(*batch);
    totals.seen += batch->target.size(0);
  }
  synchronize(options.device);
  totals.loss_sum = steps.test_loss_sum();
  totals.correct = steps.correct();
  reduce(options, totals);
  return totals;
}

double mean(double sum, int64_t n) { return n > 0 ? sum / static_cast<double>(n) : 0.0; }

void check_options(const TrainOptions& options) {
  if (options.epochs < 1) throw InvalidArgument("epochs must be at least 1");
  if (!(options.lr > 0)) throw InvalidArgument("learning rate must be positive");
  if (options.checkpoint_every < 0) throw InvalidArgument("checkpoint_every must not be negative");
  if (!(options.checkpoint_interval >= 0) || std::isinf(options.checkpoint_interval)) {
    throw InvalidArgument("checkpoint_interval must be a number of seconds, 0 or more, not " +
                          std::to_string(options.checkpoint_interval));
  }
  if (options.keep_checkpoints < 1) {
    throw InvalidArgument("keep_checkpoints must be at least 1, not " + std::to_string(options.keep_checkpoints));
  }
  if ((options.checkpoint_every > 0 || options.checkpoint_interval > 0) && options.checkpoint_dir.empty()) {
    throw InvalidArgument("checkpoint_every and checkpoint_interval need a checkpoint_dir to write to");
  }
  if (options.cuda_graph && (options.after_backward || options.reduce_totals || options.before_forward)) {
    throw InvalidArgument("the CUDA graph step does not train data-parallel; leave cuda_graph off");
  }
  if (options.cuda_graph && (!options.checkpoint_dir.empty() || !options.resume_dir.empty())) {
    throw InvalidArgument("the CUDA graph step keeps no checkpoints; leave cuda_graph off to checkpoint or resume");
  }
}

// Where one phase's batches come from, and what the consumer saw of them once it is over.
struct Source {
  NextBatch next;
  std::function<EpochStats()> stats;
};

// The loader's next epoch; it ends when the source goes.
Source from_loader(Loader& loader) {
  auto epoch = std::make_shared<Epoch>(loader.epoch());
  return {[epoch] { return epoch->next(); }, [epoch] { return epoch->stats(); }};
}

// Batches of `batch_size` cut in order from tensors already on the device: no gather, no copy, no host work.
Source from_tensors(const torch::Tensor& images, const torch::Tensor& labels, int64_t batch_size) {
  const int64_t n = images.size(0);
  EpochStats stats;
  stats.batches = (n + batch_size - 1) / batch_size;
  stats.samples = n;
  return {[&images, &labels, batch_size, n, at = int64_t{0}]() mutable -> std::optional<Example> {
            if (at >= n) return std::nullopt;
            const int64_t end = std::min(n, at + batch_size);
            Example batch{images.slice(0, at, end), labels.slice(0, at, end)};
            at = end;
            return batch;
          },
          [stats] { return stats; }};
}

std::pair<double, double> evaluate_with(torch::nn::Module& model, Steps& steps, const Source& source,
                                        const TrainOptions& options, EpochStats* stats) {
  const PhaseTotals t = eval_phase(model, steps, source.next, options);
  if (stats != nullptr) *stats = source.stats();
  return {mean(t.loss_sum, t.seen), mean(static_cast<double>(t.correct), t.seen)};
}

// The epochs of train_model and of the compute floor, over whichever steps and batches they chose, from
// `start` on (epoch 1, step 0 for a fresh run).
// With a weights' average, the test phase evaluates it too.
std::vector<EpochResult> run_epochs(torch::nn::Module& model, Steps& steps, const std::function<Source()>& train_source,
                                    const std::function<Source()>& test_source, int64_t batches,
                                    const TrainOptions& options, const TrainCallbacks& callbacks,
                                    double capture_seconds, detail::Checkpoints* checkpoints = nullptr,
                                    const CheckpointInfo& start = {}, detail::WeightAverage* average = nullptr) {
  std::vector<EpochResult> results;
  int64_t steps_done = start.steps_done;
  for (int64_t e = start.epoch; e <= options.epochs; ++e) {
    EpochResult r;
    r.epoch = e;
    if (e == start.epoch) r.capture_seconds = capture_seconds;
    auto clock = Clock::now();
    {
      const Source source = train_source();
      const int64_t first_step = e == start.epoch ? start.step : 0;
      const PhaseTotals t = train_phase(model, steps, source.next, options, e, batches, first_step, steps_done,
                                        checkpoints, callbacks);
      r.train_stats = source.stats();
      r.train_loss = mean(t.loss_sum, t.seen);
      r.interrupted = t.stopped;
    }
    r.train_seconds = seconds_since(clock);
    if (r.interrupted) {  // no test phase: the run ends here
      std::tie(r.train_graph_replays, r.test_graph_replays) = steps.take_replays();
      if (checkpoints != nullptr) checkpoints->finish(callbacks);
      results.push_back(r);
      if (callbacks.on_epoch_end) callbacks.on_epoch_end(r);
      break;
    }

    clock = Clock::now();
    std::tie(r.test_loss, r.test_accuracy) = evaluate_with(model, steps, test_source(), options, &r.test_stats);
    r.test_seconds = seconds_since(clock);
    if (average != nullptr) {
      average->swap();
      std::tie(r.ema_test_loss, r.ema_test_accuracy) = evaluate_with(model, steps, test_source(), options, nullptr);
      average->swap();
    }
    std::tie(r.train_graph_replays, r.test_graph_replays) = steps.take_replays();
    if (checkpoints != nullptr) checkpoints->poll(callbacks);
    results.push_back(r);
    if (callbacks.on_epoch_end) callbacks.on_epoch_end(r);
  }
  if (checkpoints != nullptr) checkpoints->finish(callbacks);
  return results;
}

// The CUDA-graph path's steps, captured when `capture` (false runs them uncaptured, for tests on the CPU).
// `train_batch` and `test_batch` give the static buffers their shape. Returns the steps and the seconds the
// capture took.
std::pair<std::unique_ptr<Steps>, double> make_static_steps(const Model& model, const TrainOptions& options,
                                                            bool capture, const std::function<Example()>& train_batch,
                                                            const std::function<Example()>& test_batch) {
  model.module->to(options.device);
  auto steps = std::make_unique<StaticSteps>(model, options.lr, options.device, options.stop_requested);
  const double seconds = capture ? steps->capture(train_batch(), test_batch()) : 0.0;
  return {std::move(steps), seconds};
}

// Training on two loaders with the steps given; `optimizer` (null for the static steps, which keep no
// checkpoints) and `average` for the checkpoints.
std::vector<EpochResult> train_loaders(const Model& model, Steps& steps, torch::optim::Optimizer* optimizer,
                                       detail::WeightAverage* average, Loader& train, Loader& test,
                                       const TrainOptions& options, const TrainCallbacks& callbacks,
                                       double capture_seconds, detail::LossScaler* scaler = nullptr) {
  detail::Checkpoints checkpoints(*model.module, optimizer, average, train, options, scaler);
  CheckpointInfo start;
  if (!options.resume_dir.empty()) {
    start = checkpoints.resume();
    // The test loader's epochs follow the training loader's (they draw no permutation without shuffle).
    test.set_epoch(start.epoch - 1);
  }
  return run_epochs(
      *model.module, steps, [&] { return from_loader(train); }, [&] { return from_loader(test); },
      train.batches_per_epoch(), options, callbacks, capture_seconds, &checkpoints, start, average);
}

std::vector<EpochResult> train_static_steps(const Model& model, Loader& train, Loader& test,
                                            const TrainOptions& options, const TrainCallbacks& callbacks,
                                            bool capture) {
  auto [steps, capture_seconds] = make_static_steps(
      model, options, capture, [&] { return first_batch(train); }, [&] { return first_batch(test); });
  return train_loaders(model, *steps, nullptr, nullptr, train, test, options, callbacks, capture_seconds);
}

void check_cuda_graph(const TrainOptions& options) {
  if (options.cuda_graph && !options.device.is_cuda()) {
    throw InvalidArgument("the CUDA graph step needs a CUDA device, not " + options.device.str());
  }
}

void check_recipe(const Recipe& r) {
  if (!(r.label_smoothing >= 0 && r.label_smoothing < 1)) {
    throw InvalidArgument("label smoothing must be in [0, 1), not " + std::to_string(r.label_smoothing));
  }
  if (!(r.clip_grad_norm >= 0) || std::isinf(r.clip_grad_norm)) {
    throw InvalidArgument("the gradient clipping norm must be 0 (off) or above, not " +
                          std::to_string(r.clip_grad_norm));
  }
  if (!(r.ema_decay >= 0 && r.ema_decay < 1)) {
    throw InvalidArgument("the weights' average decay must be in (0, 1), or 0 for none, not " +
                          std::to_string(r.ema_decay));
  }
  if (r.ema_every < 1) throw InvalidArgument("the weights' average must be updated every 1 step or more");
  if (r.precision == Precision::kFloat16) detail::LossScaler::check(r.loss_scaling);
}

void check_precision(const Recipe& r, torch::Device device) {
  if (r.precision != Precision::kFloat32 && !device.is_cuda()) {
    throw InvalidArgument(std::string(r.precision == Precision::kFloat16 ? "float16" : "bfloat16") +
                          " autocast runs on a CUDA device, and the device is " + device.str());
  }
}

}  // namespace

std::pair<double, double> evaluate(const Model& model, Loader& loader, torch::Device device, EpochStats* stats) {
  torch::optim::SGD unused(std::vector<torch::Tensor>{}, torch::optim::SGDOptions(1.0));  // never steps here
  EagerSteps steps(model, unused, Recipe{}, device);
  TrainOptions options;
  options.device = device;
  return evaluate_with(*model.module, steps, from_loader(loader), options, stats);
}

namespace detail {

std::vector<EpochResult> train_static(SimpleCNN& model, Loader& train, Loader& test, const TrainOptions& options,
                                      const TrainCallbacks& callbacks, bool capture) {
  check_options(options);
  return train_static_steps(model, train, test, options, callbacks, capture);
}

}  // namespace detail

std::vector<EpochResult> fit(const Model& model, torch::optim::Optimizer& optimizer, Loader& train, Loader& test,
                             const TrainOptions& options, const Recipe& recipe, const TrainCallbacks& callbacks) {
  check_options(options);
  check_recipe(recipe);
  check_precision(recipe, options.device);
  if (options.cuda_graph) {
    throw InvalidArgument("the CUDA graph step is train_model's (SimpleCNN with Adam); leave cuda_graph off");
  }
  if (!model.module || !model.forward) throw InvalidArgument("fit: the model has no module or no forward pass");
  model.module->to(options.device);
  std::optional<detail::WeightAverage> average;
  if (recipe.ema_decay > 0) average.emplace(*model.module, recipe.ema_decay);
  detail::WeightAverage* averaged = average ? &*average : nullptr;
  std::optional<detail::LossScaler> scaler;
  if (recipe.precision == Precision::kFloat16) scaler.emplace(recipe.loss_scaling);
  detail::LossScaler* scaling = scaler ? &*scaler : nullptr;
  EagerSteps steps(model, optimizer, recipe, options.device, options.stop_requested, options.after_backward, averaged,
                   options.before_forward, scaling);
  return train_loaders(model, steps, &optimizer, averaged, train, test, options, callbacks, 0.0, scaling);
}

std::vector<EpochResult> train_model(SimpleCNN& model, Loader& train, Loader& test, const TrainOptions& options,
                                     const TrainCallbacks& callbacks) {
  check_options(options);
  check_cuda_graph(options);
  if (options.cuda_graph) return train_static_steps(model, train, test, options, callbacks, /*capture=*/true);
  model->to(options.device);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(options.lr));
  return fit(model, adam, train, test, options, Recipe{}, callbacks);
}

std::vector<EpochResult> train_compute_floor(SimpleCNN& model, const torch::Tensor& train_images,
                                             const torch::Tensor& train_labels, const torch::Tensor& test_images,
                                             const torch::Tensor& test_labels, int64_t batch_size,
                                             const TrainOptions& options, const TrainCallbacks& callbacks) {
  check_options(options);
  check_cuda_graph(options);
  if (batch_size < 1) throw InvalidArgument("compute floor: the batch size must be at least 1");
  const SimpleCNNOptions& shape = model->options();
  const std::vector<int64_t> sample = {shape.channels(), shape.height(), shape.width()};
  // On options.device: its type, and its index when it names one (a tensor made on "cuda" sits on "cuda:0").
  const auto on_device = [&](const torch::Tensor& t) {
    return t.device().type() == options.device.type() &&
           (!options.device.has_index() || t.device().index() == options.device.index());
  };
  for (const auto& [what, images, labels] : {std::tuple{"train", &train_images, &train_labels},
                                             std::tuple{"test", &test_images, &test_labels}}) {
    if (images->dim() != 4 || images->sizes().slice(1) != torch::IntArrayRef(sample) ||
        images->scalar_type() != torch::kFloat32 || images->size(0) < 1) {
      throw InvalidArgument(std::string("compute floor: the ") + what + " images must be float32 [N, " +
                            std::to_string(sample[0]) + ", " + std::to_string(sample[1]) + ", " +
                            std::to_string(sample[2]) + "] with N at least 1, not " +
                            c10::toString(images->scalar_type()) + " " + c10::str(images->sizes()));
    }
    if (labels->dim() != 1 || labels->size(0) != images->size(0) || labels->scalar_type() != torch::kInt64) {
      throw InvalidArgument(std::string("compute floor: the ") + what + " labels must be int64 [" +
                            std::to_string(images->size(0)) + "], one a sample");
    }
    if (!on_device(*images) || !on_device(*labels)) {
      throw InvalidArgument(std::string("compute floor: the ") + what + " data must be on " + options.device.str() +
                            " already, not " + images->device().str());
    }
  }
  const auto head = [batch_size](const torch::Tensor& x, const torch::Tensor& y) {
    const int64_t n = std::min(batch_size, x.size(0));
    return Example{x.slice(0, 0, n), y.slice(0, 0, n)};
  };
  std::unique_ptr<Steps> steps;
  double capture_seconds = 0;
  std::optional<torch::optim::Adam> adam;
  if (options.cuda_graph) {
    std::tie(steps, capture_seconds) = make_static_steps(
        model, options, /*capture=*/true, [&] { return head(train_images, train_labels); },
        [&] { return head(test_images, test_labels); });
  } else {
    model->to(options.device);
    adam.emplace(model->parameters(), torch::optim::AdamOptions(options.lr));
    steps = std::make_unique<EagerSteps>(model, *adam, Recipe{}, options.device, options.stop_requested,
                                         options.after_backward);
  }
  synchronize(options.device);
  return run_epochs(
      *model.ptr(), *steps, [&] { return from_tensors(train_images, train_labels, batch_size); },
      [&] { return from_tensors(test_images, test_labels, batch_size); },
      (train_images.size(0) + batch_size - 1) / batch_size, options, callbacks, capture_seconds);
}

std::vector<EpochResult> train_compute_floor(SimpleCNN& model, int64_t train_samples, int64_t test_samples,
                                             int64_t batch_size, const TrainOptions& options,
                                             const TrainCallbacks& callbacks) {
  // The options are checked by the overload this one ends in.
  if (train_samples < 1 || test_samples < 1 || batch_size < 1) {
    throw InvalidArgument("compute floor: needs train and test samples and a batch size of at least 1");
  }
  // Distinct samples, as a dataset's would be, made once on the device in the model's input form.
  const auto on_device = torch::TensorOptions().device(options.device);
  const SimpleCNNOptions& shape = model->options();
  const auto images = [&](int64_t n) {
    return torch::rand({n, shape.channels(), shape.height(), shape.width()}, on_device.dtype(torch::kFloat32));
  };
  const auto labels = [&](int64_t n) { return torch::randint(shape.classes(), {n}, on_device.dtype(torch::kInt64)); };
  const auto train_x = images(train_samples);
  const auto train_y = labels(train_samples);
  const auto test_x = images(test_samples);
  const auto test_y = labels(test_samples);
  return train_compute_floor(model, train_x, train_y, test_x, test_y, batch_size, options, callbacks);
}

}  // namespace feedline
