// The geometric pixel steps (RandomRotation, RandomAffine) and the warps under them, as Pillow computes
// Image.rotate and Image.transform(AFFINE) (its libImaging/Geometry.c), and make_geometry_op, the part of
// make_picture_op for these steps and the automatic augmentations (image_autoaugment.cpp).
#include "dataset/image_geometry.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "dataset/image_color.h"
#include "feedline/io/error.h"

namespace feedline {
namespace geometry {
namespace {

using image_steps::WarpInterpolation;

constexpr double kPi = 3.14159265358979323846;
constexpr double kDegToRad = kPi / 180.0;  // CPython's math.radians: x * (pi / 180)

// Pillow's COORD and FLOOR: truncation toward zero, with everything below 0 as -1 (COORD) or floored (FLOOR).
inline int coord(double v) { return v < 0.0 ? -1 : static_cast<int>(v); }
inline int floor_int(double v) { return v < 0.0 ? static_cast<int>(std::floor(v)) : static_cast<int>(v); }

// Python's round(x, 15): the nearest double to x's correctly rounded 15-decimal form, which glibc's printf gives.
double round15(double x) {
  char text[64];
  std::snprintf(text, sizeof text, "%.15f", x);
  return std::strtod(text, nullptr);
}

// Python's x % m for a float x and m > 0: the result takes the sign of m.
double py_mod(double x, double m) {
  double r = std::fmod(x, m);
  if (r != 0.0) {
    if ((r < 0) != (m < 0)) r += m;
  } else {
    r = std::copysign(0.0, m);
  }
  return r;
}

void fill_planes(Picture& out, const std::vector<uint8_t>& fill) {
  for (int c = 0; c < out.channels; ++c) std::memset(out.plane(c), fill[c], out.plane_size());
}

// Nearest, the matrix a scaling (no rotation or shear): ImagingScaleAffine, positions accumulated by addition.
void nearest_scale(const Picture& in, Picture& out, const std::array<double, 6>& a) {
  std::vector<int> xin(static_cast<size_t>(out.width), -1);
  double xo = a[2] + a[0] * 0.5;
  for (int x = 0; x < out.width; ++x) {
    const int xi = coord(xo);
    if (xi >= 0 && xi < in.width) xin[x] = xi;
    xo += a[0];
  }
  double yo = a[5] + a[4] * 0.5;
  for (int y = 0; y < out.height; ++y) {
    const int yi = coord(yo);
    if (yi >= 0 && yi < in.height) {
      for (int c = 0; c < in.channels; ++c) {
        const uint8_t* src = in.plane(c) + static_cast<size_t>(yi) * in.width;
        uint8_t* dst = out.plane(c) + static_cast<size_t>(y) * out.width;
        for (int x = 0; x < out.width; ++x) {
          if (xin[x] >= 0) dst[x] = src[xin[x]];
        }
      }
    }
    yo += a[4];
  }
}

// Row y of `out` from the input pixels `index` names (a plane offset; -1 keeps the fill), a channel at a time.
void gather_row(const Picture& in, Picture& out, int y, const std::vector<int64_t>& index) {
  const int width = out.width;  // a local: the stores below could otherwise alias out's fields
  const int64_t* idx = index.data();
  for (int c = 0; c < in.channels; ++c) {
    const uint8_t* src = in.plane(c);
    uint8_t* dst = out.plane(c) + static_cast<size_t>(y) * width;
    for (int x = 0; x < width; ++x) {
      if (idx[x] >= 0) dst[x] = src[idx[x]];
    }
  }
}

// Nearest in 16.16 fixed point (affine_fixed), where every corner's position fits in it.
void nearest_fixed(const Picture& in, Picture& out, const std::array<double, 6>& a) {
  auto fix = [](double v) { return static_cast<int64_t>(floor_int(v * 65536.0 + 0.5)); };
  const int64_t a0 = fix(a[0]), a1 = fix(a[1]), a3 = fix(a[3]), a4 = fix(a[4]);
  int64_t a2 = fix(a[2] + a[0] * 0.5 + a[1] * 0.5);
  int64_t a5 = fix(a[5] + a[3] * 0.5 + a[4] * 0.5);
  const int64_t in_width = in.width, in_height = in.height;
  std::vector<int64_t> index(static_cast<size_t>(out.width));
  for (int y = 0; y < out.height; ++y) {
    int64_t xx = a2, yy = a5;
    for (int x = 0; x < out.width; ++x) {
      // Pillow shifts a 32-bit int; the check below keeps every value in its range, where this is the same.
      const int64_t xi = xx >> 16, yi = yy >> 16;
      index[x] = xi >= 0 && xi < in_width && yi >= 0 && yi < in_height ? yi * in_width + xi : -1;
      xx += a0;
      yy += a3;
    }
    gather_row(in, out, y, index);
    a2 += a1;
    a5 += a4;
  }
}

// Nearest in floating point (the fallback for positions past the fixed point's range).
void nearest_float(const Picture& in, Picture& out, const std::array<double, 6>& a) {
  double xo = a[2] + a[1] * 0.5 + a[0] * 0.5;
  double yo = a[5] + a[4] * 0.5 + a[3] * 0.5;
  std::vector<int64_t> index(static_cast<size_t>(out.width));
  for (int y = 0; y < out.height; ++y) {
    double xx = xo, yy = yo;
    for (int x = 0; x < out.width; ++x) {
      const int xi = coord(xx), yi = coord(yy);
      index[x] = xi >= 0 && xi < in.width && yi >= 0 && yi < in.height ? int64_t{yi} * in.width + xi : -1;
      xx += a[0];
      yy += a[3];
    }
    gather_row(in, out, y, index);
    xo += a[1];
    yo += a[4];
  }
}

// Bilinear: Pillow's generic transform with its bilinear filter (edge rows and columns repeated, the result
// truncated to an integer).
void bilinear(const Picture& in, Picture& out, const std::array<double, 6>& a) {
  const int xsize = in.width, ysize = in.height;
  auto xclip = [xsize](int x) { return x < 0 ? 0 : (x < xsize ? x : xsize - 1); };
  auto yclip = [ysize](int y) { return y < 0 ? 0 : (y < ysize ? y : ysize - 1); };
  for (int y = 0; y < out.height; ++y) {
    const double yin0 = y + 0.5;
    const size_t row = static_cast<size_t>(y) * out.width;
    for (int x = 0; x < out.width; ++x) {
      const double xin0 = x + 0.5;
      double xin = a[0] * xin0 + a[1] * yin0 + a[2];
      double yin = a[3] * xin0 + a[4] * yin0 + a[5];
      if (xin < 0.0 || xin >= xsize || yin < 0.0 || yin >= ysize) continue;
      xin -= 0.5;
      yin -= 0.5;
      const int xi = floor_int(xin), yi = floor_int(yin);
      const double dx = xin - xi, dy = yin - yi;
      const size_t x0 = static_cast<size_t>(xclip(xi)), x1 = static_cast<size_t>(xclip(xi + 1));
      const size_t r0 = static_cast<size_t>(yclip(yi)) * xsize;
      const bool next_row = yi + 1 >= 0 && yi + 1 < ysize;
      const size_t r1 = static_cast<size_t>(yi + 1) * xsize;
      for (int c = 0; c < in.channels; ++c) {
        const uint8_t* p = in.plane(c);
        double v1 = p[r0 + x0] + (p[r0 + x1] - p[r0 + x0]) * dx;
        double v2 = v1;
        if (next_row) v2 = p[r1 + x0] + (p[r1 + x1] - p[r1 + x0]) * dx;
        v1 = v1 + (v2 - v1) * dy;
        out.plane(c)[row + x] = static_cast<uint8_t>(v1);
      }
    }
  }
}

bool fits_fixed(const std::array<double, 6>& a, int x, int y) {
  return std::fabs(x * a[0] + y * a[1] + a[2]) < 32768.0 && std::fabs(x * a[3] + y * a[4] + a[5]) < 32768.0;
}

// Pillow's Image.transpose of ROTATE_90 (counter-clockwise), ROTATE_180 and ROTATE_270.
void rotate_quarter(const Picture& in, Picture& out, int quarters) {
  const int h = in.height, w = in.width;
  if (quarters == 2) {
    out.resize(in.channels, h, w);
  } else {
    out.resize(in.channels, w, h);
  }
  for (int c = 0; c < in.channels; ++c) {
    const uint8_t* src = in.plane(c);
    uint8_t* dst = out.plane(c);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const uint8_t v = src[static_cast<size_t>(y) * w + x];
        if (quarters == 1) {
          dst[static_cast<size_t>(w - 1 - x) * h + y] = v;
        } else if (quarters == 2) {
          dst[static_cast<size_t>(h - 1 - y) * w + (w - 1 - x)] = v;
        } else {
          dst[static_cast<size_t>(x) * h + (h - 1 - y)] = v;
        }
      }
    }
  }
}

}  // namespace

