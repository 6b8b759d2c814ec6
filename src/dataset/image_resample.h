// The pixel-level pieces under image_ops and ImageTransform: a view of 8-bit pixels stored interleaved (height x
// width x channels, as decoded) or as planes (channels x height x width, as resampled), Pillow's resampling of
// a box of such a view into planes (resample.h), and the copy of a box (zeros outside the image, optionally
// mirrored).
// Thread-safety: every function is safe to call from many threads at once (scratch buffers are per thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "feedline/dataset/image_transforms.h"

namespace feedline::image_ops::detail {

// Bytes of slack a buffer may keep after its pixels (PixelView::slack), for readers that read a little past the
// end of a row; the resampler and the copies here read only the pixels.
constexpr size_t kReadSlack = 256;

struct PixelView {
  const uint8_t* data = nullptr;
  int height = 0, width = 0, channels = 0;  // channels: 1 or 3
  bool planar = false;                      // channels x height x width; else height x width x channels
  bool slack = false;                       // kReadSlack readable bytes follow the pixels
  int stride = 0;                           // bytes from a row to the next (of a plane); 0: no gap between rows
};

// Bytes from one row to the next, and from one plane to the next.
inline size_t row_bytes(const PixelView& v) {
  return v.stride > 0 ? static_cast<size_t>(v.stride)
                      : static_cast<size_t>(v.width) * static_cast<size_t>(v.planar ? 1 : v.channels);
}
inline size_t plane_bytes(const PixelView& v) { return row_bytes(v) * static_cast<size_t>(v.height); }

inline PixelView view_of(const DecodedImage& image) {
  return {image.pixels.data(), image.height, image.width, image.channels, false, false, 0};
}

// Makes `buffer` hold `bytes` bytes with kReadSlack more allocated after them.
inline uint8_t* sized_with_slack(std::vector<uint8_t>& buffer, size_t bytes) {
  if (buffer.capacity() < bytes + kReadSlack) buffer.reserve(bytes + kReadSlack);
  buffer.resize(bytes);
  return buffer.data();
}

inline bool box_inside(const CropBox& box, int height, int width) {
  return box.top >= 0 && box.left >= 0 && box.height > 0 && box.width > 0 && box.top + box.height <= height &&
         box.left + box.width <= width;
}

// Resamples `box` of `src` (wholly inside it) to out_height x out_width planes at `out` (channels x out_height x
// out_width bytes, nothing written outside them): Pillow's crop(box).resize((out_width, out_height)) with the
// filter of `interpolation`, the same bytes (resample.h), or a plain copy when the sizes are equal.
void resample(const PixelView& src, const CropBox& box, int out_height, int out_width, uint8_t* out,
              Interpolation interpolation = Interpolation::kBilinear);

// Copies `box` of `src` to planes at `out` (channels x box.height x box.width bytes), zeros where the box is
// outside the image; `mirror` reverses every row (a horizontal flip of the box).
void copy_box(const PixelView& src, const CropBox& box, bool mirror, uint8_t* out);

// Reduced decoding (ImageTransformOptions::reduced_decode). The smallest n of 1..8 at which `box` of the full
// picture, scaled to n/8, keeps at least least_shrink times out_height x out_width pixels (each side against its
// own); 8 when none does.
int reduced_scale_eighths(const CropBox& box, int out_height, int out_width, double least_shrink);

// `box` of the full picture in the picture scaled by scale_y down and scale_x across (scaled_height x scaled_width
// pixels): each edge scaled and rounded to the nearest pixel, kept inside, and at least a pixel wide.
CropBox scaled_box(const CropBox& box, double scale_y, double scale_x, int scaled_height, int scaled_width);

}  // namespace feedline::image_ops::detail
