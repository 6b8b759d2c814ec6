// The experiment's SimpleCNN: conv 1->16 3x3 pad 1, ReLU, maxpool 2; conv 16->32 3x3 pad 1, ReLU, maxpool 2;
// flatten; linear 1568->128, ReLU; linear 128->10. 206,922 parameters. The same layers serve other image shapes
// and class counts (conv C->16; linear 32*(H/4)*(W/4)->128; linear 128->K). Not thread-safe (a torch Module).
#pragma once

#include <torch/nn.h>

#include <cstdint>
#include <string>

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

}  // namespace feedline
