#include "feedline/dataset/stream_dataset.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "dataset/read_ahead.h"
#include "dataset/row_group_cache.h"
#include "feedline/io/columns.h"
#include "feedline/io/error.h"
#include "feedline/io/parquet.h"
#include "feedline/io/remote.h"

namespace feedline {
namespace {

// The options are checked before the files are opened: a bad option is refused as such, whatever the files hold.
parquet::DatasetReader open_stream_files(const std::string& path, const ParquetStreamOptions& options) {
  if (!parquet::is_dataset_spec(path) && input_format(path) != FileFormat::kParquet) {
    throw InvalidArgument(path + ": a streamed dataset reads Parquet row groups; this is not a .parquet file");
  }
  if (options.cached_row_groups < 1) throw InvalidArgument("cached_row_groups must be at least 1");
  return parquet::DatasetReader(path, options.num_threads, options.max_open_files);
}

}  // namespace

ParquetStreamDataset::ParquetStreamDataset(std::string path, ParquetStreamOptions options)
    : options_(std::move(options)), dataset_(open_stream_files(path, options_)) {
  cache_ = std::make_unique<detail::RowGroupCache<Block>>(
      options_.cached_row_groups, [this](int64_t row_group) { return read_block(row_group); });
  starts_.push_back(0);
  for (const auto& rg : dataset_.row_groups()) {
    int64_t rows = rg.num_rows;
    if (options_.limit > 0) rows = std::min(rows, std::max<int64_t>(0, options_.limit - starts_.back()));
    blocks_.push_back(rows);
    starts_.push_back(starts_.back() + rows);
  }
  size_ = starts_.back();
  DatasetColumns columns = layout_columns(options_.layout);
  columns.columns = options_.columns;
  read_options_.columns = dataset_column_names(dataset_.spec(), dataset_.schema(), columns);
  read_options_.num_threads = options_.num_threads;
  // The first row group now: a missing column or a wrong feature count is an error here, not in a worker.
  for (size_t rg = 0; rg < blocks_.size(); ++rg) {
    if (blocks_[rg] > 0) {
      cache_->get(static_cast<int64_t>(rg));
      break;
    }
  }
  const auto& paths = dataset_.files().paths;
  if (std::any_of(paths.begin(), paths.end(), [](const std::string& p) { return is_remote_path(p); })) {
    fetcher_ = std::make_unique<detail::ReadAheadFetcher>([this](int64_t index) { return group_of(index); },
                                                          [this](int64_t group, const std::vector<int64_t>&) { fetch(group); });
  }
}

ParquetStreamDataset::~ParquetStreamDataset() = default;

int64_t ParquetStreamDataset::row_group_reads() const { return cache_->reads(); }

int64_t ParquetStreamDataset::group_of(int64_t index) const {
  return static_cast<int64_t>(std::upper_bound(starts_.begin(), starts_.end(), index) - starts_.begin()) - 1;
}

void ParquetStreamDataset::will_read(const std::vector<int64_t>& order, const ReadAhead& ahead) const {
  if (fetcher_) fetcher_->start(order, ahead.blocks);
}

void ParquetStreamDataset::fetch(int64_t row_group) const {
  const parquet::DatasetReader::RowGroup& where = dataset_.row_groups()[static_cast<size_t>(row_group)];
  parquet::ReadOptions read = read_options_;
  read.row_groups = {where.row_group};
  // A row group that cannot be fetched ahead is read when its samples are, whose read reports what fails.
  try {
    dataset_.prefetch_file(where.file, read);
  } catch (const Error&) {
  }
}

std::shared_ptr<const ParquetStreamDataset::Block> ParquetStreamDataset::read_block(int64_t row_group) const {
  const parquet::DatasetReader::RowGroup& where = dataset_.row_groups()[static_cast<size_t>(row_group)];
  const std::string& path = dataset_.files().paths[where.file];
  parquet::ReadOptions read = read_options_;
  read.row_groups = {where.row_group};
  Table table = dataset_.read_file(where.file, read);
  const int64_t rows = blocks_[static_cast<size_t>(row_group)];
  if (table.num_rows < rows) {
    throw InvalidFile(path + ": row group " + std::to_string(where.row_group) + " holds " +
                      std::to_string(table.num_rows) + " rows, its footer says " + std::to_string(rows));
  }
  if (table.num_rows > rows) table = head(table, rows);  // cut by `limit`
  try {
    ImageTensors t = decode_image_table(table, options_.layout, options_.as_uint8);
    return std::make_shared<const Block>(Block{t.images.contiguous(), t.labels.contiguous()});
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(path + ": row group " + std::to_string(where.row_group) + ": " + e.what());
  }
}

Example ParquetStreamDataset::get_batch(const std::vector<int64_t>& indices) const {
  const auto n = static_cast<int64_t>(indices.size());
  const auto& layout = options_.layout;
  auto images = torch::empty({n, layout.channels, layout.height, layout.width},
                             options_.as_uint8 ? torch::kUInt8 : torch::kFloat32);
  auto labels = torch::empty({n}, torch::kInt64);
  const size_t row_bytes = static_cast<size_t>(layout.channels * layout.height * layout.width) * images.element_size();
  auto* image_out = static_cast<char*>(images.data_ptr());
  auto* label_out = labels.data_ptr<int64_t>();
  std::shared_ptr<const Block> current;
  int64_t current_group = -1;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t index = indices[static_cast<size_t>(i)];
    if (index < 0 || index >= size_) {
      throw InvalidArgument("index " + std::to_string(index) + " out of range for a dataset of " +
                            std::to_string(size_) + " samples");
    }
    if (fetcher_) fetcher_->read(index);
    const int64_t group = group_of(index);
    if (group != current_group) {  // a shuffled batch touches one or two row groups
      current = cache_->get(group);
      current_group = group;
    }
    const int64_t row = index - starts_[static_cast<size_t>(group)];
    std::memcpy(image_out + static_cast<size_t>(i) * row_bytes,
                static_cast<const char*>(current->images.data_ptr()) + static_cast<size_t>(row) * row_bytes, row_bytes);
    label_out[i] = current->labels.data_ptr<int64_t>()[row];
  }
  return {images, labels};
}

Example ParquetStreamDataset::get(int64_t index) const {
  Example one = get_batch({index});
  return {one.data[0], one.target[0]};
}

}  // namespace feedline
