// The pixel-step stage of ImageTransform with the colour steps (ColorJitter, Grayscale, RandomGrayscale,
// GaussianBlur) and RandomErasing on the tensor: the orders refused, the layout with Grayscale, erasing on float
// and uint8 outputs, the values where they follow from the definitions alone, and determinism. Their values
// against torchvision and Pillow are tested in python/tests/test_augment.py, where those exist.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "feedline/dataset/image_transforms.h"
#include "feedline/io/error.h"
#include "test_paths.h"

namespace feedline {
namespace {

namespace steps = image_steps;

EncodedSample sample_of(const std::string& file) {
  std::ifstream f(feedline::testing::test_data_dir() + "/images/" + file, std::ios::binary);
  EXPECT_TRUE(f.good()) << file;
  std::stringstream s;
  s << f.rdbuf();
  return EncodedSample{s.str(), 0, file};
}

torch::Tensor run(const std::vector<ImageStep>& pipeline, uint64_t seed = 0, int64_t index = 0,
                  ImageTransformOptions options = {}) {
  const ImageTransform transform(pipeline, options);
  SampleRng rng(seed, 0, index);
  return transform.make(sample_of("chelsea.png"), rng);
}

// The InvalidArgument message of constructing the pipeline, or "" when it is accepted.
std::string refusal(const std::vector<ImageStep>& pipeline) {
  try {
    ImageTransform transform(pipeline);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

steps::Range fixed(double factor) { return steps::Range{true, factor, factor}; }

steps::RandomErasing erase_always(std::vector<double> value) {
  steps::RandomErasing s;
  s.p = 1.0;
  s.value = std::move(value);
  return s;
}

TEST(ImageAugment, OrdersFeedlineDoesNotRunAreRefusedNamingTheStep) {
  steps::ColorJitter jitter;
  jitter.brightness = steps::Range{true, 0.6, 1.4};
  std::string why = refusal({jitter, steps::CenterCrop{24, 24}});
  EXPECT_NE(why.find("CenterCrop(size=(24, 24))"), std::string::npos) << why;
  EXPECT_NE(why.find("put it before ColorJitter"), std::string::npos) << why;
  why = refusal({steps::CenterCrop{24, 24}, steps::RandomErasing{}, steps::ToTensor{}});
  EXPECT_NE(why.find("after ToTensor() or PILToTensor()"), std::string::npos) << why;
  why = refusal({steps::ToTensor{}, steps::RandomErasing{}, steps::Normalize{{0.5}, {0.5}}});
  EXPECT_NE(why.find("put RandomErasing after Normalize"), std::string::npos) << why;
  why = refusal({steps::ToTensor{}, steps::GaussianBlur{}});
  EXPECT_NE(why.find("GaussianBlur"), std::string::npos) << why;
  why = refusal({steps::Grayscale{1}, steps::ToTensor{}, steps::Normalize{{0.5, 0.5, 0.5}, {0.2}}});
  EXPECT_NE(why.find("one per channel"), std::string::npos) << why;
  why = refusal({steps::Grayscale{2}});
  EXPECT_NE(why.find("num_output_channels should be either 1 or 3"), std::string::npos) << why;
  why = refusal({steps::GaussianBlur{4, 3, 0.1, 2.0}});
  EXPECT_NE(why.find("odd and positive"), std::string::npos) << why;
  jitter.hue = steps::Range{true, -0.6, 0.1};
  why = refusal({jitter});
  EXPECT_NE(why.find("hue values should be between"), std::string::npos) << why;
  steps::RandomErasing three = erase_always({1, 2});
  why = refusal({steps::ToTensor{}, three});
  EXPECT_NE(why.find("either a single value or 3"), std::string::npos) << why;
  // the orders that run
  EXPECT_EQ(refusal({steps::RandomResizedCrop{32, 32}, steps::ColorJitter{}, steps::Grayscale{3},
                     steps::ToTensor{}, steps::Normalize{{0.5}, {0.5}}, steps::RandomErasing{}}),
            "");
}

TEST(ImageAugment, LayoutCountsGrayscalesChannels) {
  const auto layout = [](std::vector<ImageStep> pipeline, bool gray = false) {
    ImageTransformOptions options;
    options.decode.gray = gray;
    return ImageTransform(std::move(pipeline), options).layout();
  };
  SampleLayout l = layout({steps::CenterCrop{20, 30}, steps::Grayscale{1}, steps::ToTensor{}});
  EXPECT_EQ(l.sizes, (std::vector<int64_t>{1, 20, 30}));
  EXPECT_EQ(l.dtype, torch::kFloat32);
  l = layout({steps::CenterCrop{20, 30}, steps::Grayscale{3}});
  EXPECT_EQ(l.sizes, (std::vector<int64_t>{3, 20, 30}));
  EXPECT_EQ(l.dtype, torch::kUInt8);
  EXPECT_EQ(layout({steps::CenterCrop{20, 30}, steps::Grayscale{3}}, true).sizes, (std::vector<int64_t>{3, 20, 30}));
  EXPECT_EQ(layout({steps::CenterCrop{20, 30}, steps::RandomGrayscale{0.5}}, true).sizes,
            (std::vector<int64_t>{1, 20, 30}));
  // the tensors made have the layout's sizes
  const torch::Tensor gray = run({steps::CenterCrop{20, 30}, steps::Grayscale{1}});
  EXPECT_EQ(gray.sizes(), (c10::IntArrayRef{1, 20, 30}));
  const torch::Tensor three = run({steps::CenterCrop{20, 30}, steps::Grayscale{3}});
  EXPECT_TRUE(torch::equal(three[0], gray[0]) && torch::equal(three[1], gray[0]) && torch::equal(three[2], gray[0]));
  // a grey decode is what Grayscale(1) makes of the colour one
  ImageTransformOptions options;
  options.decode.gray = true;
  EXPECT_TRUE(torch::equal(run({steps::CenterCrop{20, 30}}, 0, 0, options), gray));
}

TEST(ImageAugment, FactorsOfTheirDefinitions) {
  const std::vector<ImageStep> crop = {steps::CenterCrop{40, 50}};
  const torch::Tensor plain = run(crop);
  for (auto field : {&steps::ColorJitter::brightness, &steps::ColorJitter::contrast,
                     &steps::ColorJitter::saturation}) {
    steps::ColorJitter identity;
    identity.*field = fixed(1.0);  // a blend with weight 1 is the picture itself
    EXPECT_TRUE(torch::equal(run({crop[0], identity}), plain));
  }
  steps::ColorJitter black;
  black.brightness = fixed(0.0);
  EXPECT_EQ(run({crop[0], black}).max().item<int>(), 0);
  steps::ColorJitter flat;
  flat.contrast = fixed(0.0);  // the mean grey everywhere
  const torch::Tensor grey = run({crop[0], flat});
  EXPECT_EQ(grey.min().item<int>(), grey.max().item<int>());
  steps::ColorJitter desaturated;
  desaturated.saturation = fixed(0.0);  // the "L" picture in every channel
  EXPECT_TRUE(torch::equal(run({crop[0], desaturated}), run({crop[0], steps::Grayscale{3}})));
  // a blur of sigma -> 0 is the picture; of a wide kernel, smoother (a smaller spread between neighbours)
  EXPECT_TRUE(torch::equal(run({crop[0], steps::GaussianBlur{3, 3, 1e-3, 1e-3}}), plain));
  const torch::Tensor blurred = run({crop[0], steps::GaussianBlur{9, 9, 3.0, 3.0}});
  const auto roughness = [](const torch::Tensor& t) {
    const torch::Tensor f = t.to(torch::kFloat32);
    return (f.narrow(2, 1, f.size(2) - 1) - f.narrow(2, 0, f.size(2) - 1)).abs().mean().item<double>();
  };
  EXPECT_LT(roughness(blurred), roughness(plain) / 2);
}

// The output with RandomErasing(p=1) against the same pipeline without it: one box differs, holding the value.
void expect_one_erased_box(const torch::Tensor& plain, const torch::Tensor& erased, const std::vector<double>& value) {
  ASSERT_EQ(plain.sizes(), erased.sizes());
  const torch::Tensor changed = plain.ne(erased).any(0);
  const torch::Tensor rows = changed.any(1).nonzero().flatten(), cols = changed.any(0).nonzero().flatten();
  ASSERT_GT(rows.numel(), 0);
  const int64_t top = rows[0].item<int64_t>(), bottom = rows[-1].item<int64_t>() + 1;
  const int64_t left = cols[0].item<int64_t>(), right = cols[-1].item<int64_t>() + 1;
  const torch::Tensor box = erased.slice(1, top, bottom).slice(2, left, right);
  for (int64_t c = 0; c < erased.size(0); ++c) {
    const double v = value.size() == 1 ? value[0] : value[c];
    EXPECT_TRUE(box[c].eq(v).all().item<bool>()) << c;
  }
  torch::Tensor outside = plain.clone();
  outside.slice(1, top, bottom).slice(2, left, right).copy_(box);
  EXPECT_TRUE(torch::equal(outside, erased));
  const double area = static_cast<double>((bottom - top) * (right - left)) / (plain.size(1) * plain.size(2));
  EXPECT_GE(area, 0.02 * 0.8);
  EXPECT_LE(area, 0.33 * 1.2);
}

TEST(ImageAugment, RandomErasingErasesOneBoxOfFloatOrUint8Outputs) {
  const std::vector<ImageStep> floats = {steps::CenterCrop{48, 64}, steps::ToTensor{},
                                         steps::Normalize{{0.5, 0.4, 0.3}, {0.2, 0.25, 0.3}}};
  const std::vector<ImageStep> bytes = {steps::CenterCrop{48, 64}, steps::PILToTensor{}};
  for (int64_t index = 0; index < 6; ++index) {
    for (const std::vector<double>& value : {std::vector<double>{0.5}, std::vector<double>{1.0, -2.0, 3.5}}) {
      std::vector<ImageStep> erased = floats;
      erased.push_back(erase_always(value));
      expect_one_erased_box(run(floats, 1, index), run(erased, 1, index), value);
    }
    std::vector<ImageStep> erased = bytes;
    erased.push_back(erase_always({10, 20, 30}));
    const torch::Tensor out = run(erased, 1, index);
    EXPECT_EQ(out.scalar_type(), torch::kUInt8);
    expect_one_erased_box(run(bytes, 1, index), out, {10, 20, 30});
  }
  // noise: not the value 0, and p = 0 erases nothing
  steps::RandomErasing noise = erase_always({});
  noise.random = true;
  std::vector<ImageStep> noisy = floats;
  noisy.push_back(noise);
  EXPECT_FALSE(torch::equal(run(noisy), run(floats)));
  std::vector<ImageStep> never = floats;
  never.push_back(steps::RandomErasing{0.0});
  EXPECT_TRUE(torch::equal(run(never), run(floats)));
}

TEST(ImageAugment, EqualGeneratorsGiveEqualBytesAndSamplesDiffer) {
  steps::ColorJitter jitter;
  jitter.brightness = jitter.contrast = jitter.saturation = steps::Range{true, 0.6, 1.4};
  jitter.hue = steps::Range{true, -0.1, 0.1};
  const std::vector<ImageStep> recipe = {steps::RandomResizedCrop{32, 32}, steps::RandomHorizontalFlip{}, jitter,
                                         steps::RandomGrayscale{0.2}, steps::GaussianBlur{3, 3, 0.1, 2.0},
                                         steps::ToTensor{}, steps::RandomErasing{}};
  std::set<std::vector<float>> distinct;
  for (int64_t index = 0; index < 6; ++index) {
    const torch::Tensor a = run(recipe, 7, index), b = run(recipe, 7, index);
    EXPECT_TRUE(torch::equal(a, b)) << index;
    distinct.insert(std::vector<float>(a.data_ptr<float>(), a.data_ptr<float>() + a.numel()));
  }
  EXPECT_EQ(distinct.size(), 6u);
  // without the crop, the colour steps alone still draw per sample
  const std::vector<ImageStep> colour = {steps::CenterCrop{32, 32}, jitter};
  EXPECT_FALSE(torch::equal(run(colour, 7, 0), run(colour, 7, 1)));
}

TEST(ImageAugment, DescribeGivesTorchvisionsRepr) {
  steps::ColorJitter jitter;
  jitter.brightness = steps::Range{true, 0.6, 1.4};
  jitter.hue = steps::Range{true, -0.1, 0.1};
  EXPECT_EQ(describe(jitter), "ColorJitter(brightness=[0.6, 1.4], contrast=None, saturation=None, hue=[-0.1, 0.1])");
  EXPECT_EQ(describe(steps::Grayscale{3}), "Grayscale(num_output_channels=3)");
  EXPECT_EQ(describe(steps::RandomGrayscale{}), "RandomGrayscale(p=0.1)");
  EXPECT_EQ(describe(steps::GaussianBlur{5, 3, 0.1, 2.0}), "GaussianBlur(kernel_size=(5, 3), sigma=(0.1, 2.0))");
  EXPECT_EQ(describe(steps::RandomErasing{}),
            "RandomErasing(p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False)");
  steps::RandomErasing noise;
  noise.random = true;
  EXPECT_EQ(describe(noise), "RandomErasing(p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=random, "
                             "inplace=False)");
}

}  // namespace
}  // namespace feedline
