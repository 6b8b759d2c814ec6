// torchvision's learning-rate schedules (LinearLR warm-up, then CosineAnnealingLR or StepLR), as factors by step.
#include <algorithm>
#include <cmath>
#include <string>

#include "feedline/io/error.h"
#include "feedline/train/train.h"

namespace feedline {
namespace {

void check_warmup(int64_t warmup_steps, double warmup_factor) {
  if (warmup_steps < 0) throw InvalidArgument("the warm-up steps must not be negative");
  if (!(warmup_factor > 0 && warmup_factor <= 1)) {
    throw InvalidArgument("the warm-up's starting factor must be in (0, 1], not " + std::to_string(warmup_factor));
  }
}

// LinearLR(start_factor, total_iters=warmup_steps): from the factor to 1 in equal steps.
double warmup(int64_t step, int64_t warmup_steps, double factor) {
  return factor + (1.0 - factor) * static_cast<double>(step) / static_cast<double>(warmup_steps);
}

}  // namespace

Schedule cosine_schedule(int64_t total_steps, int64_t warmup_steps, double warmup_factor) {
  if (total_steps < 1) throw InvalidArgument("a cosine schedule needs at least 1 step");
  check_warmup(warmup_steps, warmup_factor);
  if (warmup_steps >= total_steps) {
    throw InvalidArgument("the warm-up (" + std::to_string(warmup_steps) + " steps) must end before the schedule (" +
                          std::to_string(total_steps) + " steps)");
  }
  return [=](int64_t step) {
    if (step < warmup_steps) return warmup(step, warmup_steps, warmup_factor);
    const double t = static_cast<double>(std::min(step, total_steps) - warmup_steps);
    const double span = static_cast<double>(total_steps - warmup_steps);
    return 0.5 * (1.0 + std::cos(M_PI * t / span));
  };
}

Schedule step_schedule(int64_t step_size, double gamma, int64_t warmup_steps, double warmup_factor) {
  if (step_size < 1) throw InvalidArgument("a step schedule needs a step size of at least 1");
  if (!(gamma > 0 && gamma <= 1)) throw InvalidArgument("a step schedule's gamma must be in (0, 1], not " +
                                                        std::to_string(gamma));
  check_warmup(warmup_steps, warmup_factor);
  return [=](int64_t step) {
    if (step < warmup_steps) return warmup(step, warmup_steps, warmup_factor);
    return std::pow(gamma, static_cast<double>((step - warmup_steps) / step_size));
  };
}

}  // namespace feedline
