// ImageTransformOptions::reduced_decode on the photos of tests/data/images: the n/8 chosen for a box and an output
// size, the box mapped into the scaled picture, the outputs of every JPEG and WebP equal to the whole decode's by
// default and close to them with reduced_scale_shrink, PNG untouched, corrupt files still refused with their
// names, the same draws for the same seeds, and nothing changed when off.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "dataset/image_resample.h"
#include "feedline/dataset/image_transforms.h"
#include "feedline/io/error.h"
#include "test_paths.h"

namespace feedline {
namespace {

namespace steps = image_steps;
using image_ops::detail::reduced_scale_eighths;
using image_ops::detail::scaled_box;

EncodedSample sample(const std::string& file) {
  const std::string path = feedline::testing::test_data_dir() + "/images/" + file;
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << path;
  std::stringstream s;
  s << f.rdbuf();
  return EncodedSample{s.str(), 0, file};
}

ImageTransform transform(std::vector<ImageStep> steps, bool reduced, bool gray = false, double shrink = 0) {
  ImageTransformOptions options;
  options.reduced_decode = reduced;
  options.reduced_scale_shrink = shrink;
  options.decode.gray = gray;
  return ImageTransform(std::move(steps), options);
}

std::vector<uint8_t> bytes_of(const torch::Tensor& t) {
  const auto* p = t.data_ptr<uint8_t>();
  return std::vector<uint8_t>(p, p + t.numel());
}

double mean_abs_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kFloat32) - b.to(torch::kFloat32)).abs().mean().item<double>();
}

// How much a C x H x W output changes from a pixel to its right-hand neighbour, on average: what moving the
// picture by a whole output pixel would change.
double neighbour_difference(const torch::Tensor& t) {
  const int64_t w = t.size(2);
  return mean_abs_difference(t.narrow(2, 1, w - 1), t.narrow(2, 0, w - 1));
}

const char* const kJpegs[] = {"china.jpg", "chelsea_gray.jpg", "chelsea_cmyk.jpg", "chelsea_444_progressive.jpg"};
const char* const kWebps[] = {"chelsea_lossy.webp", "chelsea_lossless.webp", "chelsea_alpha.webp"};

// The box the first step of `steps` works on, drawn as a transform draws it, and its output size.
std::tuple<CropBox, int, int> first_box(const std::vector<ImageStep>& steps, const ImageInfo& info, SampleRng& rng) {
  if (const auto* rrc = std::get_if<steps::RandomResizedCrop>(&steps[0])) {
    return {image_ops::random_resized_crop_box(info.height, info.width, rrc->scale_min, rrc->scale_max,
                                               rrc->ratio_min, rrc->ratio_max, rng),
            static_cast<int>(rrc->height), static_cast<int>(rrc->width)};
  }
  const auto& resize = std::get<steps::Resize>(steps[0]);
  const auto [h, w] = image_ops::resize_size(info.height, info.width, resize.size);
  return {CropBox{0, 0, info.height, info.width}, h, w};
}

TEST(ReducedDecode, TheScaleIsTheSmallestNOver8ThatLeavesTheBoxTheShrinkAsked) {
  EXPECT_EQ(reduced_scale_eighths({0, 0, 1792, 1792}, 224, 224, 1.0), 1);  // 1792 / 8 = 224
  EXPECT_EQ(reduced_scale_eighths({5, 9, 1791, 1800}, 224, 224, 1.0), 2);  // 1791 / 8 < 224
  EXPECT_EQ(reduced_scale_eighths({0, 0, 448, 448}, 224, 224, 1.0), 4);
  EXPECT_EQ(reduced_scale_eighths({0, 0, 260, 300}, 224, 224, 1.0), 7);   // 6/8 of 260 = 195, 7/8 = 227.5
  EXPECT_EQ(reduced_scale_eighths({0, 0, 447, 4000}, 224, 224, 1.0), 5);  // the narrower side decides: 4/8 of 447 < 224
  EXPECT_EQ(reduced_scale_eighths({0, 0, 400, 300}, 100, 30, 1.0), 2);    // each side against its own output side
  EXPECT_EQ(reduced_scale_eighths({0, 0, 100, 100}, 224, 224, 1.0), 8);   // an enlargement
  EXPECT_EQ(reduced_scale_eighths({0, 0, 448, 448}, 224, 224, 2.0), 8);   // twice the output: no smaller scale
  EXPECT_EQ(reduced_scale_eighths({0, 0, 1000, 1000}, 224, 224, 2.0), 4);  // 3/8 of 1000 = 375 < 448, 4/8 = 500
}

