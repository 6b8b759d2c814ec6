// ParquetImageSource: the labels read once, the images a row group at a time through a small LRU cache of row
// groups (row_group_cache.h, as ParquetStreamDataset caches its decoded ones), the images kept as the column's
// bytes.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dataset/read_ahead.h"
#include "dataset/row_group_cache.h"
#include "feedline/dataset/image_dataset.h"
#include "feedline/io/columns.h"
#include "feedline/io/error.h"
#include "feedline/io/parquet.h"
#include "feedline/io/remote.h"

namespace feedline {
namespace {

bool is_binary(const ColumnSchema& c) {
  return !c.is_list && (c.type == PhysicalType::kByteArray || c.type == PhysicalType::kFixedLenByteArray);
}

const ColumnSchema* find_column(const std::vector<ColumnSchema>& schema, const std::string& name) {
  const auto it = std::find_if(schema.begin(), schema.end(), [&](const ColumnSchema& c) { return c.name == name; });
  return it == schema.end() ? nullptr : &*it;
}

std::string column_type(const ColumnSchema& c) {
  return c.is_list ? std::string("a list of ") + to_string(c.type) : std::string(to_string(c.type));
}

// The column that holds the images' bytes: `<image>.bytes` of a Hugging Face Image struct, else `<image>` itself.
std::string image_read_column(const std::string& spec, const std::vector<ColumnSchema>& schema,
                              const std::string& image) {
  if (const ColumnSchema* field = find_column(schema, image + ".bytes")) {
    if (!is_binary(*field)) {
      throw InvalidArgument(spec + ": the image column " + field->name + " is " + column_type(*field) +
                            ", not binary");
    }
    return field->name;
  }
  if (const ColumnSchema* plain = find_column(schema, image)) {
    if (!is_binary(*plain)) {
      throw InvalidArgument(spec + ": the image column " + image + " is " + column_type(*plain) +
                            ", not binary (nor a struct with a binary `bytes` field)");
    }
    return image;
  }
  throw InvalidArgument(spec + ": no image column " + image + " (a binary column, or a struct with a binary `bytes` "
                        "field, " + image + ".bytes)");
}

void check_label_column(const std::string& spec, const std::vector<ColumnSchema>& schema, const std::string& label) {
  const ColumnSchema* column = find_column(schema, label);
  if (!column) throw InvalidArgument(spec + ": no label column " + label);
  if (column->is_list || (column->type != PhysicalType::kInt32 && column->type != PhysicalType::kInt64) ||
      column->logical.kind != LogicalKind::kNone) {
    throw InvalidArgument(spec + ": the label column " + label + " is " + column_type(*column) +
                          (column->logical.kind != LogicalKind::kNone ? " with a logical type" : "") +
                          ", not integer class numbers");
  }
}

// info.features.<label>.names of the `huggingface` footer key (a ClassLabel's names), if it is there.
std::vector<std::string> hugging_face_names(const parquet::FileInfo& info, const std::string& label) {
  for (const auto& [key, value] : info.key_value_metadata) {
    if (key != "huggingface") continue;
    const nlohmann::json meta = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
    if (!meta.is_object()) return {};
    const auto info_it = meta.find("info");
    if (info_it == meta.end() || !info_it->is_object()) return {};
    const auto features = info_it->find("features");
    if (features == info_it->end() || !features->is_object()) return {};
    const auto feature = features->find(label);
    if (feature == features->end() || !feature->is_object()) return {};
    const auto names = feature->find("names");
    if (names == feature->end() || !names->is_array()) return {};
    std::vector<std::string> out;
    for (const auto& name : *names) {
      if (!name.is_string()) return {};
      out.push_back(name.get<std::string>());
    }
    return out;
  }
  return {};
}

}  // namespace

struct ParquetImageSource::Impl {
  // One row group's images, as read.
  struct Block {
    Column images;
  };

