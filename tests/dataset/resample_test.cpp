// The resampler of resample.h: its vector code gives the scalar code's bytes over random sizes, boxes and factors
// (1/90 to 4 times, each way), one and three channels, interleaved and planar, bilinear and bicubic; the edge cases
// (one-pixel inputs and outputs, boxes on the last row and column); the coefficients' own invariants; and what
// the layouts and skipped passes must agree on. Its values against Pillow's are python/tests/test_resample.py's.
#include "dataset/resample.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace feedline::image_ops::detail {
namespace {

const Interpolation kFilters[] = {Interpolation::kBilinear, Interpolation::kBicubic};

std::string filter_name(Interpolation f) { return f == Interpolation::kBicubic ? "bicubic" : "bilinear"; }

// An image of exactly height x width x channels bytes (nothing after them), random or in smooth ramps with
// random noise (a resize of pure noise hides little, one of a ramp shows rounding).
struct Picture {
  std::vector<uint8_t> interleaved, planar;
  int height, width, channels;
  PixelView view(bool planes) const {
    return PixelView{planes ? planar.data() : interleaved.data(), height, width, channels, planes, false, 0};
  }
};

Picture picture(int height, int width, int channels, std::mt19937& rng) {
  Picture p{{}, {}, height, width, channels};
  const size_t plane = static_cast<size_t>(height) * width;
  p.interleaved.resize(plane * channels);
  p.planar.resize(plane * channels);
  const bool ramp = rng() % 2 == 0;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < channels; ++c) {
        const int v = ramp ? (x * 7 + y * 3 + c * 50) % 256 + static_cast<int>(rng() % 5) - 2
                           : static_cast<int>(rng() % 256);
        const uint8_t b = static_cast<uint8_t>(std::clamp(v, 0, 255));
        p.interleaved[(static_cast<size_t>(y) * width + x) * channels + c] = b;
        p.planar[c * plane + static_cast<size_t>(y) * width + x] = b;
      }
    }
  }
  return p;
}

std::vector<uint8_t> resized(const Picture& p, bool planes, const CropBox& box, int out_height, int out_width,
                             Interpolation filter, ResampleCode code) {
  // Room after the planes, which must stay untouched.
  std::vector<uint8_t> out(static_cast<size_t>(out_height) * out_width * p.channels + 32, 0xA5);
  resize_box(p.view(planes), box, out_height, out_width, filter, out.data(), code);
  for (size_t i = out.size() - 32; i < out.size(); ++i) EXPECT_EQ(out[i], 0xA5) << "written past the planes";
  out.resize(out.size() - 32);
  return out;
}

std::string case_text(const Picture& p, const CropBox& box, int out_height, int out_width, Interpolation f,
                      bool planes) {
  return std::to_string(p.height) + " x " + std::to_string(p.width) + " x " + std::to_string(p.channels) +
         (planes ? " planar" : " interleaved") + ", box (" + std::to_string(box.top) + ", " +
         std::to_string(box.left) + ", " + std::to_string(box.height) + ", " + std::to_string(box.width) + ") to " +
         std::to_string(out_height) + " x " + std::to_string(out_width) + ", " + filter_name(f);
}

// Both codes on one case, in both layouts: the same bytes from all four.
void expect_codes_agree(const Picture& p, const CropBox& box, int out_height, int out_width, Interpolation f) {
  const std::vector<uint8_t> reference = resized(p, true, box, out_height, out_width, f, ResampleCode::kScalar);
  for (const bool planes : {true, false}) {
    const std::string what = case_text(p, box, out_height, out_width, f, planes);
    const std::vector<uint8_t> scalar = resized(p, planes, box, out_height, out_width, f, ResampleCode::kScalar);
    const std::vector<uint8_t> best = resized(p, planes, box, out_height, out_width, f, ResampleCode::kBest);
    ASSERT_EQ(scalar, reference) << what << ": the layouts differ";
    if (best != scalar) {
      size_t i = 0;
      while (best[i] == scalar[i]) ++i;
      FAIL() << what << ": the vector code differs from the scalar code first at byte " << i << " ("
             << int(best[i]) << " against " << int(scalar[i]) << ")";
    }
  }
}

