// `feedline train`. Run by feedline-torch.
#pragma once

#include <string>

#include "cli/commands.h"

namespace feedline::cli {

// Runs the training job the flags describe (feedline::dist::run_train_job), printing the experiment's lines.
int run_train(const TrainArgs& args);

// dist::run_train_job and dist::resolve_resume_dir, their JobOptionError and JobFileError rethrown as
// InvalidArgument and IoError naming the flag that set the option.
dist::TrainJobResult run_train_job_naming_flags(const dist::TrainJobOptions& options,
                                                const dist::TrainJobCallbacks& callbacks);
std::string resolve_resume_dir_naming_flags(const dist::TrainJobOptions& options);

}  // namespace feedline::cli