TEST(ReducedDecode, ABoxScalesByItsEdgesRoundedAndStaysInside) {
  const CropBox a = scaled_box({3, 5, 1795, 1000}, 1 / 8.0, 1 / 8.0, 300, 200);  // 0.375, 224.75; 0.625, 125.625
  EXPECT_EQ(a.top, 0);
  EXPECT_EQ(a.height, 225);
  EXPECT_EQ(a.left, 1);
  EXPECT_EQ(a.width, 125);
  const CropBox seven = scaled_box({3, 5, 100, 200}, 7 / 8.0, 7 / 8.0, 374, 560);  // 2.625, 90.125; 4.375, 179.375
  EXPECT_EQ(seven.top, 3);
  EXPECT_EQ(seven.height, 87);
  EXPECT_EQ(seven.left, 4);
  EXPECT_EQ(seven.width, 175);
  const CropBox whole = scaled_box({0, 0, 427, 640}, 1 / 8.0, 1 / 8.0, 54, 80);  // 53.375 rows: the last left out
  EXPECT_EQ(whole.height, 53);
  EXPECT_EQ(whole.width, 80);
  const CropBox thin = scaled_box({425, 0, 1, 640}, 1 / 4.0, 1 / 4.0, 107, 160);  // 106.25 .. 106.5: a row, not none
  EXPECT_EQ(thin.top, 106);
  EXPECT_EQ(thin.height, 1);
  const CropBox edge = scaled_box({426, 636, 1, 4}, 1 / 8.0, 1 / 8.0, 54, 80);  // 53.25 .. 53.375; 79.5 .. 80
  EXPECT_EQ(edge.top + edge.height, 54);
  EXPECT_EQ(edge.left + edge.width, 80);
  EXPECT_EQ(edge.width, 1);
  const CropBox across = scaled_box({10, 10, 20, 20}, 0.5, 0.25, 50, 50);  // each axis its own scale
  EXPECT_EQ(across.top, 5);
  EXPECT_EQ(across.height, 10);
  EXPECT_EQ(across.left, 3);  // 2.5 rounds away from zero
  EXPECT_EQ(across.width, 5);  // 7.5 -> 8
}

const std::vector<std::pair<const char*, std::vector<ImageStep>>>& pipelines() {
  static const std::vector<std::pair<const char*, std::vector<ImageStep>>> kPipelines = {
      {"RandomResizedCrop(64)", {steps::RandomResizedCrop{64, 64}, steps::RandomHorizontalFlip{}}},
      {"RandomResizedCrop(32, 48)", {steps::RandomResizedCrop{32, 48, 0.25, 1.0}}},
      {"RandomResizedCrop(224)", {steps::RandomResizedCrop{224, 224}}},
      {"Resize(40) CenterCrop(36)", {steps::Resize{{40}}, steps::CenterCrop{36, 36}}},
      {"Resize((50, 70))", {steps::Resize{{50, 70}}}},
  };
  return kPipelines;
}

TEST(ReducedDecode, ByDefaultEveryJpegAndWebPGivesTheWholeDecodesOutput) {
  EXPECT_TRUE(ImageTransformOptions{}.reduced_decode);
  EXPECT_EQ(ImageTransformOptions{}.reduced_scale_shrink, 0);
  for (const auto& [what, pipeline] : pipelines()) {
    for (const char* const* files : {std::begin(kJpegs), std::begin(kWebps)}) {
      const bool jpegs = files == std::begin(kJpegs);
      for (size_t f = 0; f < (jpegs ? std::size(kJpegs) : std::size(kWebps)); ++f) {
        for (bool gray : {false, true}) {
          SCOPED_TRACE(std::string(what) + " on " + files[f] + (gray ? " gray" : " rgb"));
          ImageTransformOptions options;
          options.decode.gray = gray;
          const ImageTransform off = transform(pipeline, false, gray), on(pipeline, options);
          const EncodedSample s = sample(files[f]);
          for (int index = 0; index < 10; ++index) {
            SampleRng a(3, 0, index), b(3, 0, index);
            EXPECT_EQ(bytes_of(on.make(s, b)), bytes_of(off.make(s, a))) << "draw " << index;
          }
        }
      }
    }
  }
}