std::vector<uint8_t> fill_bytes(const image_steps::WarpFill& fill, int channels, const std::string& what) {
  std::vector<double> values = fill.values.empty() ? std::vector<double>{0.0} : fill.values;
  if (fill.sequence && static_cast<int>(values.size()) != channels) {
    throw InvalidArgument(what + ": the number of elements in 'fill' does not match the number of channels of the "
                          "image (" + std::to_string(values.size()) + " != " + std::to_string(channels) + ")");
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(channels));
  for (int c = 0; c < channels; ++c) {
    const double v = std::trunc(values[fill.sequence ? c : 0]);
    if (!(v >= 0.0 && v <= 255.0)) {
      throw InvalidArgument(what + ": fill " + picture_fn::py_float(values[fill.sequence ? c : 0]) +
                            " is outside [0, 255], the values of a uint8 picture");
    }
    bytes[c] = static_cast<uint8_t>(v);
  }
  return bytes;
}

void warp_affine(const Picture& in, Picture& out, int out_height, int out_width, const std::array<double, 6>& matrix,
                 WarpInterpolation interpolation, const std::vector<uint8_t>& fill) {
  out.resize(in.channels, out_height, out_width);
  fill_planes(out, fill);
  if (in.height == 0 || in.width == 0) return;
  if (interpolation == WarpInterpolation::kBilinear) {
    bilinear(in, out, matrix);
  } else if (matrix[1] == 0 && matrix[3] == 0) {
    nearest_scale(in, out, matrix);
  } else if (fits_fixed(matrix, 0, 0) && fits_fixed(matrix, out_width, out_height) &&
             fits_fixed(matrix, 0, out_height) && fits_fixed(matrix, out_width, 0)) {
    nearest_fixed(in, out, matrix);
  } else {
    nearest_float(in, out, matrix);
  }
}

