// fit(): any module with the caller's optimizer, schedule and loss, through checkpoints and resume. The model is
// the test's own (convolution, batch norm, dropout, two linear layers), the optimizer torchvision's recipe's
// (SGD with Nesterov momentum and weight decay), so that every piece of state a checkpoint must hold is there:
// momentum buffers, batch-norm statistics, the RNG that dropout draws from, the schedule's step, the weights'
// average.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "fashion_split.h"
#include "feedline/io/error.h"
#include "feedline/loader/loader.h"
#include "feedline/train/train.h"
#include "test_paths.h"
#include "train/fit_support.h"

namespace feedline {
namespace {

namespace fs = std::filesystem;
using testing::TinyNet;
using testing::TinyRun;
using testing::tiny_run;

TEST(Fit, AStoppedRunOfAnyModelResumesToTheUninterruptedRunBitForBit) {
  const TinyRun whole = tiny_run(testing::tiny_options());

  const std::string dir = testing::scratch_dir("fit_stop");
  TrainOptions stop = testing::tiny_options();
  stop.checkpoint_dir = dir;
  std::atomic<int> steps{0};
  stop.stop_requested = [&steps] { return ++steps == 13; };  // mid-epoch 2
  const TinyRun stopped = tiny_run(stop);
  ASSERT_FALSE(stopped.results.empty());
  EXPECT_TRUE(stopped.results.back().interrupted);
  const CheckpointInfo info = read_checkpoint_info(dir);
  EXPECT_EQ(info.epoch, 2);
  EXPECT_EQ(info.step, 3);
  EXPECT_EQ(info.steps_done, 13);

  TrainOptions resume = testing::tiny_options();
  resume.resume_dir = dir;
  // Other starting weights: everything must come from the checkpoint.
  const TinyRun resumed = tiny_run(resume, /*model_seed=*/99);
  testing::expect_same_state(whole, resumed);
  ASSERT_EQ(resumed.results.size(), 1u);  // epoch 2 only
  EXPECT_EQ(resumed.results[0].test_loss, whole.results[1].test_loss);
  EXPECT_EQ(resumed.results[0].ema_test_loss, whole.results[1].ema_test_loss);
}

TEST(Fit, ARunKilledAfterACheckpointResumesFromItBitForBit) {
  const std::string dir = testing::scratch_dir("fit_kill");
  TrainOptions every = testing::tiny_options();
  every.checkpoint_dir = dir;
  every.checkpoint_every = 7;
  every.keep_checkpoints = 5;
  const TinyRun whole = tiny_run(every);
  // What a process killed after step 7's checkpoint leaves: that checkpoint alone.
  const std::string killed = testing::scratch_dir("fit_killed");
  fs::copy_file(checkpoint_file(dir, 7), checkpoint_file(killed, 7));
  TrainOptions resume = testing::tiny_options();
  resume.resume_dir = killed;
  const TinyRun resumed = tiny_run(resume, /*model_seed=*/5);
  testing::expect_same_state(whole, resumed);
}

TEST(Fit, ACheckpointRefusesAnotherModelNamingTheFirstParameterThatDiffers) {
  const std::string dir = testing::scratch_dir("fit_other_model");
  TrainOptions save = testing::tiny_options();
  save.checkpoint_dir = dir;
  save.checkpoint_every = 5;
  save.epochs = 1;
  tiny_run(save);
  TrainOptions resume = testing::tiny_options();
  resume.resume_dir = dir;
  const std::string file = latest_checkpoint(dir);
  try {
    tiny_run(resume, 7, /*hidden=*/24);
    ADD_FAILURE() << "a checkpoint of a model with 16 hidden units loaded into one with 24";
  } catch (const InvalidFile& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(file), std::string::npos) << what;
    EXPECT_NE(what.find("'hidden.weight'"), std::string::npos) << what;
    EXPECT_NE(what.find("[16, 676]"), std::string::npos) << what;
    EXPECT_NE(what.find("[24, 676]"), std::string::npos) << what;
  }
}

TEST(Fit, TheScheduleSetsEveryGroupsRateFromItsOwnBaseAtEveryStep) {
  torch::manual_seed(1);
  TinyNet model(16);
  // Two groups at different rates: the head learns 10x faster.
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(model->head_parameters(), std::make_unique<torch::optim::SGDOptions>(0.5));
  groups.emplace_back(model->body_parameters(), std::make_unique<torch::optim::SGDOptions>(0.05));
  torch::optim::SGD sgd(std::move(groups), torch::optim::SGDOptions(0.05));
  Loader train(testing::fashion_slice(0, 128), LoaderOptions(32));
  Loader test(testing::fashion_slice(640, 32), LoaderOptions(32));
  Recipe recipe;
  std::vector<std::pair<double, double>> seen;
  recipe.schedule = [](int64_t step) { return 1.0 / static_cast<double>(step + 2); };
  TrainCallbacks callbacks;
  callbacks.on_train_step = [&](int64_t, int64_t, int64_t, double) {
    seen.emplace_back(sgd.param_groups()[0].options().get_lr(), sgd.param_groups()[1].options().get_lr());
  };
  TrainOptions options = testing::tiny_options();
  options.epochs = 2;
  fit(model, sgd, train, test, options, recipe, callbacks);
  ASSERT_EQ(seen.size(), 8u);
  for (size_t step = 0; step < seen.size(); ++step) {
    EXPECT_EQ(seen[step].first, 0.5 * recipe.schedule(static_cast<int64_t>(step))) << "step " << step;
    EXPECT_EQ(seen[step].second, 0.05 * recipe.schedule(static_cast<int64_t>(step))) << "step " << step;
  }
}

TEST(Fit, TheWeightsAverageIsTorchvisionsExponentialMovingAverage) {
  // Every weight after every second step, to compute the average the test's own way.
  const std::string dir = testing::scratch_dir("fit_average");
  TrainOptions options = testing::tiny_options();
  options.epochs = 1;
  options.checkpoint_dir = dir;
  options.checkpoint_every = 10;
  Recipe recipe = testing::tiny_recipe(10);
  recipe.ema_decay = 0.75;
  recipe.ema_every = 2;
  std::vector<std::vector<torch::Tensor>> after_step;
  const TinyRun run = tiny_run(options, 7, 16, recipe, [&](const TinyNet& model) {
    std::vector<torch::Tensor> w;
    for (const auto& p : model->parameters()) w.push_back(p.detach().clone());
    for (const auto& b : model->buffers()) w.push_back(b.detach().clone());
    after_step.push_back(std::move(w));
  });
  ASSERT_EQ(after_step.size(), 10u);
  std::vector<torch::Tensor> expected;
  for (size_t step = 1; step < after_step.size(); step += 2) {  // after steps 2, 4, ...: the first a copy
    for (size_t i = 0; i < after_step[step].size(); ++i) {
      const torch::Tensor& w = after_step[step][i];
      if (expected.size() <= i) {
        expected.push_back(w.clone());
      } else if (w.is_floating_point()) {
        expected[i] = expected[i] * 0.75 + w * 0.25;
      } else {
        expected[i] = w.clone();
      }
    }
  }
  const auto average = testing::checkpoint_average(latest_checkpoint(dir));
  ASSERT_EQ(average.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const double scale = expected[i].abs().max().item<double>() + 1;
    // The same terms in the same order, with mul_/add_ in place against a fresh expression: float rounding of
    // one multiply-add a step apart at most.
    EXPECT_LE((average[i] - expected[i]).abs().max().item<double>(), 8 * scale * 1.2e-7) << "tensor " << i;
  }
  EXPECT_GT(run.results[0].ema_test_loss, 0);
  EXPECT_GT(run.results[0].ema_test_accuracy, 0);
}

TEST(Fit, SchedulesAreTorchvisions) {
  const Schedule cosine = cosine_schedule(100, 10, 0.01);
  EXPECT_EQ(cosine(0), 0.01);
  EXPECT_DOUBLE_EQ(cosine(5), 0.01 + 0.99 * 5 / 10);
  EXPECT_EQ(cosine(10), 1.0);
  EXPECT_DOUBLE_EQ(cosine(55), 0.5);
  EXPECT_NEAR(cosine(100), 0.0, 1e-15);
  EXPECT_NEAR(cosine(500), 0.0, 1e-15);  // past the end: stays at 0
  const Schedule step = step_schedule(30, 0.1);
  EXPECT_EQ(step(0), 1.0);
  EXPECT_EQ(step(29), 1.0);
  EXPECT_DOUBLE_EQ(step(30), 0.1);
  EXPECT_DOUBLE_EQ(step(65), 0.01);
  EXPECT_THROW(cosine_schedule(0), InvalidArgument);
  EXPECT_THROW(cosine_schedule(10, 10), InvalidArgument);
  EXPECT_THROW(cosine_schedule(10, 2, 0), InvalidArgument);
  EXPECT_THROW(step_schedule(0, 0.1), InvalidArgument);
  EXPECT_THROW(step_schedule(10, 1.5), InvalidArgument);
  EXPECT_THROW(step_schedule(10, 0.1, -1), InvalidArgument);
}

TEST(Fit, RecipesOutOfRangeAndTheCudaGraphAreRefused) {
  for (const auto& change : std::vector<std::function<void(Recipe&, TrainOptions&)>>{
           [](Recipe& r, TrainOptions&) { r.label_smoothing = 1; },
           [](Recipe& r, TrainOptions&) { r.clip_grad_norm = -1; },
           [](Recipe& r, TrainOptions&) { r.ema_decay = 1; },
           [](Recipe& r, TrainOptions&) { r.ema_every = 0; },
           [](Recipe&, TrainOptions& o) { o.cuda_graph = true; },
           [](Recipe& r, TrainOptions&) { r.precision = Precision::kBFloat16; },  // on a CPU
       }) {
    Recipe recipe;
    TrainOptions options = testing::tiny_options();
    change(recipe, options);
    EXPECT_THROW(tiny_run(options, 7, 16, recipe), InvalidArgument);
  }
}

}  // namespace
}  // namespace feedline
