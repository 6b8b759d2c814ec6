// The models feedline builds, as LibTorch modules.
//
// The experiment's SimpleCNN: conv 1->16 3x3 pad 1, ReLU, maxpool 2; conv 16->32 3x3 pad 1, ReLU, maxpool 2;
// flatten; linear 1568->128, ReLU; linear 128->10. 206,922 parameters. The same layers serve other image shapes
// and class counts (conv C->16; linear 32*(H/4)*(W/4)->128; linear 128->K). Not thread-safe (a torch Module).
//
// torchvision's ResNets (torchvision 0.14, torchvision/models/resnet.py) in LibTorch: resnet18, resnet34 and resnet50
// as torchvision builds them by default — BasicBlock or Bottleneck (v1.5: the stride on the 3x3 convolution),
// downsample = 1x1 convolution + BatchNorm, groups 1, width 64, no zero-init of the residual's last BatchNorm, 3 input
// channels — with torchvision's initialisation. Parameters and buffers carry torchvision's state_dict names, in its
// order (conv1.weight, bn1.running_mean, layer1.0.downsample.0.weight, fc.bias, ...), so weights pass between the two
// by name. Also the split of a module's parameters that torchvision's recipes use for weight decay. Not thread-safe
// (torch Modules).
#pragma once

#include <torch/nn.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "feedline/io/arg.h"

namespace feedline {

// The images SimpleCNN takes, [N, channels, height, width], and the classes it tells apart. The defaults are the
// experiment's: 1x28x28, 10 classes.
struct SimpleCNNOptions {
  FEEDLINE_ARG(int64_t, channels) = 1;
  FEEDLINE_ARG(int64_t, height) = 28;
  FEEDLINE_ARG(int64_t, width) = 28;
  FEEDLINE_ARG(int64_t, classes) = 10;
};

class SimpleCNNImpl : public torch::nn::Module {
 public:
  // Throws InvalidArgument unless channels >= 1, height and width >= 4 (two 2x2 poolings leave at least one
  // pixel) and classes >= 2.
  explicit SimpleCNNImpl(const SimpleCNNOptions& options = {});
  torch::Tensor forward(torch::Tensor x);
  const SimpleCNNOptions& options() const { return options_; }

 private:
  SimpleCNNOptions options_;
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
};
TORCH_MODULE(SimpleCNN);

// Number of trainable parameters (SimpleCNN: 206,922).
int64_t parameter_count(const torch::nn::Module& module);

// Writes the module's parameters and buffers in LibTorch's own format (what torch::save writes), through a
// temporary file and a rename: an interrupted save leaves the old file, or none. Throws IoError.
void save_module(const torch::nn::Module& module, const std::string& path);

// Reads what save_module wrote into a module of the same layout, its tensors put on `device` (a model saved on
// a GPU loads on a CPU). Throws IoError when the file cannot be read, InvalidFile when it is no saved module or
// one of another layout, naming the file either way.
void load_module(torch::nn::Module& module, const std::string& path, const torch::Device& device = torch::kCPU);

enum class ResNetArch { kResNet18, kResNet34, kResNet50 };

// "resnet18", "resnet34" or "resnet50" to its ResNetArch; any other name throws InvalidArgument naming those three.
ResNetArch parse_resnet_arch(const std::string& name);
// The torchvision name of `arch`: "resnet18", "resnet34", "resnet50".
std::string resnet_arch_name(ResNetArch arch);

struct ResNetOptions {
  FEEDLINE_ARG(ResNetArch, arch) = ResNetArch::kResNet18;
  FEEDLINE_ARG(int64_t, num_classes) = 1000;
};

// Takes [N, 3, H, W] images (H and W of 32 and up keep every stage at least one pixel) and returns [N, num_classes]
// logits. Submodules are conv1, bn1, layer1 ... layer4 (Sequentials of blocks "0", "1", ...; a block holds conv1,
// bn1, conv2, bn2, [conv3, bn3,] and, where it changes the shape, downsample "0" (conv) and "1" (BatchNorm)), fc.
// Convolutions start from kaiming_normal_(fan_out, relu), BatchNorms from weight 1 and bias 0, fc from
// torch.nn.Linear's default. Parameter counts at 1000 classes: 11,689,512 / 21,797,672 / 25,557,032.
class ResNetImpl : public torch::nn::Module {
 public:
  // Throws InvalidArgument unless num_classes >= 2.
  explicit ResNetImpl(const ResNetOptions& options = {});
  torch::Tensor forward(torch::Tensor x);
  const ResNetOptions& options() const { return options_; }

 private:
  torch::nn::Sequential make_layer(int64_t planes, int64_t blocks, int64_t stride);

  ResNetOptions options_;
  int64_t inplanes_ = 64;  // channels into the next layer make_layer builds
  torch::nn::Conv2d conv1_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr};
  torch::nn::Sequential layer1_{nullptr}, layer2_{nullptr}, layer3_{nullptr}, layer4_{nullptr};
  torch::nn::Linear fc_{nullptr};
};
TORCH_MODULE(ResNet);

// make_resnet("resnet50", 10) is ResNet(ResNetOptions().arch(ResNetArch::kResNet50).num_classes(10)). Throws
// InvalidArgument for an unknown name (the message names the accepted ones) or num_classes < 2.
ResNet make_resnet(const std::string& name, int64_t num_classes = 1000);

// A module's trainable parameters (requires_grad), split for torchvision's recipe "no weight decay on norm layers
// and biases" (references/classification/utils.py set_weight_decay with norm_weight_decay and the "bias" custom
// key): `not_decayed` holds every parameter of a BatchNorm, InstanceNorm (1d, 2d, 3d), LayerNorm or GroupNorm module
// and every parameter named "bias"; `decayed` holds the rest (convolution and linear weights). Each list keeps the
// order of module.parameters(). A norm layer of the user's own class is not recognised: its weight is decayed.
struct WeightDecaySplit {
  std::vector<torch::Tensor> decayed;
  std::vector<torch::Tensor> not_decayed;
};
WeightDecaySplit split_weight_decay(const torch::nn::Module& module);

// The split above as an optimizer's parameter groups: `options` (SGDOptions, AdamWOptions, ... — any options with a
// weight_decay setter) for the decayed group, the same options with weight_decay(norm_and_bias_weight_decay) for the
// other; an empty group is left out, as torchvision does. For example
//   torch::optim::SGD sgd(weight_decay_groups(*model, torch::optim::SGDOptions(0.1).momentum(0.9).weight_decay(1e-4)),
//                         torch::optim::SGDOptions(0.1));
template <typename Options>
std::vector<torch::optim::OptimizerParamGroup> weight_decay_groups(const torch::nn::Module& module,
                                                                   const Options& options,
                                                                   double norm_and_bias_weight_decay = 0.0) {
  WeightDecaySplit split = split_weight_decay(module);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  if (!split.decayed.empty()) {
    groups.emplace_back(std::move(split.decayed), std::make_unique<Options>(options));
  }
  if (!split.not_decayed.empty()) {
    Options no_decay = options;
    no_decay.weight_decay(norm_and_bias_weight_decay);
    groups.emplace_back(std::move(split.not_decayed), std::make_unique<Options>(no_decay));
  }
  return groups;
}

}  // namespace feedline
