#include "feedline/lab/lab.h"

#include <ATen/Parallel.h>
#include <fmt/core.h>

#include "feedline/catalog/catalog.h"
#include "feedline/dataset/image_file.h"
#include "lab/loader_timing.h"
#include "feedline/loader/loader.h"

namespace feedline::lab {

std::vector<LoaderBenchResult> run_loader_bench(const LoaderBenchOptions& args, Reporter& reporter) {
  at::set_num_threads(args.threads);
  const DatasetSpec spec = dataset_spec(args.dataset);
  const auto table =
      std::make_shared<const Table>(load_split(args.data_dir, spec, "train", file_format_name(args.format),
                                               args.threads));
  reporter.line(fmt::format("Loader throughput: {} train ({} rows from {}), batch {}, shuffled, {} intra-op thread(s), "
                            "one warm-up epoch, then at least {} timed and {:g}s each",
                            spec.folder, table->num_rows, file_format_name(args.format), args.batch_size, args.threads,
                            args.epochs, args.min_seconds));
  reporter.line(fmt::format("{:<8} {:>8} {:>14} {:>10} {:>12}", "Dataset", "Workers", "Samples/s", "vs first",
                            "Wait share"));
  std::vector<LoaderBenchResult> results;
  double first = 0;
  for (const DatasetMode mode : args.modes) {
    const auto dataset = make_table_dataset(table, mode);
    for (const int64_t workers : args.workers) {
      Loader loader(dataset, LoaderOptions(args.batch_size).shuffle(true).seed(42).num_workers(workers));
      const LoaderTiming t = time_loader_epochs(loader, args.epochs, args.min_seconds);
      const double rate = t.samples_per_second();
      if (first == 0) first = rate;
      results.push_back({mode, workers, rate, t.wait_share()});
      reporter.line(fmt::format("{:<8} {:>8} {:>14.0f} {:>9.1f}x {:>11.1f}%", dataset_mode_name(mode), workers, rate,
                                rate / first, 100.0 * t.wait_share()));
    }
  }
  return results;
}

}  // namespace feedline::lab
