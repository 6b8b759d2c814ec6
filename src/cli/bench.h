// `feedline bench`: measurements the CLI runs side by side in one process, printed as tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace feedline::cli {

struct LoaderBenchArgs {
  std::string data_dir = "data";
  std::string dataset = "fashion-mnist";
  std::string format = "parquet";
  std::vector<std::string> modes{"row", "tensor"};
  std::vector<int64_t> workers{0, 2};
  int64_t batch_size = 512;
  int64_t epochs = 2;        // at least these timed epochs per configuration, after one warm-up epoch,
  double min_seconds = 1.0;  // and at least this long (time_loader_epochs())
  int threads = 1;
};

// Loader-only throughput (no model): samples/s for every mode x worker count, shuffled, on the train split.
int run_loader_bench(const LoaderBenchArgs& args);

}  // namespace feedline::cli
