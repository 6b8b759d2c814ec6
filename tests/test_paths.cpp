#include "test_paths.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace feedline::testing {

std::string source_dir() { return FEEDLINE_SOURCE_DIR; }
std::string shared_dir() { return FEEDLINE_SHARED_DIR; }
std::string parquet_testing_dir() { return shared_dir() + "/parquet-testing"; }

std::string npm_cache_dir() {
  if (const char* env = std::getenv("FEEDLINE_CACHE")) return std::string(env) + "/npm";
  return source_dir() + "/.cache/npm";
}

std::string scratch_dir(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("feedline-test-" + std::to_string(::getpid()));
  const fs::path dir = root / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  static const struct Cleanup {
    fs::path root;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(root, ec);
    }
  } cleanup{root};
  return dir.string();
}

}  // namespace feedline::testing
