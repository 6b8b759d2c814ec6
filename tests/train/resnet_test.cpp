// The ResNets against torchvision 0.14 (run by /usr/bin/python3, tests/train/write_resnet_reference.py, as the
// oracle): parameter and buffer names in state_dict order, forward passes in eval and train mode on torchvision's
// weights loaded by name, the weight-decay split; and without Python: parameter counts, the initialisation's
// distributions, shapes, and the errors.
#include "feedline/train/models.h"

#include <gtest/gtest.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/train/models.h"
#include "test_paths.h"

namespace feedline {
namespace {

bool have_torchvision() {
  return std::system("/usr/bin/python3 -W ignore -c 'import torchvision' >/dev/null 2>&1") == 0;
}

// What write_resnet_reference.py writes for one architecture (its header describes each entry).
struct Reference {
  std::vector<std::pair<std::string, torch::Tensor>> state_dict;
  std::vector<std::string> state_dict_keys, parameter_names, buffer_names, decayed, not_decayed;
  int64_t parameter_count = 0;
  torch::Tensor input, eval_output, train_output;
  std::map<std::string, torch::Tensor> train_buffers;
};

std::vector<std::string> strings(const c10::IValue& list) {
  std::vector<std::string> out;
  for (const c10::IValue& s : list.toListRef()) out.push_back(s.toStringRef());
  return out;
}

std::vector<std::pair<std::string, torch::Tensor>> tensors(const c10::IValue& dict) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& e : dict.toGenericDict()) out.emplace_back(e.key().toStringRef(), e.value().toTensor());
  return out;
}

Reference read_reference(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << path;
  const std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const c10::Dict<c10::IValue, c10::IValue> d = torch::pickle_load(bytes).toGenericDict();
  Reference r;
  r.state_dict = tensors(d.at("state_dict"));
  r.state_dict_keys = strings(d.at("state_dict_keys"));
  r.parameter_names = strings(d.at("parameter_names"));
  r.buffer_names = strings(d.at("buffer_names"));
  r.decayed = strings(d.at("decayed"));
  r.not_decayed = strings(d.at("not_decayed"));
  r.parameter_count = d.at("parameter_count").toInt();
  r.input = d.at("input").toTensor();
  r.eval_output = d.at("eval_output").toTensor();
  r.train_output = d.at("train_output").toTensor();
  for (auto& b : tensors(d.at("train_buffers"))) r.train_buffers.insert(std::move(b));
  return r;
}

// torchvision's reference for `name` (resnet18 or resnet50): the script runs once per process for both, each file
// is read when first asked for. Null (and a failed test) when the script fails.
const Reference* reference(const std::string& name) {
  static const std::string dir = [] {
    const std::string out = testing::scratch_dir("resnet_reference");
    const std::string command = "/usr/bin/python3 -W ignore '" + testing::source_dir() +
                                "/tests/train/write_resnet_reference.py' '" + out + "' resnet18 resnet50";
    if (std::system(command.c_str()) == 0) return out;
    ADD_FAILURE() << "failed: " << command;
    return std::string();
  }();
  static std::map<std::string, std::unique_ptr<Reference>> read;
  if (dir.empty()) return nullptr;
  std::unique_ptr<Reference>& r = read[name];
  if (!r) r = std::make_unique<Reference>(read_reference(dir + "/" + name + ".pt"));
  return r.get();
}

// Copies the reference's tensors into `model` by name; every name must match a parameter or buffer of the same shape.
void load_by_name(ResNetImpl& model, const Reference& ref) {
  std::map<std::string, torch::Tensor> theirs(ref.state_dict.begin(), ref.state_dict.end());
  torch::NoGradGuard no_grad;
  size_t loaded = 0;
  const auto load = [&](const std::string& name, torch::Tensor& ours) {
    const auto it = theirs.find(name);
    if (it == theirs.end()) {
      ADD_FAILURE() << name << " is not in torchvision's state_dict";
      return;
    }
    ASSERT_EQ(ours.sizes(), it->second.sizes()) << name;
    ASSERT_EQ(ours.dtype(), it->second.dtype()) << name;
    ours.copy_(it->second);
    ++loaded;
  };
  for (auto& p : model.named_parameters()) load(p.key(), p.value());
  for (auto& b : model.named_buffers()) load(b.key(), b.value());
  EXPECT_EQ(loaded, theirs.size());
}

std::vector<std::string> keys(const torch::OrderedDict<std::string, torch::Tensor>& d) {
  std::vector<std::string> out;
  for (const auto& e : d) out.push_back(e.key());
  return out;
}

