#include "train/blas.h"

#include <dlfcn.h>

#include <string>

namespace feedline {
namespace {

// OpenBLAS's own entry points, looked up in the process so that nothing links to OpenBLAS by name: LibTorch links
// to whichever BLAS the system provides.
template <class Function>
Function openblas_function(const char* name) {
  return reinterpret_cast<Function>(::dlsym(RTLD_DEFAULT, name));
}

}  // namespace

bool set_blas_threads(int threads) {
  const auto set = openblas_function<void (*)(int)>("openblas_set_num_threads");
  if (set == nullptr || threads < 1) return false;
  set(threads);
  return true;
}

std::string blas_description() {
  const auto config = openblas_function<char* (*)()>("openblas_get_config");
  const auto threads = openblas_function<int (*)()>("openblas_get_num_threads");
  if (config == nullptr || threads == nullptr) return "";
  const int n = threads();
  std::string text = config();
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text + ", " + std::to_string(n) + (n == 1 ? " thread" : " threads") + " per call";
}

}  // namespace feedline