  Impl(std::string spec_in, ParquetImageOptions options_in)
      : spec(std::move(spec_in)),
        options(std::move(options_in)),
        dataset(open(spec, options)),
        cache(options.cached_row_groups, [this](int64_t group) { return read_block(group); }) {}

  static parquet::DatasetReader open(const std::string& spec, const ParquetImageOptions& options) {
    if (!parquet::is_dataset_spec(spec) && input_format(spec) != FileFormat::kParquet) {
      throw InvalidArgument(spec + ": Parquet images are read from .parquet files; this is not one");
    }
    if (options.cached_row_groups < 1) throw InvalidArgument("cached_row_groups must be at least 1");
    return parquet::DatasetReader(spec, 0, options.max_open_files);
  }

  std::string name(int64_t index) const {
    const auto group = group_of(index);
    const parquet::DatasetReader::RowGroup& where = dataset.row_groups()[static_cast<size_t>(group)];
    const int64_t row = file_row_of_group[static_cast<size_t>(group)] + index - starts[static_cast<size_t>(group)];
    return dataset.files().paths[where.file] + " row " + std::to_string(row);
  }

  int64_t group_of(int64_t index) const {
    return static_cast<int64_t>(std::upper_bound(starts.begin(), starts.end(), index) - starts.begin()) - 1;
  }

  void read_labels() {
    parquet::ReadOptions read;
    read.columns = {options.label_column};
    const Table table = dataset.read(read);
    const Column& column = table.columns.at(0);
    if (table.num_rows != size) {
      throw InvalidFile(spec + ": the label column holds " + std::to_string(table.num_rows) +
                        " rows, the footers say " + std::to_string(size));
    }
    const bool is_unsigned = column.schema.int_annotation && !column.schema.int_annotation->is_signed;
    labels.resize(static_cast<size_t>(size));
    for (int64_t i = 0; i < size; ++i) {
      if (column.is_null(i)) {
        throw InvalidFile(name(i) + ": the label (column " + options.label_column + ") is null");
      }
      int64_t value = 0;
      if (column.schema.type == PhysicalType::kInt32) {
        const int32_t v = column.as<int32_t>()[static_cast<size_t>(i)];
        value = is_unsigned ? static_cast<int64_t>(static_cast<uint32_t>(v)) : v;
      } else {
        value = column.as<int64_t>()[static_cast<size_t>(i)];  // an unsigned one past INT64's range reads negative
      }
      if (value < 0) {
        throw InvalidFile(name(i) + ": the label (column " + options.label_column + ") is " +
                          (is_unsigned ? std::to_string(static_cast<uint64_t>(value)) : std::to_string(value)) +
                          ", not a class number (0 or more)");
      }
      labels[static_cast<size_t>(i)] = value;
    }
  }

  std::shared_ptr<const Block> read_block(int64_t group) const {
    const parquet::DatasetReader::RowGroup& where = dataset.row_groups()[static_cast<size_t>(group)];
    parquet::ReadOptions read;
    read.columns = {image_column};
    read.row_groups = {where.row_group};
    read.num_threads = 1;  // the loader's workers read row groups side by side
    Table table = dataset.read_file(where.file, read);
    if (table.num_rows != where.num_rows) {
      throw InvalidFile(dataset.files().paths[where.file] + ": row group " + std::to_string(where.row_group) +
                        " holds " + std::to_string(table.num_rows) + " rows, its footer says " +
                        std::to_string(where.num_rows));
    }
    return std::make_shared<const Block>(Block{std::move(table.columns.at(0))});
  }

  // A remote dataset's row groups fetched ahead: the image column's chunks of each.
  void fetch(int64_t group) const {
    const parquet::DatasetReader::RowGroup& where = dataset.row_groups()[static_cast<size_t>(group)];
    parquet::ReadOptions read;
    read.columns = {image_column};
    read.row_groups = {where.row_group};
    // A row group that cannot be fetched ahead is read when its samples are, whose read reports what fails.
    try {
      dataset.prefetch_file(where.file, read);
    } catch (const Error&) {
    }
  }

