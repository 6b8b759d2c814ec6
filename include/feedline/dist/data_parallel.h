// Data-parallel training of a model over a ProcessGroup, as DistributedDataParallel does it: the model's
// parameters and buffers broadcast from rank 0 at the start, its buffers again before every training step's
// forward pass, the gradients averaged in flat buckets after every backward pass, and each phase's totals summed
// over the ranks. It fills in TrainOptions' hooks, so train_model
// runs unchanged.
//
// Thread-safety: used by the training thread alone.
#pragma once

#include <torch/nn/module.h>

#include <vector>

#include "feedline/dist/dist.h"
#include "feedline/train/train.h"

namespace feedline::dist {

class DataParallel {
 public:
  // Broadcasts rank 0's parameters and buffers into every rank's model (a collective: every rank constructs one).
  DataParallel(ProcessGroup& group, torch::nn::Module& model);
  // Sets options.after_backward, reduce_totals and (for a model with buffers) before_forward to this object, which
  // must outlive the training.
  // after_backward(stop) averages the gradients and returns whether any rank passed stop = true.
  void apply(TrainOptions& options);
  // Seconds spent averaging gradients since the last take.
  double take_allreduce_seconds() { return averager_.take_seconds(); }
  int64_t buckets() const { return averager_.buckets(); }

 private:
  ProcessGroup& group_;
  GradientAverager averager_;
  std::vector<torch::Tensor> buffers_;  // broadcast from rank 0 before each training step (batch norm's statistics)
};

}  // namespace feedline::dist
