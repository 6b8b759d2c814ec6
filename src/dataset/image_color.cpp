// The colour and filter steps: their functional forms in Pillow's arithmetic and RandomErasing on the tensor (see
// image_color.h), and the PictureOps of ColorJitter, Grayscale, RandomGrayscale and GaussianBlur (make_color_op).
#include "dataset/image_color.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "feedline/io/error.h"

namespace feedline {
namespace picture_fn {
namespace {

using Table = std::array<uint8_t, 256>;

void apply_table(uint8_t* values, size_t count, const Table& table) {
  for (size_t i = 0; i < count; ++i) values[i] = table[values[i]];
}

void apply_table(Picture& picture, const Table& table) {
  apply_table(picture.pixels.data(), picture.pixels.size(), table);
}

// Pillow's ImagingBlend(in1, in2, alpha) into `in2_out` (which holds in2): in1 + alpha * (in2 - in1) in float,
// truncated; clipped to [0, 255] when alpha is outside [0, 1].
void blend(const uint8_t* in1, uint8_t* in2_out, size_t count, double alpha_value) {
  const float alpha = static_cast<float>(alpha_value);
  if (alpha >= 0 && alpha <= 1.0) {
    for (size_t i = 0; i < count; ++i) {
      const int a = in1[i], b = in2_out[i];
      in2_out[i] = static_cast<uint8_t>(static_cast<float>(a) + alpha * static_cast<float>(b - a));
    }
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    const int a = in1[i], b = in2_out[i];
    const float temp = static_cast<float>(a) + alpha * static_cast<float>(b - a);
    in2_out[i] = temp <= 0.0f ? 0 : temp >= 255.0f ? 255 : static_cast<uint8_t>(temp);
  }
}

// The blend with a constant first image: a table of the 256 values.
Table blend_table(int constant, double alpha_value) {
  Table table;
  std::array<uint8_t, 256> first;
  first.fill(static_cast<uint8_t>(constant));
  for (int v = 0; v < 256; ++v) table[v] = static_cast<uint8_t>(v);
  blend(first.data(), table.data(), 256, alpha_value);
  return table;
}

inline uint8_t luma(uint8_t r, uint8_t g, uint8_t b) {
  return static_cast<uint8_t>((r * 19595u + g * 38470u + b * 7471u + 0x8000u) >> 16);
}

// The "L" picture's values into `out` (plane_size() bytes).
void luma_plane(const Picture& picture, uint8_t* out) {
  const size_t n = picture.plane_size();
  if (picture.channels == 1) {
    std::copy(picture.plane(0), picture.plane(0) + n, out);
    return;
  }
  const uint8_t *r = picture.plane(0), *g = picture.plane(1), *b = picture.plane(2);
  for (size_t i = 0; i < n; ++i) out[i] = luma(r[i], g[i], b[i]);
}

// Pillow's rgb2hsv for one pixel (Convert.c, following colorsys).
void rgb_to_hsv(uint8_t r, uint8_t g, uint8_t b, uint8_t& uh, uint8_t& us, uint8_t& uv) {
  const uint8_t maxc = std::max(r, std::max(g, b)), minc = std::min(r, std::min(g, b));
  uv = maxc;
  if (minc == maxc) {
    uh = 0;
    us = 0;
    return;
  }
  const float cr = static_cast<float>(maxc - minc);
  const float s = cr / static_cast<float>(maxc);
  const float rc = static_cast<float>(maxc - r) / cr;
  const float gc = static_cast<float>(maxc - g) / cr;
  const float bc = static_cast<float>(maxc - b) / cr;
  float h;
  if (r == maxc) {
    h = bc - gc;
  } else if (g == maxc) {
    h = static_cast<float>(2.0 + rc - bc);
  } else {
    h = static_cast<float>(4.0 + gc - rc);
  }
  const double turns = h / 6.0 + 1.0;  // in (0, 2): fmod(turns, 1.0), which the subtraction computes exactly
  h = static_cast<float>(turns >= 1.0 ? turns - 1.0 : turns);
  uh = static_cast<uint8_t>(std::clamp(static_cast<int>(h * 255.0), 0, 255));
  us = static_cast<uint8_t>(std::clamp(static_cast<int>(s * 255.0), 0, 255));
}

// Pillow's hsv2rgb, with the parts that depend on H alone (the sector i and the remainder f) and on S alone
// (fs = S / 255) in tables, computed as Pillow computes them.
struct HsvTables {
  int sector[256];
  float remainder[256], saturation[256];
  HsvTables() {
    for (int v = 0; v < 256; ++v) {
      sector[v] = static_cast<int>(std::floor(static_cast<float>(v) * 6.0 / 255.0));
      remainder[v] = static_cast<float>(static_cast<float>(v) * 6.0 / 255.0 - static_cast<float>(sector[v]));
      saturation[v] = static_cast<float>(static_cast<float>(v) / 255.0);
    }
  }
};

// C's round() of a non-negative double (half away from zero), clipped to [0, 255].
inline uint8_t round_clip(double x) {
  double r = std::floor(x);
  if (x - r >= 0.5) r += 1;
  return static_cast<uint8_t>(std::min(r, 255.0));
}

void hsv_to_rgb(const HsvTables& t, uint8_t h, uint8_t s, uint8_t v, uint8_t& r, uint8_t& g, uint8_t& b) {
  if (s == 0) {
    r = g = b = v;
    return;
  }
  const int i = t.sector[h];
  const float f = t.remainder[h], fs = t.saturation[s];
  const float value = static_cast<float>(v);
  const uint8_t up = round_clip(value * (1.0 - fs));
  const uint8_t uq = round_clip(value * (1.0 - fs * f));
  const uint8_t ut = round_clip(value * (1.0 - fs * (1.0 - f)));
  switch (i % 6) {
    case 0: r = v, g = ut, b = up; break;
    case 1: r = uq, g = v, b = up; break;
    case 2: r = up, g = v, b = ut; break;
    case 3: r = up, g = uq, b = v; break;
    case 4: r = ut, g = up, b = v; break;
    default: r = v, g = up, b = uq; break;
  }
}

// Index of a reflected coordinate (torch's "reflect" padding: the edge not repeated).
int reflect(int i, int n) {
  if (n == 1) return 0;
  const int period = 2 * (n - 1);
  i %= period;
  if (i < 0) i += period;
  return i < n ? i : period - i;
}

// torchvision's _get_gaussian_kernel1d in float32.
std::vector<float> gaussian_kernel(int size, double sigma) {
  std::vector<float> kernel(static_cast<size_t>(size));
  const float half = static_cast<float>((size - 1) * 0.5);
  const float s = static_cast<float>(sigma);
  float sum = 0;
  for (int i = 0; i < size; ++i) {
    // torch.linspace(-half, half, size): start + i * step, mirrored from the end for the second half.
    const float step = size > 1 ? (2 * half) / static_cast<float>(size - 1) : 0.0f;
    const float x = i < size / 2 ? -half + step * static_cast<float>(i)
                                 : half - step * static_cast<float>(size - 1 - i);
    const float t = x / s;
    kernel[i] = std::exp(-0.5f * t * t);
    sum += kernel[i];
  }
  for (float& k : kernel) k /= sum;
  return kernel;
}

}  // namespace

std::string py_float(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), x);
  std::string text(buffer, result.ptr);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

void adjust_brightness(Picture& picture, double factor) { apply_table(picture, blend_table(0, factor)); }

void adjust_contrast(Picture& picture, double factor) {
  const size_t n = picture.plane_size();
  if (n == 0) return;
  uint64_t sum = 0;
  if (picture.channels == 1) {
    for (size_t i = 0; i < n; ++i) sum += picture.pixels[i];
  } else {
    const uint8_t *r = picture.plane(0), *g = picture.plane(1), *b = picture.plane(2);
    for (size_t i = 0; i < n; ++i) sum += luma(r[i], g[i], b[i]);
  }
  // ImageStat's mean: sum of the histogram's value x count over the count, in double.
  const double mean = static_cast<double>(sum) / static_cast<double>(n);
  apply_table(picture, blend_table(static_cast<int>(mean + 0.5), factor));
}

void adjust_saturation(Picture& picture, double factor) {
  if (picture.channels != 3) return;
  const size_t n = picture.plane_size();
  thread_local std::vector<uint8_t> gray;
  gray.resize(n);
  luma_plane(picture, gray.data());
  for (int c = 0; c < 3; ++c) blend(gray.data(), picture.plane(c), n, factor);
}

void adjust_sharpness(Picture& picture, double factor, Picture& scratch) {
  const int h = picture.height, w = picture.width;
  scratch.resize(picture.channels, h, w);
  scratch.pixels = picture.pixels;
  // ImageFilter.SMOOTH: 3x3 kernel [1 1 1; 1 5 1; 1 1 1] / 13 in float, the border rows and columns kept.
  float kernel[9];
  for (float& k : kernel) k = 1.0f / 13.0f;
  kernel[4] = 5.0f / 13.0f;
  for (int c = 0; c < picture.channels; ++c) {
    const uint8_t* in = picture.plane(c);
    uint8_t* out = scratch.plane(c);
    for (int y = 1; y < h - 1; ++y) {
      const uint8_t *up = in + static_cast<size_t>(y - 1) * w, *mid = up + w, *down = mid + w;
      uint8_t* to = out + static_cast<size_t>(y) * w;
      for (int x = 1; x < w - 1; ++x) {
        float ss = 0;
        ss += static_cast<float>(down[x - 1]) * kernel[0] + static_cast<float>(down[x]) * kernel[1] +
              static_cast<float>(down[x + 1]) * kernel[2];
        ss += static_cast<float>(mid[x - 1]) * kernel[3] + static_cast<float>(mid[x]) * kernel[4] +
              static_cast<float>(mid[x + 1]) * kernel[5];
        ss += static_cast<float>(up[x - 1]) * kernel[6] + static_cast<float>(up[x]) * kernel[7] +
              static_cast<float>(up[x + 1]) * kernel[8];
        to[x] = ss <= 0.0f ? 0 : ss >= 255.0f ? 255 : static_cast<uint8_t>(ss + 0.5f);
      }
    }
  }
  blend(scratch.pixels.data(), picture.pixels.data(), picture.pixels.size(), factor);
}

void adjust_hue(Picture& picture, double hue_factor) {
  if (picture.channels != 3) return;
  // np.uint8(hue_factor * 255): the float truncated to an integer, then wrapped to 8 bits.
  const uint8_t shift = static_cast<uint8_t>(static_cast<int64_t>(hue_factor * 255) & 0xff);
  static const HsvTables tables;
  uint8_t *r = picture.plane(0), *g = picture.plane(1), *b = picture.plane(2);
  for (size_t i = 0, n = picture.plane_size(); i < n; ++i) {
    uint8_t hh, s, v;
    rgb_to_hsv(r[i], g[i], b[i], hh, s, v);
    hsv_to_rgb(tables, static_cast<uint8_t>(hh + shift), s, v, r[i], g[i], b[i]);
  }
}

void posterize(Picture& picture, int bits) {
  const int mask = ~((1 << (8 - std::clamp(bits, 0, 8))) - 1);
  Table table;
  for (int v = 0; v < 256; ++v) table[v] = static_cast<uint8_t>(v & mask);
  apply_table(picture, table);
}

void solarize(Picture& picture, double threshold) {
  Table table;
  for (int v = 0; v < 256; ++v) table[v] = static_cast<uint8_t>(v < threshold ? v : 255 - v);
  apply_table(picture, table);
}

void autocontrast(Picture& picture) {
  const size_t n = picture.plane_size();
  for (int c = 0; c < picture.channels; ++c) {
    uint8_t* plane = picture.plane(c);
    if (n == 0) continue;
    const auto [lo_it, hi_it] = std::minmax_element(plane, plane + n);
    const int lo = *lo_it, hi = *hi_it;
    if (hi <= lo) continue;
    const double scale = 255.0 / (hi - lo), offset = -lo * scale;
    Table table;
    for (int v = 0; v < 256; ++v) {
      table[v] = static_cast<uint8_t>(std::clamp(static_cast<int>(v * scale + offset), 0, 255));
    }
    apply_table(plane, n, table);
  }
}

void equalize(Picture& picture) {
  const size_t n = picture.plane_size();
  for (int c = 0; c < picture.channels; ++c) {
    uint8_t* plane = picture.plane(c);
    std::array<int64_t, 256> histogram{};
    for (size_t i = 0; i < n; ++i) ++histogram[plane[i]];
    int64_t total = 0, last = 0, used = 0;
    for (int v = 0; v < 256; ++v) {
      if (histogram[v] == 0) continue;
      total += histogram[v];
      last = histogram[v];
      ++used;
    }
    if (used <= 1) continue;
    const int64_t step = (total - last) / 255;
    if (step == 0) continue;
    Table table;
    int64_t acc = step / 2;
    for (int v = 0; v < 256; ++v) {
      table[v] = static_cast<uint8_t>(std::min<int64_t>(acc / step, 255));
      acc += histogram[v];
    }
    apply_table(plane, n, table);
  }
}

void invert(Picture& picture) {
  for (uint8_t& v : picture.pixels) v = static_cast<uint8_t>(255 - v);
}

void to_grayscale(Picture& picture, int num_output_channels) {
  const size_t n = picture.plane_size();
  if (picture.channels == 3) {
    uint8_t *r = picture.plane(0), *g = picture.plane(1), *b = picture.plane(2);
    for (size_t i = 0; i < n; ++i) r[i] = luma(r[i], g[i], b[i]);
  }
  const std::vector<uint8_t>::size_type keep = n;
  picture.channels = num_output_channels;
  picture.pixels.resize(keep * static_cast<size_t>(num_output_channels));
  for (int c = 1; c < num_output_channels; ++c) std::copy(picture.plane(0), picture.plane(0) + n, picture.plane(c));
}

void gaussian_blur(Picture& picture, int kernel_width, int kernel_height, double sigma_x, double sigma_y) {
  const int h = picture.height, w = picture.width;
  const std::vector<float> kx = gaussian_kernel(kernel_width, sigma_x), ky = gaussian_kernel(kernel_height, sigma_y);
  const int rx = kernel_width / 2, ry = kernel_height / 2;
  // The horizontal pass of one plane; one row with its reflections; one output row's sums.
  thread_local std::vector<float> rows, padded, sums;
  rows.resize(static_cast<size_t>(h) * w);
  padded.resize(static_cast<size_t>(w) + 2 * rx);
  sums.resize(static_cast<size_t>(w));
  for (int c = 0; c < picture.channels; ++c) {
    uint8_t* plane = picture.plane(c);
    for (int y = 0; y < h; ++y) {
      const uint8_t* in = plane + static_cast<size_t>(y) * w;
      for (int x = -rx; x < w + rx; ++x) padded[x + rx] = static_cast<float>(in[reflect(x, w)]);
      // Each output sums its taps in kernel order; the loops run over x innermost so that they vectorise.
      float* out = rows.data() + static_cast<size_t>(y) * w;
      std::fill(out, out + w, 0.0f);
      for (int k = 0; k < kernel_width; ++k) {
        const float weight = kx[k];
        const float* from = padded.data() + k;
        for (int x = 0; x < w; ++x) out[x] += weight * from[x];
      }
    }
    for (int y = 0; y < h; ++y) {
      std::fill(sums.begin(), sums.end(), 0.0f);
      for (int k = 0; k < kernel_height; ++k) {
        const float weight = ky[k];
        const float* from = rows.data() + static_cast<size_t>(reflect(y + k - ry, h)) * w;
        for (int x = 0; x < w; ++x) sums[x] += weight * from[x];
      }
      uint8_t* out = plane + static_cast<size_t>(y) * w;
      for (int x = 0; x < w; ++x) out[x] = static_cast<uint8_t>(std::clamp(std::nearbyint(sums[x]), 0.0f, 255.0f));
    }
  }
}

namespace {

// Python's repr of a number given as int or float: "0" for a whole number, else the float's repr.
std::string py_number(double x) {
  if (std::isfinite(x) && x == std::trunc(x) && std::fabs(x) < 1e15) return std::to_string(static_cast<int64_t>(x));
  return py_float(x);
}

std::string py_range(double a, double b) { return "(" + py_float(a) + ", " + py_float(b) + ")"; }

// A standard normal draw (Box-Muller).
double normal(SampleRng& rng) {
  const double u1 = rng.uniform(), u2 = rng.uniform();
  return std::sqrt(-2.0 * std::log1p(-u1)) * std::cos(2.0 * M_PI * u2);
}

}  // namespace

std::string check_random_erasing(const image_steps::RandomErasing& s, int channels) {
  if (!(s.p >= 0 && s.p <= 1)) return "Random erasing probability should be between 0 and 1";
  if (!(s.scale_min >= 0 && s.scale_max <= 1 && s.scale_min <= s.scale_max)) {
    return "Scale should be (min, max) between 0 and 1";
  }
  if (!(s.ratio_min > 0 && s.ratio_min <= s.ratio_max && std::isfinite(s.ratio_max))) {
    return "Ratio should be (min, max) with 0 < min <= max";
  }
  if (!s.random && s.value.size() != 1 && s.value.size() != static_cast<size_t>(channels)) {
    return "If value is a sequence, it should have either a single value or " + std::to_string(channels) +
           " (number of input channels)";
  }
  for (double v : s.value) {
    if (!std::isfinite(v)) return "value must be finite";
  }
  return "";
}

std::string describe_random_erasing(const image_steps::RandomErasing& s) {
  std::string value;
  if (s.random) {
    value = "random";
  } else if (s.value.size() == 1) {
    value = py_number(s.value[0]);
  } else {
    for (size_t i = 0; i < s.value.size(); ++i) value += (i ? ", " : "[") + py_number(s.value[i]);
    value += "]";
  }
  return "RandomErasing(p=" + py_float(s.p) + ", scale=" + py_range(s.scale_min, s.scale_max) +
         ", ratio=" + py_range(s.ratio_min, s.ratio_max) + ", value=" + value +
         ", inplace=" + (s.inplace ? "True" : "False") + ")";
}

void random_erasing(const image_steps::RandomErasing& s, SampleRng& rng, int channels, int height, int width,
                    void* out, bool is_float) {
  if (!(rng.uniform() < s.p)) return;
  const double area = static_cast<double>(height) * width;
  const double log_min = std::log(s.ratio_min), log_max = std::log(s.ratio_max);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double erase_area = area * (s.scale_min + (s.scale_max - s.scale_min) * rng.uniform());
    const double aspect = std::exp(log_min + (log_max - log_min) * rng.uniform());
    const int h = static_cast<int>(std::nearbyint(std::sqrt(erase_area * aspect)));
    const int w = static_cast<int>(std::nearbyint(std::sqrt(erase_area / aspect)));
    if (!(h < height && w < width)) continue;
    // torchvision draws the noise before the box's corner.
    thread_local std::vector<float> noise;
    noise.resize(s.random ? static_cast<size_t>(channels) * h * w : 0);
    for (float& v : noise) v = static_cast<float>(normal(rng));
    const int top = static_cast<int>(rng.below(static_cast<uint64_t>(height - h + 1)));
    const int left = static_cast<int>(rng.below(static_cast<uint64_t>(width - w + 1)));
    const size_t plane = static_cast<size_t>(height) * width;
    for (int c = 0; c < channels; ++c) {
      const float constant = s.random ? 0.0f : static_cast<float>(s.value.size() == 1 ? s.value[0] : s.value[c]);
      for (int y = 0; y < h; ++y) {
        const size_t row = c * plane + static_cast<size_t>(top + y) * width + left;
        const float* from = s.random ? noise.data() + (static_cast<size_t>(c) * h + y) * w : nullptr;
        for (int x = 0; x < w; ++x) {
          const float v = from ? from[x] : constant;
          if (is_float) {
            static_cast<float*>(out)[row + x] = v;
          } else {  // torch's float to uint8: truncated, wrapping
            static_cast<uint8_t*>(out)[row + x] = static_cast<uint8_t>(static_cast<int64_t>(v) & 0xff);
          }
        }
      }
    }
    return;
  }
}

}  // namespace picture_fn

