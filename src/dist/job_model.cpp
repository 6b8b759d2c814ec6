#include "dist/job_model.h"

#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <string>

#include "feedline/io/error.h"
#include "feedline/train/models.h"

namespace feedline::dist::detail {
namespace {

bool is_resnet(const std::string& name) { return name == "resnet18" || name == "resnet34" || name == "resnet50"; }

void check_range(bool ok, const std::string& flag, double value, const std::string& range) {
  if (!ok) throw InvalidArgument(flag + " " + std::to_string(value) + ": must be " + range);
}

}  // namespace

bool plain_recipe(const TrainJobOptions& o) {
  return o.model == "simplecnn" && o.optimizer == "adam" && o.lr_scheduler == "constant" && o.lr_warmup_epochs == 0 &&
         o.label_smoothing == 0 && o.clip_grad_norm == 0 && o.ema_decay == 0 && o.precision == "fp32";
}

void check_job_model(const TrainJobOptions& o, const ImageShape& shape, torch::Device device) {
  if (o.model != "simplecnn" && !is_resnet(o.model)) {
    throw InvalidArgument("--model " + o.model + ": not a model feedline has (simplecnn, resnet18, resnet34, resnet50)");
  }
  if (is_resnet(o.model) && shape.channels != 3) {
    throw InvalidArgument("--model " + o.model + " takes RGB images, and these have " +
                          std::to_string(shape.channels) + " channel" + (shape.channels == 1 ? "" : "s") +
                          " (read image files with --image-size N)");
  }
  if (o.optimizer != "adam" && o.optimizer != "sgd") {
    throw InvalidArgument("--optimizer " + o.optimizer + ": adam or sgd");
  }
  if (o.optimizer == "adam" && (o.weight_decay != 0 || o.nesterov || o.norm_weight_decay >= 0)) {
    throw InvalidArgument("--weight-decay, --norm-weight-decay and --nesterov are SGD's: pass --optimizer sgd");
  }
  if (o.lr_scheduler != "constant" && o.lr_scheduler != "cosine" && o.lr_scheduler != "step") {
    throw InvalidArgument("--lr-scheduler " + o.lr_scheduler + ": constant, cosine or step");
  }
  check_range(o.momentum >= 0 && o.momentum < 1, "--momentum", o.momentum, "in [0, 1)");
  check_range(o.weight_decay >= 0, "--weight-decay", o.weight_decay, "0 or more");
  check_range(o.lr_warmup_decay > 0 && o.lr_warmup_decay <= 1, "--lr-warmup-decay", o.lr_warmup_decay, "in (0, 1]");
  check_range(o.lr_gamma > 0 && o.lr_gamma <= 1, "--lr-gamma", o.lr_gamma, "in (0, 1]");
  check_range(o.label_smoothing >= 0 && o.label_smoothing < 1, "--label-smoothing", o.label_smoothing, "in [0, 1)");
  check_range(o.clip_grad_norm >= 0, "--clip-grad-norm", o.clip_grad_norm, "0 (off) or more");
  check_range(o.ema_decay >= 0 && o.ema_decay < 1, "--ema-decay", o.ema_decay, "in (0, 1), or 0 for none");
  if (o.lr_warmup_epochs < 0 || o.lr_step_size < 1 || o.ema_steps < 1) {
    throw InvalidArgument("--lr-warmup-epochs must be 0 or more, --lr-step-size and --ema-steps 1 or more");
  }
  if (o.lr_scheduler == "cosine" && o.lr_warmup_epochs >= o.epochs) {
    throw InvalidArgument("--lr-warmup-epochs " + std::to_string(o.lr_warmup_epochs) + ": the warm-up must end before "
                          "the last epoch (--epochs " + std::to_string(o.epochs) + ")");
  }
  if (o.precision != "fp32" && o.precision != "bf16") {
    throw InvalidArgument("--precision " + o.precision + ": fp32 or bf16");
  }
  if (o.precision != "fp32" && !device.is_cuda()) {
    throw InvalidArgument("--precision " + o.precision + " runs on a CUDA device (autocast), and the device is " +
                          device.str());
  }
  if (o.cuda_graph && !plain_recipe(o)) {
    throw InvalidArgument("--cuda-graph captures SimpleCNN's step with Adam alone: leave out --model, --optimizer and "
                          "the recipe's flags, or --cuda-graph");
  }
}

JobModel make_job_model(const TrainJobOptions& o, const ImageShape& shape, int64_t classes) {
  JobModel m;
  if (o.model == "simplecnn") {
    SimpleCNN net(SimpleCNNOptions().channels(shape.channels).height(shape.height).width(shape.width).classes(classes));
    m.name = "SimpleCNN";
    m.model.emplace(net);
    m.simple_cnn.emplace(net);
    return m;
  }
  ResNet net = make_resnet(o.model, classes);
  m.name = "ResNet-" + o.model.substr(6);
  m.model.emplace(net);
  return m;
}

std::unique_ptr<torch::optim::Optimizer> make_job_optimizer(const TrainJobOptions& o, torch::nn::Module& model) {
  if (o.optimizer == "adam") {
    return std::make_unique<torch::optim::Adam>(model.parameters(), torch::optim::AdamOptions(o.lr));
  }
  const auto options = torch::optim::SGDOptions(o.lr).momentum(o.momentum).nesterov(o.nesterov).weight_decay(
      o.weight_decay);
  if (o.norm_weight_decay < 0) return std::make_unique<torch::optim::SGD>(model.parameters(), options);
  return std::make_unique<torch::optim::SGD>(weight_decay_groups(model, options, o.norm_weight_decay), options);
}

Recipe make_job_recipe(const TrainJobOptions& o, int64_t batches_per_epoch, int64_t global_batch) {
  Recipe r;
  const int64_t warmup = o.lr_warmup_epochs * batches_per_epoch;
  if (o.lr_scheduler == "cosine") {
    r.schedule = cosine_schedule(o.epochs * batches_per_epoch, warmup, o.lr_warmup_decay);
  } else if (o.lr_scheduler == "step") {
    r.schedule = step_schedule(o.lr_step_size * batches_per_epoch, o.lr_gamma, warmup, o.lr_warmup_decay);
  } else if (warmup > 0) {
    r.schedule = step_schedule(1, 1.0, warmup, o.lr_warmup_decay);  // a warm-up, then the rate as given
  }
  r.label_smoothing = o.label_smoothing;
  r.clip_grad_norm = o.clip_grad_norm;
  if (o.ema_decay > 0) {
    // torchvision's train.py: alpha = 1 - decay, scaled by the samples between updates over the epochs.
    const double adjust = static_cast<double>(global_batch * o.ema_steps) / static_cast<double>(o.epochs);
    r.ema_decay = 1.0 - std::min(1.0, (1.0 - o.ema_decay) * adjust);
    if (r.ema_decay <= 0) r.ema_decay = 1e-12;  // an average that is the weights themselves
    r.ema_every = o.ema_steps;
  }
  if (o.precision == "bf16") r.precision = Precision::kBFloat16;
  return r;
}

}  // namespace feedline::dist::detail