TEST(ReducedDecode, ScaledOutputsAreTheScaledPicturesBoxResampled) {
  // With reduced_scale_shrink, a JPEG's output is the box mapped into the whole picture at the n/8 chosen, then
  // resampled: the window decoded holds the mapped box exactly.
  for (const auto& [what, pipeline] : pipelines()) {
    if (pipeline.size() != 1) continue;  // the first step's output is the transform's
    for (const char* file : kJpegs) {
      SCOPED_TRACE(std::string(what) + " on " + file);
      const ImageTransform on = transform(pipeline, true, false, 1.0);
      const EncodedSample s = sample(file);
      const ImageInfo info = probe_image(s.bytes, file);
      int scaled = 0;
      for (int index = 0; index < 10; ++index) {
        SampleRng a(4, 0, index), b(4, 0, index);
        const torch::Tensor got = on.make(s, a);
        const auto [box, out_height, out_width] = first_box(pipeline, info, b);
        const int n = reduced_scale_eighths(box, out_height, out_width, 1.0);
        if (n == 8) continue;
        ++scaled;
        const int h = jpeg_scaled_size(info.height, n, 8), w = jpeg_scaled_size(info.width, n, 8);
        const DecodedImage picture = decode_jpeg_region(s.bytes, file, {}, n, 8, {0, 0, h, w}).image;
        const CropBox mapped = scaled_box(box, n / 8.0, n / 8.0, h, w);
        std::vector<uint8_t> want(3 * static_cast<size_t>(out_height) * out_width);
        image_ops::resized_crop_planes(picture, mapped, out_height, out_width, want.data(),
                                       Interpolation::kBilinear);
        EXPECT_EQ(bytes_of(got), want) << "draw " << index << " at " << n << "/8";
      }
      if (std::string(what) != "RandomResizedCrop(224)") EXPECT_GT(scaled, 0);
    }
  }
}

TEST(ReducedDecode, ScaledOutputsOfEveryJpegAndWebPAreCloseToTheWholeDecodes) {
  // Closer than a move by one output pixel would make them: the smaller decode blurs and shifts by less.
  for (const auto& [what, pipeline] : pipelines()) {
    for (const char* const* files : {std::begin(kJpegs), std::begin(kWebps)}) {
      const bool jpegs = files == std::begin(kJpegs);
      for (size_t f = 0; f < (jpegs ? std::size(kJpegs) : std::size(kWebps)); ++f) {
        for (bool gray : {false, true}) {
          SCOPED_TRACE(std::string(what) + " on " + files[f] + (gray ? " gray" : " rgb"));
          const ImageTransform off = transform(pipeline, false, gray), on = transform(pipeline, true, gray, 1.0);
          const EncodedSample s = sample(files[f]);
          double difference = 0, neighbours = 0;
          for (int index = 0; index < 10; ++index) {
            SampleRng a(6, 0, index), b(6, 0, index);
            const torch::Tensor want = off.make(s, a), got = on.make(s, b);
            ASSERT_EQ(got.sizes(), want.sizes());
            difference += mean_abs_difference(got, want);
            neighbours += neighbour_difference(want);
          }
          EXPECT_LT(difference, neighbours);
        }
      }
    }
  }
}

