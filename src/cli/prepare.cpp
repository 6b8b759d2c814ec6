#include "cli/prepare.h"

#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "feedline/catalog/catalog.h"
#include "feedline/io/csv.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/idx.h"
#include "feedline/io/parquet.h"

namespace feedline::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double megabytes(int64_t bytes) { return static_cast<double>(bytes) / 1e6; }

struct StorageRow {
  std::string dataset, split;
  int64_t csv_bytes = 0, parquet_bytes = 0;
  double csv_write = 0, parquet_write = 0, csv_read = 0, parquet_read = 0;
};

}  // namespace

int run_prepare(const PrepareArgs& args) {
  parquet::WriteOptions wopts;
  wopts.codec = parquet::parse_codec(args.codec);
  wopts.num_threads = args.threads;
  std::vector<StorageRow> rows;
  for (const auto& name : args.datasets) {
    const DatasetSpec spec = dataset_spec(name);
    const std::string src = idx_dir(spec, spec.flag == "mnist" ? args.mnist_idx : args.fashion_idx);
    for (const std::string split : {"train", "test"}) {
      const std::string prefix = split == "train" ? "train" : "t10k";
      const std::string images = idx_file(src, prefix + "-images-idx3-ubyte", install_hint(spec));
      const std::string labels = idx_file(src, prefix + "-labels-idx1-ubyte", install_hint(spec));
      fmt::print("{} {}: reading {}\n", spec.folder, split, images);
      std::fflush(stdout);
      const Table table = image_split_to_table(read_idx_split(images, labels));
      const std::string base = args.data_dir + "/" + spec.folder + "/" + split;
      StorageRow row{spec.folder, split};

      fmt::print("{} {}: writing {}.csv and {}.parquet ({} rows)\n", spec.folder, split, base, base, table.num_rows);
      std::fflush(stdout);
      auto t = Clock::now();
      row.csv_bytes = write_csv(base + ".csv", table);
      row.csv_write = seconds_since(t);
      t = Clock::now();
      parquet::write_table(base + ".parquet", table, wopts);
      row.parquet_write = seconds_since(t);
      row.parquet_bytes = file_size(base + ".parquet");

      // Read both back and check they hold what was written.
      t = Clock::now();
      const Table from_csv = read_csv(base + ".csv", CsvReadOptions{args.threads});
      row.csv_read = seconds_since(t);
      parquet::ReadOptions ropts;
      ropts.num_threads = args.threads;
      t = Clock::now();
      const Table from_parquet = parquet::read_table(base + ".parquet", ropts);
      row.parquet_read = seconds_since(t);
      for (const Table* back : {&from_csv, &from_parquet}) {
        if (back->num_rows != table.num_rows || back->columns.size() != table.columns.size()) {
          throw InvalidFile(base + ": read back " + std::to_string(back->num_rows) + " rows, wrote " +
                            std::to_string(table.num_rows));
        }
      }
      rows.push_back(row);
    }
  }
  fmt::print("\nStorage ({} threads for reading)\n", args.threads);
  fmt::print("{:<13} {:<5} {:>10} {:>12} {:>7} {:>10} {:>12} {:>10} {:>12}\n", "Dataset", "Split", "CSV MB",
             "Parquet MB", "Ratio", "CSV write", "Parquet wr.", "CSV read", "Parquet rd.");
  for (const auto& r : rows) {
    fmt::print("{:<13} {:<5} {:>10.1f} {:>12.1f} {:>6.1f}x {:>9.2f}s {:>11.2f}s {:>9.2f}s {:>11.2f}s\n", r.dataset,
               r.split, megabytes(r.csv_bytes), megabytes(r.parquet_bytes),
               static_cast<double>(r.csv_bytes) / static_cast<double>(r.parquet_bytes), r.csv_write, r.parquet_write,
               r.csv_read, r.parquet_read);
  }
  return 0;
}

}  // namespace feedline::cli
