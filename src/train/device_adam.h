// Adam whose step count and bias corrections are tensors on the parameters' device, so one optimizer step is
// device work alone: no host scalar changes from step to step, and a CUDA graph captured from a step replays it
// correctly (torch::optim::Adam keeps its step count on the host, so a captured step would freeze it). The
// arithmetic is torch::optim::Adam's with its defaults (betas 0.9 and 0.999, eps 1e-8, no weight decay, no
// amsgrad): the same updates, to float rounding. Not thread-safe.
#pragma once

#include <torch/types.h>

#include <vector>

namespace feedline::detail {

class DeviceAdam {
 public:
  // The tensors in `params` are updated in place; their state (moments, step count) is made here, zeroed.
  DeviceAdam(std::vector<torch::Tensor> params, double lr);

  // One update from the parameters' current gradients (a parameter without a gradient is left alone).
  void step();
  // Back to the state of a new optimizer, in place (every state tensor keeps its memory).
  void reset();
  const std::vector<torch::Tensor>& params() const { return params_; }

 private:
  std::vector<torch::Tensor> params_, exp_avg_, exp_avg_sq_;
  // Per parameter, as torch's: one without a gradient does not advance. float64, 0-dim, on its device.
  std::vector<torch::Tensor> steps_;
  double lr_;
};

}  // namespace feedline::detail
