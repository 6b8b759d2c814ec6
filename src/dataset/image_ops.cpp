// torchvision's functional forms (output sizes, crop boxes) and the resampling under them: libswscale's bilinear
// filter from an interleaved or planar box to planes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dataset/image_resample.h"
#include "feedline/dataset/image_transforms.h"
#include "feedline/io/error.h"

extern "C" {
#include <libswscale/swscale.h>
}

namespace feedline {
namespace image_ops {
namespace {

// Python's int(round(x)) for x = d / 2.0 with d an integer: halves to even.
int round_half(int d) {
  const int k = d >= 0 ? d / 2 : -((-d + 1) / 2);  // floor(d / 2)
  if (d % 2 == 0) return k;
  return k % 2 == 0 ? k : k + 1;
}

// One dimension of torchvision's center_crop: pad (size smaller than the crop) by (crop - size) // 2 before, else
// start at round((size - crop) / 2).
int center_offset(int size, int crop) { return crop > size ? -((crop - size) / 2) : round_half(size - crop); }

std::string box_text(const CropBox& box) {
  return "(top " + std::to_string(box.top) + ", left " + std::to_string(box.left) + ", height " +
         std::to_string(box.height) + ", width " + std::to_string(box.width) + ")";
}

void check_image(const DecodedImage& image, const char* what) {
  if (image.height <= 0 || image.width <= 0 || (image.channels != 1 && image.channels != 3) ||
      image.pixels.size() != static_cast<size_t>(image.height) * image.width * image.channels) {
    throw InvalidArgument(std::string(what) + ": an image of " + std::to_string(image.height) + " x " +
                          std::to_string(image.width) + " x " + std::to_string(image.channels) + " with " +
                          std::to_string(image.pixels.size()) + " bytes is not a decoded image");
  }
}

void check_resize(const CropBox& box, int out_height, int out_width, const char* what) {
  if (box.height <= 0 || box.width <= 0 || out_height <= 0 || out_width <= 0) {
    throw InvalidArgument(std::string(what) + ": an empty box " + box_text(box) + " or output size " +
                          std::to_string(out_height) + " x " + std::to_string(out_width));
  }
}

// The flags that make libswscale's bilinear filter Pillow's: full chroma (no 4:2:x step for RGB) and accurate
// rounding.
constexpr int kSwsFlags = SWS_BILINEAR | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP;

// This thread's libswscale contexts, by sizes and formats: the kSwsCacheSize used last. Random crops of one
// image size come in few box sizes when images are small (a 28 x 28 image has at most 784), and making a context
// costs as much as scaling a small image, so reuse pays there; large images rarely repeat a box and lose little.
constexpr size_t kSwsCacheSize = 64;

struct SwsKey {
  int in_width, in_height, out_width, out_height, in_format, out_format;
  bool operator==(const SwsKey& o) const {
    return in_width == o.in_width && in_height == o.in_height && out_width == o.out_width &&
           out_height == o.out_height && in_format == o.in_format && out_format == o.out_format;
  }
};

class SwsCache {
 public:
  ~SwsCache() {
    for (Entry& e : entries_) sws_freeContext(e.context);
  }
  // The context for `key`, made when none is kept (the least recently used one goes); nullptr when libswscale
  // makes none for these sizes.
  SwsContext* get(const SwsKey& key) {
    ++clock_;
    for (Entry& e : entries_) {
      if (e.key == key) {
        e.used = clock_;
        return e.context;
      }
    }
    SwsContext* context = sws_getContext(key.in_width, key.in_height, static_cast<AVPixelFormat>(key.in_format),
                                         key.out_width, key.out_height, static_cast<AVPixelFormat>(key.out_format),
                                         kSwsFlags, nullptr, nullptr, nullptr);
    if (context == nullptr) return nullptr;
    if (entries_.size() < kSwsCacheSize) {
      entries_.push_back({key, context, clock_});
    } else {
      Entry& oldest = *std::min_element(entries_.begin(), entries_.end(),
                                        [](const Entry& a, const Entry& b) { return a.used < b.used; });
      sws_freeContext(oldest.context);
      oldest = {key, context, clock_};
    }
    return context;
  }

