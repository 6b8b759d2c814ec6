// What needs LibTorch's CUDA library itself, beyond the run-time checks (torch::cuda::is_available()) that serve
// every build: CUDA graphs and the GPU's name. CMakeLists.txt compiles cuda/cuda_support.cpp when the LibTorch
// found has CUDA, and cuda/cuda_support_none.cpp, which has none of it, otherwise.
#pragma once

#include <c10/core/Device.h>

#include <functional>
#include <memory>
#include <string>

namespace feedline::detail {

// Whether this build's LibTorch has CUDA (and so CUDA graphs). A CUDA device must also be there to use them.
bool cuda_graphs_built();

// The CUDA device's name ("NVIDIA H100 80GB HBM3"); empty in a build without CUDA.
std::string cuda_device_name(c10::Device device);

// A CUDA graph: device work captured once and replayed with one launch, which removes the per-kernel launch cost
// of a small model's step. In a build without CUDA the constructor throws Unsupported. Not thread-safe.
class CudaGraph {
 public:
  // `device`: the CUDA device the work runs on.
  explicit CudaGraph(c10::Device device);
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  // Runs `work` `warmups` times on a side stream (cuDNN, cuBLAS and the allocator initialise lazily, which a
  // capture forbids), then captures one more run of it, which does not execute. Waits for the device before and
  // after. What the warm-up runs changed stays changed: restoring it is the caller's job. Every tensor `work`
  // reads or writes must outlive the graph and keep its memory: a replay uses the addresses captured.
  void capture(const std::function<void()>& work, int warmups);
  // Launches the captured work on the current stream, after the work queued there before it.
  void replay();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace feedline::detail
