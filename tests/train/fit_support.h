// A model of the tests' own and one short run of fit() on it with torchvision's recipe, for the tests of fit()
// on one process and on the ranks of a job.
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "fashion_split.h"
#include "feedline/loader/loader.h"
#include "feedline/train/train.h"

namespace feedline::testing {

// conv 1->4 3x3 stride 2, batch norm, ReLU; flatten; dropout (when above 0); linear 676->hidden, ReLU; linear
// hidden->10. Dropout draws from the process's CPU generator, which ranks that are threads of one process share in
// no fixed order: the tests of ranks leave it out.
class TinyNetImpl : public torch::nn::Module {
 public:
  explicit TinyNetImpl(int64_t hidden, double dropout = 0.25)
      : conv_(register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 4, 3).stride(2)))),
        bn_(register_module("bn", torch::nn::BatchNorm2d(4))),
        hidden_(register_module("hidden", torch::nn::Linear(4 * 13 * 13, hidden))),
        out_(register_module("out", torch::nn::Linear(hidden, 10))) {
    if (dropout > 0) drop_ = register_module("drop", torch::nn::Dropout(dropout));
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(bn_->forward(conv_->forward(x))).flatten(1);
    if (drop_) x = drop_->forward(x);
    return out_->forward(torch::relu(hidden_->forward(x)));
  }
  std::vector<torch::Tensor> body_parameters() const {
    auto p = conv_->parameters();
    for (const auto& b : bn_->parameters()) p.push_back(b);
    return p;
  }
  std::vector<torch::Tensor> head_parameters() const {
    auto p = hidden_->parameters();
    for (const auto& o : out_->parameters()) p.push_back(o);
    return p;
  }

 private:
  torch::nn::Conv2d conv_;
  torch::nn::BatchNorm2d bn_;
  torch::nn::Dropout drop_{nullptr};
  torch::nn::Linear hidden_, out_;
};
TORCH_MODULE(TinyNet);

// Two epochs of 10 steps (640 samples in shuffled batches of 64), tested on the next 128 samples.
inline TrainOptions tiny_options() {
  TrainOptions o;
  o.epochs = 2;
  o.device = torch::kCPU;
  return o;
}

// Cosine over `total_steps` after 3 steps of warm-up, label smoothing, clipping, an average of the weights.
inline Recipe tiny_recipe(int64_t total_steps = 20) {
  Recipe r;
  r.schedule = cosine_schedule(total_steps, 3, 0.1);
  r.label_smoothing = 0.1;
  r.clip_grad_norm = 1.0;
  r.ema_decay = 0.9;
  r.ema_every = 2;
  return r;
}

struct TinyRun {
  std::vector<EpochResult> results;
  std::vector<torch::Tensor> state;       // parameters, then buffers
  size_t parameters = 0;                  // how many of them are parameters
  std::map<int64_t, double> lrs;          // the learning rate of each step taken, by steps done before it
};

// A fresh TinyNet (seed `model_seed`) trained by fit() with SGD (Nesterov momentum 0.9, weight decay 1e-4, lr
// 0.05). The loaders are this rank's of `world_size` when above 1; `after_step` sees the model after each step,
// `prepare` the model and the options before the optimizer is made.
inline TinyRun tiny_run(TrainOptions options, uint64_t model_seed = 7, int64_t hidden = 16,
                        const Recipe& recipe = tiny_recipe(),
                        const std::function<void(const TinyNet&)>& after_step = {},
                        const std::function<void(TinyNet&, TrainOptions&)>& prepare = {}, int64_t rank = 0,
                        int64_t world_size = 1, double dropout = 0.25) {
  // The ranks of a job are threads that share the process's CPU generator: each seeds it and draws its model's
  // initial weights from it alone, or one rank's draws would land in another's weights.
  static std::mutex generator;
  TinyNet model = [&] {
    std::lock_guard<std::mutex> lock(generator);
    torch::manual_seed(model_seed);
    return TinyNet(hidden, dropout);
  }();
  if (prepare) prepare(model, options);
  torch::optim::SGD sgd(model->parameters(),
                        torch::optim::SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(1e-4));
  auto train_options = LoaderOptions(64 / world_size).shuffle(true).seed(3);
  auto test_options = LoaderOptions(64 / world_size);
  if (world_size > 1) {
    train_options.rank(rank).world_size(world_size);
    test_options.rank(rank).world_size(world_size).even_shards(false);
  }
  Loader train(fashion_slice(0, 640), train_options);
  Loader test(fashion_slice(640, 128), test_options);
  TinyRun run;
  TrainCallbacks callbacks;
  callbacks.on_train_step = [&](int64_t epoch, int64_t step, int64_t batches, double) {
    run.lrs[(epoch - 1) * batches + step - 1] = sgd.param_groups()[0].options().get_lr();
    if (after_step) after_step(model);
  };
  run.results = fit(model, sgd, train, test, options, recipe, callbacks);
  for (const auto& p : model->parameters()) run.state.push_back(p.detach().clone());
  run.parameters = run.state.size();
  for (const auto& b : model->buffers()) run.state.push_back(b.detach().clone());
  return run;
}

// The same weights and buffers bit for bit, and the resumed run's learning rates the whole run's at its steps.
inline void expect_same_state(const TinyRun& whole, const TinyRun& resumed) {
  ASSERT_EQ(whole.state.size(), resumed.state.size());
  for (size_t i = 0; i < whole.state.size(); ++i) {
    EXPECT_TRUE(torch::equal(whole.state[i], resumed.state[i])) << "tensor " << i << " of parameters and buffers";
  }
  ASSERT_FALSE(resumed.lrs.empty());
  for (const auto& [step, lr] : resumed.lrs) {
    ASSERT_EQ(whole.lrs.count(step), 1u) << "step " << step;
    EXPECT_EQ(whole.lrs.at(step), lr) << "step " << step;
  }
}

// The weights' average a checkpoint holds, in the model's order of parameters, then buffers.
inline std::vector<torch::Tensor> checkpoint_average(const std::string& file) {
  torch::serialize::InputArchive archive, average;
  archive.load_from(file);
  archive.read("average", average);
  std::vector<torch::Tensor> out;
  const auto keys = average.keys();
  for (size_t i = 0;; ++i) {
    if (std::find(keys.begin(), keys.end(), std::to_string(i)) == keys.end()) break;
    torch::Tensor t;
    average.read(std::to_string(i), t);
    out.push_back(t);
  }
  return out;
}

}  // namespace feedline::testing