namespace {

using picture_fn::py_float;

std::string py_range_or_none(const image_steps::Range& r) {
  return r.enabled ? "[" + py_float(r.min) + ", " + py_float(r.max) + "]" : "None";
}

double draw(const image_steps::Range& r, SampleRng& rng) { return r.min + (r.max - r.min) * rng.uniform(); }

class ColorJitterOp : public PictureOp {
 public:
  explicit ColorJitterOp(const image_steps::ColorJitter& s) : s_(s) {}
  std::string describe() const override {
    return "ColorJitter(brightness=" + py_range_or_none(s_.brightness) + ", contrast=" +
           py_range_or_none(s_.contrast) + ", saturation=" + py_range_or_none(s_.saturation) +
           ", hue=" + py_range_or_none(s_.hue) + ")";
  }
  void apply(Picture& picture, SampleRng& rng, Picture&) const override {
    // ColorJitter.get_params: a random order of the four, then each enabled factor.
    int order[4] = {0, 1, 2, 3};
    for (int i = 3; i > 0; --i) std::swap(order[i], order[rng.below(static_cast<uint64_t>(i + 1))]);
    const image_steps::Range* ranges[4] = {&s_.brightness, &s_.contrast, &s_.saturation, &s_.hue};
    double factors[4] = {};
    for (int i = 0; i < 4; ++i) {
      if (ranges[i]->enabled) factors[i] = draw(*ranges[i], rng);
    }
    for (int id : order) {
      if (!ranges[id]->enabled) continue;
      switch (id) {
        case 0: picture_fn::adjust_brightness(picture, factors[0]); break;
        case 1: picture_fn::adjust_contrast(picture, factors[1]); break;
        case 2: picture_fn::adjust_saturation(picture, factors[2]); break;
        default: picture_fn::adjust_hue(picture, factors[3]); break;
      }
    }
  }

