// `feedline train`. Run by feedline-torch.
#pragma once

#include <string>

#include "cli/commands.h"

namespace feedline::cli {

// Runs the training job the flags describe (feedline::dist::run_train_job), printing the experiment's lines.
int run_train(const TrainArgs& args);

}  // namespace feedline::cli