TEST(Resample, VectorCodeIsTheScalarCodeOnRandomCases) {
  if (!resample_vectorized()) GTEST_SKIP() << "this CPU has no vector code (the scalar code runs alone)";
  std::mt19937 rng(20260101);
  std::uniform_real_distribution<double> log_factor(std::log(1.0 / 90), std::log(4.0));
  for (int trial = 0; trial < 300; ++trial) {
    const int channels = trial % 2 == 0 ? 3 : 1;
    const int height = 1 + static_cast<int>(rng() % 300), width = 1 + static_cast<int>(rng() % 300);
    const Picture p = picture(height, width, channels, rng);
    CropBox box;
    box.height = 1 + static_cast<int>(rng() % height);
    box.width = 1 + static_cast<int>(rng() % width);
    // A third of the boxes reach the last row and column.
    const bool at_end = trial % 3 == 0;
    box.top = at_end ? height - box.height : static_cast<int>(rng() % (height - box.height + 1));
    box.left = at_end ? width - box.width : static_cast<int>(rng() % (width - box.width + 1));
    const auto out_side = [&](int side) {
      const int mode = static_cast<int>(rng() % 5);
      if (mode == 0) return side;  // this pass skipped
      return std::max(1, static_cast<int>(std::lround(side * std::exp(log_factor(rng)))));
    };
    const int out_height = out_side(box.height), out_width = out_side(box.width);
    expect_codes_agree(p, box, out_height, out_width, kFilters[trial / 2 % 2]);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(Resample, VectorCodeIsTheScalarCodeAtLargeShrinks) {
  if (!resample_vectorized()) GTEST_SKIP() << "this CPU has no vector code (the scalar code runs alone)";
  std::mt19937 rng(7);
  const Picture p = picture(270, 450, 3, rng);
  for (const Interpolation f : kFilters) {
    for (const int factor : {10, 30, 45, 90}) {
      expect_codes_agree(p, CropBox{0, 0, 270, 450}, std::max(1, 270 / factor), 450 / factor, f);
      expect_codes_agree(p, CropBox{0, 0, 270, 450}, 270 / factor * 4, 450 / factor, f);  // down one way, up the other
    }
  }
}

TEST(Resample, EdgeCases) {
  if (!resample_vectorized()) GTEST_SKIP() << "this CPU has no vector code (the scalar code runs alone)";
  std::mt19937 rng(11);
  for (const int channels : {1, 3}) {
    const Picture p = picture(37, 53, channels, rng);
    const Picture dot = picture(1, 1, channels, rng);
    const Picture row = picture(1, 53, channels, rng);
    const Picture column = picture(37, 1, channels, rng);
    for (const Interpolation f : kFilters) {
      // One-pixel outputs, rows and columns.
      expect_codes_agree(p, CropBox{0, 0, 37, 53}, 1, 1, f);
      expect_codes_agree(p, CropBox{0, 0, 37, 53}, 1, 53, f);
      expect_codes_agree(p, CropBox{0, 0, 37, 53}, 37, 1, f);
      expect_codes_agree(p, CropBox{0, 0, 37, 53}, 1, 17, f);
      expect_codes_agree(p, CropBox{0, 0, 37, 53}, 9, 1, f);
      // One-pixel inputs, enlarged.
      expect_codes_agree(dot, CropBox{0, 0, 1, 1}, 5, 7, f);
      expect_codes_agree(dot, CropBox{0, 0, 1, 1}, 1, 33, f);
      expect_codes_agree(row, CropBox{0, 0, 1, 53}, 20, 9, f);
      expect_codes_agree(column, CropBox{0, 0, 37, 1}, 9, 20, f);
      expect_codes_agree(p, CropBox{36, 52, 1, 1}, 16, 16, f);
      // Boxes on the last row and column, widths around the vector widths.
      for (const int w : {7, 8, 9, 15, 16, 17, 24, 31, 33}) {
        expect_codes_agree(p, CropBox{37 - 20, 53 - w, 20, w}, 11, w + 3, f);
        expect_codes_agree(p, CropBox{37 - 20, 53 - w, 20, w}, 29, std::max(1, w / 2), f);
        expect_codes_agree(p, CropBox{37 - w, 53 - 20, w, 20}, w, 13, f);
      }
    }
  }
}

// Without a resize, the bytes of the box; with a size unchanged one way, that pass is skipped, as Pillow skips it:
// the other pass alone, each row (column) resampled as a one-row (one-column) image would be.
TEST(Resample, UnchangedSidesAreNotResampled) {
  std::mt19937 rng(3);
  const Picture p = picture(40, 60, 3, rng);
  for (const Interpolation f : kFilters) {
    const CropBox box{5, 7, 30, 41};
    const std::vector<uint8_t> same = resized(p, false, box, 30, 41, f, ResampleCode::kBest);
    for (int c = 0; c < 3; ++c) {
      for (int y = 0; y < 30; ++y) {
        for (int x = 0; x < 41; ++x) {
          ASSERT_EQ(same[(c * 30 + y) * 41 + x], p.interleaved[((y + 5) * 60 + x + 7) * 3 + c]);
        }
      }
    }
    const std::vector<uint8_t> across = resized(p, false, box, 30, 17, f, ResampleCode::kBest);
    for (int y = 0; y < 30; ++y) {
      const std::vector<uint8_t> one = resized(p, false, CropBox{box.top + y, box.left, 1, 41}, 1, 17, f,
                                               ResampleCode::kBest);
      for (int c = 0; c < 3; ++c) {
        for (int x = 0; x < 17; ++x) ASSERT_EQ(across[(c * 30 + y) * 17 + x], one[c * 17 + x]) << "row " << y;
      }
    }
  }
}

// The coefficients: each output's inputs inside [0, in), in order, and its weights summing to one (1 << 22) to
// within the rounding of each weight (half a unit each).
TEST(Resample, CoefficientsAreNormalisedWindowsInside) {
  for (const Interpolation f : kFilters) {
    for (const int in : {1, 2, 3, 7, 224, 375, 500}) {
      for (const int out : {1, 2, 5, 224, 900}) {
        const ResampleTaps t = resample_taps(in, out, f);
        ASSERT_EQ(t.first.size(), static_cast<size_t>(out));
        int previous = 0;
        for (int i = 0; i < out; ++i) {
          const std::string what = filter_name(f) + " " + std::to_string(in) + " -> " + std::to_string(out) +
                                   ", output " + std::to_string(i);
          ASSERT_GE(t.first[i], previous) << what;
          ASSERT_GE(t.count[i], 1) << what;
          ASSERT_LE(t.count[i], t.taps) << what;
          ASSERT_LE(t.first[i] + t.count[i], in) << what;
          previous = t.first[i];
          int64_t sum = 0;
          for (int j = 0; j < t.count[i]; ++j) sum += t.weights[static_cast<size_t>(i) * t.taps + j];
          EXPECT_LE(std::llabs(sum - (int64_t{1} << 22)), t.count[i]) << what;
        }
      }
    }
  }
}

// At a sharp edge the two filters differ; bilinear (no negative weights) rises monotonically, and both keep the
// flat sides' values exactly.
TEST(Resample, FiltersDifferAtAnEdgeAndKeepFlatSides) {
  Picture p{{}, {}, 8, 16, 1};
  p.interleaved.resize(8 * 16);
  for (int y = 0; y < 8; ++y) {
    for (int x = 0; x < 16; ++x) p.interleaved[y * 16 + x] = x < 8 ? 0 : 255;
  }
  p.planar = p.interleaved;
  const CropBox all{0, 0, 8, 16};
  const std::vector<uint8_t> bilinear = resized(p, false, all, 8, 40, kFilters[0], ResampleCode::kBest);
  const std::vector<uint8_t> bicubic = resized(p, false, all, 8, 40, kFilters[1], ResampleCode::kBest);
  EXPECT_NE(bilinear, bicubic);
  for (int x = 0; x + 1 < 40; ++x) EXPECT_LE(bilinear[x], bilinear[x + 1]) << "bilinear is monotone, at " << x;
  for (const auto* out : {&bilinear, &bicubic}) {
    EXPECT_EQ(out->front(), 0);
    EXPECT_EQ(out->back(), 255);
  }
}

}  // namespace
}  // namespace feedline::image_ops::detail