// The state_dict's order: module by module, depth first, each module's own parameters, then its own buffers.
std::vector<std::string> state_dict_keys(const torch::nn::Module& model) {
  std::vector<std::string> out;
  const auto add = [&](const std::string& prefix, const torch::nn::Module& m) {
    for (const auto& p : m.named_parameters(/*recurse=*/false)) out.push_back(prefix + p.key());
    for (const auto& b : m.named_buffers(/*recurse=*/false)) out.push_back(prefix + b.key());
  };
  add("", model);
  for (const auto& m : model.named_modules("", /*include_self=*/false)) add(m.key() + ".", *m.value());
  return out;
}

// `tensors` as their names in `module`.
std::vector<std::string> names_of(const torch::nn::Module& module, const std::vector<torch::Tensor>& tensors) {
  std::map<const void*, std::string> by_address;
  for (const auto& p : module.named_parameters()) by_address[p.value().unsafeGetTensorImpl()] = p.key();
  std::vector<std::string> out;
  for (const torch::Tensor& t : tensors) {
    const auto it = by_address.find(t.unsafeGetTensorImpl());
    out.push_back(it == by_address.end() ? "<not a parameter>" : it->second);
  }
  return out;
}

double max_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).to(torch::kDouble).abs().max().item<double>();
}

// Within 1e-5 of torchvision's values, relative to their scale where it is above 1: the eval-mode logits of a
// randomly initialised network reach tens, where float32's own spacing is some 1e-6, and another order of the
// kernels' additions (another CPU, another thread count) may move them by a few of those.
::testing::AssertionResult near_torchvision(const torch::Tensor& ours, const torch::Tensor& theirs) {
  if (ours.sizes() != theirs.sizes()) {
    return ::testing::AssertionFailure() << "shape " << ours.sizes() << ", torchvision's " << theirs.sizes();
  }
  const double scale = std::max(1.0, theirs.to(torch::kDouble).abs().max().item<double>());
  const double difference = max_difference(ours, theirs);
  if (difference <= 1e-5 * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "largest difference " << difference << " on values up to " << scale;
}

// torchvision's figures (the parameter counts its model docs list).
TEST(ResNet, ParameterCountsAreTorchvisions) {
  EXPECT_EQ(parameter_count(*make_resnet("resnet18")), 11689512);
  EXPECT_EQ(parameter_count(*make_resnet("resnet34")), 21797672);
  EXPECT_EQ(parameter_count(*make_resnet("resnet50")), 25557032);
  // Only fc depends on the classes: (features + 1) parameters per class, 512 features or 2048 (resnet50).
  EXPECT_EQ(parameter_count(*make_resnet("resnet18", 10)), 11689512 - 990 * 513);
  EXPECT_EQ(parameter_count(*make_resnet("resnet34", 2)), 21797672 - 998 * 513);
  EXPECT_EQ(parameter_count(*make_resnet("resnet50", 100)), 25557032 - 900 * 2049);
  ResNet model(ResNetOptions().arch(ResNetArch::kResNet50).num_classes(7));
  EXPECT_EQ(model->named_parameters()["fc.weight"].sizes(), torch::IntArrayRef({7, 2048}));
  EXPECT_EQ(model->options().num_classes(), 7);
}

TEST(ResNet, OutputShapesInBothModes) {
  for (const char* name : {"resnet18", "resnet34", "resnet50"}) {
    ResNet model = make_resnet(name, 10);
    torch::NoGradGuard no_grad;
    EXPECT_EQ(model->forward(torch::randn({2, 3, 32, 48})).sizes(), torch::IntArrayRef({2, 10})) << name;
    model->eval();
    EXPECT_EQ(model->forward(torch::randn({1, 3, 64, 64})).sizes(), torch::IntArrayRef({1, 10})) << name;
  }
}

TEST(ResNet, InitialisationIsTorchvisions) {
  torch::manual_seed(5);
  ResNet model = make_resnet("resnet50");
  int convs = 0;
  for (const auto& m : model->named_modules()) {
    if (auto* conv = m.value()->as<torch::nn::Conv2d>()) {
      ++convs;
      // kaiming_normal_(mode="fan_out", nonlinearity="relu"): N(0, 2 / (out_channels * kernel area)).
      const torch::Tensor w = conv->weight;
      const double expected = std::sqrt(2.0 / static_cast<double>(w.size(0) * w.size(2) * w.size(3)));
      const double n = static_cast<double>(w.numel());
      // The sample's std is within 6 of its standard errors (std / sqrt(2n)), its mean within 6 of its own.
      EXPECT_NEAR(w.std().item<double>(), expected, 6 * expected / std::sqrt(2 * n)) << m.key();
      EXPECT_NEAR(w.mean().item<double>(), 0, 6 * expected / std::sqrt(n)) << m.key();
      EXPECT_FALSE(conv->bias.defined()) << m.key();
    } else if (auto* bn = m.value()->as<torch::nn::BatchNorm2d>()) {
      EXPECT_TRUE(torch::equal(bn->weight, torch::ones_like(bn->weight))) << m.key();
      EXPECT_TRUE(torch::equal(bn->bias, torch::zeros_like(bn->bias))) << m.key();
      EXPECT_TRUE(torch::equal(bn->running_mean, torch::zeros_like(bn->running_mean))) << m.key();
      EXPECT_TRUE(torch::equal(bn->running_var, torch::ones_like(bn->running_var))) << m.key();
      EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 0) << m.key();
    }
  }
  EXPECT_EQ(convs, 53);  // 1 stem + 16 blocks x 3 + 4 downsamples
  // torch.nn.Linear's default: weight and bias uniform in +-1/sqrt(in_features), std bound/sqrt(3).
  const auto params = model->named_parameters();
  const double bound = 1 / std::sqrt(2048.0);
  const torch::Tensor w = params["fc.weight"], b = params["fc.bias"];
  EXPECT_LE(w.abs().max().item<double>(), bound);
  EXPECT_LE(b.abs().max().item<double>(), bound);
  EXPECT_NEAR(w.std().item<double>(), bound / std::sqrt(3.0), 0.01 * bound);
  EXPECT_GT(b.abs().max().item<double>(), 0.5 * bound);
}

