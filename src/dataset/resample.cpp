// Pillow's resize on planes: the coefficients, the portable scalar passes and the driver that runs the passes
// (the vector passes are in resample_avx2.cpp).
#include "dataset/resample.h"

#include <algorithm>
#include <cmath>
#include <cstring>

// Pillow's coefficients come from products each rounded before the sum that follows them (its x86-64 builds have
// no fused multiply-add): the same here, on any target.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace feedline::image_ops::detail {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;
constexpr int32_t kHalf = 1 << (kPrecisionBits - 1);

// Pillow's filters, with their supports: the triangle (bilinear) and Keys' cubic with a = -0.5 (bicubic).
double bilinear_filter(double x) {
  if (x < 0.0) x = -x;
  if (x < 1.0) return 1.0 - x;
  return 0.0;
}

double bicubic_filter(double x) {
  constexpr double a = -0.5;
  if (x < 0.0) x = -x;
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

inline uint8_t clip8(int32_t sum) {
  const int32_t v = sum >> kPrecisionBits;
  return static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
}

bool have_avx2() {
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
#else
  return false;
#endif
}

}  // namespace

ResampleTaps resample_taps(int in_size, int out_size, Interpolation filter) {
  double (*const f)(double) = filter == Interpolation::kBicubic ? bicubic_filter : bilinear_filter;
  const double filter_support = filter == Interpolation::kBicubic ? 2.0 : 1.0;
  // Pillow's box edges are floats (in1 - in0 = in_size, exact below 2^24) and its scale a double.
  const double scale = static_cast<double>(static_cast<float>(in_size)) / out_size;
  const double filterscale = scale < 1.0 ? 1.0 : scale;
  const double support = filter_support * filterscale;
  ResampleTaps t;
  t.taps = static_cast<int>(std::ceil(support)) * 2 + 1;
  t.first.resize(out_size);
  t.count.resize(out_size);
  t.weights.assign(static_cast<size_t>(out_size) * t.taps, 0);
  std::vector<double> k(t.taps);
  const double ss = 1.0 / filterscale;
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = (xx + 0.5) * scale;
    int xmin = static_cast<int>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      const double w = f((x + xmin - center + 0.5) * ss);
      k[x] = w;
      ww += w;
    }
    int32_t* const to = &t.weights[static_cast<size_t>(xx) * t.taps];
    for (int x = 0; x < xmax; ++x) {
      if (ww != 0.0) k[x] /= ww;
      to[x] = k[x] < 0 ? static_cast<int32_t>(-0.5 + k[x] * (1 << kPrecisionBits))
                       : static_cast<int32_t>(0.5 + k[x] * (1 << kPrecisionBits));
    }
    t.first[xx] = xmin;
    t.count[xx] = xmax;
  }
  return t;
}

bool resample_vectorized() { return have_avx2(); }

void horizontal_scalar(const uint8_t* in, size_t in_row, int step, int rows, const ResampleTaps& taps, uint8_t* out,
                       size_t out_row) {
  const int out_width = static_cast<int>(taps.count.size());
  for (int y = 0; y < rows; ++y) {
    const uint8_t* row = in + y * in_row;
    uint8_t* to = out + y * out_row;
    for (int xx = 0; xx < out_width; ++xx) {
      const uint8_t* p = row + static_cast<size_t>(taps.first[xx]) * step;
      const int32_t* k = &taps.weights[static_cast<size_t>(xx) * taps.taps];
      int32_t sum = kHalf;
      for (int x = 0; x < taps.count[xx]; ++x) sum += static_cast<int32_t>(p[static_cast<size_t>(x) * step]) * k[x];
      to[xx] = clip8(sum);
    }
  }
}

void vertical_scalar(const uint8_t* in, size_t in_row, int width, const ResampleTaps& taps, uint8_t* out,
                     size_t out_row) {
  const int out_height = static_cast<int>(taps.count.size());
  std::vector<int32_t> sums(width);
  for (int yy = 0; yy < out_height; ++yy) {
    const int32_t* k = &taps.weights[static_cast<size_t>(yy) * taps.taps];
    std::fill(sums.begin(), sums.end(), kHalf);
    for (int y = 0; y < taps.count[yy]; ++y) {
      const uint8_t* row = in + static_cast<size_t>(taps.first[yy] + y) * in_row;
      for (int x = 0; x < width; ++x) sums[x] += static_cast<int32_t>(row[x]) * k[y];
    }
    uint8_t* to = out + yy * out_row;
    for (int x = 0; x < width; ++x) to[x] = clip8(sums[x]);
  }
}

