#include "train/weight_average.h"

#include <torch/torch.h>

#include <string>

#include "feedline/io/error.h"

namespace feedline::detail {

WeightAverage::WeightAverage(torch::nn::Module& model, double decay) : decay_(decay) {
  for (const auto& p : model.parameters()) weights_.push_back(p);
  for (const auto& b : model.buffers()) weights_.push_back(b);
  torch::NoGradGuard no_grad;
  for (const auto& w : weights_) average_.push_back(w.detach().clone());
}

void WeightAverage::update() {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < weights_.size(); ++i) {
    const auto w = weights_[i].detach();
    if (updates_ == 0 || !w.is_floating_point()) {
      average_[i].copy_(w);
    } else {
      average_[i].mul_(decay_).add_(w, 1.0 - decay_);
    }
  }
  ++updates_;
}

void WeightAverage::swap() {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < weights_.size(); ++i) {
    const auto own = weights_[i].detach().clone();
    weights_[i].detach().copy_(average_[i]);
    average_[i].copy_(own);
  }
}

std::vector<torch::Tensor> WeightAverage::snapshot() const {
  std::vector<torch::Tensor> copy;
  for (const auto& a : average_) copy.push_back(a.clone());
  return copy;
}

void WeightAverage::save(const std::vector<torch::Tensor>& snapshot, int64_t updates,
                         torch::serialize::OutputArchive& archive) {
  for (size_t i = 0; i < snapshot.size(); ++i) archive.write(std::to_string(i), snapshot[i]);
  archive.write("updates", torch::tensor(updates, torch::kInt64));
}

void WeightAverage::load(torch::serialize::InputArchive& archive) {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < average_.size(); ++i) {
    torch::Tensor t;
    archive.read(std::to_string(i), t);
    if (t.sizes() != average_[i].sizes()) {
      throw InvalidArgument("the weights' average holds a tensor of " + c10::str(t.sizes()) + " where the model has " +
                            c10::str(average_[i].sizes()));
    }
    average_[i].copy_(t);
  }
  torch::Tensor updates;
  archive.read("updates", updates);
  updates_ = updates.item<int64_t>();
}

}  // namespace feedline::detail
