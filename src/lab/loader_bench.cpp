#include "feedline/lab/lab.h"

#include <ATen/Parallel.h>
#include <fmt/core.h>

#include <cstdio>

#include "feedline/catalog/catalog.h"
#include "feedline/dataset/image_file.h"
#include "lab/loader_timing.h"
#include "feedline/loader/loader.h"

namespace feedline::lab {

int run_loader_bench(const LoaderBenchOptions& args) {
  at::set_num_threads(args.threads);
  const DatasetSpec spec = dataset_spec(args.dataset);
  const auto table = std::make_shared<const Table>(load_split(args.data_dir, spec, "train", args.format, args.threads));
  fmt::print("Loader throughput: {} train ({} rows from {}), batch {}, shuffled, {} intra-op thread(s), "
             "one warm-up epoch, then at least {} timed and {:g}s each\n",
             spec.folder, table->num_rows, args.format, args.batch_size, args.threads, args.epochs, args.min_seconds);
  fmt::print("{:<8} {:>8} {:>14} {:>10} {:>12}\n", "Dataset", "Workers", "Samples/s", "vs first", "Wait share");
  double first = 0;
  for (const auto& mode : args.modes) {
    const auto dataset = make_image_dataset(table, parse_dataset_mode(mode));
    for (const int64_t workers : args.workers) {
      Loader loader(dataset, LoaderOptions(args.batch_size).shuffle(true).seed(42).num_workers(workers));
      const LoaderTiming t = time_loader_epochs(loader, args.epochs, args.min_seconds);
      const double rate = t.samples_per_second();
      if (first == 0) first = rate;
      fmt::print("{:<8} {:>8} {:>14.0f} {:>9.1f}x {:>11.1f}%\n", mode, workers, rate, rate / first,
                 100.0 * t.wait_share());
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace feedline::lab
