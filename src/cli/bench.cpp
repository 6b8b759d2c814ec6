#include "cli/bench.h"

#include <ATen/Parallel.h>
#include <fmt/core.h>

#include <chrono>
#include <cstdio>

#include "cli/datasets.h"
#include "feedline/loader.h"

namespace feedline::cli {

int run_loader_bench(const LoaderBenchArgs& args) {
  at::set_num_threads(args.threads);
  const DatasetSpec spec = dataset_spec(args.dataset);
  const auto table = std::make_shared<const Table>(load_split(args.data_dir, spec, "train", args.format, args.threads));
  fmt::print("Loader throughput: {} train ({} rows from {}), batch {}, shuffled, {} intra-op thread(s), "
             "1 warm-up + {} timed epochs each\n",
             spec.folder, table->num_rows, args.format, args.batch_size, args.threads, args.epochs);
  fmt::print("{:<8} {:>8} {:>14} {:>10} {:>12}\n", "Dataset", "Workers", "Samples/s", "vs first", "Wait share");
  double first = 0;
  for (const auto& mode : args.modes) {
    const auto dataset = make_image_dataset(table, mode);
    for (const int64_t workers : args.workers) {
      Loader loader(dataset, LoaderOptions(args.batch_size).shuffle(true).seed(42).num_workers(workers));
      int64_t samples = 0;
      double seconds = 0, wait = 0;
      for (int64_t e = 0; e <= args.epochs; ++e) {
        const auto start = std::chrono::steady_clock::now();
        auto epoch = loader.epoch();
        int64_t n = 0;
        for (auto& batch : epoch) n += batch.target.size(0);
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (e == 0) continue;  // warm-up
        samples += n;
        seconds += s;
        wait += epoch.stats().wait_seconds;
      }
      const double rate = static_cast<double>(samples) / seconds;
      if (first == 0) first = rate;
      fmt::print("{:<8} {:>8} {:>14.0f} {:>9.1f}x {:>11.1f}%\n", mode, workers, rate, rate / first,
                 100.0 * wait / seconds);
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace feedline::cli
