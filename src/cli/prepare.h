// `feedline prepare`: MNIST and FashionMNIST from their packaged IDX files, written as CSV and Parquet and read
// back, with the storage table printed. No LibTorch.
#pragma once

#include "cli/commands.h"

namespace feedline::cli {

int run_prepare(const PrepareArgs& args);

}  // namespace feedline::cli
