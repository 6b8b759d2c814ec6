#include "feedline/train.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>

#include "feedline/error.h"

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

torch::Tensor to_input(const torch::Tensor& data, torch::Device device) {
  const bool non_blocking = data.is_pinned();
  auto x = data.to(device, non_blocking);
  if (x.scalar_type() == torch::kUInt8) x = x.to(torch::kFloat32).div_(255.0);
  return x;
}

}  // namespace

SimpleCNNImpl::SimpleCNNImpl()
    : conv1_(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 16, 3).padding(1)))),
      conv2_(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 3).padding(1)))),
      fc1_(register_module("fc1", torch::nn::Linear(32 * 7 * 7, 128))),
      fc2_(register_module("fc2", torch::nn::Linear(128, 10))) {}

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
                            "without CUDA, or no GPU); use --device cpu or auto");
    }
    return torch::Device(name);
  }
  throw InvalidArgument("unknown device '" + name + "' (use auto, cpu or cuda)");
}

namespace {

// A source of batches for one phase: a loader epoch, or synthetic batches for the compute floor.
using NextBatch = std::function<std::optional<Example>()>;

struct PhaseTotals {
  double loss_sum = 0;
  int64_t seen = 0, correct = 0;
};

// One training pass: every batch from `next`, one optimizer step each.
PhaseTotals train_phase(SimpleCNN& model, torch::optim::Optimizer& optimizer, const NextBatch& next,
                        torch::Device device, int64_t epoch, int64_t batches, const TrainCallbacks& callbacks) {
  model->train();
  auto loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat64).device(device));
  PhaseTotals totals;
  int64_t step = 0;
  while (auto batch = next()) {
    const auto x = to_input(batch->data, device);
    const auto y = batch->target.to(device, batch->target.is_pinned());
    optimizer.zero_grad();
    const auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    optimizer.step();
    loss_sum += loss.detach().to(torch::kFloat64) * y.size(0);
    totals.seen += y.size(0);
    ++step;
    if (callbacks.on_train_step) {
      // Reading the loss syncs the device: only pay for it when someone is watching.
      callbacks.on_train_step(epoch, step, batches, loss_sum.item<double>() / static_cast<double>(totals.seen));
    }
  }
  synchronize(device);
  totals.loss_sum = loss_sum.item<double>();
  return totals;
}

// One evaluation pass in eval mode with no gradients.
PhaseTotals eval_phase(SimpleCNN& model, const NextBatch& next, torch::Device device) {
  torch::NoGradGuard no_grad;
  model->eval();
  auto loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat64).device(device));
  auto correct = torch::zeros({}, torch::TensorOptions().dtype(torch::kInt64).device(device));
  PhaseTotals totals;
  while (auto batch = next()) {
    const auto x = to_input(batch->data, device);
    const auto y = batch->target.to(device, batch->target.is_pinned());
    const auto out = model->forward(x);
    loss_sum += torch::nn::functional::cross_entropy(
                    out, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                    .to(torch::kFloat64);
    correct += out.argmax(1).eq(y).sum();
    totals.seen += y.size(0);
  }
  synchronize(device);
  totals.loss_sum = loss_sum.item<double>();
  totals.correct = correct.item<int64_t>();
  return totals;
}

double mean(double sum, int64_t n) { return n > 0 ? sum / static_cast<double>(n) : 0.0; }

void check_options(const TrainOptions& options) {
  if (options.epochs < 1) throw InvalidArgument("epochs must be at least 1");
  if (!(options.lr > 0)) throw InvalidArgument("learning rate must be positive");
}

NextBatch from_epoch(Epoch& epoch) {
  return [&epoch] { return epoch.next(); };
}

