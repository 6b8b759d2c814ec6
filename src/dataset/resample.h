// Pillow's convolution resampling of 8-bit pictures (Image.resize with BILINEAR or BICUBIC, which torchvision's
// Resize and RandomResizedCrop run on PIL images), on planes: separable, the widths first and then the heights;
// the filter widened by the shrink factor (antialiased); its weights normalised, then made fixed point with 22
// fractional bits and summed in 32-bit integers from a half; each pass rounds and clamps to 0..255; the first pass
// only over the rows the second reads. The same arithmetic as Pillow's, so the same bytes.
// One portable scalar code and, on x86-64 CPUs with AVX2 (chosen at run time), a vector code with the same values.
// Thread-safety: every function is safe to call from many threads at once (scratch buffers are per thread).
#pragma once

#include <cstdint>
#include <vector>

#include "dataset/image_resample.h"
#include "feedline/dataset/image_transforms.h"

namespace feedline::image_ops::detail {

// One pass's filter for in_size pixels to out_size: output i is the sum over j < count[i] of input first[i] + j
// times weights[i * taps + j] (22 fractional bits), plus a half, shifted right 22 bits and clamped to 0..255.
struct ResampleTaps {
  int taps = 0;  // the most weights any output has (Pillow's ksize)
  std::vector<int> first, count;
  std::vector<int32_t> weights;
};

// Pillow's coefficients for resizing in_size pixels to out_size (precompute_coeffs and normalize_coeffs_8bpc).
ResampleTaps resample_taps(int in_size, int out_size, Interpolation filter);

// Which code runs: the fastest this CPU has, or the portable scalar code (the reference the other is tested
// against).
enum class ResampleCode { kBest, kScalar };

// Whether kBest is a vector code on this CPU (else it is the scalar code).
bool resample_vectorized();

// Pillow's crop(box).resize((out_width, out_height), filter) of `src` to planes at `out` (channels x out_height x
// out_width bytes): `box` wholly inside the image; a pass whose size is unchanged is skipped, as Pillow skips it
// (the copy when both are). Nothing is read outside the box's pixels.
void resize_box(const PixelView& src, const CropBox& box, int out_height, int out_width, Interpolation filter,
                uint8_t* out, ResampleCode code = ResampleCode::kBest);

// The passes, one channel at a time. `in` points at the channel's first pixel of the first row read, the next
// pixel `step` bytes on (1 in planes, the channel count when interleaved), the next row `in_row` bytes on;
// `out` receives rows of taps.count.size() (horizontal) or `width` (vertical) bytes, `out_row` bytes apart.
void horizontal_scalar(const uint8_t* in, size_t in_row, int step, int rows, const ResampleTaps& taps, uint8_t* out,
                       size_t out_row);
void vertical_scalar(const uint8_t* in, size_t in_row, int width, const ResampleTaps& taps, uint8_t* out,
                     size_t out_row);
#if defined(__x86_64__)
void horizontal_avx2(const uint8_t* in, size_t in_row, int step, int rows, const ResampleTaps& taps, uint8_t* out,
                     size_t out_row);
void vertical_avx2(const uint8_t* in, size_t in_row, int width, const ResampleTaps& taps, uint8_t* out,
                   size_t out_row);
#endif

}  // namespace feedline::image_ops::detail