TEST(ResNet, NamesAreTorchvisionsStateDictKeysInOrder) {
  if (!have_torchvision()) GTEST_SKIP() << "/usr/bin/python3 has no torchvision, the tests' oracle";
  for (const char* name : {"resnet18", "resnet50"}) {
    const Reference* ref = reference(name);
    ASSERT_NE(ref, nullptr);
    ResNet model = make_resnet(name);
    EXPECT_EQ(keys(model->named_parameters()), ref->parameter_names) << name;
    EXPECT_EQ(keys(model->named_buffers()), ref->buffer_names) << name;
    EXPECT_EQ(state_dict_keys(*model), ref->state_dict_keys) << name;
    EXPECT_EQ(parameter_count(*model), ref->parameter_count) << name;
  }
}

TEST(ResNet, ForwardIsTorchvisionsOnItsWeights) {
  if (!have_torchvision()) GTEST_SKIP() << "/usr/bin/python3 has no torchvision, the tests' oracle";
  for (const char* name : {"resnet18", "resnet50"}) {
    SCOPED_TRACE(name);
    const Reference* ref = reference(name);
    ASSERT_NE(ref, nullptr);
    ResNet model = make_resnet(name);
    load_by_name(*model, *ref);
    torch::NoGradGuard no_grad;
    model->eval();
    const torch::Tensor eval_output = model->forward(ref->input);
    EXPECT_TRUE(near_torchvision(eval_output, ref->eval_output)) << "eval mode";
    // Train mode: batch statistics, and the running statistics updated as torchvision's were.
    model->train();
    const torch::Tensor train_output = model->forward(ref->input);
    EXPECT_TRUE(near_torchvision(train_output, ref->train_output)) << "train mode";
    EXPECT_GT(max_difference(train_output, eval_output), 1e-2);  // the two modes differ on these weights
    for (const auto& b : model->named_buffers()) {
      const auto it = ref->train_buffers.find(b.key());
      ASSERT_NE(it, ref->train_buffers.end()) << b.key();
      EXPECT_TRUE(near_torchvision(b.value(), it->second)) << b.key();
    }
  }
}

TEST(ResNet, WeightDecaySplitIsTorchvisionsRecipe) {
  if (!have_torchvision()) GTEST_SKIP() << "/usr/bin/python3 has no torchvision, the tests' oracle";
  for (const char* name : {"resnet18", "resnet50"}) {
    const Reference* ref = reference(name);
    ASSERT_NE(ref, nullptr);
    ResNet model = make_resnet(name);
    const WeightDecaySplit split = split_weight_decay(*model);
    EXPECT_EQ(names_of(*model, split.decayed), ref->decayed) << name;
    EXPECT_EQ(names_of(*model, split.not_decayed), ref->not_decayed) << name;
  }
}

