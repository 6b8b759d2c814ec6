// `feedline prepare --images`: one split of an IDX dataset written as image files in the four layouts that
// `feedline train --data` and `inspect` read, under <dataset>/images:
//   png/<split>/<class>/<index>.png, jpeg/<split>/<class>/<index>.jpg   class folders (torchvision's ImageFolder)
//   parquet/<split>.parquet                                             Hugging Face's layout: struct image{bytes,
//                                                                       path}, int64 label, `huggingface` metadata
//   shards/<split>-NNNNNN.tar                                           WebDataset: <key>.png and <key>.cls
// Class folders are the class numbers, zero-padded to one width so that sorted names keep the numbers' order
// (ImageFolder's class index is then the label); files are the sample's index in the split, zero-padded. Each
// layout is written beside its target and renamed into place when whole. No LibTorch. Main thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "feedline/io/idx.h"
#include "feedline/io/image_encode.h"

namespace feedline::cli {

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
