// Images as users store them, as one SampleSource whatever the layout:
//   ParquetImageSource - a Parquet file or dataset of files (the specs parquet::DatasetReader takes) whose image
//                        column is Hugging Face's struct {bytes, path} or plain binary, beside an integer label;
//   open_image_source  - a class-folder tree, a Parquet file or dataset, or WebDataset tar shards, told apart by
//                        the spec;
//   make_image_dataset - a source, decoding and transforms (feedline/dataset/image_transforms.h) as a Dataset
//                        the loader serves.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "feedline/dataset/encoded.h"
#include "feedline/dataset/image_transforms.h"
#include "feedline/io/parquet_dataset.h"

namespace feedline {

struct ParquetImageOptions {
  std::string image_column = "image";  // a struct with a binary `bytes` field (Hugging Face's Image), or binary
  std::string label_column = "label";  // integer class numbers, 0 or more
  // Row groups whose images are kept read at once (the least recently used goes first): a shuffled epoch visits
  // one row group at a time (see shuffle_blocks()), and a batch may straddle two, plus about one per worker.
  int64_t cached_row_groups = 4;
  size_t max_open_files = parquet::kDefaultMaxOpenFiles;
};

// The rows of a Parquet file or dataset as encoded images. The labels are read at construction, the images a row
// group at a time as samples of it are asked for (only the image column's bytes are kept, not decoded). Class
// names come from the `huggingface` key of the file's metadata (the label feature's ClassLabel names) when it has
// them. Each row group is a shuffle block, so a shuffled epoch reads each once.
// Errors name the file and, where one is at fault, the row and column: InvalidArgument for a missing or mistyped
// image or label column, InvalidFile for a null or negative label or a null image.
// Remote files (s3://, gs://, http(s)://) are read as local ones; will_read() fetches the image column of the row
// groups the loader reads next.
// Thread-safe: the row-group cache is locked; workers wanting one row group wait for one read of it.
class ParquetImageSource : public SampleSource {
 public:
  ParquetImageSource(std::string spec, ParquetImageOptions options = {});
  ~ParquetImageSource() override;

  int64_t size() const override;
  // The image's bytes, the label, and "<file> row <row in the file>" as the name.
  EncodedSample get(int64_t index) const override;
  std::vector<int64_t> labels() const override;
  std::vector<std::string> class_names() const override;
  std::vector<int64_t> shuffle_blocks() const override;
  // Remote files: fetches `ahead.blocks` row groups' images in the order's order beyond those read.
  void will_read(const std::vector<int64_t>& order, const ReadAhead& ahead) const override;

  // Row groups read so far (a re-read after eviction counts again).
  int64_t row_group_reads() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

enum class ImageSourceKind { kFolder, kParquet, kTarShards };

// "folder", "parquet" or "tar shards".
const char* image_source_kind_name(ImageSourceKind kind);

// Which layout `spec` names:
//   - tar shards: a path ending in .tar, a brace pattern (train-{000000..000099}.tar), a wildcard pattern
//     (train-*.tar, its matches sorted), or a comma-separated list of them;
//   - Parquet: a .parquet file, a pattern or list of them, or a folder holding .parquet files and no class
//     folders of images;
//   - a folder of class folders otherwise.
// IoError naming the spec when it names nothing that exists.
// URLs (feedline/io/remote.h) are told apart the same way: a wildcard pattern of s3:// or gs:// shards and a remote
// folder by one listing, an object named neither .tar nor .parquet by one HEAD request
// (an object: a Parquet file; none: a folder); a URL is not checked for existence beyond that, its reader says when
// it is missing. A wildcard pattern of shards that matches no object is IoError naming it, as a local one; over
// http(s) (no listing), InvalidArgument saying so.
ImageSourceKind image_source_kind(const std::string& spec);

struct ImageSourceOptions {
  ParquetImageOptions parquet;  // image and label columns, for Parquet
};

// The source `spec` names (image_source_kind): ImageFolderSource, ParquetImageSource or TarShardSource.
std::shared_ptr<const SampleSource> open_image_source(const std::string& spec, const ImageSourceOptions& options = {});

// `source` decoded and transformed by ImageTransform(steps, transform_options), as an EncodedDataset: what the
// loader serves. InvalidArgument when the steps do not give one output size (see ImageTransform::layout()).
std::shared_ptr<EncodedDataset> make_image_dataset(std::shared_ptr<const SampleSource> source,
                                                   std::vector<ImageStep> steps,
                                                   ImageTransformOptions transform_options = {},
                                                   OnError on_error = OnError::kRaise);

}  // namespace feedline
