// `feedline prepare --images`: one split of an IDX dataset written as image files in the four layouts that
// `feedline train --data` and `inspect` read, under <dataset>/images:
//   png/<split>/<class>/<index>.png, jpeg/<split>/<class>/<index>.jpg   class folders (torchvision's ImageFolder)
//   parquet/<split>.parquet                                             Hugging Face's layout: struct image{bytes,
//                                                                       path}, int64 label, `huggingface` metadata
//   shards/<split>-NNNNNN.tar                                           WebDataset: <key>.png and <key>.cls
// Class folders are the class numbers, zero-padded to one width so that sorted names keep the numbers' order
// (ImageFolder's class index is then the label); files are the sample's index in the split, zero-padded. Each
// layout is written beside its target and renamed into place when whole. No LibTorch. Main thread only, but for
// make_dirs, write_whole and write_tar_shard (prepare --photos writes with them too), which any thread may call.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "feedline/io/idx.h"
#include "io/image_encode.h"

namespace feedline::cli {

// A folder and the folders above it; IoError naming it when one cannot be made.
void make_dirs(const std::string& path);

// A whole file of these bytes; IoError naming it when it cannot be written.
void write_whole(const std::string& path, const std::string& bytes);

// A folder made beside its target (<target>.tmp-<pid>) and put in its place when whole: the old target, if any, is
// moved aside, the new one renamed in and the old one removed. Destroyed before commit(), it removes what it made.
class StagedFolder {
 public:
  explicit StagedFolder(std::string target);
  ~StagedFolder();
  StagedFolder(const StagedFolder&) = delete;
  StagedFolder& operator=(const StagedFolder&) = delete;

  const std::string& path() const { return staging_; }
  void commit();

 private:
  std::string target_, staging_;
  bool committed_ = false;
};

// One WebDataset shard at `path`, a plain ustar file with no dates (the same bytes on every run): for each of the
// `count` samples, <key>.<ext> holding files[i] and <key>.cls holding labels[i] in decimal, the key being
// first_key + i zero-padded to key_width digits. IoError naming the file when it cannot be written.
void write_tar_shard(const std::string& path, const std::string* files, const int64_t* labels, int64_t count,
                     int64_t first_key, int key_width, const std::string& ext);

struct ImageLayoutOptions {
  JpegEncodeOptions jpeg;               // quality 90, 4:2:0 (the IDX images are gray: one component)
  int64_t samples_per_shard = 10000;
  std::vector<std::string> class_names;  // the `huggingface` metadata's ClassLabel names; empty: the numbers
  std::string codec = "zstd";           // of the Parquet file
  int threads = 1;
};

// What one layout of one split took.
struct ImageLayoutResult {
  std::string layout;  // "png", "jpeg", "parquet", "shards"
  std::string path;    // the folder, file or shard pattern written
  int64_t files = 0, bytes = 0;
  double seconds = 0;  // writing, encoding included
};

// Writes `split` (named `split_name`: "train", "test") in every layout under `images_dir`. `progress` gets a line
// as each layout starts. Throws IoError when a file cannot be written (leaving that layout's previous files, or
// none), InvalidArgument for an empty split.
std::vector<ImageLayoutResult> write_image_layouts(const ImageSplit& split, const std::string& images_dir,
                                                   const std::string& split_name, const ImageLayoutOptions& options,
                                                   const std::function<void(const std::string&)>& progress);

}  // namespace feedline::cli
