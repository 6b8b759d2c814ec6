#include "cli/prepare_photos.h"

#include <fmt/core.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "cli/prepare_images.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/image_decode.h"
#include "io/image_encode.h"
#include "io/parallel.h"

extern "C" {
#include <libswscale/swscale.h>
}

namespace feedline::cli {
namespace {

using Clock = std::chrono::steady_clock;

const char* const kSkimageDir = "/usr/lib/python3/dist-packages/skimage/data";
const char* const kSklearnDir = "/usr/lib/python3/dist-packages/sklearn/datasets/images";
const char* const kPackages = "python3-skimage and python3-sklearn";

// A photo shorter than this on either side is refused: crops of it would be enlarged too much.
constexpr int kMinShortSide = 256;
// A crop covers this share of the largest box of its aspect ratio, or more. Its aspect ratio is from 1 to
// kMaxAspect, uniform in its logarithm: width to height (landscape) for kLandscapeShare of the images, as most of
// ImageNet's photos are, else height to width.
constexpr double kMinAreaShare = 0.35, kMaxAspect = 1.5, kLandscapeShare = 0.8;
// libswscale's bicubic filter, widened when shrinking, with its exact C arithmetic (the same bytes on every
// machine) and full chroma: RGB in, planar RGB out, no 4:2:x step in between.
constexpr int kSwsFlags = SWS_BICUBIC | SWS_ACCURATE_RND | SWS_BITEXACT | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP;

std::string padded(int64_t value, int width) { return fmt::format("{:0{}d}", value, width); }

int digits(int64_t value) { return static_cast<int>(std::to_string(std::max<int64_t>(value, 0)).size()); }

// The draws of one image: splitmix64 from the seed and the image's index, so that each image is made alike
// whichever thread makes it.
class ImageRandom {
 public:
  ImageRandom(uint64_t seed, int64_t index)
      : state_(mix(seed ^ mix(static_cast<uint64_t>(index) + 0x632BE59BD9B4E019ULL))) {}
  uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ULL;
    return mix(state_);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }

