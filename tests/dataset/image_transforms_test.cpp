// The image transforms against torchvision 0.14 on PIL images (run by /usr/bin/python3 as an oracle) on the photos
// of tests/data/images: resampled crops, Resize, CenterCrop, hflip, ToTensor and Normalize, in RGB and gray; the
// random crop's boxes and their spread; determinism; the errors; and the transform inside a dataset and loader.
#include "feedline/dataset/image_transforms.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/loader/loader.h"
#include "test_paths.h"

namespace feedline {
namespace {

namespace steps = image_steps;

std::string images_dir() { return feedline::testing::test_data_dir() + "/images"; }

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << path;
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string image_bytes(const std::string& file) { return slurp(images_dir() + "/" + file); }

DecodedImage decoded(const std::string& file, bool gray = false) {
  DecodeOptions options;
  options.gray = gray;
  return decode_image(image_bytes(file), file, options);
}

bool have_torchvision() {
  return std::system("/usr/bin/python3 -W ignore -c 'import torchvision' >/dev/null 2>&1") == 0;
}

// Runs every case through torchvision in one Python process: case i is `file`, opened and converted to `mode`
// ("RGB" or "L"), given to the Python expression `call` (a function of the PIL image, with torchvision's T and F
// in scope); its result, a PIL image or a tensor, is written as channels x height x width (uint8 or float32).
struct OracleCase {
  std::string file, mode, call;
};
struct OracleResult {
  std::vector<int64_t> sizes;
  std::string dtype;  // "uint8" or "float32"
  std::string bytes;
};

const char kOracle[] = R"PY(
import sys, numpy as np, torch
from PIL import Image
import torchvision.transforms as T
import torchvision.transforms.functional as F
images, out = sys.argv[1], sys.argv[2]
for i, line in enumerate(open(out + "/cases.txt")):
    file, mode, call = line.rstrip("\n").split("\t")
    img = Image.open(images + "/" + file).convert(mode)
    r = eval(call)(img)
    if isinstance(r, Image.Image):
        r = torch.from_numpy(np.asarray(r).copy())
        r = r.unsqueeze(0) if r.dim() == 2 else r.permute(2, 0, 1)
    r = r.contiguous()
    open(out + "/%d.raw" % i, "wb").write(r.numpy().tobytes())
    print(i, str(r.dtype).replace("torch.", ""), " ".join(str(s) for s in r.shape))
)PY";

std::vector<OracleResult> torchvision(const std::vector<OracleCase>& cases) {
  static int run = 0;
  const std::string dir = feedline::testing::scratch_dir("image_transforms_oracle_" + std::to_string(run++));
  {
    std::ofstream script(dir + "/oracle.py");
    script << kOracle;
    std::ofstream list(dir + "/cases.txt");
    for (const OracleCase& c : cases) list << c.file << '\t' << c.mode << '\t' << c.call << '\n';
  }
  const std::string command = "/usr/bin/python3 -W ignore " + dir + "/oracle.py '" + images_dir() + "' '" + dir +
                              "' > '" + dir + "/shapes.txt'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  std::vector<OracleResult> results(cases.size());
  std::ifstream shapes(dir + "/shapes.txt");
  std::string line;
  while (std::getline(shapes, line)) {
    std::istringstream fields(line);
    size_t i;
    std::string dtype;
    fields >> i >> dtype;
    if (i >= results.size()) continue;
    int64_t s;
    while (fields >> s) results[i].sizes.push_back(s);
    results[i].dtype = dtype;
    results[i].bytes = slurp(dir + "/" + std::to_string(i) + ".raw");
  }
  return results;
}

struct Difference {
  double mean = 0, max = 0;
};

Difference difference(const uint8_t* ours, const std::string& theirs) {
  Difference d;
  for (size_t i = 0; i < theirs.size(); ++i) {
    const double e = std::abs(int(ours[i]) - int(uint8_t(theirs[i])));
    d.mean += e;
    d.max = std::max(d.max, e);
  }
  d.mean /= std::max<size_t>(1, theirs.size());
  return d;
}

Difference difference(const float* ours, const std::string& theirs) {
  Difference d;
  const size_t n = theirs.size() / sizeof(float);
  for (size_t i = 0; i < n; ++i) {
    float t;
    std::memcpy(&t, theirs.data() + i * sizeof(float), sizeof(float));
    const double e = std::abs(double(ours[i]) - double(t));
    d.mean += e;
    d.max = std::max(d.max, e);
  }
  d.mean /= std::max<size_t>(1, n);
  return d;
}

std::vector<int64_t> sizes_of(const torch::Tensor& t) {
  return std::vector<int64_t>(t.sizes().begin(), t.sizes().end());
}

// Compares a tensor of ours with torchvision's result: the same sizes and dtype, and differences within bounds (in
// levels of 255 for uint8, in the tensor's units for float32).
Difference compare(const torch::Tensor& ours, const OracleResult& theirs, const std::string& what) {
  EXPECT_EQ(sizes_of(ours), theirs.sizes) << what;
  const bool is_float = ours.scalar_type() == torch::kFloat32;
  EXPECT_EQ(theirs.dtype, is_float ? "float32" : "uint8") << what;
  const size_t bytes = static_cast<size_t>(ours.numel()) * (is_float ? 4 : 1);
  if (sizes_of(ours) != theirs.sizes || theirs.bytes.size() != bytes) {
    ADD_FAILURE() << what << ": " << theirs.bytes.size() << " bytes from torchvision, " << bytes << " of ours";
    return {1e9, 1e9};
  }
  const Difference d = is_float ? difference(ours.data_ptr<float>(), theirs.bytes)
                                : difference(ours.data_ptr<uint8_t>(), theirs.bytes);
  std::printf("[ measured ] %-70s mean |diff| %.4f, max %.4g\n", what.c_str(), d.mean, d.max);
  return d;
}

torch::Tensor planes_tensor(const DecodedImage& image, const CropBox& box, int out_height, int out_width) {
  torch::Tensor t = torch::empty({image.channels, out_height, out_width}, torch::kUInt8);
  image_ops::resized_crop_planes(image, box, out_height, out_width, t.data_ptr<uint8_t>());
  return t;
}

torch::Tensor chw(const DecodedImage& image) {
  return torch::from_blob(const_cast<uint8_t*>(image.pixels.data()), {image.height, image.width, image.channels},
                          torch::kUInt8)
      .permute({2, 0, 1})
      .contiguous();
}

EncodedSample sample_of(const std::string& file) {
  EncodedSample s;
  s.bytes = image_bytes(file);
  s.name = file;
  return s;
}

// ---------------------------------------------------------------------------------------------------------------
// image_ops

TEST(ImageOps, ResizeSizeIsTorchvisions) {
  using image_ops::resize_size;
  EXPECT_EQ(resize_size(300, 451, {224}), std::make_pair(224, 336));  // int(224 * 451 / 300) = 336
  EXPECT_EQ(resize_size(451, 300, {224}), std::make_pair(336, 224));
  EXPECT_EQ(resize_size(427, 640, {256}), std::make_pair(256, 383));  // 383.7 truncated
  EXPECT_EQ(resize_size(100, 100, {50}), std::make_pair(50, 50));
  EXPECT_EQ(resize_size(300, 451, {100, 80}), std::make_pair(100, 80));
  // max_size bounds the longer side: 451 / 300 * 224 = 336 > 300, so (int(300 * 224 / 336), 300).
  EXPECT_EQ(resize_size(300, 451, {224}, 300), std::make_pair(200, 300));
  EXPECT_EQ(resize_size(300, 451, {224}, 400), std::make_pair(224, 336));
  EXPECT_THROW(resize_size(300, 451, {224}, 224), InvalidArgument);
  EXPECT_THROW(resize_size(300, 451, {224, 224}, 300), InvalidArgument);
  EXPECT_THROW(resize_size(300, 451, {}), InvalidArgument);
  EXPECT_THROW(resize_size(300, 451, {1, 2, 3}), InvalidArgument);
  EXPECT_THROW(resize_size(300, 451, {0}), InvalidArgument);
  EXPECT_THROW(resize_size(300, 451, {-5, 10}), InvalidArgument);
}

TEST(ImageOps, CenterCropBoxIsTorchvisions) {
  using image_ops::center_crop_box;
  const auto same = [](const CropBox& a, const CropBox& b) {
    return a.top == b.top && a.left == b.left && a.height == b.height && a.width == b.width;
  };
  // round((300 - 224) / 2) = 38; round((451 - 224) / 2) = round(113.5) = 114 (half to even).
  EXPECT_TRUE(same(center_crop_box(300, 451, 224, 224), {38, 114, 224, 224}));
  // round(0.5) = 0, round(1.5) = 2, round(2.5) = 2.
  EXPECT_TRUE(same(center_crop_box(11, 13, 10, 10), {0, 2, 10, 10}));
  EXPECT_TRUE(same(center_crop_box(15, 10, 10, 10), {2, 0, 10, 10}));
  // Larger: padded by (crop - size) // 2 before.
  EXPECT_TRUE(same(center_crop_box(300, 451, 305, 460), {-2, -4, 305, 460}));
  EXPECT_TRUE(same(center_crop_box(300, 451, 200, 500), {50, -24, 200, 500}));
}

// Pillow's resize arithmetic, so Pillow's bytes: shrinks, enlargements, mixed, narrow outputs and large shrinks,
// bilinear and bicubic, in RGB and gray.
TEST(ImageOps, ResizedCropIsPillowsResize) {
  if (!have_torchvision()) GTEST_SKIP() << "/usr/bin/python3 has no torchvision";
  struct Case {
    const char* file;
    bool gray;
    CropBox box;
    int height, width;
    const char* what;
  };
  const Case cases[] = {
      {"chelsea.png", false, {0, 0, 300, 451}, 224, 224, "shrink 451x300 -> 224x224"},
      {"chelsea.png", false, {0, 0, 300, 451}, 80, 100, "shrink 451x300 -> 100x80"},
      {"chelsea.png", false, {0, 0, 300, 451}, 250, 300, "shrink 451x300 -> 300x250"},
      {"chelsea.png", false, {40, 100, 200, 250}, 224, 224, "crop 250x200 -> 224x224"},
      {"chelsea.png", false, {100, 200, 28, 28}, 64, 64, "enlarge 28x28 -> 64x64"},
      {"chelsea.png", false, {10, 7, 150, 60}, 40, 200, "non-uniform 60x150 -> 200x40"},
      {"green_palette.png", false, {13, 21, 200, 250}, 123, 77, "palette photo 250x200 -> 77x123"},
      {"chelsea.png", false, {50, 100, 100, 12}, 200, 5, "narrow 12x100 -> 5x200"},
      {"chelsea.png", false, {0, 0, 300, 451}, 15, 22, "large shrink 451x300 -> 22x15"},
      {"chelsea.png", false, {0, 0, 300, 451}, 3, 5, "90 times 451x300 -> 5x3"},
      {"chelsea.png", false, {100, 0, 2, 451}, 224, 3, "mixed 451x2 -> 3x224"},
      {"chelsea.png", false, {299, 450, 1, 1}, 7, 9, "one pixel at the corner -> 9x7"},
      {"chelsea.png", true, {0, 0, 300, 451}, 224, 224, "gray shrink 451x300 -> 224x224"},
      {"chelsea.png", true, {40, 100, 200, 250}, 224, 224, "gray crop 250x200 -> 224x224"},
      {"chelsea.png", true, {100, 200, 28, 28}, 64, 64, "gray enlarge 28x28 -> 64x64"},
      {"chelsea.png", true, {10, 7, 150, 60}, 40, 200, "gray non-uniform 60x150 -> 200x40"},
      {"chelsea.png", true, {50, 100, 100, 12}, 200, 5, "gray narrow 12x100 -> 5x200"},
  };
  const Interpolation filters[] = {Interpolation::kBilinear, Interpolation::kBicubic};
  std::vector<OracleCase> oracle;
  for (const Interpolation filter : filters) {
    for (const Case& c : cases) {
      oracle.push_back({c.file, c.gray ? "L" : "RGB",
                        "lambda im: F.resized_crop(im, " + std::to_string(c.box.top) + ", " +
                            std::to_string(c.box.left) + ", " + std::to_string(c.box.height) + ", " +
                            std::to_string(c.box.width) + ", [" + std::to_string(c.height) + ", " +
                            std::to_string(c.width) + "], T.InterpolationMode." +
                            (filter == Interpolation::kBicubic ? "BICUBIC" : "BILINEAR") + ")"});
    }
  }
  const std::vector<OracleResult> theirs = torchvision(oracle);
  for (size_t f = 0; f < std::size(filters); ++f) {
    for (size_t i = 0; i < std::size(cases); ++i) {
      const Case& c = cases[i];
      const std::string what = std::string(c.what) + (f == 1 ? ", bicubic" : ", bilinear");
      const DecodedImage image = decoded(c.file, c.gray);
      const DecodedImage interleaved = image_ops::resized_crop(image, c.box, c.height, c.width, filters[f]);
      const torch::Tensor ours = chw(interleaved);
      const Difference d = compare(ours, theirs[f * std::size(cases) + i], what);
      EXPECT_EQ(d.max, 0) << what << " (mean " << d.mean << ")";
    }
  }
}

// Whatever the sizes (one-pixel sources and outputs, shrinks one way with enlargements the other), a flat colour
// resamples to the same colour and nothing past the planes changes.
TEST(ImageOps, ResamplingAnySizeWritesItsPlanesAlone) {
  const int sources[][2] = {{1, 1}, {2, 3}, {5, 451}, {1, 451}, {300, 1}, {300, 2}, {40, 33}, {300, 451}};
  const int outputs[] = {1, 2, 3, 4, 5, 6, 7, 8, 15, 16, 17, 33, 224};
  for (const bool gray : {false, true}) {
    for (const auto& source : sources) {
      DecodedImage image;
      image.height = source[0];
      image.width = source[1];
      image.channels = gray ? 1 : 3;
      image.pixels.resize(static_cast<size_t>(image.height) * image.width * image.channels);
      for (size_t i = 0; i < image.pixels.size(); ++i) {
        image.pixels[i] = gray ? 90 : (i % 3 == 0 ? 10 : i % 3 == 1 ? 128 : 250);
      }
      for (const int out_height : outputs) {
        for (const int out_width : outputs) {
          const std::string what = std::to_string(image.height) + " x " + std::to_string(image.width) + " to " +
                                   std::to_string(out_height) + " x " + std::to_string(out_width) +
                                   (gray ? " gray" : "");
          const size_t plane = static_cast<size_t>(out_height) * out_width;
          std::vector<uint8_t> out(plane * image.channels + 64, 0xAB);
          image_ops::resized_crop_planes(image, CropBox{0, 0, image.height, image.width}, out_height, out_width,
                                         out.data());
          for (int c = 0; c < image.channels; ++c) {
            const int expected = gray ? 90 : c == 0 ? 10 : c == 1 ? 128 : 250;
            for (size_t i = 0; i < plane; ++i) {
              ASSERT_EQ(out[c * plane + i], expected) << what << ", channel " << c << ", pixel " << i;
            }
          }
          for (size_t i = plane * image.channels; i < out.size(); ++i) ASSERT_EQ(out[i], 0xAB) << what;
        }
      }
    }
  }
}

TEST(ImageOps, HflipMirrorsEveryRow) {
  DecodedImage image = decoded("foo3x5x4indexed.png");
  const DecodedImage original = image;
  image_ops::hflip(image);
  for (int y = 0; y < image.height; ++y) {
    for (int x = 0; x < image.width; ++x) {
      for (int c = 0; c < 3; ++c) {
        EXPECT_EQ(image.pixels[(y * image.width + x) * 3 + c],
                  original.pixels[(y * image.width + image.width - 1 - x) * 3 + c]);
      }
    }
  }
  image_ops::hflip(image);
  EXPECT_EQ(image.pixels, original.pixels);
}

// ---------------------------------------------------------------------------------------------------------------
// random_resized_crop_box

TEST(ImageOps, RandomResizedCropBoxesLieInsideWithinTheRanges) {
  const int height = 300, width = 451;
  int fallbacks = 0;
  std::set<std::vector<int>> distinct;
  for (int64_t index = 0; index < 2000; ++index) {
    SampleRng rng(7, 0, index);
    const CropBox box = image_ops::random_resized_crop_box(height, width, 0.08, 1.0, 3.0 / 4.0, 4.0 / 3.0, rng);
    ASSERT_GE(box.top, 0);
    ASSERT_GE(box.left, 0);
    ASSERT_GT(box.height, 0);
    ASSERT_GT(box.width, 0);
    ASSERT_LE(box.top + box.height, height);
    ASSERT_LE(box.left + box.width, width);
    distinct.insert({box.top, box.left, box.height, box.width});
    const double area = double(box.height) * box.width / (double(height) * width);
    const double ratio = double(box.width) / box.height;
    // Rounding w and h to whole pixels moves the area and ratio a little past the drawn values.
    const bool fallback = box.height == height && box.width == width;
    if (fallback) {
      ++fallbacks;
      continue;
    }
    EXPECT_GE(area, 0.08 * 0.97);
    EXPECT_LE(area, 1.0);
    EXPECT_GE(ratio, 0.75 * 0.97);
    EXPECT_LE(ratio, 4.0 / 3.0 * 1.03);
  }
  EXPECT_LT(fallbacks, 20);
  EXPECT_GT(distinct.size(), 1900u);
}

TEST(ImageOps, RandomResizedCropBoxFallsBackToTheClampedRatio) {
  // A very thin image: no box of ratio in [3/4, 4/3] fits, so the centre crop of the ratio clamped to the range.
  for (int64_t index = 0; index < 50; ++index) {
    SampleRng tall_rng(1, 0, index);
    const CropBox tall = image_ops::random_resized_crop_box(1000, 10, 0.08, 1.0, 3.0 / 4.0, 4.0 / 3.0, tall_rng);
    // w = 10, h = round(10 / 0.75) = 13, top = (1000 - 13) // 2.
    EXPECT_EQ(tall.width, 10);
    EXPECT_EQ(tall.height, 13);
    EXPECT_EQ(tall.top, 493);
    EXPECT_EQ(tall.left, 0);
    SampleRng wide_rng(1, 0, index);
    const CropBox wide = image_ops::random_resized_crop_box(10, 1000, 0.08, 1.0, 3.0 / 4.0, 4.0 / 3.0, wide_rng);
    // h = 10, w = round(10 * 4 / 3) = 13, left = (1000 - 13) // 2.
    EXPECT_EQ(wide.height, 10);
    EXPECT_EQ(wide.width, 13);
    EXPECT_EQ(wide.left, 493);
    EXPECT_EQ(wide.top, 0);
  }
  // A ratio range that holds the image's own: the whole image.
  SampleRng rng(1, 0, 0);
  const CropBox whole = image_ops::random_resized_crop_box(10, 1000, 2.0, 3.0, 50.0, 200.0, rng);
  EXPECT_EQ(whole.height, 10);
  EXPECT_EQ(whole.width, 1000);
}

TEST(ImageOps, RandomResizedCropBoxDependsOnSeedEpochAndIndexAlone) {
  const auto box_of = [](uint64_t seed, int64_t epoch, int64_t index) {
    SampleRng rng(seed, epoch, index);
    const CropBox b = image_ops::random_resized_crop_box(480, 640, 0.08, 1.0, 3.0 / 4.0, 4.0 / 3.0, rng);
    return std::vector<int>{b.top, b.left, b.height, b.width};
  };
  EXPECT_EQ(box_of(3, 1, 17), box_of(3, 1, 17));
  EXPECT_NE(box_of(3, 1, 17), box_of(3, 1, 18));
  EXPECT_NE(box_of(3, 1, 17), box_of(3, 2, 17));
  EXPECT_NE(box_of(3, 1, 17), box_of(4, 1, 17));
}

// A loose check of the draws' distribution (it can fail by chance, about once in millions of seeds): with areas up
// to half of a large square image every first try fits, so the area fraction is about uniform on [0.08, 0.5] and
// log(ratio) about uniform on [log 3/4, log 4/3]: each of four equal bins holds about a quarter.
TEST(ImageOps, RandomResizedCropScaleAndRatioSpreadOverTheirRanges) {
  const int height = 4000, width = 4000, n = 8000;
  int area_bins[4] = {0, 0, 0, 0}, ratio_bins[4] = {0, 0, 0, 0};
  for (int64_t index = 0; index < n; ++index) {
    SampleRng rng(11, 0, index);
    const CropBox box = image_ops::random_resized_crop_box(height, width, 0.08, 0.5, 3.0 / 4.0, 4.0 / 3.0, rng);
    const double area = double(box.height) * box.width / (double(height) * width);
    const double log_ratio = std::log(double(box.width) / box.height);
    const double a = (area - 0.08) / 0.42, r = (log_ratio - std::log(0.75)) / (std::log(4.0 / 3.0) - std::log(0.75));
    ++area_bins[std::clamp(int(a * 4), 0, 3)];
    ++ratio_bins[std::clamp(int(r * 4), 0, 3)];
  }
  for (int b = 0; b < 4; ++b) {
    // n / 4 = 2000, standard deviation about 39: a band of about 5 deviations each way.
    EXPECT_NEAR(area_bins[b], n / 4, 200) << "area bin " << b;
    EXPECT_NEAR(ratio_bins[b], n / 4, 200) << "ratio bin " << b;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// ImageTransform

TEST(ImageTransform, PipelinesAreTorchvisions) {
  if (!have_torchvision()) GTEST_SKIP() << "/usr/bin/python3 has no torchvision";
  struct Case {
    const char* file;
    bool gray;
    std::vector<ImageStep> steps;
    const char* torchvision;  // the same as T.Compose's list
    double max_mean, max_max;  // bounds on the differences (levels, or the float output's units): 0 but for JPEGs
  };
  const std::vector<double> mean = {0.485, 0.456, 0.406}, std = {0.229, 0.224, 0.225};
  const std::vector<Case> cases = {
      {"chelsea.png", false, {steps::Resize{{256}}, steps::CenterCrop{224, 224}, steps::PILToTensor{}},
       "T.Resize(256), T.CenterCrop(224), T.PILToTensor()", 0, 0},
      {"china.jpg", false, {steps::Resize{{256}}, steps::CenterCrop{224, 224}, steps::PILToTensor{}},
       // JPEG: Pillow's libjpeg and TurboJPEG differ by about a level before any resampling.
       "T.Resize(256), T.CenterCrop(224), T.PILToTensor()", 1.0, 8},
      {"chelsea.png", false, {steps::Resize{{100, 80}}}, "T.Resize((100, 80)), T.PILToTensor()", 0, 0},
      {"chelsea.png", false, {steps::Resize{{100, 80}, 0, Interpolation::kBicubic}},
       "T.Resize((100, 80), interpolation=T.InterpolationMode.BICUBIC), T.PILToTensor()", 0, 0},
      {"chelsea.png", true, {steps::Resize{{57}, 0, Interpolation::kBicubic}, steps::CenterCrop{50, 50}},
       "T.Resize(57, interpolation=T.InterpolationMode.BICUBIC), T.CenterCrop(50), T.PILToTensor()", 0, 0},
      {"chelsea.png", false, {steps::Resize{{120}, 150}}, "T.Resize(120, max_size=150), T.PILToTensor()", 0, 0},
      {"chelsea.png", false, {steps::Resize{{400}}}, "T.Resize(400), T.PILToTensor()", 0, 0},
      // Crops alone copy pixels: exactly torchvision's, zeros where larger than the image.
      {"chelsea.png", false, {steps::CenterCrop{101, 77}}, "T.CenterCrop((101, 77)), T.PILToTensor()", 0, 0},
      {"chelsea.png", false, {steps::CenterCrop{333, 500}}, "T.CenterCrop((333, 500)), T.PILToTensor()", 0, 0},
      {"chelsea.png", false, {steps::CenterCrop{320, 200}}, "T.CenterCrop((320, 200)), T.PILToTensor()", 0, 0},
      {"chelsea.png", false, {steps::CenterCrop{250, 400}, steps::CenterCrop{281, 390}},
       "T.CenterCrop((250, 400)), T.CenterCrop((281, 390)), T.PILToTensor()", 0, 0},
      {"chelsea.png", false, {steps::RandomHorizontalFlip{1.0}, steps::CenterCrop{101, 77}},
       "T.RandomHorizontalFlip(1.0), T.CenterCrop((101, 77)), T.PILToTensor()", 0, 0},
      {"chelsea.png", false,
       {steps::CenterCrop{250, 401}, steps::RandomHorizontalFlip{1.0}, steps::CenterCrop{100, 77},
        steps::Resize{{64}}},
       "T.CenterCrop((250, 401)), T.RandomHorizontalFlip(1.0), T.CenterCrop((100, 77)), T.Resize(64), "
       "T.PILToTensor()",
       0, 0},
      {"chelsea.png", false, {steps::CenterCrop{330, 480}, steps::Resize{{100, 120}}},
       "T.CenterCrop((330, 480)), T.Resize((100, 120)), T.PILToTensor()", 0, 0},
      {"chelsea.png", false, {steps::CenterCrop{200, 200}, steps::ToTensor{}, steps::Normalize{mean, std}},
       "T.CenterCrop(200), T.ToTensor(), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])", 0, 0},
      {"chelsea.png", false, {steps::CenterCrop{320, 460}, steps::ToTensor{}, steps::Normalize{{0.5}, {0.25}}},
       "T.CenterCrop((320, 460)), T.ToTensor(), T.Normalize([0.5], [0.25])", 0, 0},
      {"chelsea.png", false,
       {steps::Resize{{256}}, steps::CenterCrop{224, 224}, steps::RandomHorizontalFlip{1.0}, steps::ToTensor{},
        steps::Normalize{mean, std}},
       "T.Resize(256), T.CenterCrop(224), T.RandomHorizontalFlip(1.0), T.ToTensor(), "
       "T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])",
       0, 0},
      {"chelsea.png", true, {steps::Resize{{256}}, steps::CenterCrop{224, 224}, steps::PILToTensor{}},
       "T.Resize(256), T.CenterCrop(224), T.PILToTensor()", 0, 0},
      {"chelsea.png", true, {steps::CenterCrop{320, 200}, steps::ToTensor{}, steps::Normalize{{0.5}, {0.5}}},
       "T.CenterCrop((320, 200)), T.ToTensor(), T.Normalize([0.5], [0.5])", 0, 0},
      {"chelsea.png", true, {steps::Resize{{90, 150}}, steps::RandomHorizontalFlip{1.0}, steps::ToTensor{}},
       "T.Resize((90, 150)), T.RandomHorizontalFlip(1.0), T.ToTensor()", 0, 0},
  };
  std::vector<OracleCase> oracle;
  for (const Case& c : cases) {
    oracle.push_back({c.file, c.gray ? "L" : "RGB", std::string("T.Compose([") + c.torchvision + "])"});
  }
  const std::vector<OracleResult> theirs = torchvision(oracle);
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    ImageTransformOptions options;
    options.decode.gray = c.gray;
    const ImageTransform transform(c.steps, options);
    SampleRng rng(0, 0, 0);
    const torch::Tensor ours = transform.make(sample_of(c.file), rng);
    const std::string what = std::string(c.gray ? "gray " : "") + c.file + ": " + c.torchvision;
    const Difference d = compare(ours, theirs[i], what);
    EXPECT_LE(d.mean, c.max_mean + 1e-7) << what;
    EXPECT_LE(d.max, c.max_max + 1e-6) << what;
    if (transform.fixed_size()) {
      // apply() into a slot gives make()'s values.
      const SampleLayout layout = transform.layout();
      torch::Tensor slot = torch::full(layout.sizes, 77, layout.dtype);
      SampleRng again(0, 0, 0);
      transform.apply(sample_of(c.file), again, slot);
      EXPECT_TRUE(torch::equal(slot, ours)) << what;
    }
  }
}

TEST(ImageTransform, DescribeGivesTorchvisionsRepr) {
  EXPECT_EQ(describe(steps::RandomResizedCrop{224, 224}),
            "RandomResizedCrop(size=(224, 224), scale=(0.08, 1.0), ratio=(0.75, 1.3333))");
  EXPECT_EQ(describe(steps::Resize{{256}}), "Resize(size=256, max_size=None)");
  EXPECT_EQ(describe(steps::Resize{{256}, 300}), "Resize(size=256, max_size=300)");
  EXPECT_EQ(describe(steps::Resize{{10, 20}}), "Resize(size=(10, 20), max_size=None)");
  // torchvision shows the interpolation after the size (Resize) or the ratio (RandomResizedCrop).
  EXPECT_EQ(describe(steps::Resize{{256}, 0, Interpolation::kBicubic}),
            "Resize(size=256, interpolation=bicubic, max_size=None)");
  steps::RandomResizedCrop bicubic_crop{224, 224};
  bicubic_crop.interpolation = Interpolation::kBicubic;
  EXPECT_EQ(describe(bicubic_crop),
            "RandomResizedCrop(size=(224, 224), scale=(0.08, 1.0), ratio=(0.75, 1.3333), interpolation=bicubic)");
  EXPECT_EQ(describe(steps::CenterCrop{224, 224}), "CenterCrop(size=(224, 224))");
  EXPECT_EQ(describe(steps::RandomHorizontalFlip{}), "RandomHorizontalFlip(p=0.5)");
  EXPECT_EQ(describe(steps::ToTensor{}), "ToTensor()");
  EXPECT_EQ(describe(steps::PILToTensor{}), "PILToTensor()");
  EXPECT_EQ(describe(steps::Normalize{{0.485, 0.456, 0.406}, {1, 0.225}}),
            "Normalize(mean=[0.485, 0.456, 0.406], std=[1.0, 0.225])");
}

TEST(ImageTransform, LayoutIsTheLastSizingStepsSize) {
  const ImageTransform crop({steps::Resize{{256}}, steps::RandomResizedCrop{224, 200}, steps::ToTensor{}});
  EXPECT_TRUE(crop.fixed_size());
  EXPECT_EQ(crop.layout().sizes, (std::vector<int64_t>{3, 224, 200}));
  EXPECT_EQ(crop.layout().dtype, torch::kFloat32);
  ImageTransformOptions gray;
  gray.decode.gray = true;
  const ImageTransform resize({steps::CenterCrop{5, 5}, steps::Resize{{32, 48}}, steps::RandomHorizontalFlip{}},
                              gray);
  EXPECT_EQ(resize.layout().sizes, (std::vector<int64_t>{1, 32, 48}));
  EXPECT_EQ(resize.layout().dtype, torch::kUInt8);
  EXPECT_TRUE(ImageTransform({steps::Resize{{64}}, steps::CenterCrop{10, 10}}).fixed_size());
}

TEST(ImageTransform, LayoutWithoutAFixedSizeSaysWhatToAdd) {
  for (const std::vector<ImageStep>& list :
       {std::vector<ImageStep>{}, std::vector<ImageStep>{steps::ToTensor{}},
        std::vector<ImageStep>{steps::CenterCrop{10, 10}, steps::Resize{{64}}, steps::RandomHorizontalFlip{}}}) {
    const ImageTransform transform(list);
    EXPECT_FALSE(transform.fixed_size());
    try {
      transform.layout();
      ADD_FAILURE() << "layout() of steps without a fixed size";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("end with a CenterCrop or RandomResizedCrop, or Resize to (h, w)"),
                std::string::npos)
          << e.what();
    }
  }
  // make() has no such need: the decoded image's own size.
  SampleRng rng(0, 0, 0);
  const torch::Tensor whole = ImageTransform({}).make(sample_of("chelsea.png"), rng);
  EXPECT_EQ(sizes_of(whole), (std::vector<int64_t>{3, 300, 451}));
  EXPECT_TRUE(torch::equal(whole, chw(decoded("chelsea.png"))));
}

TEST(ImageTransform, RefusesWhatTorchvisionRefuses) {
  const auto message = [](const std::vector<ImageStep>& list) -> std::string {
    try {
      ImageTransform transform(list);
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "";
  };
  const auto expect_refused = [&](const std::vector<ImageStep>& list, const std::string& names) {
    const std::string what = message(list);
    EXPECT_NE(what.find(names), std::string::npos) << "'" << what << "' should name " << names;
  };
  expect_refused({steps::Normalize{{0.5}, {0.5}}, steps::ToTensor{}}, "Normalize(mean=[0.5], std=[0.5])");
  expect_refused({steps::PILToTensor{}, steps::Normalize{{0.5}, {0.5}}}, "put ToTensor() before it");
  expect_refused({steps::ToTensor{}, steps::Normalize{{0.5, 0.5}, {0.5}}}, "1 or 3 values");
  expect_refused({steps::ToTensor{}, steps::Normalize{{0.5}, {0.5, 0.0, 1.0}}}, "std evaluated to zero");
  expect_refused({steps::ToTensor{}, steps::CenterCrop{10, 10}}, "step 2, CenterCrop(size=(10, 10))");
  expect_refused({steps::ToTensor{}, steps::PILToTensor{}}, "PILToTensor()");
  expect_refused({steps::Resize{{0}}}, "Resize(size=0");
  expect_refused({steps::Resize{{}}}, "one number or two");
  expect_refused({steps::Resize{{10, 10}, 20}}, "max_size is only supported for a single size");
  expect_refused({steps::Resize{{10}, 10}}, "strictly greater");
  expect_refused({steps::CenterCrop{0, 10}}, "CenterCrop(size=(0, 10))");
  expect_refused({steps::RandomResizedCrop{224, -1}}, "RandomResizedCrop");
  expect_refused({steps::RandomResizedCrop{224, 224, 0.9, 0.1}}, "scale must be");
  expect_refused({steps::RandomResizedCrop{224, 224, 0.08, 1.0, 0.0, 1.0}}, "ratio must be");
  expect_refused({steps::RandomHorizontalFlip{1.5}}, "p must be in [0, 1]");
  ImageTransformOptions gray;
  gray.decode.gray = true;
  EXPECT_THROW(ImageTransform({steps::ToTensor{}, steps::Normalize{{0.5, 0.5, 0.5}, {1}}}, gray), InvalidArgument);
  EXPECT_NO_THROW(ImageTransform({steps::ToTensor{}, steps::Normalize{{0.5, 0.5, 0.5}, {1}}}));
  EXPECT_EQ(message({steps::Resize{{256}}, steps::RandomResizedCrop{224, 224}, steps::RandomHorizontalFlip{},
                     steps::ToTensor{}, steps::Normalize{{0.5}, {0.5}}}),
            "");
}

TEST(ImageTransform, CorruptSamplesAndEmptyResultsAreInvalidFiles) {
  const ImageTransform transform({steps::RandomResizedCrop{32, 32}, steps::ToTensor{}});
  const SampleLayout layout = transform.layout();
  torch::Tensor slot = torch::empty(layout.sizes, layout.dtype);
  SampleRng rng(0, 0, 0);
  for (const char* file : {"china_truncated.jpg", "not_an_image.jpg", "empty.jpg"}) {
    EXPECT_THROW(transform.apply(sample_of(file), rng, slot), InvalidFile) << file;
  }
  // max_size leaves the shorter side of a 300 x 451 image int(3 * 2 / 451) = 0 pixels.
  const ImageTransform flat({steps::CenterCrop{2, 451}, steps::Resize{{2}, 3}});
  try {
    flat.make(sample_of("chelsea.png"), rng);
    ADD_FAILURE() << "no error for an empty result";
  } catch (const InvalidFile& e) {
    EXPECT_NE(std::string(e.what()).find("2 x 451 pixels becomes 0 x 3"), std::string::npos) << e.what();
  }
  // A slot of other sizes is the caller's mistake.
  torch::Tensor wrong = torch::empty({3, 31, 32}, torch::kFloat32);
  EXPECT_THROW(transform.apply(sample_of("chelsea.png"), rng, wrong), InvalidArgument);
}

TEST(ImageTransform, EqualGeneratorsGiveEqualBytesAndFlipsFollowP) {
  const std::vector<ImageStep> augment = {steps::RandomResizedCrop{64, 48}, steps::RandomHorizontalFlip{}};
  const ImageTransform transform(augment);
  const EncodedSample sample = sample_of("chelsea.png");
  std::set<std::vector<uint8_t>> distinct;
  for (int64_t index = 0; index < 8; ++index) {
    SampleRng a(5, 2, index), b(5, 2, index);
    const torch::Tensor first = transform.make(sample, a), second = transform.make(sample, b);
    EXPECT_TRUE(torch::equal(first, second)) << index;
    distinct.insert(std::vector<uint8_t>(first.data_ptr<uint8_t>(), first.data_ptr<uint8_t>() + first.numel()));
  }
  EXPECT_EQ(distinct.size(), 8u);

  // RandomHorizontalFlip(1.0) after a crop is hflip of the crop; p = 0 never flips.
  const ImageTransform crop({steps::Resize{{40, 60}}});
  const ImageTransform always({steps::Resize{{40, 60}}, steps::RandomHorizontalFlip{1.0}});
  const ImageTransform never({steps::Resize{{40, 60}}, steps::RandomHorizontalFlip{0.0}});
  SampleRng rng(0, 0, 0);
  const torch::Tensor plain = crop.make(sample, rng);
  for (int64_t index = 0; index < 20; ++index) {
    SampleRng r1(9, 0, index), r2(9, 0, index);
    EXPECT_TRUE(torch::equal(always.make(sample, r1), plain.flip({2}))) << index;
    EXPECT_TRUE(torch::equal(never.make(sample, r2), plain)) << index;
  }
  DecodedImage image = decoded("chelsea.png");
  image_ops::hflip(image);
  SampleRng r(0, 0, 0);
  EXPECT_TRUE(torch::equal(ImageTransform({steps::RandomHorizontalFlip{1.0}}).make(sample, r), chw(image)));
}

// RandomResizedCrop is get_params' box resampled: the same box given to resized_crop_planes gives the same bytes.
TEST(ImageTransform, RandomResizedCropIsItsBoxResized) {
  const ImageTransform transform({steps::RandomResizedCrop{50, 70, 0.2, 0.9, 0.5, 2.0}});
  const DecodedImage image = decoded("chelsea.png");
  for (int64_t index = 0; index < 10; ++index) {
    SampleRng a(1, 0, index), b(1, 0, index);
    const CropBox box = image_ops::random_resized_crop_box(image.height, image.width, 0.2, 0.9, 0.5, 2.0, a);
    EXPECT_TRUE(torch::equal(transform.make(sample_of("chelsea.png"), b), planes_tensor(image, box, 50, 70)));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Inside a dataset and the loader

class PhotoSource : public SampleSource {
 public:
  PhotoSource() {
    for (const char* file :
         {"chelsea.png", "china.jpg", "chelsea_lossy.webp", "green_palette.png", "chelsea_cmyk.jpg"}) {
      samples_.push_back(sample_of(file));
      samples_.back().label = static_cast<int64_t>(samples_.size() - 1);
    }
  }
  int64_t size() const override { return 23; }
  EncodedSample get(int64_t index) const override {
    EncodedSample s = samples_[static_cast<size_t>(index) % samples_.size()];
    s.name += " #" + std::to_string(index);
    return s;
  }

 private:
  std::vector<EncodedSample> samples_;
};

TEST(ImageTransform, LoaderBatchesAreTheSameForAnyWorkerCount) {
  const std::vector<ImageStep> list = {steps::RandomResizedCrop{32, 40}, steps::RandomHorizontalFlip{},
                                       steps::ToTensor{}, steps::Normalize{{0.5}, {0.25}}};
  const auto transform = std::make_shared<ImageTransform>(list);
  const auto dataset = std::make_shared<EncodedDataset>(std::make_shared<PhotoSource>(), transform);
  const auto batches = [&](int64_t workers, int64_t epoch_count) {
    Loader loader(dataset, LoaderOptions(4).shuffle(true).seed(3).num_workers(workers));
    std::vector<Example> out;
    for (int64_t e = 0; e < epoch_count; ++e) {
      Epoch epoch = loader.epoch();
      while (auto batch = epoch.next()) out.push_back(std::move(*batch));
    }
    return out;
  };
  const std::vector<Example> serial = batches(0, 2), parallel = batches(2, 2);
  ASSERT_EQ(serial.size(), parallel.size());
  ASSERT_EQ(serial.size(), 12u);  // 6 batches of 23 samples in each of 2 epochs
  for (size_t k = 0; k < serial.size(); ++k) {
    EXPECT_EQ(sizes_of(serial[k].data)[1], 3);
    EXPECT_EQ(sizes_of(serial[k].data)[2], 32);
    EXPECT_EQ(serial[k].data.scalar_type(), torch::kFloat32);
    EXPECT_TRUE(torch::equal(serial[k].data, parallel[k].data)) << "batch " << k;
    EXPECT_TRUE(torch::equal(serial[k].target, parallel[k].target)) << "batch " << k;
  }
  // Epochs draw differently: the first batches of the two epochs differ.
  EXPECT_FALSE(torch::equal(serial[0].data, serial[6].data));
  // A row is the transform's make() of its sample with the loader's generator (seed 3, epoch 0).
  const Example first = dataset->make_batch({5}, BatchContext{3, 0});
  SampleRng rng(3, 0, 5);
  EXPECT_TRUE(torch::equal(first.data[0], transform->make(dataset->source().get(5), rng)));
}

TEST(ImageTransform, ACorruptSampleInADatasetNamesTheSample) {
  class Broken : public SampleSource {
   public:
    int64_t size() const override { return 2; }
    EncodedSample get(int64_t index) const override {
      EncodedSample s = sample_of(index == 0 ? "chelsea.png" : "china_truncated.jpg");
      s.name = "photos/" + std::to_string(index);
      return s;
    }
  };
  const auto transform = std::make_shared<ImageTransform>(std::vector<ImageStep>{steps::CenterCrop{8, 8}});
  EncodedDataset dataset(std::make_shared<Broken>(), transform);
  try {
    dataset.get_batch({0, 1});
    ADD_FAILURE() << "no error for a truncated JPEG";
  } catch (const InvalidFile& e) {
    EXPECT_NE(std::string(e.what()).find("photos/1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace feedline