void resize_box(const PixelView& src, const CropBox& box, int out_height, int out_width, Interpolation filter,
                uint8_t* out, ResampleCode code) {
  const int channels = src.channels;
  const size_t out_plane = static_cast<size_t>(out_height) * out_width;
  const bool horizontal = out_width != box.width, vertical = out_height != box.height;
  if (!horizontal && !vertical) {
    copy_box(src, box, false, out);
    return;
  }
  const bool avx2 = code == ResampleCode::kBest && have_avx2();
  const auto run_horizontal = [avx2](const uint8_t* in, size_t in_row, int step, int rows, const ResampleTaps& taps,
                                     uint8_t* to, size_t to_row) {
#if defined(__x86_64__)
    if (avx2) return horizontal_avx2(in, in_row, step, rows, taps, to, to_row);
#endif
    horizontal_scalar(in, in_row, step, rows, taps, to, to_row);
  };
  const auto run_vertical = [avx2](const uint8_t* in, size_t in_row, int width, const ResampleTaps& taps,
                                   uint8_t* to, size_t to_row) {
#if defined(__x86_64__)
    if (avx2) return vertical_avx2(in, in_row, width, taps, to, to_row);
#endif
    vertical_scalar(in, in_row, width, taps, to, to_row);
  };

  // The rows the vertical pass reads: [first_row, end_row) of the box.
  ResampleTaps vertical_taps;
  int first_row = 0, end_row = box.height;
  if (vertical) {
    vertical_taps = resample_taps(box.height, out_height, filter);
    first_row = vertical_taps.first.front();
    end_row = vertical_taps.first.back() + vertical_taps.count.back();
    for (int& f : vertical_taps.first) f -= first_row;
  }
  const int rows = end_row - first_row;
  const size_t src_row = row_bytes(src), src_plane = plane_bytes(src);
  const int step = src.planar ? 1 : channels;
  // The first pixel of channel c at row `y` of the box.
  const auto source_at = [&](int c, int y) {
    const size_t channel = src.planar ? c * src_plane : static_cast<size_t>(c);
    return src.data + channel + static_cast<size_t>(box.top + y) * src_row + static_cast<size_t>(box.left) * step;
  };

  if (!vertical) {
    const ResampleTaps taps = resample_taps(box.width, out_width, filter);
    for (int c = 0; c < channels; ++c) {
      run_horizontal(source_at(c, 0), src_row, step, box.height, taps, out + c * out_plane, out_width);
    }
    return;
  }
  // The planes the vertical pass reads: the horizontal pass's rows, or the box's rows as planes.
  thread_local std::vector<uint8_t> middle;
  const int middle_width = horizontal ? out_width : box.width;
  const size_t middle_plane = static_cast<size_t>(rows) * middle_width;
  if (horizontal) {
    const ResampleTaps taps = resample_taps(box.width, out_width, filter);
    middle.resize(middle_plane * channels);
    for (int c = 0; c < channels; ++c) {
      run_horizontal(source_at(c, first_row), src_row, step, rows, taps, middle.data() + c * middle_plane,
                     out_width);
    }
  } else if (!src.planar && channels > 1) {
    middle.resize(middle_plane * channels);
    copy_box(src, CropBox{box.top + first_row, box.left, rows, box.width}, false, middle.data());
  }
  for (int c = 0; c < channels; ++c) {
    const bool from_source = !horizontal && (src.planar || channels == 1);
    const uint8_t* in = from_source ? source_at(c, first_row) : middle.data() + c * middle_plane;
    run_vertical(in, from_source ? src_row : static_cast<size_t>(middle_width), middle_width, vertical_taps,
                 out + c * out_plane, out_width);
  }
}

}  // namespace feedline::image_ops::detail
