// The geometric and automatic-augmentation pixel steps on what needs no oracle: rotations by whole turns return
// the picture, quarter turns with expand are transpositions (through Pillow's shortcut and through the general
// warp), fills reach exactly the pixels outside, the draws depend on (seed, epoch, index) alone, and the
// arguments torchvision would refuse are refused. Their values against torchvision 0.14 on PIL images are
// checked by python/tests/test_geometry_augment.py.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "dataset/image_geometry.h"
#include "dataset/picture_ops.h"
#include "feedline/dataset/image_transforms.h"
#include "feedline/io/error.h"

namespace feedline {
namespace {

namespace steps = image_steps;

Picture random_picture(int channels, int height, int width, uint32_t seed) {
  std::mt19937 gen(seed);
  Picture p;
  p.resize(channels, height, width);
  for (auto& v : p.pixels) v = static_cast<uint8_t>(gen() & 0xFF);
  return p;
}

uint8_t at(const Picture& p, int c, int y, int x) { return p.plane(c)[static_cast<size_t>(y) * p.width + x]; }

Picture run(const ImageStep& step, const Picture& in, uint64_t seed = 1, int64_t epoch = 0, int64_t index = 0) {
  const PictureOpPtr op = make_picture_op(step);
  EXPECT_NE(op, nullptr);
  Picture picture = in, scratch;
  SampleRng rng(seed, epoch, index);
  op->apply(picture, rng, scratch);
  return picture;
}

steps::RandomRotation rotation(double degrees) {
  steps::RandomRotation s;
  s.degrees_min = s.degrees_max = degrees;
  return s;
}

TEST(ImageGeometry, WholeTurnsAndIdentityAffineReturnThePicture) {
  for (int channels : {1, 3}) {
    const Picture in = random_picture(channels, 13, 17, 7);
    for (double degrees : {0.0, 360.0, -360.0, 720.0}) {
      for (auto mode : {steps::WarpInterpolation::kNearest, steps::WarpInterpolation::kBilinear}) {
        steps::RandomRotation s = rotation(degrees);
        s.interpolation = mode;
        EXPECT_EQ(run(s, in).pixels, in.pixels) << degrees;
      }
    }
    steps::RandomAffine affine;  // degrees (0, 0), no translation, scale 1, no shear
    for (auto mode : {steps::WarpInterpolation::kNearest, steps::WarpInterpolation::kBilinear}) {
      affine.interpolation = mode;
      EXPECT_EQ(run(affine, in).pixels, in.pixels);
    }
  }
}

// in rotated a quarter turn counter-clockwise (quarters 1), a half turn (2) or three quarters (3).
Picture turned(const Picture& in, int quarters) {
  Picture out;
  const int h = in.height, w = in.width;
  if (quarters == 2) {
    out.resize(in.channels, h, w);
  } else {
    out.resize(in.channels, w, h);
  }
  for (int c = 0; c < in.channels; ++c) {
    for (int y = 0; y < out.height; ++y) {
      for (int x = 0; x < out.width; ++x) {
        uint8_t v = 0;
        if (quarters == 1) v = at(in, c, x, w - 1 - y);       // column w-1-y of the input becomes row y
        if (quarters == 2) v = at(in, c, h - 1 - y, w - 1 - x);
        if (quarters == 3) v = at(in, c, h - 1 - x, y);
        out.plane(c)[static_cast<size_t>(y) * out.width + x] = v;
      }
    }
  }
  return out;
}

TEST(ImageGeometry, QuarterTurnsWithExpandAreTranspositions) {
  // Even sides: the corners of the turned picture land on whole pixels (with an odd side, Pillow's general warp
  // about the centre bounds them one pixel wider, as this one does).
  const Picture in = random_picture(3, 6, 8, 11);
  const std::vector<uint8_t> fill(3, 0);
  for (double degrees : {90.0, 180.0, 270.0, -90.0, 450.0}) {
    const int quarters = (static_cast<int>(degrees) % 360 + 360) % 360 / 90;
    const Picture expected = turned(in, quarters);
    // Pillow's transpose shortcut (no centre given)...
    steps::RandomRotation s = rotation(degrees);
    s.expand = true;
    const Picture shortcut = run(s, in);
    EXPECT_EQ(shortcut.height, expected.height);
    EXPECT_EQ(shortcut.width, expected.width);
    EXPECT_EQ(shortcut.pixels, expected.pixels) << degrees;
    // ...and the general warp, about the same centre given explicitly, nearest and bilinear alike: every output
    // pixel's centre lands on an input pixel's centre.
    for (auto mode : {steps::WarpInterpolation::kNearest, steps::WarpInterpolation::kBilinear}) {
      Picture picture = in, scratch;
      geometry::rotate(picture, degrees, mode, true, std::make_pair(in.width / 2.0, in.height / 2.0), fill,
                       scratch);
      EXPECT_EQ(picture.height, expected.height) << degrees;
      EXPECT_EQ(picture.width, expected.width) << degrees;
      EXPECT_EQ(picture.pixels, expected.pixels) << degrees;
    }
  }
  // Without expand, a square picture turns in place; a half turn keeps any picture's size.
  const Picture square = random_picture(1, 8, 8, 3);
  EXPECT_EQ(run(rotation(90), square).pixels, turned(square, 1).pixels);
  const Picture odd = random_picture(3, 5, 9, 12);
  EXPECT_EQ(run(rotation(180), odd).pixels, turned(odd, 2).pixels);
  steps::RandomRotation s = rotation(-90);
  s.expand = true;
  EXPECT_EQ(run(s, odd).pixels, turned(odd, 3).pixels);
}

TEST(ImageGeometry, FillsExactlyThePixelsOutside) {
  const Picture in = random_picture(3, 21, 21, 5);
  steps::RandomRotation s = rotation(45);
  s.fill = steps::WarpFill{{10, 20.7, 30}, true};  // truncated to integers, as torchvision does for PIL images
  const Picture out = run(s, in);
  const uint8_t expected[3] = {10, 20, 30};
  for (int c = 0; c < 3; ++c) {
    // The corners are outside the rotated picture, the centre inside (and a rotation about the centre pixel's
    // centre keeps it).
    EXPECT_EQ(at(out, c, 0, 0), expected[c]);
    EXPECT_EQ(at(out, c, 20, 20), expected[c]);
    EXPECT_EQ(at(out, c, 0, 20), expected[c]);
    EXPECT_EQ(at(out, c, 10, 10), at(in, c, 10, 10));
  }
  // A translation by 3 columns: the first 3 columns are the fill, the rest the picture shifted.
  Picture shifted = in, scratch;
  geometry::affine(shifted, 0, 3, 0, 1, 0, 0, steps::WarpInterpolation::kNearest, {1, 2, 3}, std::nullopt, scratch);
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < in.height; ++y) {
      for (int x = 0; x < in.width; ++x) {
        EXPECT_EQ(at(shifted, c, y, x), x < 3 ? c + 1 : at(in, c, y, x - 3));
      }
    }
  }
  // One value for every channel; a sequence must have one per channel, and each value must be a byte.
  EXPECT_EQ(geometry::fill_bytes(steps::WarpFill{{7}, false}, 3, "t"), (std::vector<uint8_t>{7, 7, 7}));
  EXPECT_EQ(geometry::fill_bytes(steps::WarpFill{}, 1, "t"), (std::vector<uint8_t>{0}));
  EXPECT_THROW(geometry::fill_bytes(steps::WarpFill{{1, 2}, true}, 3, "t"), InvalidArgument);
  EXPECT_THROW(geometry::fill_bytes(steps::WarpFill{{256}, false}, 3, "t"), InvalidArgument);
  s.fill = steps::WarpFill{{1, 2}, true};
  EXPECT_THROW(run(s, in), InvalidArgument);
}