void rotate(Picture& picture, double angle, WarpInterpolation interpolation, bool expand,
            const std::optional<std::pair<double, double>>& center, const std::vector<uint8_t>& fill,
            Picture& scratch) {
  angle = py_mod(angle, 360.0);
  if (!center) {
    if (angle == 0) return;
    if (angle == 180) {
      rotate_quarter(picture, scratch, 2);
      std::swap(picture, scratch);
      return;
    }
    if ((angle == 90 || angle == 270) && (expand || picture.width == picture.height)) {
      rotate_quarter(picture, scratch, angle == 90 ? 1 : 3);
      std::swap(picture, scratch);
      return;
    }
  }
  int w = picture.width, h = picture.height;
  const double cx = center ? center->first : w / 2.0;
  const double cy = center ? center->second : h / 2.0;
  const double radians = -(angle * kDegToRad);
  std::array<double, 6> m = {round15(std::cos(radians)), round15(std::sin(radians)), 0.0,
                             round15(-std::sin(radians)), round15(std::cos(radians)), 0.0};
  auto transform = [&m](double x, double y) {
    return std::make_pair(m[0] * x + m[1] * y + m[2], m[3] * x + m[4] * y + m[5]);
  };
  std::tie(m[2], m[5]) = transform(-cx - 0, -cy - 0);
  m[2] += cx;
  m[5] += cy;
  if (expand) {
    double xmin = 0, xmax = 0, ymin = 0, ymax = 0;
    const double corners[4][2] = {{0, 0}, {static_cast<double>(w), 0}, {static_cast<double>(w),
                                  static_cast<double>(h)}, {0, static_cast<double>(h)}};
    for (int k = 0; k < 4; ++k) {
      const auto [x, y] = transform(corners[k][0], corners[k][1]);
      xmin = k == 0 ? x : std::min(xmin, x);
      xmax = k == 0 ? x : std::max(xmax, x);
      ymin = k == 0 ? y : std::min(ymin, y);
      ymax = k == 0 ? y : std::max(ymax, y);
    }
    const int nw = static_cast<int>(std::ceil(xmax) - std::floor(xmin));
    const int nh = static_cast<int>(std::ceil(ymax) - std::floor(ymin));
    std::tie(m[2], m[5]) = transform(-(nw - w) / 2.0, -(nh - h) / 2.0);
    w = nw;
    h = nh;
  }
  warp_affine(picture, scratch, h, w, m, interpolation, fill);
  std::swap(picture, scratch);
}

