#include "train/loss_scale.h"

#include <torch/torch.h>

#include <cmath>
#include <string>
#include <vector>

#include "feedline/io/error.h"

namespace feedline::detail {

void LossScaler::check(const LossScaling& o) {
  if (!(o.init_scale > 0) || !std::isfinite(static_cast<float>(o.init_scale))) {
    throw InvalidArgument("the initial loss scale must be above 0 and finite in float32, not " +
                          std::to_string(o.init_scale));
  }
  if (!(o.growth_factor > 1) || std::isinf(o.growth_factor)) {
    throw InvalidArgument("the loss scale's growth factor must be above 1, not " + std::to_string(o.growth_factor));
  }
  if (!(o.backoff_factor > 0 && o.backoff_factor < 1)) {
    throw InvalidArgument("the loss scale's backoff factor must be in (0, 1), not " +
                          std::to_string(o.backoff_factor));
  }
  if (o.growth_interval < 1) {
    throw InvalidArgument("the loss scale's growth interval must be 1 step or more, not " +
                          std::to_string(o.growth_interval));
  }
}

LossScaler::LossScaler(const LossScaling& options) : options_(options), scale_(static_cast<float>(options.init_scale)) {
  check(options);
}

torch::Tensor LossScaler::scaled(const torch::Tensor& loss) const {
  // A 0-dim float32 tensor, as GradScaler's scale is: it promotes a float16 loss to float32.
  return loss * torch::scalar_tensor(scale_, loss.options().dtype(torch::kFloat32));
}

bool LossScaler::unscale(torch::optim::Optimizer& optimizer) const {
  torch::NoGradGuard no_grad;
  // GradScaler multiplies by the float32 nearest 1 / scale, worked out in float64.
  const double inverse = static_cast<float>(1.0 / static_cast<double>(scale_));
  std::vector<torch::Tensor> finite;
  for (const auto& group : optimizer.param_groups()) {
    for (const auto& p : group.params()) {
      auto& g = p.mutable_grad();
      if (!g.defined()) continue;
      if (g.scalar_type() == torch::kHalf) {
        throw InvalidArgument("float16 gradients cannot be unscaled: keep the model's parameters float32 under "
                              "float16 autocast");
      }
      g.mul_(inverse);
      finite.push_back(torch::isfinite(g).all());
    }
  }
  // One read for all of them: on a GPU, one synchronization a step.
  return finite.empty() || torch::stack(finite).all().item<bool>();
}

void LossScaler::update(bool finite) {
  // As GradScaler's update kernel: the product in double, rounded to the float32 scale; a growth that would
  // overflow float32 is not taken.
  if (!finite) {
    scale_ = static_cast<float>(static_cast<double>(scale_) * options_.backoff_factor);
    good_steps_ = 0;
    return;
  }
  if (++good_steps_ < options_.growth_interval) return;
  const auto grown = static_cast<float>(static_cast<double>(scale_) * options_.growth_factor);
  if (std::isfinite(grown)) scale_ = grown;
  good_steps_ = 0;
}

bool LossScaler::step(torch::optim::Optimizer& optimizer, const std::function<void()>& before_step) {
  const bool finite = unscale(optimizer);
  if (finite) {
    if (before_step) before_step();
    optimizer.step();
  }
  update(finite);
  return finite;
}

torch::Tensor LossScaler::state() const {
  return torch::tensor({static_cast<double>(scale_), static_cast<double>(good_steps_)}, torch::kFloat64);
}

void LossScaler::load_state(const torch::Tensor& state) {
  if (state.numel() != 2 || state.scalar_type() != torch::kFloat64) {
    throw InvalidArgument("a loss scale's state is 2 float64 numbers, not " + std::to_string(state.numel()) + " " +
                          c10::toString(state.scalar_type()));
  }
  const auto values = state.cpu().contiguous();
  const double scale = values.data_ptr<double>()[0];
  const double good = values.data_ptr<double>()[1];
  if (!(scale > 0) || !std::isfinite(static_cast<float>(scale)) || static_cast<double>(static_cast<float>(scale)) != scale) {
    throw InvalidArgument("a loss scale must be a float32 above 0 and finite, not " + std::to_string(scale));
  }
  if (!(good >= 0 && good < 9007199254740992.0) || std::floor(good) != good) {
    throw InvalidArgument("a loss scale's count of good steps must be a whole number 0 or more, not " +
                          std::to_string(good));
  }
  scale_ = static_cast<float>(scale);
  good_steps_ = static_cast<int64_t>(good);
}

}  // namespace feedline::detail