TEST(ImageGeometry, ExpandGrowsTheOutput) {
  steps::RandomRotation s = rotation(30);
  s.expand = true;
  EXPECT_FALSE(make_picture_op(s)->keeps_size());
  EXPECT_TRUE(make_picture_op(rotation(30))->keeps_size());
  const Picture out = run(s, random_picture(3, 10, 20, 9));
  // The bounding box of the rotated corners: w' = ceil(|w cos| + |h sin|) at most one more than the exact width.
  EXPECT_GE(out.width, 20 * std::cos(M_PI / 6) + 10 * std::sin(M_PI / 6));
  EXPECT_LE(out.width, 20 * std::cos(M_PI / 6) + 10 * std::sin(M_PI / 6) + 2);
  EXPECT_GE(out.height, 10 * std::cos(M_PI / 6) + 20 * std::sin(M_PI / 6));
  EXPECT_LE(out.height, 10 * std::cos(M_PI / 6) + 20 * std::sin(M_PI / 6) + 2);
}

TEST(ImageGeometry, DrawsDependOnSeedEpochAndIndexAlone) {
  const Picture in = random_picture(3, 24, 32, 13);
  steps::RandomAffine affine;
  affine.degrees_min = -30;
  affine.degrees_max = 30;
  affine.has_translate = true;
  affine.translate_x = affine.translate_y = 0.2;
  affine.shear = {-10, 10};
  const std::vector<ImageStep> all = {affine, steps::RandomRotation{-40, 40}, steps::AutoAugment{},
                                      steps::RandAugment{}, steps::TrivialAugmentWide{}};
  for (const ImageStep& step : all) {
    const std::string name = make_picture_op(step)->describe();
    std::set<std::vector<uint8_t>> outputs;
    for (int64_t index = 0; index < 24; ++index) {
      const Picture a = run(step, in, 5, 2, index);
      EXPECT_EQ(a.pixels, run(step, in, 5, 2, index).pixels) << name;  // the same draws again
      outputs.insert(a.pixels);
    }
    EXPECT_GT(outputs.size(), 3u) << name;  // and different ones for different samples
    int differ = 0;  // another seed or epoch draws otherwise
    for (int64_t index = 0; index < 8; ++index) {
      differ += run(step, in, 5, 2, index).pixels != run(step, in, 6, 2, index).pixels;
      differ += run(step, in, 5, 2, index).pixels != run(step, in, 5, 3, index).pixels;
    }
    EXPECT_GT(differ, 2) << name;
  }
}

