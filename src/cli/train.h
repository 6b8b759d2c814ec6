// `feedline train` and the process-wide settings of the commands that load LibTorch. Run by feedline-torch.
#pragma once

#include <string>

#include "cli/commands.h"

namespace feedline::cli {

// feedline's allocator setting (keep_freed_memory()) unless FEEDLINE_MALLOC=system; returns it in words, for
// the bench's record. InvalidArgument for another FEEDLINE_MALLOC.
std::string configure_allocator();

// OpenBLAS on one thread inside each of LibTorch's (set_blas_threads()) unless OPENBLAS_NUM_THREADS says
// otherwise; returns the BLAS and its threads in words, for the bench's record.
std::string configure_blas();

// Trains SimpleCNN as the flags say, printing the experiment's lines.
int run_train(const TrainArgs& args);

}  // namespace feedline::cli
