#include "feedline/dataset/image_file.h"

#include <utility>

#include "feedline/dataset/stream_dataset.h"
#include "feedline/io/columns.h"
#include "feedline/io/error.h"

namespace feedline {

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

}  // namespace feedline
