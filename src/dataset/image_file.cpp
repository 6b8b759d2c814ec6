#include "feedline/dataset/image_file.h"

#include <string>
#include <utility>

#include "feedline/dataset/stream_dataset.h"
#include "feedline/io/columns.h"
#include "feedline/io/error.h"

namespace feedline {

std::shared_ptr<const Dataset> make_table_dataset(std::shared_ptr<const Table> table, DatasetMode mode,
                                                  const ImageTableLayout& layout, torch::Device device) {
  switch (mode) {
    case DatasetMode::kRow:
      return std::make_shared<RowDataset>(std::move(table), layout);
    case DatasetMode::kTensor:
    case DatasetMode::kTensorUint8:
    case DatasetMode::kDevice: {
      const ImageTensors t = decode_image_table(*table, layout, /*as_uint8=*/mode != DatasetMode::kTensor);
      if (mode == DatasetMode::kDevice) return std::make_shared<DeviceDataset>(t.images, t.labels, device);
      return std::make_shared<TensorDataset>(t.images, t.labels);
    }
    case DatasetMode::kStream:
      break;
  }
  throw InvalidArgument(std::string("dataset mode '") + dataset_mode_name(mode) +
                        "' reads a file, not a table: use load_image_file()");
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

ImageFile load_image_file(const std::string& path, const ImageFileOptions& options) {
  const ColumnChoice& choice = options.columns;
  if (options.mode == DatasetMode::kStream) {
    if (!choice.row_groups.empty()) throw InvalidArgument("a streamed dataset reads every row group: choose no row groups for it");
    ParquetStreamOptions stream;
    stream.layout = image_layout(choice, options.shape);
    stream.columns = choice.only;
    stream.limit = options.limit;
    stream.cached_row_groups = options.cached_row_groups;
    stream.as_uint8 = true;
    stream.num_threads = options.threads;
    ImageFile file;
    file.dataset = std::make_shared<ParquetStreamDataset>(path, stream);
    file.max_label = max_label_in(path, choice, options.limit, options.threads);
    return file;
  }
  Table table = load_image_table(path, choice, options.shape, options.limit, options.threads);
  const ImageTableLayout layout = image_layout(choice, options.shape);
  ImageFile file;
  file.max_label = max_label(table, layout.label_column, path);
  try {
    file.dataset =
        make_table_dataset(std::make_shared<const Table>(std::move(table)), options.mode, layout, options.device);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(path + ": " + e.what());
  }
  return file;
}

}  // namespace feedline
