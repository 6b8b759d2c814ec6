#include "train/device_adam.h"

#include <torch/torch.h>

#include <utility>

#include "feedline/error.h"

namespace feedline::detail {
namespace {

constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8;

}  // namespace

DeviceAdam::DeviceAdam(std::vector<torch::Tensor> params, double lr) : params_(std::move(params)), lr_(lr) {
  if (params_.empty()) throw InvalidArgument("DeviceAdam: no parameters");
  if (!(lr > 0)) throw InvalidArgument("DeviceAdam: learning rate must be positive");
  torch::NoGradGuard no_grad;
  for (const auto& p : params_) {
    exp_avg_.push_back(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    exp_avg_sq_.push_back(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    // float64: 1 - 0.999^t in float32 loses four digits to cancellation in the first steps.
    steps_.push_back(torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat64).device(p.device())));
  }
}

void DeviceAdam::step() {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    const auto& grad = params_[i].grad();
    if (!grad.defined()) continue;
    steps_[i].add_(1);
    // 0-dim float64 tensors: in float32 arithmetic with the moments they act as scalars, as the host's do.
    const auto step_size = lr_ / (1 - torch::pow(kBeta1, steps_[i]));
    const auto bias_correction2_sqrt = (1 - torch::pow(kBeta2, steps_[i])).sqrt();
    exp_avg_[i].mul_(kBeta1).add_(grad, 1 - kBeta1);
    exp_avg_sq_[i].mul_(kBeta2).addcmul_(grad, grad, 1 - kBeta2);
    const auto denom = (exp_avg_sq_[i].sqrt() / bias_correction2_sqrt).add_(kEps);
    params_[i].sub_(exp_avg_[i].mul(step_size).div_(denom));  // addcdiv's order: (step_size * m) / denom
  }
}

void DeviceAdam::reset() {
  torch::NoGradGuard no_grad;
  for (auto& m : exp_avg_) m.zero_();
  for (auto& v : exp_avg_sq_) v.zero_();
  for (auto& t : steps_) t.zero_();
}

}  // namespace feedline::detail
