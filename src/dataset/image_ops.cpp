// torchvision's functional forms (output sizes, crop boxes) and the resampling under them: Pillow's resize
// (resample.h) from an interleaved or planar box to planes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dataset/image_resample.h"
#include "dataset/resample.h"
#include "feedline/dataset/image_transforms.h"
#include "feedline/io/error.h"

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

int reduced_scale_eighths(const CropBox& box, int out_height, int out_width, double least_shrink) {
  for (int n = 1; n < 8; ++n) {
    if (box.height * n >= 8 * least_shrink * out_height && box.width * n >= 8 * least_shrink * out_width) return n;
  }
  return 8;
}

CropBox scaled_box(const CropBox& box, double scale_y, double scale_x, int scaled_height, int scaled_width) {
  // [first, end) of a side: the edges rounded, clamped to [0, size], and end > first.
  const auto side = [](int start, int length, double scale, int size, int* first, int* count) {
    const auto edge = [&](int64_t v) {
      return static_cast<int>(std::clamp<int64_t>(std::llround(static_cast<double>(v) * scale), 0, size));
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
  side(box.top, box.height, scale_y, scaled_height, &out.top, &out.height);
  side(box.left, box.width, scale_x, scaled_width, &out.left, &out.width);
  return out;
}

void resample(const PixelView& src, const CropBox& box, int out_height, int out_width, uint8_t* out,
              Interpolation interpolation) {
  resize_box(src, box, out_height, out_width, interpolation, out);
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
                         uint8_t* out, Interpolation interpolation) {
  check_image(image, "resized_crop");
  check_resize(box, out_height, out_width, "resized_crop");
  const detail::PixelView src = detail::view_of(image);
  if (detail::box_inside(box, image.height, image.width)) {
    detail::resample(src, box, out_height, out_width, out, interpolation);
    return;
  }
  // A box reaching outside: the padded crop as planes, then resampled whole.
  std::vector<uint8_t> padded;
  detail::copy_box(src, box, false,
                   detail::sized_with_slack(padded, static_cast<size_t>(box.height) * box.width * image.channels));
  const detail::PixelView crop{padded.data(), box.height, box.width, image.channels, true, true, 0};
  detail::resample(crop, CropBox{0, 0, box.height, box.width}, out_height, out_width, out, interpolation);
}

DecodedImage resized_crop(const DecodedImage& image, const CropBox& box, int out_height, int out_width,
                          Interpolation interpolation) {
  check_image(image, "resized_crop");
  check_resize(box, out_height, out_width, "resized_crop");
  const size_t plane = static_cast<size_t>(out_height) * out_width;
  std::vector<uint8_t> planes(plane * image.channels);
  resized_crop_planes(image, box, out_height, out_width, planes.data(), interpolation);
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
