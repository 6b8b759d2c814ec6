#include "cli/prepare.h"

#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/prepare_images.h"
#include "cli/prepare_photos.h"
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

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

struct ImageRow {
  std::string dataset, split;
  ImageLayoutResult layout;
};

void print_images_table(const std::vector<ImageRow>& rows, int threads) {
  fmt::print("\nImages ({} threads; PNG and JPEG times include encoding)\n", threads);
  fmt::print("{:<13} {:<5} {:<8} {:>8} {:>10} {:>9}  {}\n", "Dataset", "Split", "Layout", "Files", "MB", "Write",
             "Path");
  for (const auto& r : rows) {
    fmt::print("{:<13} {:<5} {:<8} {:>8} {:>10.1f} {:>8.2f}s  {}\n", r.dataset, r.split, r.layout.layout,
               r.layout.files, megabytes(r.layout.bytes), r.layout.seconds, r.layout.path);
  }
}

}  // namespace

int run_prepare(const PrepareArgs& args) {
  if (args.photos > 0) {
    PhotoSetOptions photo_options;
    photo_options.count = args.photos;
    photo_options.seed = args.seed;
    photo_options.source_dirs = args.photo_dirs;
    photo_options.threads = args.threads;
    photo_options.long_side = args.photo_size;
    const PhotoSetResult r = write_photo_set(args.data_dir, photo_options, [](const std::string& line) {
      fmt::print("photos: {}\n", line);
      std::fflush(stdout);
    });
    fmt::print("\nPhotos: {} images in {} classes, {:.1f} MB of JPEG (mean {:.1f} KB, {:.0f} x {:.0f} pixels), "
               "{} shards of {:.1f} MB, in {:.2f}s ({} threads, seed {})\n",
               r.images, r.classes.size(), megabytes(r.jpeg_bytes),
               static_cast<double>(r.jpeg_bytes) / static_cast<double>(r.images) / 1e3, r.mean_width, r.mean_height,
               r.shards, megabytes(r.shard_bytes), r.seconds, args.threads, args.seed);
    fmt::print("  {}/jpeg/train\n  {}/shards/train-{{{:06d}..{:06d}}}.tar\n", r.dir, r.dir, 0, r.shards - 1);
    if (!args.tables) return 0;
    std::fflush(stdout);
  }
  parquet::WriteOptions wopts;
  wopts.codec = parquet::parse_codec(args.codec);
  wopts.num_threads = args.threads;
  std::vector<StorageRow> rows;
  std::vector<ImageRow> image_rows;
  ImageLayoutOptions image_options;
  image_options.codec = args.codec;
  image_options.threads = args.threads;
  for (const auto& name : args.datasets) {
    const DatasetSpec spec = dataset_spec(name);
    const std::string src = idx_dir(spec, spec.flag == "mnist" ? args.mnist_idx : args.fashion_idx);
    for (const std::string split : {"train", "test"}) {
      const std::string prefix = split == "train" ? "train" : "t10k";
      const std::string images = idx_file(src, prefix + "-images-idx3-ubyte", install_hint(spec));
      const std::string labels = idx_file(src, prefix + "-labels-idx1-ubyte", install_hint(spec));
      fmt::print("{} {}: reading {}\n", spec.folder, split, images);
      std::fflush(stdout);
      const ImageSplit idx = read_idx_split(images, labels);
      const std::string base = args.data_dir + "/" + spec.folder + "/" + split;
      if (args.images) {
        const std::string images_dir = args.data_dir + "/" + spec.folder + "/images";
        const auto results = write_image_layouts(idx, images_dir, split, image_options, [&](const std::string& line) {
          fmt::print("{} {}: {}\n", spec.folder, split, line);
          std::fflush(stdout);
        });
        for (const auto& r : results) image_rows.push_back({spec.folder, split, r});
        // The tables are written once: --images adds the image layouts beside them.
        if (exists(base + ".csv") && exists(base + ".parquet")) continue;
      }
      const Table table = image_split_to_table(idx);
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
  if (!image_rows.empty()) print_images_table(image_rows, args.threads);
  if (rows.empty()) return 0;
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