 private:
  image_steps::ColorJitter s_;
};

class GrayscaleOp : public PictureOp {
 public:
  explicit GrayscaleOp(int channels) : channels_(channels) {}
  std::string describe() const override {
    return "Grayscale(num_output_channels=" + std::to_string(channels_) + ")";
  }
  void apply(Picture& picture, SampleRng&, Picture&) const override { picture_fn::to_grayscale(picture, channels_); }
  int output_channels(int) const override { return channels_; }

 private:
  int channels_;
};

class RandomGrayscaleOp : public PictureOp {
 public:
  explicit RandomGrayscaleOp(double p) : p_(p) {}
  std::string describe() const override { return "RandomGrayscale(p=" + py_float(p_) + ")"; }
  void apply(Picture& picture, SampleRng& rng, Picture&) const override {
    if (rng.uniform() < p_) picture_fn::to_grayscale(picture, picture.channels);
  }

 private:
  double p_;
};

class GaussianBlurOp : public PictureOp {
 public:
  explicit GaussianBlurOp(const image_steps::GaussianBlur& s) : s_(s) {}
  std::string describe() const override {
    return "GaussianBlur(kernel_size=(" + std::to_string(s_.kernel_width) + ", " + std::to_string(s_.kernel_height) +
           "), sigma=(" + py_float(s_.sigma_min) + ", " + py_float(s_.sigma_max) + "))";
  }
  void apply(Picture& picture, SampleRng& rng, Picture&) const override {
    const double sigma = s_.sigma_min + (s_.sigma_max - s_.sigma_min) * rng.uniform();
    picture_fn::gaussian_blur(picture, static_cast<int>(s_.kernel_width), static_cast<int>(s_.kernel_height), sigma,
                              sigma);
  }

