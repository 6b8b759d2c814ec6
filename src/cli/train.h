// `feedline train`. Run by feedline-torch.
#pragma once

#include <string>

#include "cli/commands.h"

namespace feedline::cli {

// Trains SimpleCNN as the flags say, printing the experiment's lines.
int run_train(const TrainArgs& args);

}  // namespace feedline::cli
