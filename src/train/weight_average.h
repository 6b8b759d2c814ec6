// An exponential moving average of a model's weights, as torchvision's ExponentialMovingAverage keeps it
// (AveragedModel over parameters and buffers): every update, average = decay * average + (1 - decay) * weights
// for floating-point tensors, a copy for the others (BatchNorm's batch count); the first update is a copy.
// Internal to fit() (Recipe::ema_decay). Not thread-safe.
#pragma once

#include <torch/nn/module.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <cstdint>
#include <vector>

namespace feedline::detail {

class WeightAverage {
 public:
  // `model` must outlive it; decay in (0, 1).
  WeightAverage(torch::nn::Module& model, double decay);

  void update();
  // Exchanges the model's weights and the average's, in place: call it again to put them back.
  void swap();
  int64_t updates() const { return updates_; }

  // The average as it is now, cloned, for a checkpoint written while training goes on.
  std::vector<torch::Tensor> snapshot() const;
  static void save(const std::vector<torch::Tensor>& snapshot, int64_t updates,
                   torch::serialize::OutputArchive& archive);
  // Throws InvalidArgument when the archive's tensors are not shaped as the model's weights.
  void load(torch::serialize::InputArchive& archive);

 private:
  std::vector<torch::Tensor> weights_;  // the model's parameters, then its buffers
  std::vector<torch::Tensor> average_;
  double decay_;
  int64_t updates_ = 0;
};

}  // namespace feedline::detail
