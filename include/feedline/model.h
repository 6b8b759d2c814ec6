// The experiment's SimpleCNN: conv 1->16 3x3 pad 1, ReLU, maxpool 2; conv 16->32 3x3 pad 1, ReLU, maxpool 2;
// flatten; linear 1568->128, ReLU; linear 128->10. 206,922 parameters. Not thread-safe (a torch Module).
#pragma once

#include <torch/nn.h>

#include <cstdint>

namespace feedline {

class SimpleCNNImpl : public torch::nn::Module {
 public:
  SimpleCNNImpl();
  torch::Tensor forward(torch::Tensor x);

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
};
TORCH_MODULE(SimpleCNN);

// Number of trainable parameters (SimpleCNN: 206,922).
int64_t parameter_count(const torch::nn::Module& module);

}  // namespace feedline