  const std::string spec;
  const ParquetImageOptions options;
  parquet::DatasetReader dataset;
  std::string image_column;                // what is read: `<image>.bytes` or `<image>`
  int64_t size = 0;
  std::vector<int64_t> blocks;             // rows of each row group, over every file
  std::vector<int64_t> starts;             // first index of each row group; starts.back() == size
  std::vector<int64_t> file_row_of_group;  // the row group's first row in its file
  std::vector<int64_t> labels;
  std::vector<std::string> class_names;
  detail::RowGroupCache<Block> cache;  // the images of the row groups used last
  std::unique_ptr<detail::ReadAheadFetcher> fetcher;  // remote files only
};

ParquetImageSource::ParquetImageSource(std::string spec, ParquetImageOptions options)
    : impl_(std::make_unique<Impl>(std::move(spec), std::move(options))) {
  Impl& m = *impl_;
  m.image_column = image_read_column(m.spec, m.dataset.schema(), m.options.image_column);
  check_label_column(m.spec, m.dataset.schema(), m.options.label_column);
  m.starts.push_back(0);
  size_t file = std::numeric_limits<size_t>::max();
  int64_t file_row = 0;
  for (const auto& rg : m.dataset.row_groups()) {
    if (rg.file != file) {
      file = rg.file;
      file_row = 0;
    }
    m.blocks.push_back(rg.num_rows);
    m.file_row_of_group.push_back(file_row);
    file_row += rg.num_rows;
    m.starts.push_back(m.starts.back() + rg.num_rows);
  }
  m.size = m.starts.back();
  m.read_labels();
  if (m.dataset.num_files() > 0) {
    m.class_names = hugging_face_names(m.dataset.open_file(0)->info(), m.options.label_column);
  }
  const auto& paths = m.dataset.files().paths;
  if (std::any_of(paths.begin(), paths.end(), [](const std::string& p) { return is_remote_path(p); })) {
    m.fetcher = std::make_unique<detail::ReadAheadFetcher>([&m](int64_t index) { return m.group_of(index); },
                                                           [&m](int64_t group, const std::vector<int64_t>&) { m.fetch(group); });
  }
}

void ParquetImageSource::will_read(const std::vector<int64_t>& order, const ReadAhead& ahead) const {
  if (impl_->fetcher) impl_->fetcher->start(order, ahead.blocks);
}

ParquetImageSource::~ParquetImageSource() = default;

int64_t ParquetImageSource::size() const { return impl_->size; }

EncodedSample ParquetImageSource::get(int64_t index) const {
  const Impl& m = *impl_;
  if (index < 0 || index >= m.size) {
    throw InvalidArgument(m.spec + ": sample " + std::to_string(index) + " is outside [0, " + std::to_string(m.size) +
                          ")");
  }
  if (m.fetcher) m.fetcher->read(index);
  const int64_t group = m.group_of(index);
  const std::shared_ptr<const Impl::Block> block = m.cache.get(group);
  const int64_t row = index - m.starts[static_cast<size_t>(group)];
  EncodedSample sample;
  sample.name = m.name(index);
  if (block->images.is_null(row)) {
    throw InvalidFile(sample.name + ": the image (column " + m.image_column + ") is null");
  }
  sample.bytes = std::string(block->images.byte_arrays().at(row));
  sample.label = m.labels[static_cast<size_t>(index)];
  return sample;
}

std::vector<int64_t> ParquetImageSource::labels() const { return impl_->labels; }
std::vector<std::string> ParquetImageSource::class_names() const { return impl_->class_names; }
std::vector<int64_t> ParquetImageSource::shuffle_blocks() const { return impl_->blocks; }
int64_t ParquetImageSource::row_group_reads() const { return impl_->cache.reads(); }

}  // namespace feedline
