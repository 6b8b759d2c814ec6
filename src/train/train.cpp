#include "feedline/train.h"

#include <torch/torch.h>

#include <chrono>

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

std::pair<double, double> evaluate(SimpleCNN& model, Loader& loader, torch::Device device, EpochStats* stats) {
  torch::NoGradGuard no_grad;
  model->eval();
  auto loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat64).device(device));
  auto correct = torch::zeros({}, torch::TensorOptions().dtype(torch::kInt64).device(device));
  int64_t seen = 0;
  auto epoch = loader.epoch();
  for (auto& batch : epoch) {
    const auto x = to_input(batch.data, device);
    const auto y = batch.target.to(device, batch.target.is_pinned());
    const auto out = model->forward(x);
    loss_sum += torch::nn::functional::cross_entropy(
                    out, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                    .to(torch::kFloat64);
    correct += out.argmax(1).eq(y).sum();
    seen += y.size(0);
  }
  synchronize(device);
  if (stats != nullptr) *stats = epoch.stats();
  if (seen == 0) return {0.0, 0.0};
  return {loss_sum.item<double>() / seen, static_cast<double>(correct.item<int64_t>()) / seen};
}

std::vector<EpochResult> train_model(SimpleCNN& model, Loader& train, Loader& test, const TrainOptions& options,
                                     const TrainCallbacks& callbacks) {
  if (options.epochs < 1) throw InvalidArgument("epochs must be at least 1");
  if (!(options.lr > 0)) throw InvalidArgument("learning rate must be positive");
  model->to(options.device);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(options.lr));
  std::vector<EpochResult> results;
  const int64_t batches = train.batches_per_epoch();
  for (int64_t e = 1; e <= options.epochs; ++e) {
    EpochResult r;
    r.epoch = e;
    model->train();
    auto start = Clock::now();
    auto loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat64).device(options.device));
    int64_t seen = 0, step = 0;
    {
      auto epoch = train.epoch();
      for (auto& batch : epoch) {
        const auto x = to_input(batch.data, options.device);
        const auto y = batch.target.to(options.device, batch.target.is_pinned());
        optimizer.zero_grad();
        const auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
        loss.backward();
        optimizer.step();
        loss_sum += loss.detach().to(torch::kFloat64) * y.size(0);
        seen += y.size(0);
        ++step;
        if (callbacks.on_train_step) {
          // Reading the loss syncs the device: only pay for it when someone is watching.
          callbacks.on_train_step(e, step, batches, loss_sum.item<double>() / seen);
        }
      }
      synchronize(options.device);
      r.train_stats = epoch.stats();
    }
    r.train_seconds = seconds_since(start);
    r.train_loss = seen > 0 ? loss_sum.item<double>() / seen : 0;

    start = Clock::now();
    std::tie(r.test_loss, r.test_accuracy) = evaluate(model, test, options.device, &r.test_stats);
    r.test_seconds = seconds_since(start);
    results.push_back(r);
    if (callbacks.on_epoch_end) callbacks.on_epoch_end(r);
  }
  return results;
}

}  // namespace feedline
