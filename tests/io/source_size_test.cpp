// No C++ file of the project (src/, include/, app/, tests/, bench/, fuzz/, python/) grows past 800 lines: a file that
// would is split by job, as src/io/parquet/ is. Read from the sources themselves; the test corpora under tests/data
// are others' files and are left out.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "test_paths.h"

namespace feedline {
namespace {

constexpr int64_t kMaxLines = 800;

bool is_cpp(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".h" || ext == ".hpp" || ext == ".cpp" || ext == ".cc" || ext == ".c";
}

int64_t line_count(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  return std::count(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>(), '\n');
}

TEST(SourceSize, NoFileIsOver800Lines) {
  const std::filesystem::path source = testing::source_dir();
  const std::filesystem::path corpora = source / "tests" / "data";
  size_t checked = 0;
  for (const char* folder : {"src", "include", "app", "tests", "bench", "fuzz", "python"}) {
    ASSERT_TRUE(std::filesystem::is_directory(source / folder)) << source / folder;
    auto it = std::filesystem::recursive_directory_iterator(source / folder);
    for (; it != std::filesystem::recursive_directory_iterator(); ++it) {
      if (it->is_directory() && it->path() == corpora) {
        it.disable_recursion_pending();
        continue;
      }
      if (!it->is_regular_file() || !is_cpp(it->path())) continue;
      ++checked;
      const std::string file = std::filesystem::relative(it->path(), source).generic_string();
      const int64_t lines = line_count(it->path());
      EXPECT_LE(lines, kMaxLines) << file << " has " << lines << " lines, over " << kMaxLines << ": split it by job";
    }
  }
  EXPECT_GT(checked, 100u);
}

}  // namespace
}  // namespace feedline
