// MixUp and CutMix over whole batches (BatchMix): the mix restated from its definition for a given draw, the draws
// a function of the batch's seed alone (the same for any worker count), lambda's Beta distribution, and the
// errors for options, uint8 images and labels num_classes cannot hold. Value checks against torchvision's
// reference scripts are in python/tests/test_batch_mix.py.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <string>
#include <vector>

#include "feedline/dataset/dataset.h"
#include "feedline/io/error.h"
#include "feedline/loader/loader.h"

namespace feedline {
namespace {

// Sample i: a 2 x 5 x 7 float image filled with i + 0.25 * (pixel position), label i % classes.
std::shared_ptr<TensorDataset> images_dataset(int64_t n, int64_t classes, torch::Dtype dtype = torch::kFloat32) {
  auto images = (torch::arange(n, torch::kFloat64).view({n, 1, 1, 1}) +
                 0.25 * torch::arange(2 * 5 * 7, torch::kFloat64).view({1, 2, 5, 7}))
                    .to(dtype);
  return std::make_shared<TensorDataset>(images, torch::arange(n, torch::kInt64).remainder(classes));
}

std::vector<Example> epoch_batches(Loader& loader) {
  std::vector<Example> out;
  for (auto& b : loader.epoch()) out.push_back(b);
  return out;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(no InvalidArgument)";
}

Example a_batch(int64_t n, int64_t classes) {
  auto ds = images_dataset(n, classes);
  std::vector<int64_t> all(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) all[static_cast<size_t>(i)] = i;
  return ds->get_batch(all);
}

TEST(BatchMix, MixUpIsTheBatchWithItsRollByLambda) {
  const auto mix = BatchMix().num_classes(5).mixup_alpha(0.4);
  const auto batch = a_batch(6, 5);
  MixDraw draw;
  draw.kind = MixDraw::Kind::kMixUp;
  draw.lambda = 0.3;
  const auto out = apply_batch_mix(mix, batch, draw);
  for (int64_t i = 0; i < 6; ++i) {
    const int64_t j = (i + 5) % 6;  // roll by one: image i meets image i - 1
    EXPECT_TRUE(torch::allclose(out.data[i], 0.3 * batch.data[i] + 0.7 * batch.data[j], 1e-6, 1e-6)) << i;
    auto expected = torch::zeros({5});
    expected[i % 5] += 0.3;
    expected[j % 5] += 0.7;
    EXPECT_TRUE(torch::allclose(out.target[i], expected, 1e-6, 1e-7)) << i;
  }
  EXPECT_EQ(out.target.scalar_type(), torch::kFloat32);
  EXPECT_TRUE(torch::allclose(out.target.sum(1), torch::ones({6}), 1e-6, 1e-6));
}

TEST(BatchMix, CutMixPastesTheRolledBoxAndWeighsTheTargetsByItsArea) {
  const auto mix = BatchMix().num_classes(4).cutmix_alpha(1.0);
  const auto batch = a_batch(3, 4);
  MixDraw draw;
  draw.kind = MixDraw::Kind::kCutMix;
  draw.x1 = 2, draw.x2 = 6, draw.y1 = 1, draw.y2 = 3;
  draw.lambda = 1.0 - 8.0 / 35.0;
  const auto out = apply_batch_mix(mix, batch, draw);
  for (int64_t i = 0; i < 3; ++i) {
    const int64_t j = (i + 2) % 3;
    for (int64_t y = 0; y < 5; ++y) {
      for (int64_t x = 0; x < 7; ++x) {
        const bool in_box = x >= 2 && x < 6 && y >= 1 && y < 3;
        const auto& from = in_box ? batch.data[j] : batch.data[i];
        EXPECT_TRUE(torch::equal(out.data[i].select(1, y).select(1, x), from.select(1, y).select(1, x)));
      }
    }
    EXPECT_NEAR(out.target[i][i].item<double>(), draw.lambda, 1e-6);
    EXPECT_NEAR(out.target[i][j].item<double>(), 1.0 - draw.lambda, 1e-6);
  }
  EXPECT_FALSE(torch::equal(out.data, batch.data));
}

TEST(BatchMix, DrawsFollowTheirDefinition) {
  const auto cut = BatchMix().num_classes(3).cutmix_alpha(1.0);
  int64_t boxes = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const MixDraw d = draw_batch_mix(cut, 32, 48, seed);
    ASSERT_EQ(d.kind, MixDraw::Kind::kCutMix);
    ASSERT_GE(d.x1, 0);
    ASSERT_LE(d.x2, 48);
    ASSERT_GE(d.y1, 0);
    ASSERT_LE(d.y2, 32);
    ASSERT_LE(d.x1, d.x2);
    ASSERT_LE(d.y1, d.y2);
    EXPECT_DOUBLE_EQ(d.lambda, 1.0 - static_cast<double>((d.x2 - d.x1) * (d.y2 - d.y1)) / (32.0 * 48.0));
    boxes += d.x2 > d.x1 && d.y2 > d.y1;
    // The same seed, the same draw.
    const MixDraw again = draw_batch_mix(cut, 32, 48, seed);
    EXPECT_EQ(again.x1, d.x1);
    EXPECT_EQ(again.y2, d.y2);
    EXPECT_EQ(again.lambda, d.lambda);
  }
  EXPECT_GT(boxes, 100);
  // p = 0: never mixed; both on: both chosen.
  for (uint64_t seed = 0; seed < 50; ++seed) {
    EXPECT_EQ(draw_batch_mix(BatchMix().num_classes(3).mixup_alpha(1).p(0), 8, 8, seed).kind, MixDraw::Kind::kNone);
  }
  int64_t mixups = 0, cutmixes = 0;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    const auto kind = draw_batch_mix(BatchMix().num_classes(3).mixup_alpha(1).cutmix_alpha(1), 8, 8, seed).kind;
    mixups += kind == MixDraw::Kind::kMixUp;
    cutmixes += kind == MixDraw::Kind::kCutMix;
  }
  EXPECT_EQ(mixups + cutmixes, 400);
  // A fair choice: 400 draws lie within 5 standard deviations (sqrt(400 / 4) = 10) of 200.
  EXPECT_NEAR(static_cast<double>(mixups), 200.0, 50.0);
}

