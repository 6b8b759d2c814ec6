#include "feedline/dataset.h"

#include <ATen/Parallel.h>

#include <string>

#include "feedline/error.h"

namespace feedline {

Example Dataset::get_batch(const std::vector<int64_t>& indices) const {
  std::vector<Example> examples;
  examples.reserve(indices.size());
  for (const int64_t i : indices) examples.push_back(get(i));
  return collate(examples);
}

Example collate(const std::vector<Example>& examples) {
  if (examples.empty()) throw InvalidArgument("collate: no examples to stack");
  std::vector<torch::Tensor> data, targets;
  data.reserve(examples.size());
  targets.reserve(examples.size());
  for (const auto& e : examples) {
    data.push_back(e.data);
    targets.push_back(e.target);
  }
  return {torch::stack(data), torch::stack(targets)};
}

namespace {

void check_index(int64_t index, int64_t size) {
  if (index < 0 || index >= size) {
    throw InvalidArgument("index " + std::to_string(index) + " out of range for a dataset of " +
                          std::to_string(size) + " samples");
  }
}

std::vector<size_t> pixel_column_indices(const Table& table, const ImageTableLayout& layout) {
  const int64_t pixels = layout.channels * layout.height * layout.width;
  std::vector<size_t> out;
  out.reserve(static_cast<size_t>(pixels));
  for (int64_t p = 1; p <= pixels; ++p) {
    out.push_back(table.column_index(layout.pixel_prefix + std::to_string(p)));
  }
  return out;
}

}  // namespace

RowDataset::RowDataset(std::shared_ptr<const Table> table, ImageTableLayout layout)
    : table_(std::move(table)), layout_(std::move(layout)) {
  label_index_ = table_->column_index(layout_.label_column);
  pixel_indices_ = pixel_column_indices(*table_, layout_);
}

Example RowDataset::get(int64_t index) const {
  check_index(index, size());
  // Deliberately naive, like pandas' df.iloc[idx]: visit every column of the row and convert each value.
  std::vector<float> row;
  row.reserve(pixel_indices_.size());
  for (const size_t c : pixel_indices_) row.push_back(static_cast<float>(table_->columns[c].value_as_double(index)));
  auto image = torch::tensor(row, torch::kFloat32).view({layout_.channels, layout_.height, layout_.width}) / 255.0;
  const auto label = static_cast<int64_t>(table_->columns[label_index_].value_as_double(index));
  return {image, torch::tensor(label, torch::kInt64)};
}

TensorDataset::TensorDataset(torch::Tensor images, torch::Tensor labels)
    : images_(images.contiguous()), labels_(labels.to(torch::kInt64).contiguous()) {
  if (images_.dim() < 1 || labels_.dim() != 1 || images_.size(0) != labels_.size(0)) {
    throw InvalidArgument("TensorDataset: images and labels must have the same first dimension");
  }
}

Example TensorDataset::get(int64_t index) const {
  check_index(index, size());
  return {images_[index], labels_[index]};
}

Example TensorDataset::get_batch(const std::vector<int64_t>& indices) const {
  for (const int64_t i : indices) check_index(i, size());
  // from_blob borrows the caller's vector for the duration of the gather; index_select copies out.
  const auto idx = torch::from_blob(const_cast<int64_t*>(indices.data()), {static_cast<int64_t>(indices.size())},
                                    torch::kInt64);
  return {images_.index_select(0, idx), labels_.index_select(0, idx)};
}

namespace {

template <class T>
void copy_column(const std::vector<T>& values, int64_t pixel, int64_t pixels, uint8_t* out_u8, float* out_f32,
                 int64_t rows) {
  if (out_u8 != nullptr) {
    for (int64_t r = 0; r < rows; ++r) out_u8[r * pixels + pixel] = static_cast<uint8_t>(values[r]);
  } else {
    for (int64_t r = 0; r < rows; ++r) out_f32[r * pixels + pixel] = static_cast<float>(values[r]) / 255.0f;
  }
}

}  // namespace

ImageTensors decode_image_table(const Table& table, const ImageTableLayout& layout, bool as_uint8) {
  const int64_t rows = table.num_rows;
  const auto pixel_cols = pixel_column_indices(table, layout);
  const int64_t pixels = static_cast<int64_t>(pixel_cols.size());
  auto images = torch::empty({rows, layout.channels, layout.height, layout.width},
                             as_uint8 ? torch::kUInt8 : torch::kFloat32);
  uint8_t* out_u8 = as_uint8 ? images.data_ptr<uint8_t>() : nullptr;
  float* out_f32 = as_uint8 ? nullptr : images.data_ptr<float>();
  // Columns are independent: each fills one pixel position of every image.
  at::parallel_for(0, pixels, 16, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const Column& col = table.columns[pixel_cols[static_cast<size_t>(p)]];
      std::visit(
          [&](const auto& values) {
            using V = std::decay_t<decltype(values)>;
            if constexpr (std::is_same_v<V, ByteArrays>) {
              throw InvalidArgument("column '" + col.schema.name + "' holds byte arrays, not pixel values");
            } else {
              copy_column(values, p, pixels, out_u8, out_f32, rows);
            }
          },
          col.values);
    }
  });
  const Column& label_col = table.column(layout.label_column);
  auto labels = torch::empty({rows}, torch::kInt64);
  auto* lab = labels.data_ptr<int64_t>();
  for (int64_t r = 0; r < rows; ++r) lab[r] = static_cast<int64_t>(label_col.value_as_double(r));
  return {images, labels};
}

}  // namespace feedline