// Batches of `batch_size` cut in order from tensors already on the device: no gather, no copy, no host work.
NextBatch from_tensors(const torch::Tensor& images, const torch::Tensor& labels, int64_t batch_size) {
  return [&images, &labels, batch_size, at = int64_t{0}]() mutable -> std::optional<Example> {
    const int64_t n = images.size(0);
    if (at >= n) return std::nullopt;
    const int64_t end = std::min(n, at + batch_size);
    Example batch{images.slice(0, at, end), labels.slice(0, at, end)};
    at = end;
    return batch;
  };
}

}  // namespace

std::pair<double, double> evaluate(SimpleCNN& model, Loader& loader, torch::Device device, EpochStats* stats) {
  auto epoch = loader.epoch();
  const PhaseTotals t = eval_phase(model, from_epoch(epoch), device);
  if (stats != nullptr) *stats = epoch.stats();
  return {mean(t.loss_sum, t.seen), mean(static_cast<double>(t.correct), t.seen)};
}

std::vector<EpochResult> train_model(SimpleCNN& model, Loader& train, Loader& test, const TrainOptions& options,
                                     const TrainCallbacks& callbacks) {
  check_options(options);
  model->to(options.device);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(options.lr));
  std::vector<EpochResult> results;
  const int64_t batches = train.batches_per_epoch();
  for (int64_t e = 1; e <= options.epochs; ++e) {
    EpochResult r;
    r.epoch = e;
    auto start = Clock::now();
    {
      auto epoch = train.epoch();
      const PhaseTotals t = train_phase(model, optimizer, from_epoch(epoch), options.device, e, batches, callbacks);
      r.train_stats = epoch.stats();
      r.train_loss = mean(t.loss_sum, t.seen);
    }
    r.train_seconds = seconds_since(start);

    start = Clock::now();
    std::tie(r.test_loss, r.test_accuracy) = evaluate(model, test, options.device, &r.test_stats);
    r.test_seconds = seconds_since(start);
    results.push_back(r);
    if (callbacks.on_epoch_end) callbacks.on_epoch_end(r);
  }
  return results;
}

std::vector<EpochResult> train_compute_floor(SimpleCNN& model, int64_t train_samples, int64_t test_samples,
                                             int64_t batch_size, const TrainOptions& options,
                                             const TrainCallbacks& callbacks) {
  check_options(options);
  if (train_samples < 1 || test_samples < 0 || batch_size < 1) {
    throw InvalidArgument("compute floor: needs train samples and a batch size of at least 1");
  }
  model->to(options.device);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(options.lr));
  // Distinct samples, as a dataset's would be, made once on the device in the model's input form.
  const auto on_device = torch::TensorOptions().device(options.device);
  const auto train_x = torch::rand({train_samples, 1, 28, 28}, on_device.dtype(torch::kFloat32));
  const auto train_y = torch::randint(10, {train_samples}, on_device.dtype(torch::kInt64));
  const auto test_x = torch::rand({test_samples, 1, 28, 28}, on_device.dtype(torch::kFloat32));
  const auto test_y = torch::randint(10, {test_samples}, on_device.dtype(torch::kInt64));
  synchronize(options.device);
  const int64_t batches = (train_samples + batch_size - 1) / batch_size;
  std::vector<EpochResult> results;
  for (int64_t e = 1; e <= options.epochs; ++e) {
    EpochResult r;
    r.epoch = e;
    auto start = Clock::now();
    const PhaseTotals t =
        train_phase(model, optimizer, from_tensors(train_x, train_y, batch_size), options.device, e, batches, callbacks);
    r.train_seconds = seconds_since(start);
    r.train_loss = mean(t.loss_sum, t.seen);
    r.train_stats.batches = batches;
    r.train_stats.samples = t.seen;
    start = Clock::now();
    const PhaseTotals v = eval_phase(model, from_tensors(test_x, test_y, batch_size), options.device);
    r.test_seconds = seconds_since(start);
    r.test_loss = mean(v.loss_sum, v.seen);
    r.test_accuracy = mean(static_cast<double>(v.correct), v.seen);
    results.push_back(r);
    if (callbacks.on_epoch_end) callbacks.on_epoch_end(r);
  }
  return results;
}

}  // namespace feedline
