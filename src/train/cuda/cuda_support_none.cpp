// A build against a LibTorch without CUDA (Debian's, say) has no CUDA graphs and no GPU names. CMakeLists.txt
// compiles this file instead of cuda_support.cpp when find_package(Torch) reports no CUDA libraries.
#include "feedline/io/error.h"
#include "train/cuda_support.h"

namespace feedline::detail {

bool cuda_graphs_built() { return false; }

std::string cuda_device_name(c10::Device) { return ""; }

struct CudaGraph::Impl {};

CudaGraph::CudaGraph(c10::Device) {
  throw Unsupported("CUDA graph: this feedline was built against a LibTorch without CUDA (rebuild it against one "
                    "with CUDA, e.g. pip torch's, to use CUDA graphs)");
}

CudaGraph::~CudaGraph() = default;

void CudaGraph::capture(const std::function<void()>&, int) {
  throw Unsupported("CUDA graph: not available in this build");
}

void CudaGraph::replay() { throw Unsupported("CUDA graph: not available in this build"); }

}  // namespace feedline::detail