TEST(ImageGeometry, RefusesWhatTorchvisionRefuses) {
  steps::RandomRotation reversed = rotation(0);
  reversed.degrees_min = 10;
  EXPECT_THROW(make_picture_op(reversed), InvalidArgument);
  steps::RandomAffine affine;
  affine.has_translate = true;
  affine.translate_x = 1.5;
  EXPECT_THROW(make_picture_op(affine), InvalidArgument);
  affine = steps::RandomAffine{};
  affine.has_scale = true;
  affine.scale_min = 0;
  EXPECT_THROW(make_picture_op(affine), InvalidArgument);
  affine = steps::RandomAffine{};
  affine.shear = {1, 2, 3};
  EXPECT_THROW(make_picture_op(affine), InvalidArgument);
  steps::RandAugment rand;
  rand.magnitude = 31;  // of 31 bins: not a bin
  EXPECT_THROW(make_picture_op(rand), InvalidArgument);
  rand.magnitude = -1;
  EXPECT_THROW(make_picture_op(rand), InvalidArgument);
  steps::TrivialAugmentWide trivial;
  trivial.num_magnitude_bins = 1;
  EXPECT_THROW(make_picture_op(trivial), InvalidArgument);
  Picture picture = random_picture(3, 4, 4, 1), scratch;
  EXPECT_THROW(apply_augment_op(picture, "Blur", 0, steps::WarpInterpolation::kNearest, {0, 0, 0}, scratch),
               InvalidArgument);
}

TEST(ImageGeometry, DescribesAsTorchvision) {
  EXPECT_EQ(make_picture_op(steps::RandAugment{})->describe(),
            "RandAugment(num_ops=2, magnitude=9, num_magnitude_bins=31, interpolation=InterpolationMode.NEAREST, "
            "fill=None)");
  EXPECT_EQ(make_picture_op(steps::AutoAugment{})->describe(),
            "AutoAugment(policy=AutoAugmentPolicy.IMAGENET, fill=None)");
  steps::RandomRotation s = rotation(0);
  s.degrees_min = -30;
  s.degrees_max = 30;
  EXPECT_EQ(make_picture_op(s)->describe(), "RandomRotation(degrees=[-30.0, 30.0], interpolation=nearest, "
                                            "expand=False, fill=0)");
}

}  // namespace
}  // namespace feedline
