#include "test_paths.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "feedline/io/file.h"

namespace feedline::testing {

std::string source_dir() { return FEEDLINE_SOURCE_DIR; }
std::string test_data_dir() { return source_dir() + "/tests/data"; }
std::string parquet_testing_dir() { return test_data_dir() + "/parquet-testing"; }

std::string npm_cache_dir() {
  if (const char* env = std::getenv("FEEDLINE_CACHE")) return std::string(env) + "/npm";
  return source_dir() + "/.cache/npm";
}

namespace {

std::filesystem::path scratch_root() {
  return std::filesystem::temp_directory_path() / ("feedline-test-" + std::to_string(::getpid()));
}

// Removes this process's scratch folders when the tests end, inside RUN_ALL_TESTS rather than in a static's
// destructor during exit; with remove_tree(), not std::filesystem::remove_all() (see feedline/file.h).
class ScratchCleanup : public ::testing::Environment {
 public:
  void TearDown() override { remove_tree(scratch_root().string()); }
};
[[maybe_unused]] ::testing::Environment* const scratch_cleanup =
    ::testing::AddGlobalTestEnvironment(new ScratchCleanup);  // gtest owns and deletes it

}  // namespace

std::string file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    ADD_FAILURE() << path << ": cannot be read";
    return "";
  }
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string scratch_dir(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path dir = scratch_root() / name;
  if (!remove_tree(dir.string())) throw std::runtime_error(dir.string() + ": cannot empty this scratch folder");
  fs::create_directories(dir);
  return dir.string();
}

}  // namespace feedline::testing
