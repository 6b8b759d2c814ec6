// train_model's CUDA-graph path, open to the tests: with capture = false the same static step (DeviceAdam,
// gradients and totals changed in place) runs uncaptured, so it can be checked on the CPU against the eager path.
#pragma once

#include <vector>

#include "feedline/train/train.h"

namespace feedline::detail {

std::vector<EpochResult> train_static(SimpleCNN& model, Loader& train, Loader& test, const TrainOptions& options,
                                      const TrainCallbacks& callbacks, bool capture);

}  // namespace feedline::detail
