#include "dist/job_model.h"

#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <string>

#include "feedline/train/models.h"

namespace feedline::dist::detail {
namespace {

const char* model_key(TrainModel model) {
  switch (model) {
    case TrainModel::kSimpleCnn: return "simplecnn";
    case TrainModel::kResNet18: return "resnet18";
    case TrainModel::kResNet34: return "resnet34";
    case TrainModel::kResNet50: return "resnet50";
  }
  return "?";
}

}  // namespace

bool plain_recipe(const TrainJobOptions& o) {
  const JobModelOptions& m = o.model;
  return m.model == TrainModel::kSimpleCnn && m.optimizer == TrainOptimizer::kAdam &&
         m.lr_schedule == LrSchedule::kConstant && m.lr_warmup_epochs == 0 && m.label_smoothing == 0 &&
         m.clip_grad_norm == 0 && m.ema_decay == 0 && m.precision == TrainPrecision::kFloat32;
}

// The ranges of the recipe's values are fit()'s and the schedules' to refuse; here, what they cannot see before
// the data is loaded: a ResNet on images that are not RGB, and autocast on a CPU.
void check_job_model(const TrainJobOptions& o, const ImageShape& shape, torch::Device device) {
  if (o.model.model != TrainModel::kSimpleCnn && shape.channels != 3) {
    throw JobOptionError(JobOption::kModel, std::string(model_key(o.model.model)) + " takes RGB images, and these " +
                                                "have " + std::to_string(shape.channels) + " channel" +
                                                (shape.channels == 1 ? "" : "s") + " (image files are read as RGB)");
  }
  if (o.model.precision != TrainPrecision::kFloat32 && !device.is_cuda()) {
    const char* word = o.model.precision == TrainPrecision::kFloat16 ? "fp16" : "bf16";
    throw JobOptionError(JobOption::kPrecision,
                         std::string(word) + " runs on a CUDA device (autocast), and the device is " + device.str());
  }
}

JobModel make_job_model(const TrainJobOptions& o, const ImageShape& shape, int64_t classes) {
  JobModel m;
  if (o.model.model == TrainModel::kSimpleCnn) {
    SimpleCNN net(SimpleCNNOptions().channels(shape.channels).height(shape.height).width(shape.width).classes(classes));
    m.name = "SimpleCNN";
    m.model.emplace(net);
    m.simple_cnn.emplace(net);
    return m;
  }
  const std::string key = model_key(o.model.model);
  ResNet net = make_resnet(key, classes);
  m.name = "ResNet-" + key.substr(6);
  m.model.emplace(net);
  return m;
}

std::unique_ptr<torch::optim::Optimizer> make_job_optimizer(const TrainJobOptions& options, torch::nn::Module& model) {
  const JobModelOptions& o = options.model;
  if (o.optimizer == TrainOptimizer::kAdam) {
    return std::make_unique<torch::optim::Adam>(model.parameters(), torch::optim::AdamOptions(o.lr));
  }
  const auto sgd = torch::optim::SGDOptions(o.lr).momentum(o.momentum).nesterov(o.nesterov).weight_decay(
      o.weight_decay);
  if (o.norm_weight_decay < 0) return std::make_unique<torch::optim::SGD>(model.parameters(), sgd);
  return std::make_unique<torch::optim::SGD>(weight_decay_groups(model, sgd, o.norm_weight_decay), sgd);
}

Recipe make_job_recipe(const TrainJobOptions& options, int64_t batches_per_epoch, int64_t global_batch) {
  const JobModelOptions& o = options.model;
  const int64_t epochs = options.epochs;
  Recipe r;
  const int64_t warmup = o.lr_warmup_epochs * batches_per_epoch;
  if (o.lr_schedule == LrSchedule::kCosine) {
    r.schedule = cosine_schedule(epochs * batches_per_epoch, warmup, o.lr_warmup_decay);
  } else if (o.lr_schedule == LrSchedule::kStep) {
    r.schedule = step_schedule(o.lr_step_size * batches_per_epoch, o.lr_gamma, warmup, o.lr_warmup_decay);
  } else if (warmup > 0) {
    r.schedule = step_schedule(1, 1.0, warmup, o.lr_warmup_decay);  // a warm-up, then the rate as given
  }
  r.label_smoothing = o.label_smoothing;
  r.clip_grad_norm = o.clip_grad_norm;
  if (o.ema_decay > 0) {
    // torchvision's train.py: alpha = 1 - decay, scaled by the samples between updates over the epochs.
    const double adjust = static_cast<double>(global_batch * o.ema_steps) / static_cast<double>(epochs);
    r.ema_decay = 1.0 - std::min(1.0, (1.0 - o.ema_decay) * adjust);
    if (r.ema_decay <= 0) r.ema_decay = 1e-12;  // an average that is the weights themselves
    r.ema_every = o.ema_steps;
  }
  if (o.precision == TrainPrecision::kBFloat16) r.precision = Precision::kBFloat16;
  if (o.precision == TrainPrecision::kFloat16) r.precision = Precision::kFloat16;
  return r;
}

}  // namespace feedline::dist::detail
