// CUDA graphs through ATen's CUDAGraph, and the GPU's name, for builds against a LibTorch with CUDA
// (CMakeLists.txt compiles this file when find_package(Torch) reports CUDA libraries, cuda_support_none.cpp
// otherwise).
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/cuda.h>

#include "feedline/io/error.h"
#include "train/cuda_support.h"

namespace feedline::detail {

bool cuda_graphs_built() { return true; }

std::string cuda_device_name(c10::Device device) {
  if (!device.is_cuda() || !torch::cuda::is_available()) return "";
  return at::cuda::getDeviceProperties(device.has_index() ? device.index() : c10::cuda::current_device())->name;
}

struct CudaGraph::Impl {
  explicit Impl(c10::Device d) : device(d) {}
  c10::Device device;
  at::cuda::CUDAGraph graph;  // its constructor already asks CUDA for the current stream
  bool captured = false;
};

namespace {

c10::Device checked(c10::Device device) {
  if (!device.is_cuda()) throw InvalidArgument("CUDA graph: needs a CUDA device, got " + device.str());
  if (!torch::cuda::is_available()) throw InvalidArgument("CUDA graph: no CUDA device is available");
  return device;
}

}  // namespace

CudaGraph::CudaGraph(c10::Device device) : impl_(std::make_unique<Impl>(checked(device))) {}

CudaGraph::~CudaGraph() = default;

void CudaGraph::capture(const std::function<void()>& work, int warmups) {
  if (impl_->captured) throw InvalidArgument("CUDA graph: already captured");
  c10::cuda::CUDAGuard device_guard(impl_->device);
  const auto index = impl_->device.index() < 0 ? c10::cuda::current_device() : impl_->device.index();
  torch::cuda::synchronize(index);  // the side stream must see what the current stream queued
  {
    // Captures may not use the legacy default stream.
    c10::cuda::CUDAStreamGuard stream_guard(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, index));
    for (int i = 0; i < warmups; ++i) work();
    torch::cuda::synchronize(index);
    impl_->graph.capture_begin();
    try {
      work();
    } catch (...) {
      // Leave the stream out of capture mode, or every later CUDA call fails with "operation not permitted when
      // stream is capturing" instead of this error.
      try {
        impl_->graph.capture_end();
      } catch (...) {
      }
      throw;
    }
    impl_->graph.capture_end();
  }
  torch::cuda::synchronize(index);
  impl_->captured = true;
}

void CudaGraph::replay() {
  if (!impl_->captured) throw InvalidArgument("CUDA graph: replay before capture");
  impl_->graph.replay();
}

}  // namespace feedline::detail