// lambda ~ Beta(alpha, alpha): mean 1/2, variance 1 / (4 (2 alpha + 1)); the sample mean and variance of n draws lie
// within a few standard errors of them.
TEST(BatchMix, LambdaIsBetaDistributed) {
  for (const double alpha : {0.2, 1.0, 4.0}) {
    const auto mix = BatchMix().num_classes(2).mixup_alpha(alpha);
    const int n = 20000;
    double sum = 0, sum2 = 0;
    for (int i = 0; i < n; ++i) {
      const double l = draw_batch_mix(mix, 4, 4, static_cast<uint64_t>(i)).lambda;
      ASSERT_GE(l, 0.0);
      ASSERT_LE(l, 1.0);
      sum += l;
      sum2 += l * l;
    }
    const double mean = sum / n;
    const double var = sum2 / n - mean * mean;
    const double expected_var = 1.0 / (4.0 * (2.0 * alpha + 1.0));
    EXPECT_NEAR(mean, 0.5, 6.0 * std::sqrt(expected_var / n)) << "alpha " << alpha;
    // The variance's standard error: sqrt((m4 - var^2) / n) <= sqrt(m4 / n), and m4 <= var for values in [0, 1]
    // about a mean of 1/2 (|l - 1/2| <= 1/2 makes (l - 1/2)^4 <= (l - 1/2)^2 / 4).
    EXPECT_NEAR(var, expected_var, 6.0 * std::sqrt(expected_var / 4.0 / n)) << "alpha " << alpha;
  }
}

