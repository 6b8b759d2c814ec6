#include "feedline/dataset/dataset.h"

#include <ATen/Parallel.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>

#include "dataset/image.h"
#include "feedline/io/columns.h"
#include "feedline/io/error.h"
#include "io/parallel.h"

namespace feedline {

Example Dataset::get_batch(const std::vector<int64_t>& indices) const {
  std::vector<Example> examples;
  examples.reserve(indices.size());
  for (const int64_t i : indices) examples.push_back(get(i));
  return collate(examples);
}

Example Dataset::make_batch(const std::vector<int64_t>& /*indices*/, const BatchContext& /*context*/) const {
  throw InvalidArgument("Dataset::make_batch: only a dataset that makes its batches (makes_batches()) has it");
}

Example Dataset::gather(const torch::Tensor& /*indices*/) const {
  throw InvalidArgument("gather() needs a device-resident dataset");
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

// Rows `indices[0..n)` of a contiguous CPU tensor, copied with memcpy. Random rows of a dataset larger than the
// caches cost a memory round trip each; prefetching rows ahead (kAhead of them, enough to cover a round trip with
// rows of FashionMNIST's 784 bytes) overlaps them.
torch::Tensor gather_rows(const torch::Tensor& from, const int64_t* indices, int64_t n, bool parallel = false) {
  auto sizes = from.sizes().vec();
  sizes[0] = n;
  auto out = torch::empty(sizes, from.options());
  const size_t row_bytes = static_cast<size_t>(from.numel() / std::max<int64_t>(1, from.size(0))) * from.element_size();
  const auto* src = static_cast<const char*>(from.data_ptr());
  auto* dst = static_cast<char*>(out.data_ptr());
  constexpr int64_t kAhead = 8;
  auto copy = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if (i + kAhead < end) {
        const char* next = src + indices[i + kAhead] * row_bytes;
        for (size_t line = 0; line < row_bytes; line += 64) __builtin_prefetch(next + line);
      }
      std::memcpy(dst + i * row_bytes, src + indices[i] * row_bytes, row_bytes);
    }
  };
  if (parallel) {
    parallel_for_blocks(0, n, 64, at::get_num_threads(), copy);
  } else {
    copy(0, n);
  }
  return out;
}

void check_images_and_labels(const torch::Tensor& images, const torch::Tensor& labels, const char* who) {
  if (images.dim() < 1 || labels.dim() != 1 || images.size(0) != labels.size(0)) {
    throw InvalidArgument(std::string(who) + ": images and labels must have the same first dimension");
  }
}

void check_index(int64_t index, int64_t size) {
  if (index < 0 || index >= size) {
    throw InvalidArgument("index " + std::to_string(index) + " out of range for a dataset of " +
                          std::to_string(size) + " samples");
  }
}

// The layout's feature columns, in table order (never sorted by name: pixel10 sorts before pixel2), without
// the label column.
std::vector<size_t> feature_column_indices(const Table& table, const ImageTableLayout& layout) {
  std::vector<ColumnSchema> schema;
  schema.reserve(table.columns.size());
  for (const auto& c : table.columns) schema.push_back(c.schema);
  // match_columns() answers in table order, so one walk over the columns finds each match's index.
  const auto names = match_columns(schema, layout.feature_columns);
  std::vector<size_t> out;
  size_t next = 0;
  for (size_t c = 0; c < table.columns.size() && next < names.size(); ++c) {
    if (table.columns[c].schema.name != names[next]) continue;
    if (names[next] != layout.label_column) out.push_back(c);
    ++next;
  }
  return out;
}

void check_feature_count(size_t features, const ImageTableLayout& layout) {
  const int64_t pixels = layout.channels * layout.height * layout.width;
  if (static_cast<int64_t>(features) == pixels) return;
  std::string patterns;
  for (const auto& p : layout.feature_columns) patterns += (patterns.empty() ? "" : ",") + p;
  throw InvalidArgument(std::to_string(features) + " feature columns match '" + patterns + "', expected " +
                        std::to_string(pixels) + " (" + std::to_string(layout.channels) + "x" +
                        std::to_string(layout.height) + "x" + std::to_string(layout.width) + ")");
}

}  // namespace

