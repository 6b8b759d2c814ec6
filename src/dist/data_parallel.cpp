#include "feedline/dist/data_parallel.h"

#include <torch/torch.h>

namespace feedline::dist {
namespace {

std::vector<torch::Tensor> trainable(const torch::nn::Module& model) {
  std::vector<torch::Tensor> out;
  for (const auto& p : model.parameters()) {
    if (p.requires_grad()) out.push_back(p);
  }
  return out;
}

}  // namespace

DataParallel::DataParallel(ProcessGroup& group, torch::nn::Module& model)
    : group_(group), averager_(group, trainable(model)), buffers_(model.buffers()) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> state;
  for (const auto& p : model.parameters()) state.push_back(p.detach());
  for (const auto& b : buffers_) state.push_back(b);
  for (auto& t : state) group_.broadcast({t});
}

void DataParallel::apply(TrainOptions& options) {
  // The stop flag rides in the gradients' last bucket: every rank learns whether any asked.
  options.after_backward = [this](bool stop) { return averager_.average(stop); };
  options.reduce_totals = [this](torch::Tensor& totals) { group_.allreduce_sum(totals); };
  if (!buffers_.empty()) {
    options.before_forward = [this] {
      torch::NoGradGuard no_grad;
      for (auto& b : buffers_) group_.broadcast({b});
    };
  }
}

}  // namespace feedline::dist