TEST(BatchMix, TheLoaderMixesTheSameBatchesForAnyWorkerCount) {
  std::vector<std::vector<Example>> runs;
  for (const int64_t workers : {0, 1, 3}) {
    Loader loader(images_dataset(40, 7),
                  LoaderOptions(6).shuffle(true).seed(11).num_workers(workers).mix(
                      BatchMix().num_classes(7).mixup_alpha(0.2).cutmix_alpha(1.0)));
    runs.push_back(epoch_batches(loader));
  }
  ASSERT_EQ(runs[0].size(), 7u);
  for (size_t r = 1; r < runs.size(); ++r) {
    for (size_t b = 0; b < runs[0].size(); ++b) {
      EXPECT_TRUE(torch::equal(runs[r][b].data, runs[0][b].data)) << r << " " << b;
      EXPECT_TRUE(torch::equal(runs[r][b].target, runs[0][b].target)) << r << " " << b;
    }
  }
  for (const auto& b : runs[0]) {
    EXPECT_EQ(b.target.sizes(), (std::vector<int64_t>{b.data.size(0), 7}));
    EXPECT_TRUE(torch::allclose(b.target.sum(1), torch::ones({b.data.size(0)}), 1e-6, 1e-6));
  }
  // The mix changed the batches: the unmixed loader's targets are class numbers.
  Loader plain(images_dataset(40, 7), LoaderOptions(6).shuffle(true).seed(11));
  const auto unmixed = epoch_batches(plain);
  int64_t changed = 0;
  for (size_t b = 0; b < unmixed.size(); ++b) changed += !torch::equal(unmixed[b].data, runs[0][b].data);
  EXPECT_GT(changed, 0);
  // Another seed mixes otherwise.
  Loader other(images_dataset(40, 7), LoaderOptions(6).shuffle(true).seed(12).mix(
                                          BatchMix().num_classes(7).mixup_alpha(0.2).cutmix_alpha(1.0)));
  EXPECT_FALSE(torch::equal(epoch_batches(other)[0].target, runs[0][0].target));
}

TEST(BatchMix, RunsAfterTheCallersTransform) {
  const auto scale = [](Example b, const BatchInfo&) {
    b.data = b.data * 2;
    return b;
  };
  const auto mix = BatchMix().num_classes(7).mixup_alpha(1.0);
  Loader with(images_dataset(12, 7), LoaderOptions(4).seed(3).transform(scale).mix(mix));
  Loader without(images_dataset(12, 7), LoaderOptions(4).seed(3).mix(mix));
  const auto a = epoch_batches(with), b = epoch_batches(without);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::allclose(a[i].data, 2 * b[i].data, 1e-5, 1e-5));
    EXPECT_TRUE(torch::equal(a[i].target, b[i].target));
  }
}

TEST(BatchMix, RefusesWhatItCannotMix) {
  EXPECT_NE(message_of([] { check_batch_mix(BatchMix().mixup_alpha(1)); }).find("num_classes 0"), std::string::npos);
  EXPECT_NE(message_of([] { check_batch_mix(BatchMix().num_classes(3)); }).find("both alphas are 0"),
            std::string::npos);
  EXPECT_NE(message_of([] { check_batch_mix(BatchMix().num_classes(3).cutmix_alpha(-1)); }).find("CutMix's alpha -1"),
            std::string::npos);
  EXPECT_NE(message_of([] { check_batch_mix(BatchMix().num_classes(3).mixup_alpha(1).p(1.5)); })
                .find("probability 1.5"),
            std::string::npos);
  EXPECT_THROW(Loader(images_dataset(4, 2), LoaderOptions(2).mix(BatchMix().num_classes(2))), InvalidArgument);

  // A label num_classes cannot hold: named with its place in the batch, and raised by the loader's next().
  const auto batch = a_batch(6, 6);  // labels 0..5
  const auto small = BatchMix().num_classes(5).mixup_alpha(1);
  const std::string msg = message_of([&] { mix_batch(small, batch, 0); });
  EXPECT_NE(msg.find("label 5 (image 5 of the batch) is outside [0, 5)"), std::string::npos) << msg;
  Loader loader(images_dataset(6, 6), LoaderOptions(6).num_workers(2).mix(small));
  auto epoch = loader.epoch();
  EXPECT_THROW(epoch.next(), InvalidArgument);

  // uint8 images, as PILToTensor makes them: refused, as torchvision refuses them.
  Loader bytes(images_dataset(4, 2, torch::kUInt8), LoaderOptions(2).mix(BatchMix().num_classes(2).cutmix_alpha(1)));
  const std::string u8 = message_of([&] { epoch_batches(bytes); });
  EXPECT_NE(u8.find("the images are Byte"), std::string::npos) << u8;
  EXPECT_NE(u8.find("ToTensor"), std::string::npos) << u8;

  // Not images.
  const std::string flat = message_of([&] { mix_batch(small, Example{torch::zeros({4, 3}), torch::zeros({4}, torch::kInt64)}, 0); });
  EXPECT_NE(flat.find("(N, C, H, W)"), std::string::npos) << flat;
}

}  // namespace
}  // namespace feedline
