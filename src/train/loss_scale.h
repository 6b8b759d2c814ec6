// Dynamic loss scaling for float16 training (Recipe::precision kFloat16), as torch.cuda.amp.GradScaler does it:
// the loss is multiplied by the scale before backward, so that small gradients do not flush to zero in float16;
// before the optimizer's step the gradients are divided by it again and checked for inf and NaN. A step with one
// is skipped and the scale backs off; after LossScaling::growth_interval good steps in a row it grows. The scale
// is kept as GradScaler keeps it, a float32, so that its values follow GradScaler's exactly. Internal to fit().
// Not thread-safe.
#pragma once

#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include <cstdint>
#include <functional>

#include "feedline/train/train.h"

namespace feedline::detail {

class LossScaler {
 public:
  // Throws InvalidArgument for settings out of range (LossScaling says which are in).
  explicit LossScaler(const LossScaling& options);
  static void check(const LossScaling& options);

  // loss * scale, in float32 at least (a float16 loss times 65536 would overflow).
  torch::Tensor scaled(const torch::Tensor& loss) const;
  // Divides the gradients of the optimizer's parameters by the scale, in place; returns whether all of them are
  // finite. Throws InvalidArgument for a float16 gradient (GradScaler refuses them too: unscaled, it would lose
  // what scaling kept).
  bool unscale(torch::optim::Optimizer& optimizer) const;
  // After unscale(): grows or backs off the scale.
  void update(bool finite);
  // unscale(), then, when the gradients are finite, `before_step` (clipping: it sees unscaled gradients) and the
  // optimizer's step; then update(). Returns whether the optimizer stepped.
  bool step(torch::optim::Optimizer& optimizer, const std::function<void()>& before_step = {});

  float scale() const { return scale_; }
  int64_t good_steps() const { return good_steps_; }

  // For checkpoints: {scale, good steps} as a float64 CPU tensor, and back. load_state() throws InvalidArgument
  // for a tensor that is not one (a scale not finite and above 0, a count not a whole number 0 or more).
  torch::Tensor state() const;
  void load_state(const torch::Tensor& state);

 private:
  LossScaling options_;
  float scale_;
  int64_t good_steps_ = 0;  // steps in a row with finite gradients since the scale last changed
};

}  // namespace feedline::detail
