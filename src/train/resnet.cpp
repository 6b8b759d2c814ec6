// torchvision's ResNets: the residual blocks, the network that stacks them, its initialisation, and the weight-decay
// split of torchvision's training recipes.
#include "feedline/train/models.h"

#include <torch/nn/init.h>

#include <string>

#include "feedline/io/error.h"

namespace feedline {
namespace {

constexpr const char* kAcceptedNames = "resnet18, resnet34, resnet50";

torch::nn::Conv2d conv3x3(int64_t in, int64_t out, int64_t stride) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

torch::nn::Conv2d conv1x1(int64_t in, int64_t out, int64_t stride) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 1).stride(stride).bias(false));
}

// The shortcut of a block that changes the shape: torchvision's Sequential(conv1x1, BatchNorm2d), children "0", "1".
torch::nn::Sequential downsample(int64_t in, int64_t out, int64_t stride) {
  return torch::nn::Sequential(conv1x1(in, out, stride), torch::nn::BatchNorm2d(out));
}

// resnet18's and resnet34's block: two 3x3 convolutions, the first with the stride; `downsample` may be empty.
class BasicBlockImpl : public torch::nn::Module {
 public:
  static constexpr int64_t kExpansion = 1;

  BasicBlockImpl(int64_t inplanes, int64_t planes, int64_t stride, torch::nn::Sequential shortcut)
      : conv1_(register_module("conv1", conv3x3(inplanes, planes, stride))),
        bn1_(register_module("bn1", torch::nn::BatchNorm2d(planes))),
        conv2_(register_module("conv2", conv3x3(planes, planes, 1))),
        bn2_(register_module("bn2", torch::nn::BatchNorm2d(planes))) {
    if (shortcut) downsample_ = register_module("downsample", shortcut);
  }

  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor out = torch::relu(bn1_->forward(conv1_->forward(x)));
    out = bn2_->forward(conv2_->forward(out));
    out += downsample_ ? downsample_->forward(x) : x;
    return torch::relu(out);
  }

 private:
  // Declared in registration order: members are initialised in this order, and it fixes the state_dict's.
  torch::nn::Conv2d conv1_;
  torch::nn::BatchNorm2d bn1_;
  torch::nn::Conv2d conv2_;
  torch::nn::BatchNorm2d bn2_;
  torch::nn::Sequential downsample_{nullptr};
};
TORCH_MODULE(BasicBlock);

// resnet50's block (ResNet v1.5): 1x1 down to `planes`, 3x3 with the stride, 1x1 up to 4 * planes.
class BottleneckImpl : public torch::nn::Module {
 public:
  static constexpr int64_t kExpansion = 4;

  BottleneckImpl(int64_t inplanes, int64_t planes, int64_t stride, torch::nn::Sequential shortcut)
      : conv1_(register_module("conv1", conv1x1(inplanes, planes, 1))),
        bn1_(register_module("bn1", torch::nn::BatchNorm2d(planes))),
        conv2_(register_module("conv2", conv3x3(planes, planes, stride))),
        bn2_(register_module("bn2", torch::nn::BatchNorm2d(planes))),
        conv3_(register_module("conv3", conv1x1(planes, planes * kExpansion, 1))),
        bn3_(register_module("bn3", torch::nn::BatchNorm2d(planes * kExpansion))) {
    if (shortcut) downsample_ = register_module("downsample", shortcut);
  }

  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor out = torch::relu(bn1_->forward(conv1_->forward(x)));
    out = torch::relu(bn2_->forward(conv2_->forward(out)));
    out = bn3_->forward(conv3_->forward(out));
    out += downsample_ ? downsample_->forward(x) : x;
    return torch::relu(out);
  }

 private:
  // Declared in registration order: members are initialised in this order, and it fixes the state_dict's.
  torch::nn::Conv2d conv1_;
  torch::nn::BatchNorm2d bn1_;
  torch::nn::Conv2d conv2_;
  torch::nn::BatchNorm2d bn2_;
  torch::nn::Conv2d conv3_;
  torch::nn::BatchNorm2d bn3_;
  torch::nn::Sequential downsample_{nullptr};
};
TORCH_MODULE(Bottleneck);

bool is_bottleneck(ResNetArch arch) { return arch == ResNetArch::kResNet50; }

// Blocks per stage, as torchvision's resnet18/34/50 builders pass them.
std::vector<int64_t> stage_blocks(ResNetArch arch) {
  switch (arch) {
    case ResNetArch::kResNet18:
      return {2, 2, 2, 2};
    case ResNetArch::kResNet34:
    case ResNetArch::kResNet50:
      return {3, 4, 6, 3};
  }
  throw InvalidArgument("unknown ResNetArch " + std::to_string(static_cast<int>(arch)) + " (accepted: " +
                        kAcceptedNames + ")");
}

int64_t checked_classes(int64_t num_classes) {
  if (num_classes < 2) {
    throw InvalidArgument("ResNet: num_classes must be at least 2, got " + std::to_string(num_classes));
  }
  return num_classes;
}