void affine(Picture& picture, double angle, double tx, double ty, double scale, double shear_x, double shear_y,
            WarpInterpolation interpolation, const std::vector<uint8_t>& fill,
            const std::optional<std::pair<double, double>>& center, Picture& scratch) {
  const double cx = center ? center->first : picture.width * 0.5;
  const double cy = center ? center->second : picture.height * 0.5;
  // torchvision's _get_inverse_affine_matrix, term by term.
  const double rot = angle * kDegToRad, sx = shear_x * kDegToRad, sy = shear_y * kDegToRad;
  const double a = std::cos(rot - sy) / std::cos(sy);
  const double b = -std::cos(rot - sy) * std::tan(sx) / std::cos(sy) - std::sin(rot);
  const double c = std::sin(rot - sy) / std::cos(sy);
  const double d = -std::sin(rot - sy) * std::tan(sx) / std::cos(sy) + std::cos(rot);
  std::array<double, 6> m = {d / scale, -b / scale, 0.0 / scale, -c / scale, a / scale, 0.0 / scale};
  m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty);
  m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty);
  m[2] += cx;
  m[5] += cy;
  warp_affine(picture, scratch, picture.height, picture.width, m, interpolation, fill);
  std::swap(picture, scratch);
}

std::string py_number_repr(double x) {
  if (std::trunc(x) == x && std::fabs(x) < 1e15) return std::to_string(static_cast<long long>(x));
  return picture_fn::py_float(x);
}

std::string fill_repr(const image_steps::WarpFill& fill) {
  if (fill.values.empty()) return "None";
  if (!fill.sequence) return py_number_repr(fill.values[0]);
  std::string out = "[";
  for (size_t i = 0; i < fill.values.size(); ++i) out += (i ? ", " : "") + py_number_repr(fill.values[i]);
  return out + "]";
}

const char* interpolation_name(WarpInterpolation interpolation) {
  return interpolation == WarpInterpolation::kBilinear ? "bilinear" : "nearest";
}

}  // namespace geometry

namespace {

using picture_fn::py_float;

std::string angle_pair(double lo, double hi) { return "[" + py_float(lo) + ", " + py_float(hi) + "]"; }

std::optional<std::pair<double, double>> center_of(bool has_center, double x, double y) {
  if (!has_center) return std::nullopt;
  return std::make_pair(x, y);
}

double draw_between(SampleRng& rng, double lo, double hi) { return lo + (hi - lo) * rng.uniform(); }

class RandomRotationOp : public PictureOp {
 public:
  explicit RandomRotationOp(image_steps::RandomRotation s) : s_(std::move(s)) {
    if (!(s_.degrees_min <= s_.degrees_max)) {
      throw InvalidArgument("RandomRotation: degrees should be (min, max) with min <= max, got " +
                            angle_pair(s_.degrees_min, s_.degrees_max));
    }
  }
  std::string describe() const override {
    std::string out = "RandomRotation(degrees=" + angle_pair(s_.degrees_min, s_.degrees_max) +
                      ", interpolation=" + geometry::interpolation_name(s_.interpolation) +
                      ", expand=" + (s_.expand ? "True" : "False");
    if (s_.has_center) {
      out += ", center=[" + geometry::py_number_repr(s_.center_x) + ", " + geometry::py_number_repr(s_.center_y) +
             "]";
    }
    return out + ", fill=" + geometry::fill_repr(s_.fill) + ")";
  }
  void apply(Picture& picture, SampleRng& rng, Picture& scratch) const override {
    const double angle = draw_between(rng, s_.degrees_min, s_.degrees_max);
    geometry::rotate(picture, angle, s_.interpolation, s_.expand, center_of(s_.has_center, s_.center_x, s_.center_y),
                     geometry::fill_bytes(s_.fill, picture.channels, "RandomRotation"), scratch);
  }
  bool keeps_size() const override { return !s_.expand; }