// Every kind of norm layer the split knows, a bias-free convolution, a frozen parameter and a nested module.
struct MixedImpl : torch::nn::Module {
  MixedImpl() {
    register_module("conv", torch::nn::Conv1d(torch::nn::Conv1dOptions(2, 4, 3).bias(false)));
    register_module("bn", torch::nn::BatchNorm1d(4));
    register_module("inorm", torch::nn::InstanceNorm3d(torch::nn::InstanceNorm3dOptions(4).affine(true)));
    register_module("ln", torch::nn::LayerNorm(torch::nn::LayerNormOptions({4})));
    register_module("gn", torch::nn::GroupNorm(2, 4));
    auto frozen = register_module("frozen", torch::nn::Linear(4, 4));
    frozen->weight.set_requires_grad(false);
    register_module("head", torch::nn::Sequential(torch::nn::Linear(4, 3), torch::nn::BatchNorm2d(3)));
    register_parameter("scale", torch::ones({1}));
  }
};

TEST(ResNet, WeightDecaySplitOnAnyModule) {
  auto model = std::make_shared<MixedImpl>();
  const WeightDecaySplit split = split_weight_decay(*model);
  EXPECT_EQ(names_of(*model, split.decayed), (std::vector<std::string>{"scale", "conv.weight", "head.0.weight"}));
  EXPECT_EQ(names_of(*model, split.not_decayed),
            (std::vector<std::string>{"bn.weight", "bn.bias", "inorm.weight", "inorm.bias", "ln.weight", "ln.bias",
                                      "gn.weight", "gn.bias", "frozen.bias", "head.0.bias", "head.1.weight",
                                      "head.1.bias"}));

  // As an optimizer's groups: the options' weight decay for the first, the given one for the second.
  auto groups = weight_decay_groups(*model, torch::optim::SGDOptions(0.1).momentum(0.9).weight_decay(1e-4), 1e-6);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].params().size(), 3u);
  EXPECT_EQ(groups[1].params().size(), 12u);
  const auto& decayed = static_cast<const torch::optim::SGDOptions&>(groups[0].options());
  const auto& not_decayed = static_cast<const torch::optim::SGDOptions&>(groups[1].options());
  EXPECT_EQ(decayed.weight_decay(), 1e-4);
  EXPECT_EQ(not_decayed.weight_decay(), 1e-6);
  EXPECT_EQ(not_decayed.momentum(), 0.9);
  EXPECT_EQ(not_decayed.lr(), 0.1);
  // An SGD step with these groups: a zero gradient moves a decayed weight and leaves a norm weight.
  torch::optim::SGD sgd(weight_decay_groups(*model, torch::optim::SGDOptions(0.1).weight_decay(0.5)),
                        torch::optim::SGDOptions(0.1));
  for (auto& p : model->parameters()) {
    if (p.requires_grad()) p.mutable_grad() = torch::zeros_like(p);
  }
  const torch::Tensor scale = model->named_parameters()["scale"].clone();
  const torch::Tensor ln = model->named_parameters()["ln.weight"].clone();
  sgd.step();
  EXPECT_TRUE(torch::allclose(model->named_parameters()["scale"], scale * (1 - 0.1 * 0.5)));
  EXPECT_TRUE(torch::equal(model->named_parameters()["ln.weight"], ln));

  // A module with no norm layers and no biases gives one group.
  torch::nn::Linear plain(torch::nn::LinearOptions(3, 2).bias(false));
  EXPECT_EQ(weight_decay_groups(*plain, torch::optim::AdamWOptions(1e-3)).size(), 1u);
}

TEST(ResNet, UnknownNamesAndBadClassCountsAreErrors) {
  try {
    make_resnet("resnet101");
    ADD_FAILURE() << "no error for resnet101";
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    for (const char* s : {"resnet101", "resnet18", "resnet34", "resnet50"}) {
      EXPECT_NE(what.find(s), std::string::npos) << what;
    }
  }
  EXPECT_THROW(make_resnet("ResNet18"), InvalidArgument);
  EXPECT_THROW(make_resnet(""), InvalidArgument);
  for (int64_t classes : {1, 0, -3}) {
    try {
      make_resnet("resnet18", classes);
      ADD_FAILURE() << "no error for num_classes " << classes;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("num_classes"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::to_string(classes)), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(ResNet(ResNetOptions().arch(ResNetArch::kResNet50).num_classes(1)), InvalidArgument);
  EXPECT_NO_THROW(make_resnet("resnet34", 2));
  for (const ResNetArch arch : {ResNetArch::kResNet18, ResNetArch::kResNet34, ResNetArch::kResNet50}) {
    EXPECT_EQ(parse_resnet_arch(resnet_arch_name(arch)), arch);
  }
}

}  // namespace
}  // namespace feedline