bool is_norm(const torch::nn::Module& m) {
  return m.as<torch::nn::BatchNorm1d>() || m.as<torch::nn::BatchNorm2d>() || m.as<torch::nn::BatchNorm3d>() ||
         m.as<torch::nn::InstanceNorm1d>() || m.as<torch::nn::InstanceNorm2d>() ||
         m.as<torch::nn::InstanceNorm3d>() || m.as<torch::nn::LayerNorm>() || m.as<torch::nn::GroupNorm>();
}

// One module's own trainable parameters, into the split.
void split_own(const torch::nn::Module& m, WeightDecaySplit& split) {
  const bool norm = is_norm(m);
  for (const auto& p : m.named_parameters(/*recurse=*/false)) {
    if (!p.value().requires_grad()) continue;
    (norm || p.key() == "bias" ? split.not_decayed : split.decayed).push_back(p.value());
  }
}

}  // namespace

ResNetArch parse_resnet_arch(const std::string& name) {
  if (name == "resnet18") return ResNetArch::kResNet18;
  if (name == "resnet34") return ResNetArch::kResNet34;
  if (name == "resnet50") return ResNetArch::kResNet50;
  throw InvalidArgument("unknown ResNet '" + name + "' (accepted: " + kAcceptedNames + ")");
}

std::string resnet_arch_name(ResNetArch arch) {
  switch (arch) {
    case ResNetArch::kResNet18:
      return "resnet18";
    case ResNetArch::kResNet34:
      return "resnet34";
    case ResNetArch::kResNet50:
      return "resnet50";
  }
  throw InvalidArgument("unknown ResNetArch " + std::to_string(static_cast<int>(arch)) + " (accepted: " +
                        kAcceptedNames + ")");
}

ResNetImpl::ResNetImpl(const ResNetOptions& options) : options_(options) {
  checked_classes(options.num_classes());
  const std::vector<int64_t> blocks = stage_blocks(options.arch());
  const int64_t expansion = is_bottleneck(options.arch()) ? BottleneckImpl::kExpansion : BasicBlockImpl::kExpansion;
  // Registration order is torchvision's attribute order, which fixes the order of parameters and buffers.
  conv1_ = register_module(
      "conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 64, 7).stride(2).padding(3).bias(false)));
  bn1_ = register_module("bn1", torch::nn::BatchNorm2d(64));
  layer1_ = register_module("layer1", make_layer(64, blocks[0], 1));
  layer2_ = register_module("layer2", make_layer(128, blocks[1], 2));
  layer3_ = register_module("layer3", make_layer(256, blocks[2], 2));
  layer4_ = register_module("layer4", make_layer(512, blocks[3], 2));
  fc_ = register_module("fc", torch::nn::Linear(512 * expansion, options.num_classes()));

  // torchvision's initialisation; fc keeps Linear's default (LibTorch's equals torch.nn.Linear's).
  torch::NoGradGuard no_grad;
  for (const auto& m : modules(/*include_self=*/false)) {
    if (auto* conv = m->as<torch::nn::Conv2d>()) {
      torch::nn::init::kaiming_normal_(conv->weight, 0, torch::kFanOut, torch::kReLU);
    } else if (auto* bn = m->as<torch::nn::BatchNorm2d>()) {
      bn->weight.fill_(1);
      bn->bias.zero_();
    }
  }
}

torch::nn::Sequential ResNetImpl::make_layer(int64_t planes, int64_t blocks, int64_t stride) {
  const bool bottleneck = is_bottleneck(options_.arch());
  const int64_t out = planes * (bottleneck ? BottleneckImpl::kExpansion : BasicBlockImpl::kExpansion);
  torch::nn::Sequential layer;
  for (int64_t i = 0; i < blocks; ++i) {
    const int64_t s = i == 0 ? stride : 1;
    torch::nn::Sequential shortcut{nullptr};
    if (s != 1 || inplanes_ != out) shortcut = downsample(inplanes_, out, s);
    if (bottleneck) {
      layer->push_back(Bottleneck(inplanes_, planes, s, shortcut));
    } else {
      layer->push_back(BasicBlock(inplanes_, planes, s, shortcut));
    }
    inplanes_ = out;
  }
  return layer;
}

torch::Tensor ResNetImpl::forward(torch::Tensor x) {
  x = torch::relu(bn1_->forward(conv1_->forward(x)));
  x = torch::max_pool2d(x, /*kernel_size=*/3, /*stride=*/2, /*padding=*/1);
  x = layer1_->forward(x);
  x = layer2_->forward(x);
  x = layer3_->forward(x);
  x = layer4_->forward(x);
  x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
  return fc_->forward(x);
}

ResNet make_resnet(const std::string& name, int64_t num_classes) {
  return ResNet(ResNetOptions().arch(parse_resnet_arch(name)).num_classes(num_classes));
}

WeightDecaySplit split_weight_decay(const torch::nn::Module& module) {
  WeightDecaySplit split;
  split_own(module, split);
  // Pre-order, as torchvision's recursion over named_children; include_self=false needs no shared_ptr to `module`.
  for (const auto& m : module.modules(/*include_self=*/false)) split_own(*m, split);
  return split;
}

}  // namespace feedline