 private:
  static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

struct Crop {
  int left = 0, top = 0, width = 0, height = 0;  // in the photo
  int out_width = 0, out_height = 0;
};

Crop draw_crop(int width, int height, int long_side_asked, ImageRandom& rng) {
  Crop c;
  const double landscape = rng.uniform() < kLandscapeShare ? 1 : -1;
  const double aspect = std::exp(landscape * std::log(kMaxAspect) * rng.uniform());  // width / height
  const double scale = std::sqrt(kMinAreaShare + (1 - kMinAreaShare) * rng.uniform());
  const double full_width = std::min(static_cast<double>(width), height * aspect);
  c.width = std::clamp(static_cast<int>(std::lround(full_width * scale)), 1, width);
  c.height = std::clamp(static_cast<int>(std::lround(full_width / aspect * scale)), 1, height);
  c.left = rng.below(width - c.width + 1);
  c.top = rng.below(height - c.height + 1);
  const int spread = long_side_asked / 9;
  const int long_side = long_side_asked - spread + rng.below(2 * spread + 1);
  const bool wide = c.width >= c.height;
  const double ratio = wide ? static_cast<double>(c.height) / c.width : static_cast<double>(c.width) / c.height;
  const int short_side = std::max(1, static_cast<int>(std::lround(long_side * ratio)));
  c.out_width = wide ? long_side : short_side;
  c.out_height = wide ? short_side : long_side;
  return c;
}

// This thread's libswscale context, made again only when the sizes change.
struct SwsCache {
  SwsContext* context = nullptr;
  ~SwsCache() { sws_freeContext(context); }
};

int stride_for(int bytes) { return (bytes + 63) / 64 * 64; }

// The crop of `photo` (RGB) resampled to its output size, as RGB rows.
std::vector<uint8_t> crop_and_resample(const DecodedImage& photo, const Crop& c) {
  // The crop, copied into rows libswscale may read a little past (it does, after the last one).
  thread_local std::vector<uint8_t> box, planes;
  const int in_stride = stride_for(c.width * 3);
  box.resize(static_cast<size_t>(in_stride) * (c.height + 1));
  for (int y = 0; y < c.height; ++y) {
    std::memcpy(box.data() + static_cast<size_t>(y) * in_stride,
                photo.pixels.data() + (static_cast<size_t>(c.top + y) * photo.width + c.left) * 3,
                static_cast<size_t>(c.width) * 3);
  }
  thread_local SwsCache cache;
  cache.context = sws_getCachedContext(cache.context, c.width, c.height, AV_PIX_FMT_RGB24, c.out_width, c.out_height,
                                       AV_PIX_FMT_GBRP, kSwsFlags, nullptr, nullptr, nullptr);
  const std::string sizes = fmt::format("{} x {} pixels to {} x {}", c.width, c.height, c.out_width, c.out_height);
  if (cache.context == nullptr) throw Unsupported("libswscale cannot resample " + sizes);
  const int out_stride = stride_for(c.out_width);
  const size_t plane = static_cast<size_t>(out_stride) * (c.out_height + 1);
  planes.resize(plane * 3);
  uint8_t* const r = planes.data();
  uint8_t* const g = r + plane;
  uint8_t* const b = g + plane;
  const uint8_t* in[4] = {box.data(), nullptr, nullptr, nullptr};
  const int in_strides[4] = {in_stride, 0, 0, 0};
  uint8_t* out[4] = {g, b, r, nullptr};  // GBRP's planes are G, B, R
  const int out_strides[4] = {out_stride, out_stride, out_stride, 0};
  const int rows = sws_scale(cache.context, in, in_strides, 0, c.height, out, out_strides);
  if (rows != c.out_height) throw Unsupported(fmt::format("libswscale made {} rows resampling {}", rows, sizes));
  std::vector<uint8_t> rgb(static_cast<size_t>(c.out_width) * c.out_height * 3);
  uint8_t* to = rgb.data();
  for (int y = 0; y < c.out_height; ++y) {
    const size_t at = static_cast<size_t>(y) * out_stride;
    for (int x = 0; x < c.out_width; ++x) {
      *to++ = r[at + x];
      *to++ = g[at + x];
      *to++ = b[at + x];
    }
  }
  return rgb;
}

struct Photo {
  std::string name;
  DecodedImage image;
};

// The photos, decoded as RGB, in photo_sources()'s order.
std::vector<Photo> load_photos(const std::vector<std::string>& source_dirs) {
  std::vector<Photo> photos;
  for (const PhotoSource& source : photo_sources()) {
    const bool skimage = std::strcmp(source.package, "python3-skimage") == 0;
    const std::vector<std::string> dirs =
        source_dirs.empty() ? std::vector<std::string>{skimage ? kSkimageDir : kSklearnDir} : source_dirs;
    std::string path, looked;
    for (const std::string& dir : dirs) {
      const std::string candidate = dir + "/" + source.file;
      looked += (looked.empty() ? "" : ", ") + candidate;
      if (::access(candidate.c_str(), R_OK) == 0) {
        path = candidate;
        break;
      }
    }
    if (path.empty()) {
      throw IoError(
          fmt::format("the photo set is made from the photos Debian's {} ship, and {} is not there "
                      "(looked for {}; it comes with {}): install those packages, nothing is downloaded",
                      kPackages, source.file, looked, source.package));
    }
    DecodedImage image = decode_image(read_file(path), path);
    if (std::min(image.width, image.height) < kMinShortSide) {
      throw InvalidFile(fmt::format("{}: {} x {} pixels; the photo set needs at least {} on the shorter side", path,
                                    image.width, image.height, kMinShortSide));
    }
    photos.push_back({source.name, std::move(image)});
  }
  return photos;
}

}  // namespace

const std::vector<PhotoSource>& photo_sources() {
  // The colour photographs of the two packages at least kMinShortSide pixels on the shorter side. Left out: gray
  // ones (camera, moon, brick, grass, gravel, coins, cell, ...), drawings and synthetic images (color, phantom,
  // logo, bw_text, ...) and motorcycle_right (the other half of motorcycle_left's stereo pair).
  static const std::vector<PhotoSource> sources{
      {"astronaut", "astronaut.png", "python3-skimage"},
      {"chelsea", "chelsea.png", "python3-skimage"},
      {"china", "china.jpg", "python3-sklearn"},
      {"coffee", "coffee.png", "python3-skimage"},
      {"flower", "flower.jpg", "python3-sklearn"},
      {"hubble", "hubble_deep_field.jpg", "python3-skimage"},
      {"ihc", "ihc.png", "python3-skimage"},
      {"motorcycle", "motorcycle_left.png", "python3-skimage"},
      {"retina", "retina.jpg", "python3-skimage"},
      {"rocket", "rocket.jpg", "python3-skimage"},
  };
  return sources;
}

PhotoSetResult write_photo_set(const std::string& data_dir, const PhotoSetOptions& options,
                               const std::function<void(const std::string&)>& progress) {
  if (options.count < 1)
    throw InvalidArgument(fmt::format("the photo set needs 1 image or more, not {}", options.count));
  if (options.long_side < kPhotoMinLongSideAsked || options.long_side > kPhotoMaxLongSideAsked) {
    throw InvalidArgument(fmt::format("a photo set's long side of {} pixels is outside {} to {}", options.long_side,
                                      kPhotoMinLongSideAsked, kPhotoMaxLongSideAsked));
  }
  const auto start = Clock::now();
  const std::vector<Photo> photos = load_photos(options.source_dirs);
  PhotoSetResult result;
  for (const Photo& p : photos) result.classes.push_back(p.name);
  progress(fmt::format("{} photos read, one class each: {}", photos.size(), fmt::join(result.classes, ", ")));

  const int64_t n = options.count, classes = static_cast<int64_t>(photos.size());
  result.dir = data_dir + (options.long_side == kPhotoLongSide ? std::string("/photos")
                                                                 : "/photos-" + std::to_string(options.long_side));
  result.images = n;
  result.shards = (n + kPhotosPerShard - 1) / kPhotosPerShard;
  make_dirs(data_dir);
  StagedFolder staged(result.dir);
  const std::string jpeg_dir = staged.path() + "/jpeg/train", shard_dir = staged.path() + "/shards";
  for (const Photo& p : photos) make_dirs(jpeg_dir + "/" + p.name);
  make_dirs(shard_dir);
  const int key_width = std::max(6, digits(n - 1));
  JpegEncodeOptions jpeg;
  jpeg.quality = 90;
  jpeg.subsampling = JpegSubsampling::k420;
  std::atomic<int64_t> sum_width{0}, sum_height{0};
  std::vector<std::string> files;
  std::vector<int64_t> labels;
  for (int64_t s = 0; s < result.shards; ++s) {
    const int64_t begin = s * kPhotosPerShard, end = std::min(n, begin + kPhotosPerShard);
    files.assign(static_cast<size_t>(end - begin), std::string());
    labels.assign(static_cast<size_t>(end - begin), 0);
    parallel_for_blocks(begin, end, 8, options.threads, [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i) {
        const int64_t label = i % classes;
        const Photo& photo = photos[static_cast<size_t>(label)];
        ImageRandom rng(options.seed, i);
        const Crop crop = draw_crop(photo.image.width, photo.image.height, options.long_side, rng);
        const std::vector<uint8_t> rgb = crop_and_resample(photo.image, crop);
        std::string& file = files[static_cast<size_t>(i - begin)];
        file = encode_jpeg(PixelView{rgb.data(), crop.out_width, crop.out_height, 3}, jpeg);
        labels[static_cast<size_t>(i - begin)] = label;
        write_whole(jpeg_dir + "/" + photo.name + "/" + padded(i, key_width) + ".jpg", file);
        sum_width += crop.out_width;
        sum_height += crop.out_height;
      }
    });
    const std::string shard = shard_dir + "/train-" + padded(s, 6) + ".tar";
    write_tar_shard(shard, files.data(), labels.data(), end - begin, begin, key_width, "jpg");
    for (const std::string& f : files) result.jpeg_bytes += static_cast<int64_t>(f.size());
    result.shard_bytes += file_size(shard);
    progress(fmt::format("{}/{} images, {} of {} shards, {:.1f} MB of JPEG", end, n, s + 1, result.shards,
                         static_cast<double>(result.jpeg_bytes) / 1e6));
  }
  staged.commit();
  result.mean_width = static_cast<double>(sum_width.load()) / static_cast<double>(n);
  result.mean_height = static_cast<double>(sum_height.load()) / static_cast<double>(n);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace feedline::cli