 private:
  image_steps::GaussianBlur s_;
};

void check_range(const image_steps::Range& r, const char* name, double low, double high) {
  if (r.enabled && !(low <= r.min && r.min <= r.max && r.max <= high)) {
    throw InvalidArgument(std::string("ColorJitter: ") + name + " values should be between (" + py_float(low) +
                          ", " + py_float(high) + "), got (" + py_float(r.min) + ", " + py_float(r.max) + ")");
  }
}

}  // namespace

PictureOpPtr make_color_op(const ImageStep& step) {
  if (const auto* s = std::get_if<image_steps::ColorJitter>(&step)) {
    const double inf = HUGE_VAL;
    check_range(s->brightness, "brightness", 0, inf);
    check_range(s->contrast, "contrast", 0, inf);
    check_range(s->saturation, "saturation", 0, inf);
    check_range(s->hue, "hue", -0.5, 0.5);
    return std::make_shared<ColorJitterOp>(*s);
  }
  if (const auto* s = std::get_if<image_steps::Grayscale>(&step)) {
    if (s->num_output_channels != 1 && s->num_output_channels != 3) {
      throw InvalidArgument("Grayscale: num_output_channels should be either 1 or 3, got " +
                            std::to_string(s->num_output_channels));
    }
    return std::make_shared<GrayscaleOp>(static_cast<int>(s->num_output_channels));
  }
  if (const auto* s = std::get_if<image_steps::RandomGrayscale>(&step)) {
    if (!(s->p >= 0 && s->p <= 1)) {
      throw InvalidArgument("RandomGrayscale: p should be in [0, 1], got " + py_float(s->p));
    }
    return std::make_shared<RandomGrayscaleOp>(s->p);
  }
  if (const auto* s = std::get_if<image_steps::GaussianBlur>(&step)) {
    for (int64_t k : {s->kernel_width, s->kernel_height}) {
      if (k <= 0 || k % 2 == 0 || k > 1001) {
        throw InvalidArgument("GaussianBlur: Kernel size value should be an odd and positive number, got " +
                              std::to_string(k));
      }
    }
    if (!(s->sigma_min > 0 && s->sigma_min <= s->sigma_max && std::isfinite(s->sigma_max))) {
      throw InvalidArgument("GaussianBlur: sigma values should be positive and of the form (min, max), got (" +
                            py_float(s->sigma_min) + ", " + py_float(s->sigma_max) + ")");
    }
    return std::make_shared<GaussianBlurOp>(*s);
  }
  return nullptr;
}

}  // namespace feedline