TEST(ReducedDecode, AWebPWindowIsTheWholeDecodesPixels) {
  for (const char* file : kWebps) {
    const EncodedSample s = sample(file);
    for (bool gray : {false, true}) {
      DecodeOptions options;
      options.gray = gray;
      const DecodedImage whole = decode_image(s.bytes, file, options);
      const int c = whole.channels;
      for (const ImageRegion window : {ImageRegion{0, 0, whole.height, whole.width}, ImageRegion{1, 3, 17, 29},
                                       ImageRegion{whole.height - 5, whole.width - 7, 5, 7}, ImageRegion{2, 2, 1, 1},
                                       ImageRegion{37, 51, 100, 120}}) {
        SCOPED_TRACE(std::string(file) + (gray ? " gray" : " rgb") + " at " + std::to_string(window.top) + ", " +
                     std::to_string(window.left));
        const DecodedImage got = decode_webp_window(s.bytes, file, options, window, window.height, window.width);
        ASSERT_EQ(got.height, window.height);
        ASSERT_EQ(got.width, window.width);
        ASSERT_EQ(got.channels, c);
        int differing = 0;
        for (int y = 0; y < window.height; ++y) {
          for (int x = 0; x < window.width * c; ++x) {
            differing += got.pixels[(static_cast<size_t>(y) * window.width) * c + x] !=
                         whole.pixels[(static_cast<size_t>(y + window.top) * whole.width + window.left) * c + x];
          }
        }
        EXPECT_EQ(differing, 0);
      }
      const DecodedImage small = decode_webp_window(s.bytes, file, options, {10, 20, 100, 80}, 50, 40);
      EXPECT_EQ(small.height, 50);
      EXPECT_EQ(small.width, 40);
      EXPECT_EQ(small.pixels.size(), 50u * 40u * c);
    }
  }
  const std::string lossy = sample("chelsea_lossy.webp").bytes;
  const auto refused = [&](const ImageRegion& window, int height, int width, const char* part) {
    try {
      decode_webp_window(lossy, "x.webp", {}, window, height, width);
      ADD_FAILURE() << "decoded " << part;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  refused({1, 0, 10, 10}, 5, 5, "starts at even coordinates");
  refused({0, 0, 10, 10}, 11, 10, "only shrinks");
  refused({0, 0, 0, 10}, 1, 1, "is not a part of the picture");
  refused({0, -2, 10, 10}, 5, 5, "is not a part of the picture");
  try {
    decode_webp_window(sample("china.jpg").bytes, "x.jpg", {}, {0, 0, 4, 4}, 4, 4);
    ADD_FAILURE() << "decoded a JPEG";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("WebP data, not JPEG"), std::string::npos) << e.what();
  }
}

TEST(ReducedDecode, PngsDecodeWholeAndGiveTheSameBytes) {
  const std::vector<ImageStep> pipeline = {steps::RandomResizedCrop{32, 32}, steps::RandomHorizontalFlip{},
                                           steps::ToTensor{}, steps::Normalize{{0.5}, {0.25}}};
  const ImageTransform off = transform(pipeline, false), on = transform(pipeline, true, false, 1.0);
  for (const char* file : {"chelsea.png", "chelsea_rgba.png"}) {
    SCOPED_TRACE(file);
    const EncodedSample s = sample(file);
    for (int index = 0; index < 8; ++index) {
      SampleRng a(5, 1, index), b(5, 1, index);
      torch::Tensor want = torch::empty({3, 32, 32}, torch::kFloat32), got = torch::empty_like(want);
      off.apply(s, a, want);
      on.apply(s, b, got);
      EXPECT_TRUE(torch::equal(got, want)) << "draw " << index;
    }
  }
}

TEST(ReducedDecode, AShrinkBelowOneIsRefused) {
  for (const double shrink : {0.5, -1.0, std::nan("")}) {
    try {
      transform({steps::RandomResizedCrop{8, 8}}, true, false, shrink);
      ADD_FAILURE() << shrink;
    } catch (const OptionError& e) {
      EXPECT_EQ(e.option(), "reduced_scale_shrink");
    }
  }
}

TEST(ReducedDecode, TheSameDrawsGiveTheSameBytes) {
  const ImageTransform on =
      transform({steps::RandomResizedCrop{40, 40}, steps::RandomHorizontalFlip{}}, true, false, 1.0);
  const EncodedSample s = sample("china.jpg");
  std::vector<std::vector<uint8_t>> first;
  for (int index = 0; index < 10; ++index) {
    SampleRng rng(9, 2, index);
    first.push_back(bytes_of(on.make(s, rng)));
  }
  for (int index = 9; index >= 0; --index) {  // in another order, after other samples
    SampleRng rng(9, 2, index);
    EXPECT_EQ(bytes_of(on.make(s, rng)), first[index]) << "draw " << index;
  }
  SampleRng other(10, 2, 0);
  EXPECT_NE(bytes_of(on.make(s, other)), first[0]);
}

TEST(ReducedDecode, OffIsTheWholeDecodeCroppedAndResampled) {
  const ImageTransform off = transform({steps::RandomResizedCrop{48, 48}}, false);
  const EncodedSample s = sample("china.jpg");
  const DecodedImage whole = decode_image(s.bytes, s.name);
  for (int index = 0; index < 6; ++index) {
    SampleRng a(1, 0, index), b(1, 0, index);
    const CropBox box = image_ops::random_resized_crop_box(whole.height, whole.width, 0.08, 1.0, 3.0 / 4, 4.0 / 3, b);
    std::vector<uint8_t> want(3 * 48 * 48);
    image_ops::resized_crop_planes(whole, box, 48, 48, want.data());
    EXPECT_EQ(bytes_of(off.make(s, a)), want) << "draw " << index;
  }
}

TEST(ReducedDecode, CorruptFilesAreStillRefusedWithTheirNames) {
  EncodedSample cut = sample("china.jpg");
  cut.bytes.resize(cut.bytes.size() * 9 / 10);
  cut.name = "cut/china.jpg";
  EncodedSample cut_webp = sample("chelsea_lossy.webp");
  cut_webp.bytes.resize(cut_webp.bytes.size() * 9 / 10);
  cut_webp.name = "cut/chelsea_lossy.webp";
  for (const double shrink : {0.0, 1.0}) {
    const ImageTransform on = transform({steps::RandomResizedCrop{32, 32}}, true, false, shrink);
    for (const EncodedSample& s : {sample("china_truncated.jpg"), sample("truncated.jpg"), cut,
                                   sample("chelsea_lossy_truncated.webp"), cut_webp}) {
      const std::string format = s.name.find(".webp") != std::string::npos ? "WebP" : "JPEG";
      for (int index = 0; index < 6; ++index) {  // boxes anywhere, the cut often below them
        SampleRng rng(2, 0, index);
        try {
          on.make(s, rng);
          ADD_FAILURE() << s.name << " decoded, draw " << index << ", shrink " << shrink;
        } catch (const InvalidFile& e) {
          EXPECT_NE(std::string(e.what()).find(s.name + ": corrupt or truncated " + format + " data"),
                    std::string::npos)
              << e.what();
        }
      }
    }
  }
}

}  // namespace
}  // namespace feedline
