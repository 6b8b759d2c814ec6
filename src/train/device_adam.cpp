#include "train/device_adam.h"

#include <torch/torch.h>

#include <stdexcept>
#include <utility>

#include "feedline/io/error.h"

namespace feedline::detail {
namespace {

constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8;

}  // namespace

DeviceAdam::DeviceAdam(std::vector<torch::Tensor> params, double lr) : params_(std::move(params)), lr_(lr) {
  if (params_.empty()) throw InvalidArgument("DeviceAdam: no parameters");
  if (!(lr > 0)) throw InvalidArgument("DeviceAdam: learning rate must be positive");
  const auto options = params_.front().options();
  int64_t total = 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    const auto& p = params_[i];
    if (!p.defined() || !p.is_floating_point() || p.scalar_type() != options.dtype().toScalarType() ||
        p.device() != options.device()) {
      throw InvalidArgument("DeviceAdam: the parameters must be floating point, of one dtype, on one device");
    }
    for (size_t j = 0; j < i; ++j) {
      if (p.is_same(params_[j])) throw InvalidArgument("DeviceAdam: a parameter is given twice");
    }
    total += p.numel();
  }
  torch::NoGradGuard no_grad;
  flat_params_ = torch::empty({total}, options);
  flat_grads_ = torch::zeros({total}, options);
  int64_t offset = 0;
  for (auto& p : params_) {
    const int64_t n = p.numel();
    auto values = flat_params_.narrow(0, offset, n).view(p.sizes());
    values.copy_(p);
    p.set_data(values);
    p.mutable_grad() = flat_grads_.narrow(0, offset, n).view(p.sizes());
    grad_data_.push_back(p.grad().data_ptr());
    offset += n;
  }
  exp_avg_ = torch::zeros_like(flat_params_);
  exp_avg_sq_ = torch::zeros_like(flat_params_);
  // float64: 1 - 0.999^t in float32 loses four digits to cancellation in the first steps.
  step_ = torch::zeros({}, options.dtype(torch::kFloat64));
}

DeviceAdam::~DeviceAdam() {
  try {
    torch::NoGradGuard no_grad;
    for (auto& p : params_) {
      p.set_data(p.detach().clone());
      if (p.grad().defined()) p.mutable_grad() = p.grad().clone();
    }
  } catch (const std::exception&) {
    // Out of memory: the parameters stay views of the shared buffer, which they keep alive; still correct.
  }
}

void DeviceAdam::zero_grad() {
  torch::NoGradGuard no_grad;
  flat_grads_.zero_();
}

void DeviceAdam::step() {
  for (size_t i = 0; i < params_.size(); ++i) {
    const auto& grad = params_[i].grad();
    if (!grad.defined() || grad.data_ptr() != grad_data_[i]) {
      throw std::logic_error("DeviceAdam: parameter " + std::to_string(i) +
                             "'s gradient was replaced, so a step would not see it");
    }
  }
  torch::NoGradGuard no_grad;
  step_.add_(1);
  // 0-dim float64 tensors: in float32 arithmetic with the moments they act as scalars, as the host's do.
  const auto step_size = lr_ / (1 - torch::pow(kBeta1, step_));
  const auto bias_correction2_sqrt = (1 - torch::pow(kBeta2, step_)).sqrt();
  exp_avg_.mul_(kBeta1).add_(flat_grads_, 1 - kBeta1);
  exp_avg_sq_.mul_(kBeta2).addcmul_(flat_grads_, flat_grads_, 1 - kBeta2);
  const auto denom = (exp_avg_sq_.sqrt() / bias_correction2_sqrt).add_(kEps);
  flat_params_.sub_(exp_avg_.mul(step_size).div_(denom));  // addcdiv's order: (step_size * m) / denom
}

void DeviceAdam::reset() {
  torch::NoGradGuard no_grad;
  exp_avg_.zero_();
  exp_avg_sq_.zero_();
  step_.zero_();
}

}  // namespace feedline::detail