RowDataset::RowDataset(std::shared_ptr<const Table> table, ImageTableLayout layout)
    : table_(std::move(table)), layout_(std::move(layout)) {
  label_index_ = table_->column_index(layout_.label_column);
  label_tensor(table_->columns[label_index_]);  // refuses bad labels now, not at the sample that holds one
  pixel_indices_ = feature_column_indices(*table_, layout_);
  check_feature_count(pixel_indices_.size(), layout_);
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

TensorDataset::TensorDataset(torch::Tensor images, torch::Tensor labels, bool class_labels)
    : images_(images.contiguous()), labels_((class_labels ? labels.to(torch::kInt64) : labels).contiguous()) {
  if (!class_labels && images_.dim() >= 1 && labels_.dim() >= 1 && images_.size(0) == labels_.size(0)) return;
  check_images_and_labels(images_, labels_, "TensorDataset");
}

Example TensorDataset::get(int64_t index) const {
  check_index(index, size());
  return {images_[index], labels_[index]};
}

Example TensorDataset::get_batch(const std::vector<int64_t>& indices) const {
  for (const int64_t i : indices) check_index(i, size());
  // One gather, as plain row copies in this thread: no intra-op threads inside loader workers (N workers each
  // starting an intra-op team would oversubscribe the cores), and no dependence on ATen's threading settings.
  const auto n = static_cast<int64_t>(indices.size());
  return {gather_rows(images_, indices.data(), n), gather_rows(labels_, indices.data(), n)};
}

DeviceDataset::DeviceDataset(const torch::Tensor& images, const torch::Tensor& labels, torch::Device device)
    : images_(images.contiguous().to(device)), labels_(labels.to(torch::kInt64).contiguous().to(device)) {
  check_images_and_labels(images_, labels_, "DeviceDataset");
}

Example DeviceDataset::get(int64_t index) const {
  check_index(index, size());
  return {images_[index], labels_[index]};
}

Example DeviceDataset::get_batch(const std::vector<int64_t>& indices) const {
  for (const int64_t i : indices) check_index(i, size());
  const auto n = static_cast<int64_t>(indices.size());
  if (images_.is_cpu()) {
    return {gather_rows(images_, indices.data(), n, /*parallel=*/true), gather_rows(labels_, indices.data(), n)};
  }
  auto host = torch::from_blob(const_cast<int64_t*>(indices.data()), {n}, torch::kInt64);
  return gather(host.to(images_.device()));
}

Example DeviceDataset::gather(const torch::Tensor& indices) const {
  if (!images_.is_cpu()) return {images_.index_select(0, indices), labels_.index_select(0, indices)};
  // On the CPU, rows copied with memcpy (ATen's index_select goes element by element through TensorIterator).
  const auto idx = indices.to(torch::kInt64).contiguous();
  const auto* at = idx.data_ptr<int64_t>();
  const int64_t n = idx.numel();
  for (int64_t i = 0; i < n; ++i) check_index(at[i], size());
  return {gather_rows(images_, at, n, /*parallel=*/true), gather_rows(labels_, at, n)};
}

namespace {

// Copies rows [begin, end) of one pixel column into its slot of each image (row-major output).
template <class T>
void copy_column(const std::vector<T>& values, int64_t pixel, int64_t pixels, int64_t begin, int64_t end,
                 uint8_t* out_u8, float* out_f32) {
  if (out_u8 != nullptr) {
    for (int64_t r = begin; r < end; ++r) out_u8[r * pixels + pixel] = static_cast<uint8_t>(values[r]);
  } else {
    for (int64_t r = begin; r < end; ++r) out_f32[r * pixels + pixel] = static_cast<float>(values[r]) / 255.0f;
  }
}

// Each row's bytes a PNG file (Hugging Face's image columns): decoded in parallel, 8-bit grayscale of the
// layout's size. The lowest failing row's error is the one thrown, naming the column and the row.
void decode_png_column(const Column& column, const ImageTableLayout& layout, uint8_t* out_u8, float* out_f32) {
  if (layout.channels != 1) {
    throw InvalidArgument("column '" + column.schema.name + "' holds PNG images: only 1-channel layouts are supported");
  }
  const ByteArrays& bytes = column.byte_arrays();
  const int64_t rows = bytes.size(), pixels = layout.height * layout.width;
  std::mutex mutex;
  int64_t failed_row = rows;
  std::string failure;
  parallel_for_blocks(0, rows, 64, at::get_num_threads(), [&](int64_t begin, int64_t end) {
    std::vector<uint8_t> gray(out_u8 != nullptr ? 0 : static_cast<size_t>(pixels));
    for (int64_t r = begin; r < end; ++r) {
      uint8_t* dst = out_u8 != nullptr ? out_u8 + r * pixels : gray.data();
      try {
        if (column.is_null(r)) throw InvalidArgument("null");
        decode_png_gray8(bytes.at(r), layout.height, layout.width, dst);
      } catch (const InvalidArgument& e) {
        std::lock_guard<std::mutex> lock(mutex);
        if (r < failed_row) {
          failed_row = r;
          failure = e.what();
        }
        return;
      }
      if (out_f32 != nullptr) {
        float* out = out_f32 + r * pixels;
        for (int64_t p = 0; p < pixels; ++p) out[p] = static_cast<float>(gray[static_cast<size_t>(p)]) / 255.0f;
      }
    }
  });
  if (failed_row < rows) {
    throw InvalidArgument("column '" + column.schema.name + "' row " + std::to_string(failed_row) + ": " + failure);
  }
}

// The row-major layout: each row's pixels are one byte string, so an image is one copy (or one conversion).
// Byte strings that are PNG files are decoded instead.
void decode_row_major(const Column& column, const ImageTableLayout& layout, uint8_t* out_u8, float* out_f32) {
  const auto* bytes = std::get_if<ByteArrays>(&column.values);
  if (bytes == nullptr) throw InvalidArgument("column '" + column.schema.name + "' does not hold byte strings");
  const int64_t rows = bytes->size();
  const int64_t pixels = layout.channels * layout.height * layout.width;
  if (rows > 0 && is_png(bytes->at(0))) return decode_png_column(column, layout, out_u8, out_f32);
  for (int64_t r = 0; r < rows; ++r) {
    if (bytes->offsets[r + 1] - bytes->offsets[r] != pixels) {
      throw InvalidArgument("column '" + column.schema.name + "' row " + std::to_string(r) + " holds " +
                            std::to_string(bytes->offsets[r + 1] - bytes->offsets[r]) + " bytes, expected " +
                            std::to_string(pixels));
    }
  }
  parallel_for_blocks(0, rows, 256, at::get_num_threads(), [&](int64_t begin, int64_t end) {
    const auto* src = reinterpret_cast<const uint8_t*>(bytes->bytes.data());
    if (out_u8 != nullptr) {
      std::memcpy(out_u8 + begin * pixels, src + bytes->offsets[begin], static_cast<size_t>((end - begin) * pixels));
      return;
    }
    for (int64_t r = begin; r < end; ++r) {
      const uint8_t* in = src + bytes->offsets[r];
      float* out = out_f32 + r * pixels;
      for (int64_t p = 0; p < pixels; ++p) out[p] = static_cast<float>(in[p]) / 255.0f;
    }
  });
}


// The offsets that index list level `level` of a list column (1: the lists of inner_lists[0], or the values of a
// one-level list; list_depth(): the values): the level above's.
const std::vector<int64_t>& offsets_into(const Column& column, int level) {
  return level == 1 ? column.list_offsets : column.inner_lists[static_cast<size_t>(level - 2)].offsets;
}

// The row holding entry `i` of list level `level` (0: the rows themselves).
int64_t row_of(const Column& column, int level, int64_t i) {
  for (int k = level; k > 0; --k) {
    const std::vector<int64_t>& offsets = offsets_into(column, k);
    i = std::upper_bound(offsets.begin(), offsets.end(), i) - offsets.begin() - 1;
  }
  return i;
}

// InvalidArgument naming the first row that is null, holds a null inner list or holds a null element.
void refuse_list_nulls(const Column& column) {
  const ColumnSchema& s = column.schema;
  int64_t row = column.size();
  std::string what;
  const auto note = [&](int64_t r, const char* why) {
    if (r < row) {
      row = r;
      what = why;
    }
  };
  const auto first_zero = [](const std::vector<uint8_t>& v) { return std::find(v.begin(), v.end(), 0) - v.begin(); };
  if (const auto i = first_zero(column.element_validity); i < static_cast<int64_t>(column.element_validity.size())) {
    note(row_of(column, s.list_depth(), i), " holds a null element");
  }
  for (size_t k = 0; k < column.inner_lists.size(); ++k) {
    const std::vector<uint8_t>& validity = column.inner_lists[k].validity;
    if (const auto i = first_zero(validity); i < static_cast<int64_t>(validity.size())) {
      note(row_of(column, static_cast<int>(k) + 1, i), " holds a null list");
    }
  }
  if (const auto r = first_zero(column.validity); r < static_cast<int64_t>(column.validity.size())) note(r, " is null");
  if (!what.empty()) throw InvalidArgument("column '" + s.name + "' row " + std::to_string(row) + what);
}

// A list column's elements as their slots hold them, nulls included (list_column_elements).
torch::Tensor stored_elements(const Column& column) {
  const ColumnSchema& s = column.schema;
  const std::string where = "column '" + s.name + "'";
  const int64_t n = offsets_into(column, s.list_depth()).back();
  const auto copy = [n](const auto& values, torch::ScalarType dtype) {
    using T = typename std::decay_t<decltype(values)>::value_type;
    auto t = torch::empty({n}, dtype);
    if (t.element_size() == sizeof(T)) {
      if (n > 0) std::memcpy(t.data_ptr(), values.data(), static_cast<size_t>(n) * sizeof(T));
      return t;
    }
    // A narrower or wider integer type than the storage: convert from a view of it.
    const auto storage_dtype = sizeof(T) == 4 ? torch::kInt32 : torch::kInt64;
    return torch::from_blob(const_cast<T*>(values.data()), {n}, storage_dtype).to(dtype);
  };
  if (s.logical.kind == LogicalKind::kFloat16 && s.type == PhysicalType::kFixedLenByteArray) {
    return float16_tensor(column.byte_arrays());
  }
  if (s.logical.kind == LogicalKind::kDecimal) {  // float64, each value scaled, as a DECIMAL column's values read
    auto t = torch::empty({n}, torch::kFloat64);
    auto* out = t.data_ptr<double>();
    for (int64_t i = 0; i < n; ++i) out[i] = column.value_as_double(i);
    return t;
  }
  const std::optional<IntAnnotation> a = s.int_annotation;
  switch (s.type) {
    case PhysicalType::kBoolean: return copy(column.as<uint8_t>(), torch::kUInt8).to(torch::kBool);
    case PhysicalType::kInt32: {
      torch::ScalarType dtype = torch::kInt32;
      if (a && a->bit_width == 8) dtype = a->is_signed ? torch::kInt8 : torch::kUInt8;
      if (a && a->bit_width == 16) dtype = a->is_signed ? torch::kInt16 : torch::kInt32;
      if (a && a->bit_width == 32 && !a->is_signed) {
        // UINT32 is stored as its bits in int32: widen without sign extension.
        return copy(column.as<int32_t>(), torch::kInt32).to(torch::kInt64).bitwise_and_(static_cast<int64_t>(0xffffffff));
      }
      return copy(column.as<int32_t>(), dtype);
    }
    case PhysicalType::kInt64: return copy(column.as<int64_t>(), torch::kInt64);
    case PhysicalType::kFloat: return copy(column.as<float>(), torch::kFloat32);
    case PhysicalType::kDouble: return copy(column.as<double>(), torch::kFloat64);
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: break;
  }
  throw InvalidArgument(where + " holds byte strings, not tensor values");
}

const Column* find_column(const Table& table, const std::string& name) {
  for (const auto& c : table.columns) {
    if (c.schema.name == name) return &c;
  }
  return nullptr;
}

}  // namespace

torch::Tensor label_tensor(const Column& column) {
  const std::string where = "label column '" + column.schema.name + "'";
  if (column.schema.is_list) throw InvalidArgument(where + " holds lists, not class numbers");
  const int64_t rows = column.size();
  auto labels = torch::empty({rows}, torch::kInt64);
  auto* out = labels.data_ptr<int64_t>();
  for (int64_t r = 0; r < rows; ++r) {
    if (column.is_null(r)) throw InvalidArgument(where + " row " + std::to_string(r) + " is null");
    const double v = column.value_as_double(r);
    // Below 2^62: a class number, and exact in a double.
    if (!(v >= 0 && v < 0x1p62) || v != std::floor(v)) {
      throw InvalidArgument(
          fmt::format("{} row {} holds {}, not a class number (a whole number, 0 or more)", where, r, v));
    }
    out[r] = static_cast<int64_t>(v);
  }
  return labels;
}

torch::Tensor list_column_tensor(const Column& column, ListNulls nulls) {
  auto elements = list_column_elements(column, nulls);
  const std::string where = "column '" + column.schema.name + "'";
  const int64_t rows = column.size();
  // The rows that hold lists: all of them, but null rows under kZero, which are zeros of the others' shape.
  std::vector<int64_t> present;
  if (!column.validity.empty()) {
    for (int64_t r = 0; r < rows; ++r) {
      if (!column.is_null(r)) present.push_back(r);
    }
  }
  const bool all_present = column.validity.empty() || static_cast<int64_t>(present.size()) == rows;
  const int64_t first = all_present ? 0 : (present.empty() ? -1 : present[0]);
  const int64_t n = rows == 0 || first < 0 ? 0 : column.list_size(first);
  for (int64_t r = first + 1; r < rows && first >= 0; ++r) {
    if (column.list_size(r) != n && (all_present || !column.is_null(r))) {
      throw InvalidArgument(where + " row " + std::to_string(r) + " holds " + std::to_string(column.list_size(r)) +
                            " elements, row " + std::to_string(first) + " holds " + std::to_string(n));
    }
  }
  // A list of lists: every list at each inner level holds as many entries as that level's first. The first row
  // holding an irregular list, over every level, is the one named.
  std::vector<int64_t> shape{rows, n};
  int64_t bad_row = -1;
  std::string why;
  for (int level = 1; level < column.schema.list_depth(); ++level) {
    const std::vector<int64_t>& offsets = column.inner_lists[static_cast<size_t>(level - 1)].offsets;
    const int64_t lists = static_cast<int64_t>(offsets.size()) - 1;
    const int64_t m = lists == 0 ? 0 : offsets[1] - offsets[0];
    shape.push_back(m);
    for (int64_t i = 1; i < lists; ++i) {
      const int64_t size = offsets[static_cast<size_t>(i) + 1] - offsets[static_cast<size_t>(i)];
      if (size == m) continue;
      const int64_t row = row_of(column, level, i);
      if (bad_row < 0 || row < bad_row) {
        bad_row = row;
        why = where + " row " + std::to_string(row) + " holds a list of " + std::to_string(size) +
              " elements at depth " + std::to_string(level + 1) + ", row " + std::to_string(row_of(column, level, 0)) +
              "'s first holds " + std::to_string(m);
      }
      break;
    }
  }
  if (bad_row >= 0) throw InvalidArgument(why);
  if (all_present) return elements.view(shape);
  std::vector<int64_t> present_shape = shape;
  present_shape[0] = static_cast<int64_t>(present.size());
  auto out = torch::zeros(shape, elements.options());
  if (!present.empty()) {
    const auto index = torch::from_blob(present.data(), {static_cast<int64_t>(present.size())}, torch::kInt64);
    out.index_copy_(0, index, elements.view(present_shape));
  }
  return out;
}

// With ListNulls::kZero a null element is 0, whatever its slot holds (null lists hold no elements).
torch::Tensor list_column_elements(const Column& column, ListNulls nulls) {
  if (!column.schema.is_list) throw InvalidArgument("column '" + column.schema.name + "' is not a list column");
  if (nulls == ListNulls::kRefuse) refuse_list_nulls(column);
  torch::Tensor t = stored_elements(column);
  const std::vector<uint8_t>& valid = column.element_validity;
  if (nulls == ListNulls::kZero && std::find(valid.begin(), valid.end(), 0) != valid.end()) {
    const auto present = torch::from_blob(const_cast<uint8_t*>(valid.data()), {static_cast<int64_t>(valid.size())},
                                          torch::kUInt8);
    t.masked_fill_(present.eq(0), 0);
  }
  return t;
}

torch::Tensor float16_tensor(const ByteArrays& values) {
  const int64_t n = values.size();
  auto t = torch::zeros({n}, torch::kFloat16);
  if (values.bytes.size() == static_cast<size_t>(2 * n)) {
    if (n > 0) std::memcpy(t.data_ptr(), values.bytes.data(), static_cast<size_t>(n) * 2);
    return t;
  }
  auto* out = static_cast<char*>(t.data_ptr());
  for (int64_t i = 0; i < n; ++i) {
    const std::string_view v = values.at(i);
    if (v.size() == 2) std::memcpy(out + 2 * i, v.data(), 2);
  }
  return t;
}

std::vector<torch::Tensor> list_column_tensors(const Column& column, ListNulls nulls) {
  if (column.schema.list_depth() > 1) {
    throw InvalidArgument("column '" + column.schema.name + "' is a list of lists (" +
                          std::to_string(column.schema.list_depth()) +
                          " levels): list_column_tensors makes 1-D tensors of lists of values; list_column_tensor "
                          "makes one tensor of a regular list of lists");
  }
  const auto elements = list_column_elements(column, nulls);
  std::vector<torch::Tensor> rows;
  rows.reserve(static_cast<size_t>(column.size()));
  for (int64_t r = 0; r < column.size(); ++r) {
    rows.push_back(elements.narrow(0, column.list_offsets[r], column.list_size(r)));
  }
  return rows;
}

ImageTensors decode_image_table(const Table& table, const ImageTableLayout& layout, bool as_uint8) {
  const int64_t rows = table.num_rows;
  const Column* image = layout.image_column.empty() ? nullptr : find_column(table, layout.image_column);
  if (image == nullptr && !layout.image_column.empty()) image = find_column(table, layout.image_column + ".bytes");
  std::vector<size_t> pixel_cols;
  if (image == nullptr) {
    pixel_cols = feature_column_indices(table, layout);
    // One column of byte strings or lists is the row-major layout under another name.
    const Column* only = pixel_cols.size() == 1 ? &table.columns[pixel_cols[0]] : nullptr;
    if (only != nullptr && (only->schema.is_list || std::holds_alternative<ByteArrays>(only->values))) image = only;
  }
  if (image != nullptr && image->schema.is_list) {
    // Lists of numbers, one image a row: [rows, n] in the element type (a regular list of lists, rows of pixels,
    // flattened), then the dtype asked for.
    const torch::Tensor flat = list_column_tensor(*image).flatten(1);
    const int64_t pixels = layout.channels * layout.height * layout.width;
    if (flat.size(1) != pixels) {
      throw InvalidArgument("column '" + image->schema.name + "' holds lists of " + std::to_string(flat.size(1)) +
                            " values, expected " + std::to_string(pixels));
    }
    auto images = flat.view({rows, layout.channels, layout.height, layout.width});
    images = as_uint8 ? images.to(torch::kUInt8) : images.to(torch::kFloat32).div_(255.0);
    return {images.contiguous(), label_tensor(table.column(layout.label_column))};
  }
  if (image != nullptr) {
    auto images = torch::empty({rows, layout.channels, layout.height, layout.width},
                               as_uint8 ? torch::kUInt8 : torch::kFloat32);
    decode_row_major(*image, layout, as_uint8 ? images.data_ptr<uint8_t>() : nullptr,
                     as_uint8 ? nullptr : images.data_ptr<float>());
    return {images, label_tensor(table.column(layout.label_column))};
  }
  check_feature_count(pixel_cols.size(), layout);
  const int64_t pixels = static_cast<int64_t>(pixel_cols.size());
  auto images = torch::empty({rows, layout.channels, layout.height, layout.width},
                             as_uint8 ? torch::kUInt8 : torch::kFloat32);
  uint8_t* out_u8 = as_uint8 ? images.data_ptr<uint8_t>() : nullptr;
  float* out_f32 = as_uint8 ? nullptr : images.data_ptr<float>();
  for (const size_t c : pixel_cols) {
    if (value_index(table.columns[c].schema.type) == value_index(PhysicalType::kByteArray)) {
      throw InvalidArgument("column '" + table.columns[c].schema.name + "' holds byte arrays, not pixel values");
    }
  }
  // A column-major table becomes row-major images: work in blocks of rows so the block of images being
  // written stays in cache while every column is visited (a whole column at a time would miss on each write).
  constexpr int64_t kRowBlock = 64;
  const int64_t blocks = (rows + kRowBlock - 1) / kRowBlock;
  parallel_for_blocks(0, blocks, 1, at::get_num_threads(), [&](int64_t block_begin, int64_t block_end) {
    for (int64_t b = block_begin; b < block_end; ++b) {
      const int64_t begin = b * kRowBlock, end = std::min(rows, begin + kRowBlock);
      for (int64_t p = 0; p < pixels; ++p) {
        std::visit(
            [&](const auto& values) {
              using V = std::decay_t<decltype(values)>;
              if constexpr (!std::is_same_v<V, ByteArrays>) copy_column(values, p, pixels, begin, end, out_u8, out_f32);
            },
            table.columns[pixel_cols[static_cast<size_t>(p)]].values);
      }
    }
  });
  return {images, label_tensor(table.column(layout.label_column))};
}

DatasetColumns layout_columns(const ImageTableLayout& layout) {
  DatasetColumns columns;
  columns.label_column = layout.label_column;
  columns.feature_columns = layout.feature_columns;
  columns.image_column = layout.image_column;
  columns.feature_count = layout.channels * layout.height * layout.width;
  return columns;
}

}  // namespace feedline
