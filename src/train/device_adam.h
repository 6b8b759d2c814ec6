// Adam whose step count and bias corrections are tensors on the parameters' device, so one optimizer step is
// device work alone: no host scalar changes from step to step, and a CUDA graph captured from a step replays it
// correctly (torch::optim::Adam keeps its step count on the host, so a captured step would freeze it). The
// arithmetic is torch::optim::Adam's with its defaults (betas 0.9 and 0.999, eps 1e-8, no weight decay, no
// amsgrad): the same updates, to float rounding.
//
// The parameters share one buffer and their gradients another, so a step is 17 kernels over the whole model rather
// than as many per parameter: on a GPU, where a small model's step is bound by its count of kernels, this
// is the difference between torch's per-parameter Adam and its fused one. Every parameter steps at every step
// (autograd adds into the gradients in place; zero_grad() clears them). Not thread-safe.
#pragma once

#include <torch/types.h>

#include <vector>

namespace feedline::detail {

class DeviceAdam {
 public:
  // The tensors in `params` (floating point, one dtype, on one device, none twice) are moved into one buffer,
  // keeping their values, and given gradients that are views of a second one, zeroed; the moments and step count
  // are made here, zeroed.
  DeviceAdam(std::vector<torch::Tensor> params, double lr);
  // Gives each parameter and gradient its own memory again, with the values it has.
  ~DeviceAdam();
  DeviceAdam(const DeviceAdam&) = delete;
  DeviceAdam& operator=(const DeviceAdam&) = delete;

  // Every gradient zeroed in place (one kernel).
  void zero_grad();
  // One update from the gradients. Throws std::logic_error if a parameter's gradient is no longer the view it was
  // given (something replaced it, so the update would not see it).
  void step();
  // Back to the state of a new optimizer, in place (every state tensor keeps its memory).
  void reset();
  const std::vector<torch::Tensor>& params() const { return params_; }

 private:
  std::vector<torch::Tensor> params_;
  std::vector<const void*> grad_data_;  // where each parameter's gradient view starts, to check step() reads it
  torch::Tensor flat_params_, flat_grads_, exp_avg_, exp_avg_sq_;
  torch::Tensor step_;  // float64, 0-dim, on the parameters' device
  double lr_;
};

}  // namespace feedline::detail
