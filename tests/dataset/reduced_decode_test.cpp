// ImageTransformOptions::reduced_decode on the photos of tests/data/images: the scale chosen for a box and an
// output size, outputs close to the whole decode's (equal where no scale is taken), PNG and WebP untouched,
// corrupt JPEGs still refused with their names, the same draws for the same seeds, and nothing changed when off.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "dataset/image_resample.h"
#include "feedline/dataset/image_transforms.h"
#include "feedline/io/error.h"
#include "test_paths.h"

namespace feedline {
namespace {

namespace steps = image_steps;
using image_ops::detail::reduced_scale_denom;
using image_ops::detail::scaled_box;

EncodedSample sample(const std::string& file) {
  const std::string path = feedline::testing::test_data_dir() + "/images/" + file;
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << path;
  std::stringstream s;
  s << f.rdbuf();
  return EncodedSample{s.str(), 0, file};
}

ImageTransform transform(std::vector<ImageStep> steps, bool reduced, bool gray = false) {
  ImageTransformOptions options;
  options.reduced_decode = reduced;
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

TEST(ReducedDecode, TheScaleIsTheSmallestThatLeavesTheBoxTheOutputsSize) {
  EXPECT_EQ(reduced_scale_denom({0, 0, 1792, 1792}, 224, 224), 8);
  EXPECT_EQ(reduced_scale_denom({5, 9, 1791, 1800}, 224, 224), 4);
  EXPECT_EQ(reduced_scale_denom({0, 0, 896, 895}, 224, 224), 2);
  EXPECT_EQ(reduced_scale_denom({0, 0, 448, 448}, 224, 224), 2);
  EXPECT_EQ(reduced_scale_denom({0, 0, 447, 4000}, 224, 224), 1);
  EXPECT_EQ(reduced_scale_denom({0, 0, 4000, 500}, 224, 224), 2);  // the narrower side decides
  EXPECT_EQ(reduced_scale_denom({0, 0, 400, 300}, 50, 30), 8);     // each side against its own output side
  EXPECT_EQ(reduced_scale_denom({0, 0, 100, 100}, 224, 224), 1);   // an enlargement
}

TEST(ReducedDecode, ABoxScalesByItsEdgesRoundedAndStaysInside) {
  const CropBox a = scaled_box({3, 5, 1795, 1000}, 8, 300, 200);  // edges 0.375, 224.75; 0.625, 125.625
  EXPECT_EQ(a.top, 0);
  EXPECT_EQ(a.height, 225);
  EXPECT_EQ(a.left, 1);
  EXPECT_EQ(a.width, 125);
  const CropBox whole = scaled_box({0, 0, 427, 640}, 8, 54, 80);  // 53.375 rows: the last, 3/8 covered, left out
  EXPECT_EQ(whole.height, 53);
  EXPECT_EQ(whole.width, 80);
  const CropBox thin = scaled_box({425, 0, 1, 640}, 4, 107, 160);  // 106.25 .. 106.5: one row, not none
  EXPECT_EQ(thin.top, 106);
  EXPECT_EQ(thin.height, 1);
  const CropBox edge = scaled_box({426, 636, 1, 4}, 8, 54, 80);  // 53.25 .. 53.375; 79.5 .. 80
  EXPECT_EQ(edge.top + edge.height, 54);
  EXPECT_EQ(edge.left + edge.width, 80);
  EXPECT_EQ(edge.width, 1);
}

struct Pipeline {
  const char* what;
  std::vector<ImageStep> steps;
  // Between reduced_decode on and off, on average over the draws (those only cropped included). Measured on these
  // photos: 2.4-3.7 levels for the small crops, 2.0-3.4 for the Resizes, and 0 for RandomResizedCrop(224): no box
  // of these photos is twice 224 pixels a side, so none is scaled, only cropped.
  double max_mean_difference;
};

TEST(ReducedDecode, OutputsAreCloseToTheWholeDecodesAndEqualWhereNoScaleIsTaken) {
  const std::vector<Pipeline> pipelines = {
      {"RandomResizedCrop(64)", {steps::RandomResizedCrop{64, 64}, steps::RandomHorizontalFlip{}}, 4.5},
      {"RandomResizedCrop(32, 48)", {steps::RandomResizedCrop{32, 48, 0.25, 1.0}}, 4.5},
      {"RandomResizedCrop(224)", {steps::RandomResizedCrop{224, 224}}, 0.01},
      {"Resize(40) CenterCrop(36)", {steps::Resize{{40}}, steps::CenterCrop{36, 36}}, 3.5},
      {"Resize((50, 70))", {steps::Resize{{50, 70}}}, 4.0},
  };
  const char* files[] = {"china.jpg", "chelsea_gray.jpg", "chelsea_cmyk.jpg", "chelsea_444_progressive.jpg"};
  for (const Pipeline& p : pipelines) {
    for (const char* file : files) {
      for (bool gray : {false, true}) {
        SCOPED_TRACE(std::string(p.what) + " on " + file + (gray ? " gray" : " rgb"));
        const ImageTransform off = transform(p.steps, false, gray), on = transform(p.steps, true, gray);
        const EncodedSample s = sample(file);
        const ImageInfo info = probe_image(s.bytes, file);
        double total = 0;
        int equal = 0, scaled = 0;
        const int draws = 12;
        for (int index = 0; index < draws; ++index) {
          SampleRng a(3, 0, index), b(3, 0, index), c(3, 0, index);
          const torch::Tensor want = off.make(s, a), got = on.make(s, b);
          ASSERT_EQ(got.sizes(), want.sizes());
          total += mean_abs_difference(got, want);
          // The box the first step works on, drawn as both transforms draw it.
          CropBox box{0, 0, info.height, info.width};
          int out_height = static_cast<int>(want.size(1)), out_width = static_cast<int>(want.size(2));
          if (const auto* rrc = std::get_if<steps::RandomResizedCrop>(&p.steps[0])) {
            box = image_ops::random_resized_crop_box(info.height, info.width, rrc->scale_min, rrc->scale_max,
                                                     rrc->ratio_min, rrc->ratio_max, c);
          } else {
            const auto& resize = std::get<steps::Resize>(p.steps[0]);
            std::tie(out_height, out_width) = image_ops::resize_size(info.height, info.width, resize.size);
          }
          if (reduced_scale_denom(box, out_height, out_width) == 1) {
            // Only cropped: the region's pixels are the whole decode's, so is the output.
            EXPECT_EQ(bytes_of(got), bytes_of(want)) << "draw " << index;
            ++equal;
          } else {
            ++scaled;
          }
        }
        EXPECT_LT(total / draws, p.max_mean_difference);
        if (std::string(p.what) == "RandomResizedCrop(64)") EXPECT_GT(scaled, 0);
      }
    }
  }
}

TEST(ReducedDecode, PngAndWebPDecodeWholeAndGiveTheSameBytes) {
  const std::vector<ImageStep> pipeline = {steps::RandomResizedCrop{32, 32}, steps::RandomHorizontalFlip{},
                                           steps::ToTensor{}, steps::Normalize{{0.5}, {0.25}}};
  const ImageTransform off = transform(pipeline, false), on = transform(pipeline, true);
  for (const char* file : {"chelsea.png", "chelsea_rgba.png", "chelsea_lossy.webp", "chelsea_lossless.webp"}) {
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

TEST(ReducedDecode, TheSameDrawsGiveTheSameBytes) {
  const ImageTransform on = transform({steps::RandomResizedCrop{40, 40}, steps::RandomHorizontalFlip{}}, true);
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

TEST(ReducedDecode, CorruptJpegsAreStillRefusedWithTheirNames) {
  const ImageTransform on = transform({steps::RandomResizedCrop{32, 32}}, true);
  EncodedSample cut = sample("china.jpg");
  cut.bytes.resize(cut.bytes.size() * 9 / 10);
  cut.name = "cut/china.jpg";
  for (const EncodedSample& s : {sample("china_truncated.jpg"), sample("truncated.jpg"), cut}) {
    for (int index = 0; index < 6; ++index) {  // boxes anywhere, the cut often below them
      SampleRng rng(2, 0, index);
      try {
        on.make(s, rng);
        ADD_FAILURE() << s.name << " decoded, draw " << index;
      } catch (const InvalidFile& e) {
        EXPECT_NE(std::string(e.what()).find(s.name + ": corrupt or truncated JPEG data"), std::string::npos)
            << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace feedline