 private:
  image_steps::RandomRotation s_;
};

class RandomAffineOp : public PictureOp {
 public:
  explicit RandomAffineOp(image_steps::RandomAffine s) : s_(std::move(s)) {
    const char* name = "RandomAffine";
    if (!(s_.degrees_min <= s_.degrees_max)) {
      throw InvalidArgument(std::string(name) + ": degrees should be (min, max) with min <= max, got " +
                            angle_pair(s_.degrees_min, s_.degrees_max));
    }
    if (s_.has_translate && !(s_.translate_x >= 0 && s_.translate_x <= 1 && s_.translate_y >= 0 &&
                              s_.translate_y <= 1)) {
      throw InvalidArgument(std::string(name) + ": translation values should be between 0 and 1");
    }
    if (s_.has_scale && !(s_.scale_min > 0 && s_.scale_max > 0)) {
      throw InvalidArgument(std::string(name) + ": scale values should be positive");
    }
    if (!(s_.shear.empty() || s_.shear.size() == 2 || s_.shear.size() == 4)) {
      throw InvalidArgument(std::string(name) + ": shear should be a sequence of length 2 or 4.");
    }
  }
  std::string describe() const override {
    auto pair = [](double a, double b) {
      return "[" + geometry::py_number_repr(a) + ", " + geometry::py_number_repr(b) + "]";
    };
    std::string out = "RandomAffine(degrees=" + angle_pair(s_.degrees_min, s_.degrees_max);
    if (s_.has_translate) out += ", translate=" + pair(s_.translate_x, s_.translate_y);
    if (s_.has_scale) out += ", scale=" + pair(s_.scale_min, s_.scale_max);
    if (!s_.shear.empty()) {
      out += ", shear=[";
      for (size_t i = 0; i < s_.shear.size(); ++i) out += (i ? ", " : "") + py_float(s_.shear[i]);
      out += "]";
    }
    if (s_.interpolation != image_steps::WarpInterpolation::kNearest) {
      out += std::string(", interpolation=") + geometry::interpolation_name(s_.interpolation);
    }
    const bool zero_fill = s_.fill.values.empty() || (!s_.fill.sequence && s_.fill.values[0] == 0);
    if (!zero_fill) out += ", fill=" + geometry::fill_repr(s_.fill);
    if (s_.has_center) out += ", center=" + pair(s_.center_x, s_.center_y);
    return out + ")";
  }
  void apply(Picture& picture, SampleRng& rng, Picture& scratch) const override {
    // RandomAffine.get_params's draws, in its order.
    const double angle = draw_between(rng, s_.degrees_min, s_.degrees_max);
    double tx = 0, ty = 0;
    if (s_.has_translate) {
      const double max_dx = s_.translate_x * picture.width, max_dy = s_.translate_y * picture.height;
      tx = std::nearbyint(draw_between(rng, -max_dx, max_dx));  // Python's round: half to even
      ty = std::nearbyint(draw_between(rng, -max_dy, max_dy));
    }
    const double scale = s_.has_scale ? draw_between(rng, s_.scale_min, s_.scale_max) : 1.0;
    double shear_x = 0, shear_y = 0;
    if (!s_.shear.empty()) {
      shear_x = draw_between(rng, s_.shear[0], s_.shear[1]);
      if (s_.shear.size() == 4) shear_y = draw_between(rng, s_.shear[2], s_.shear[3]);
    }
    geometry::affine(picture, angle, tx, ty, scale, shear_x, shear_y, s_.interpolation,
                     geometry::fill_bytes(s_.fill, picture.channels, "RandomAffine"),
                     center_of(s_.has_center, s_.center_x, s_.center_y), scratch);
  }

 private:
  image_steps::RandomAffine s_;
};

}  // namespace

PictureOpPtr make_geometry_op(const ImageStep& step) {
  if (const auto* s = std::get_if<image_steps::RandomRotation>(&step)) return std::make_shared<RandomRotationOp>(*s);
  if (const auto* s = std::get_if<image_steps::RandomAffine>(&step)) return std::make_shared<RandomAffineOp>(*s);
  return make_autoaugment_op(step);
}

}  // namespace feedline
