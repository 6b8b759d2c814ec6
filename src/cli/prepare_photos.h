// `feedline prepare --photos N`: a benchmark set of ImageNet-like JPEGs made from the colour photos Debian's
// python3-skimage and python3-sklearn ship, one class a photo, under <data-dir>/photos (<data-dir>/photos-<size>
// for a long side other than kPhotoLongSide):
//   jpeg/train/<class>/<index>.jpg   class folders (torchvision's ImageFolder), the classes the photos' names
//   shards/train-NNNNNN.tar          WebDataset: <index>.jpg and <index>.cls (the class's place in sorted order),
//                                    kPhotosPerShard samples a shard, the same bytes as the class folders
// Image i is of class i % classes: a random crop of its photo (a share of its area and an aspect ratio drawn
// from the seed and i alone; four in five landscape), resampled with libswscale's bicubic filter so that its longer
// side is within a ninth of the long side asked for (400 to 500 pixels for 450, as most of ImageNet's training
// images after the usual downscaling; about 900 to 1100 for 1000, the size of its originals), and encoded as JPEG
// quality 90, 4:2:0. The same count and seed give the same bytes, whatever the threads. The whole folder is written
// beside its target and renamed into place when whole. No LibTorch: the resampling calls libswscale here, the
// command-line layer, rather than the dataset layer's image transforms. Main thread only (it runs its own threads).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace feedline::cli {

constexpr int64_t kPhotosPerShard = 1000;
constexpr int kPhotoLongSide = 450;                        // the default size of the longer side
constexpr int kPhotoMinLongSideAsked = 64, kPhotoMaxLongSideAsked = 4096;  // what a set may ask for

struct PhotoSetOptions {
  int64_t count = 5000;
  uint64_t seed = 0;
  // Folders searched for the photos, in order, in place of the packages' folders (tests); empty: the packages'.
  std::vector<std::string> source_dirs;
  int threads = 1;
  int long_side = kPhotoLongSide;  // each image's longer side is within long_side / 9 of this
};

struct PhotoSetResult {
  std::string dir;                   // <data-dir>/photos or <data-dir>/photos-<long side>
  std::vector<std::string> classes;  // the class folders' names, sorted (the labels' order)
  int64_t images = 0, shards = 0;
  int64_t jpeg_bytes = 0, shard_bytes = 0;
  double mean_width = 0, mean_height = 0;
  double seconds = 0;
};

// The photos the set is made from: (class name, file name, Debian package), sorted by class name.
struct PhotoSource {
  const char* name;
  const char* file;
  const char* package;
};
const std::vector<PhotoSource>& photo_sources();

// Writes the set under `data_dir` (see PhotoSetResult::dir). `progress` gets a line as each shard's worth is
// written. Throws IoError naming the missing photo, where it was looked for and the packages to install when a
// photo is not found (nothing is downloaded); InvalidFile for a photo too small or unreadable; InvalidArgument for a
// count below 1 or a long side outside [kPhotoMinLongSideAsked, kPhotoMaxLongSideAsked]; IoError when a file cannot
// be written (leaving the previous set, or none).
PhotoSetResult write_photo_set(const std::string& data_dir, const PhotoSetOptions& options,
                               const std::function<void(const std::string&)>& progress);

}  // namespace feedline::cli
