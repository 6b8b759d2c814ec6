#include "feedline/lab/lab.h"

#include <ATen/Parallel.h>
#include <fmt/core.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "feedline/catalog/catalog.h"
#include "feedline/dataset/dataset.h"
#include "feedline/dataset/image_file.h"
#include "lab/loader_timing.h"
#include "feedline/loader/loader.h"

namespace feedline::lab {
namespace {

// What a mixture costs the loader: the same rows as one source and as its two halves mixed (a repeat of 1 each:
// every row once an epoch), decoded once (tensor), timed in turn three times; the best of each.
void report_mixture_pair(const LoaderBenchOptions& args, const std::shared_ptr<const Table>& table,
                         Reporter& reporter) {
  const int64_t half = table->num_rows / 2;
  if (half < 1) return;
  const int64_t workers = args.workers.front();
  const auto one = make_table_dataset(table, DatasetMode::kTensor);
  const auto first = make_table_dataset(std::make_shared<const Table>(slice(*table, 0, half)), DatasetMode::kTensor);
  const auto second =
      make_table_dataset(std::make_shared<const Table>(slice(*table, half, table->num_rows)), DatasetMode::kTensor);
  const auto mixed = std::make_shared<const MixtureDataset>(std::vector<std::shared_ptr<const Dataset>>{first, second},
                                                            std::vector<MixturePart>{MixturePart::repeat(1.0),
                                                                                     MixturePart::repeat(1.0)});
  double one_rate = 0, mixed_rate = 0;
  for (int round = 0; round < 3; ++round) {
    for (const auto& [dataset, best] : {std::pair<std::shared_ptr<const Dataset>, double*>{one, &one_rate},
                                        {mixed, &mixed_rate}}) {
      Loader loader(dataset, LoaderOptions(args.batch_size).shuffle(true).seed(42).num_workers(workers));
      *best = std::max(*best, time_loader_epochs(loader, args.epochs, args.min_seconds).samples_per_second());
    }
  }
  reporter.line(fmt::format("Mixture (tensor, {} workers): one source {:.0f} samples/s, its two halves mixed (repeat "
                            "1 each) {:.0f} samples/s: {:.2f}x",
                            workers, one_rate, mixed_rate, one_rate > 0 ? mixed_rate / one_rate : 0.0));
}

}  // namespace

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
  report_mixture_pair(args, table, reporter);
  return results;
}

}  // namespace feedline::lab