 private:
  struct Entry {
    SwsKey key;
    SwsContext* context;
    uint64_t used;
  };
  std::vector<Entry> entries_;
  uint64_t clock_ = 0;
};

}  // namespace

std::pair<int, int> resize_size(int height, int width, const std::vector<int64_t>& size, int64_t max_size) {
  if (size.empty() || size.size() > 2) {
    throw InvalidArgument("Resize: size must have 1 or 2 numbers, not " + std::to_string(size.size()));
  }
  for (int64_t s : size) {
    if (s <= 0 || s > INT32_MAX) throw InvalidArgument("Resize: a size of " + std::to_string(s) + " is out of range");
  }
  if (height <= 0 || width <= 0) {
    throw InvalidArgument("Resize: an image of " + std::to_string(height) + " x " + std::to_string(width));
  }
  if (size.size() == 2) {
    if (max_size > 0) throw InvalidArgument("Resize: max_size is only supported for a single size");
    return {static_cast<int>(size[0]), static_cast<int>(size[1])};
  }
  const bool wide = width > height;  // torchvision: short, long = (w, h) if w <= h else (h, w)
  const int64_t short_side = wide ? height : width, long_side = wide ? width : height;
  int64_t new_short = size[0];
  int64_t new_long = static_cast<int64_t>(static_cast<double>(new_short * long_side) / static_cast<double>(short_side));
  if (max_size > 0) {
    if (max_size <= size[0]) {
      throw InvalidArgument("Resize: max_size = " + std::to_string(max_size) +
                            " must be strictly greater than the requested size for the smaller edge size = " +
                            std::to_string(size[0]));
    }
    if (new_long > max_size) {
      new_short = static_cast<int64_t>(static_cast<double>(max_size * new_short) / static_cast<double>(new_long));
      new_long = max_size;
    }
  }
  if (new_long > INT32_MAX) throw InvalidArgument("Resize: an output side of " + std::to_string(new_long));
  return wide ? std::pair<int, int>{static_cast<int>(new_short), static_cast<int>(new_long)}
              : std::pair<int, int>{static_cast<int>(new_long), static_cast<int>(new_short)};
}

CropBox center_crop_box(int height, int width, int out_height, int out_width) {
  return {center_offset(height, out_height), center_offset(width, out_width), out_height, out_width};
}

CropBox random_resized_crop_box(int height, int width, double scale_min, double scale_max, double ratio_min,
                                double ratio_max, SampleRng& rng) {
  const double area = static_cast<double>(height) * width;
  const double log_min = std::log(ratio_min), log_max = std::log(ratio_max);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target_area = area * (scale_min + (scale_max - scale_min) * rng.uniform());
    const double aspect_ratio = std::exp(log_min + (log_max - log_min) * rng.uniform());
    // Python's round: halves to even, as std::nearbyint in the default rounding mode.
    const double w = std::nearbyint(std::sqrt(target_area * aspect_ratio));
    const double h = std::nearbyint(std::sqrt(target_area / aspect_ratio));
    if (w > 0 && w <= width && h > 0 && h <= height) {
      CropBox box;
      box.height = static_cast<int>(h);
      box.width = static_cast<int>(w);
      box.top = static_cast<int>(rng.below(static_cast<uint64_t>(height - box.height + 1)));
      box.left = static_cast<int>(rng.below(static_cast<uint64_t>(width - box.width + 1)));
      return box;
    }
  }
  // The fallback: a centre crop of the ratio clamped to the range.
  const double in_ratio = static_cast<double>(width) / height;
  CropBox box{0, 0, height, width};
  if (in_ratio < std::min(ratio_min, ratio_max)) {
    box.height = static_cast<int>(std::nearbyint(width / std::min(ratio_min, ratio_max)));
  } else if (in_ratio > std::max(ratio_min, ratio_max)) {
    box.width = static_cast<int>(std::nearbyint(height * std::max(ratio_min, ratio_max)));
  }
  box.top = (height - box.height) / 2;
  box.left = (width - box.width) / 2;
  return box;
}

namespace detail {
namespace {

// libswscale writes up to 12 bytes past the end of a row narrower than 6 pixels: narrower outputs than this go
// through scratch rows with room after them.
constexpr int kNarrowWidth = 16;

// One sws_scale call: `box` of `src` to planes R, G, B (or the gray one) at `to`, `to_stride` bytes a row. False
// when libswscale makes no context for the sizes.
bool scale_once(const PixelView& src, const CropBox& box, int out_height, int out_width, uint8_t* const to[3],
                int to_stride) {
  const bool gray = src.channels == 1;
  const AVPixelFormat in_format = gray ? AV_PIX_FMT_GRAY8 : src.planar ? AV_PIX_FMT_GBRP : AV_PIX_FMT_RGB24;
  const AVPixelFormat out_format = gray ? AV_PIX_FMT_GRAY8 : AV_PIX_FMT_GBRP;
  thread_local SwsCache cache;
  SwsContext* const context = cache.get({box.width, box.height, out_width, out_height, in_format, out_format});
  if (context == nullptr) return false;
  const size_t row = row_bytes(src), plane = plane_bytes(src);
  const uint8_t* in[4] = {nullptr, nullptr, nullptr, nullptr};
  int in_stride[4] = {0, 0, 0, 0};
  if (gray || src.planar) {
    const uint8_t* at = src.data + static_cast<size_t>(box.top) * row + box.left;
    // GBRP's planes are G, B, R; ours R, G, B.
    in[0] = gray ? at : at + plane;
    in_stride[0] = static_cast<int>(row);
    if (!gray) {
      in[1] = at + 2 * plane;
      in[2] = at;
      in_stride[1] = in_stride[2] = static_cast<int>(row);
    }
  } else {
    in[0] = src.data + static_cast<size_t>(box.top) * row + static_cast<size_t>(box.left) * 3;
    in_stride[0] = static_cast<int>(row);
  }
  uint8_t* out[4] = {gray ? to[0] : to[1], gray ? nullptr : to[2], gray ? nullptr : to[0], nullptr};
  int out_stride[4] = {to_stride, gray ? 0 : to_stride, gray ? 0 : to_stride, 0};
  const int rows = sws_scale(context, in, in_stride, 0, box.height, out, out_stride);
  if (rows != out_height) {
    throw Unsupported("libswscale made " + std::to_string(rows) + " rows of " + std::to_string(out_height) +
                      " resampling " + std::to_string(box.height) + " x " + std::to_string(box.width) + " pixels");
  }
  return true;
}

// Planes of height x width with `stride` bytes a row (room after each row), in `buffer`, with read slack.
PixelView scratch_planes(std::vector<uint8_t>& buffer, int height, int width, int channels, uint8_t* planes[3]) {
  const int stride = (width + kNarrowWidth + 15) / 16 * 16;
  const size_t plane = static_cast<size_t>(stride) * height;
  uint8_t* data = sized_with_slack(buffer, plane * channels);
  for (int c = 0; c < 3; ++c) planes[c] = c < channels ? data + c * plane : nullptr;
  return PixelView{data, height, width, channels, true, true, stride};
}

}  // namespace

int reduced_scale_denom(const CropBox& box, int out_height, int out_width) {
  for (const int64_t denom : {8, 4, 2}) {
    if (box.height >= denom * out_height && box.width >= denom * out_width) return static_cast<int>(denom);
  }
  return 1;
}

CropBox scaled_box(const CropBox& box, int denom, int scaled_height, int scaled_width) {
  // [first, end) of a side: the edges rounded, clamped to [0, size], and end > first.
  const auto side = [denom](int start, int length, int size, int* first, int* count) {
    const auto edge = [&](int64_t v) {
      return static_cast<int>(std::clamp<int64_t>(std::llround(static_cast<double>(v) / denom), 0, size));
    };
    int a = edge(start), b = edge(static_cast<int64_t>(start) + length);
    if (b <= a) {
      b = std::min(a + 1, size);
      a = b - 1;
    }
    *first = a;
    *count = b - a;
  };
  CropBox out;
  side(box.top, box.height, scaled_height, &out.top, &out.height);
  side(box.left, box.width, scaled_width, &out.left, &out.width);
  return out;
}

void resample(const PixelView& src, const CropBox& box, int out_height, int out_width, uint8_t* out) {
  if (box.height == out_height && box.width == out_width) {
    copy_box(src, box, false, out);
    return;
  }
  const int channels = src.channels;
  PixelView from = src;
  CropBox from_box = box;
  thread_local std::vector<uint8_t> source_copy, middle, narrow;
  if (!src.slack && box.top + box.height == src.height) {
    // libswscale may read past the box's last row: a copy of the box, in the same layout, with slack after it.
    if (src.planar || channels == 1) {
      copy_box(src, box, false, sized_with_slack(source_copy, static_cast<size_t>(box.height) * box.width * channels));
    } else {
      const size_t row = static_cast<size_t>(box.width) * channels;
      uint8_t* to = sized_with_slack(source_copy, row * box.height);
      for (int y = 0; y < box.height; ++y) {
        std::memcpy(to + y * row, src.data + (box.top + y) * row_bytes(src) + static_cast<size_t>(box.left) * channels,
                    row);
      }
    }
    from = PixelView{source_copy.data(), box.height, box.width, channels, src.planar, true, 0};
    from_box = CropBox{0, 0, box.height, box.width};
  }
  const size_t plane = static_cast<size_t>(out_height) * out_width;
  if (out_width >= kNarrowWidth) {
    uint8_t* const direct[3] = {out, out + plane, out + 2 * plane};
    if (scale_once(from, from_box, out_height, out_width, direct, out_width)) return;
  }
  uint8_t* planes[3];
  const PixelView result = scratch_planes(narrow, out_height, out_width, channels, planes);
  if (!scale_once(from, from_box, out_height, out_width, planes, result.stride)) {
    // libswscale refuses some large shrinks one way with an enlargement the other: the widths, then the heights.
    uint8_t* middle_planes[3];
    const PixelView between = scratch_planes(middle, from_box.height, out_width, channels, middle_planes);
    if (!scale_once(from, from_box, from_box.height, out_width, middle_planes, between.stride) ||
        !scale_once(between, CropBox{0, 0, from_box.height, out_width}, out_height, out_width, planes,
                    result.stride)) {
      throw Unsupported("libswscale cannot resample " + std::to_string(box.height) + " x " +
                        std::to_string(box.width) + " pixels to " + std::to_string(out_height) + " x " +
                        std::to_string(out_width));
    }
  }
  copy_box(result, CropBox{0, 0, out_height, out_width}, false, out);
}

void copy_box(const PixelView& src, const CropBox& box, bool mirror, uint8_t* out) {
  const int channels = src.channels;
  const size_t plane = static_cast<size_t>(box.height) * box.width;
  const size_t row_size = row_bytes(src), src_plane = plane_bytes(src);
  if (!box_inside(box, src.height, src.width)) std::memset(out, 0, plane * channels);
  // The columns of the box inside the image: [x0, x1) of the box.
  const int x0 = std::max(0, -box.left), x1 = std::min(box.width, src.width - box.left);
  const int y0 = std::max(0, -box.top), y1 = std::min(box.height, src.height - box.top);
  if (x0 >= x1 || y0 >= y1) return;
  for (int c = 0; c < channels; ++c) {
    uint8_t* to_plane = out + c * plane;
    for (int y = y0; y < y1; ++y) {
      uint8_t* to = to_plane + static_cast<size_t>(y) * box.width;
      const size_t row = static_cast<size_t>(box.top + y) * row_size;
      const size_t column = static_cast<size_t>(box.left + x0);  // the image's column of the box's x0
      if (src.planar || channels == 1) {
        const uint8_t* from = src.data + c * src_plane + row + column;
        if (!mirror) {
          std::memcpy(to + x0, from, static_cast<size_t>(x1 - x0));
        } else {
          for (int x = x0; x < x1; ++x) to[box.width - 1 - x] = from[x - x0];
        }
      } else {
        const uint8_t* from = src.data + row + column * channels + c;
        if (!mirror) {
          for (int x = x0; x < x1; ++x) to[x] = from[static_cast<ptrdiff_t>(x - x0) * channels];
        } else {
          for (int x = x0; x < x1; ++x) to[box.width - 1 - x] = from[static_cast<ptrdiff_t>(x - x0) * channels];
        }
      }
    }
  }
}

}  // namespace detail

void resized_crop_planes(const DecodedImage& image, const CropBox& box, int out_height, int out_width,
                         uint8_t* out) {
  check_image(image, "resized_crop");
  check_resize(box, out_height, out_width, "resized_crop");
  const detail::PixelView src = detail::view_of(image);
  if (detail::box_inside(box, image.height, image.width)) {
    detail::resample(src, box, out_height, out_width, out);
    return;
  }
  // A box reaching outside: the padded crop as planes, then resampled whole.
  std::vector<uint8_t> padded;
  detail::copy_box(src, box, false,
                   detail::sized_with_slack(padded, static_cast<size_t>(box.height) * box.width * image.channels));
  const detail::PixelView crop{padded.data(), box.height, box.width, image.channels, true, true, 0};
  detail::resample(crop, CropBox{0, 0, box.height, box.width}, out_height, out_width, out);
}

DecodedImage resized_crop(const DecodedImage& image, const CropBox& box, int out_height, int out_width) {
  check_image(image, "resized_crop");
  check_resize(box, out_height, out_width, "resized_crop");
  const size_t plane = static_cast<size_t>(out_height) * out_width;
  std::vector<uint8_t> planes(plane * image.channels);
  resized_crop_planes(image, box, out_height, out_width, planes.data());
  DecodedImage result;
  result.height = out_height;
  result.width = out_width;
  result.channels = image.channels;
  result.pixels.resize(planes.size());
  for (size_t i = 0; i < plane; ++i) {
    for (int c = 0; c < image.channels; ++c) result.pixels[i * image.channels + c] = planes[c * plane + i];
  }
  return result;
}

void hflip(DecodedImage& image) {
  const int channels = image.channels;
  if (image.pixels.size() != static_cast<size_t>(image.height) * image.width * channels) {
    throw InvalidArgument("hflip: an image of " + std::to_string(image.height) + " x " + std::to_string(image.width) +
                          " x " + std::to_string(channels) + " with " + std::to_string(image.pixels.size()) +
                          " bytes");
  }
  for (int y = 0; y < image.height; ++y) {
    uint8_t* row = image.pixels.data() + static_cast<size_t>(y) * image.width * channels;
    for (int a = 0, b = image.width - 1; a < b; ++a, --b) {
      for (int c = 0; c < channels; ++c) std::swap(row[a * channels + c], row[b * channels + c]);
    }
  }
}

}  // namespace image_ops
}  // namespace feedline
