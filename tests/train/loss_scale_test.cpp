// The loss scaler of float16 training, on CPU tensors: torch.cuda.amp.GradScaler's scale sequence (powers of two,
// so exact), a skipped step on an inf or NaN gradient that leaves the weights and the optimizer's state as they
// were, unscaled gradients (and clipping) equal to the unscaled loss's bit for bit, the scale in checkpoints, and
// fit() refusing float16 on a CPU.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "fashion_split.h"
#include "feedline/io/error.h"
#include "feedline/loader/loader.h"
#include "feedline/train/train.h"
#include "test_paths.h"
#include "train/checkpoints.h"
#include "train/fit_support.h"
#include "train/loss_scale.h"

namespace feedline {
namespace {

using detail::LossScaler;

// A linear model 4 -> 3 and a batch for it, the same for every call.
struct Problem {
  torch::nn::Linear model{nullptr};
  torch::Tensor x, y;
};

Problem problem() {
  torch::manual_seed(11);
  return {torch::nn::Linear(4, 3), torch::randn({8, 4}), torch::randn({8, 3})};
}

torch::Tensor loss_of(Problem& p) { return torch::mse_loss(p.model->forward(p.x), p.y); }

std::string optimizer_bytes(const torch::optim::Optimizer& optimizer) {
  std::ostringstream out;
  torch::serialize::OutputArchive archive;
  optimizer.save(archive);
  archive.save_to(out);
  return out.str();
}

std::vector<torch::Tensor> weights(const torch::nn::Module& m) {
  std::vector<torch::Tensor> w;
  for (const auto& p : m.parameters()) w.push_back(p.detach().clone());
  return w;
}

void expect_equal(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "parameter " << i;
}

LossScaling interval(int64_t steps) {
  LossScaling s;
  s.growth_interval = steps;
  return s;
}

TEST(LossScale, StartsAtGradScalersDefaults) {
  const LossScaling defaults;
  EXPECT_EQ(defaults.init_scale, 65536.0);
  EXPECT_EQ(defaults.growth_factor, 2.0);
  EXPECT_EQ(defaults.backoff_factor, 0.5);
  EXPECT_EQ(defaults.growth_interval, 2000);
  const LossScaler scaler(defaults);
  EXPECT_EQ(scaler.scale(), 65536.0f);
  EXPECT_EQ(scaler.good_steps(), 0);
}

TEST(LossScale, FollowsGradScalersScaleStepByStep) {
  // GradScaler(init_scale=65536, growth_interval=3) fed found_inf = 0,0,0,1,0,0,0,0 gives these scales after each
  // update() (and growth trackers).
  LossScaler scaler(interval(3));
  const std::vector<bool> finite = {true, true, true, false, true, true, true, true};
  const std::vector<float> scales = {65536, 65536, 131072, 65536, 65536, 65536, 131072, 131072};
  const std::vector<int64_t> good = {1, 2, 0, 0, 1, 2, 0, 1};
  for (size_t i = 0; i < finite.size(); ++i) {
    scaler.update(finite[i]);
    EXPECT_EQ(scaler.scale(), scales[i]) << "after update " << i;
    EXPECT_EQ(scaler.good_steps(), good[i]) << "after update " << i;
  }
}

TEST(LossScale, AGrowthPastFloat32IsNotTaken) {
  LossScaling s = interval(1);
  s.init_scale = std::ldexp(1.0, 127);
  LossScaler scaler(s);
  scaler.update(true);
  EXPECT_EQ(scaler.scale(), std::ldexp(1.0f, 127));
  EXPECT_EQ(scaler.good_steps(), 0);  // the tracker is reset all the same, as GradScaler's kernel does
}

TEST(LossScale, AnInfOrNanGradientSkipsTheStepAndBacksOff) {
  for (const float bad : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    Problem p = problem();
    torch::optim::Adam adam(p.model->parameters(), torch::optim::AdamOptions(0.1));
    LossScaler scaler(LossScaling{});
    // One good step first, so that the optimizer has state that a skipped step must leave alone.
    adam.zero_grad();
    scaler.scaled(loss_of(p)).backward();
    ASSERT_TRUE(scaler.step(adam));
    EXPECT_EQ(scaler.good_steps(), 1);

    const auto before = weights(*p.model);
    const std::string state = optimizer_bytes(adam);
    p.x[2][1] = bad;  // the weights' gradient takes it
    adam.zero_grad();
    scaler.scaled(loss_of(p)).backward();
    bool clipped = false;
    EXPECT_FALSE(scaler.step(adam, [&] { clipped = true; }));
    EXPECT_FALSE(clipped);
    expect_equal(before, weights(*p.model));
    EXPECT_EQ(optimizer_bytes(adam), state);
    EXPECT_EQ(scaler.scale(), 32768.0f);
    EXPECT_EQ(scaler.good_steps(), 0);
  }
}

TEST(LossScale, UnscaledGradientsAndClippingAreTheUnscaledLosss) {
  // The same step twice: with the loss as it is, and scaled then unscaled; scales are powers of two, so the
  // gradients, their clipped values and the weights after the step agree bit for bit.
  Problem plain = problem();
  torch::optim::SGD plain_sgd(plain.model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  plain_sgd.zero_grad();
  loss_of(plain).backward();
  std::vector<torch::Tensor> plain_grads;
  for (const auto& w : plain.model->parameters()) plain_grads.push_back(w.grad().clone());
  const double plain_norm = torch::nn::utils::clip_grad_norm_(plain.model->parameters(), 0.05);
  plain_sgd.step();

  Problem scaled = problem();
  torch::optim::SGD sgd(scaled.model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  LossScaler scaler(LossScaling{});
  sgd.zero_grad();
  scaler.scaled(loss_of(scaled)).backward();
  EXPECT_FALSE(torch::equal(scaled.model->parameters()[0].grad(), plain_grads[0]));  // scaled so far
  double norm = 0;
  ASSERT_TRUE(scaler.step(sgd, [&] {
    std::vector<torch::Tensor> grads;
    for (const auto& w : scaled.model->parameters()) grads.push_back(w.grad().clone());
    expect_equal(plain_grads, grads);
    norm = torch::nn::utils::clip_grad_norm_(scaled.model->parameters(), 0.05);
  }));
  EXPECT_EQ(norm, plain_norm);
  EXPECT_GT(plain_norm, 0.05);  // the clipping did clip
  expect_equal(weights(*plain.model), weights(*scaled.model));
}

TEST(LossScale, AFloat16LossIsScaledInFloat32) {
  const LossScaler scaler(LossScaling{});
  const auto scaled = scaler.scaled(torch::tensor(2.0, torch::kHalf));
  EXPECT_EQ(scaled.scalar_type(), torch::kFloat32);
  EXPECT_EQ(scaled.item<float>(), 131072.0f);  // beyond float16's largest, 65504
}

TEST(LossScale, SettingsOutOfRangeAreRefused) {
  std::vector<LossScaling> bad(6);
  bad[0].init_scale = 0;
  bad[1].init_scale = 1e39;  // inf in float32
  bad[2].growth_factor = 1;
  bad[3].backoff_factor = 1;
  bad[4].backoff_factor = 0;
  bad[5].growth_interval = 0;
  for (const auto& s : bad) EXPECT_THROW(LossScaler::check(s), InvalidArgument);
  for (const auto& s : bad) {
    Recipe recipe;
    recipe.precision = Precision::kFloat16;
    recipe.loss_scaling = s;
    EXPECT_THROW(testing::tiny_run(testing::tiny_options(), 7, 16, recipe), InvalidArgument);
  }
}

TEST(LossScale, AStateIsCheckedBeforeItIsTaken) {
  LossScaler scaler(LossScaling{});
  scaler.load_state(torch::tensor({1024.0, 17.0}, torch::kFloat64));
  EXPECT_EQ(scaler.scale(), 1024.0f);
  EXPECT_EQ(scaler.good_steps(), 17);
  for (const auto& bad : {torch::tensor({0.0, 1.0}, torch::kFloat64), torch::tensor({1e39, 1.0}, torch::kFloat64),
                          torch::tensor({0.1, 1.0}, torch::kFloat64),  // no float32
                          torch::tensor({1024.0, -1.0}, torch::kFloat64), torch::tensor({1024.0, 1.5}, torch::kFloat64),
                          torch::tensor({1024.0}, torch::kFloat64), torch::tensor({1024.0f, 1.0f})}) {
    EXPECT_THROW(scaler.load_state(bad), InvalidArgument);
  }
  EXPECT_EQ(scaler.scale(), 1024.0f);
  EXPECT_EQ(scaler.good_steps(), 17);
}

// A checkpoint of a run with `written` (null: none) resumed by one with `read`.
void checkpoint_and_resume(const LossScaler* written, LossScaler& read, const std::string& name) {
  const std::string dir = testing::scratch_dir(name);
  torch::manual_seed(5);
  testing::TinyNet model(8);
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.1));
  Loader train(testing::fashion_slice(0, 128), LoaderOptions(64));
  TrainOptions options = testing::tiny_options();
  options.checkpoint_dir = dir;
  options.async_checkpoints = false;
  LossScaler copy(LossScaling{});
  if (written != nullptr) copy = *written;
  {
    detail::Checkpoints checkpoints(*model, &sgd, nullptr, train, options, written != nullptr ? &copy : nullptr);
    checkpoints.after_step(1, 1, 1, /*stopping=*/true, {});
  }
  options.resume_dir = dir;
  detail::Checkpoints checkpoints(*model, &sgd, nullptr, train, options, &read);
  EXPECT_EQ(checkpoints.resume().steps_done, 1);
}

TEST(LossScale, ACheckpointHoldsTheScaleAndItsGoodSteps) {
  LossScaler written(interval(4));
  written.update(false);
  written.update(true);
  written.update(true);  // 32768, 2 good steps
  LossScaler read(interval(4));
  checkpoint_and_resume(&written, read, "loss_scale_checkpoint");
  EXPECT_EQ(read.scale(), 32768.0f);
  EXPECT_EQ(read.good_steps(), 2);
}

TEST(LossScale, ACheckpointWithoutAScaleLeavesTheScalersOwn) {
  LossScaler read(interval(4));
  read.update(false);
  checkpoint_and_resume(nullptr, read, "loss_scale_checkpoint_none");
  EXPECT_EQ(read.scale(), 32768.0f);  // as it was: nothing to take
  EXPECT_EQ(read.good_steps(), 0);
}

TEST(LossScale, FitRefusesFloat16OnACpuNamingTheProblem) {
  Recipe recipe;
  recipe.precision = Precision::kFloat16;
  try {
    testing::tiny_run(testing::tiny_options(), 7, 16, recipe);
    FAIL() << "float16 on a CPU was not refused";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("float16 autocast runs on a CUDA device, and the device is cpu"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace feedline
