// The model, optimizer and recipe of a training job (TrainJobOptions): SimpleCNN or one of torchvision's ResNets,
// Adam or SGD, and torchvision's classification recipe. Internal to run_train_job.
#pragma once

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "feedline/dist/train_job.h"
#include "feedline/train/models.h"
#include "feedline/train/train.h"

namespace feedline::dist::detail {

struct JobModel {
  std::string name;  // "SimpleCNN", "ResNet-18", ...
  std::optional<Model> model;
  std::optional<SimpleCNN> simple_cnn;  // the model, when it is SimpleCNN
};

// Refuses, before any data is read, a model or precision that cannot work (JobOptionError): a ResNet on images
// that are not RGB, bf16 on a CPU. The recipe's ranges are fit()'s to refuse.
void check_job_model(const TrainJobOptions& o, const ImageShape& shape, torch::Device device);

JobModel make_job_model(const TrainJobOptions& o, const ImageShape& shape, int64_t classes);

// The optimizer over the model's parameters as the options say.
std::unique_ptr<torch::optim::Optimizer> make_job_optimizer(const TrainJobOptions& o, torch::nn::Module& model);

// The recipe, its schedule by steps over `batches_per_epoch`, the average's decay adjusted to `global_batch`.
Recipe make_job_recipe(const TrainJobOptions& o, int64_t batches_per_epoch, int64_t global_batch);

// Whether the options ask for the experiment's recipe alone (SimpleCNN with Adam, nothing more): train_model's.
bool plain_recipe(const TrainJobOptions& o);

}  // namespace feedline::dist::detail
