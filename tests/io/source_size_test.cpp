// No C++ file of the project (src/, include/, tests/, bench/, fuzz/, python/) grows past 800 lines: a file that
// would is split by job, as src/io/parquet/ is. Read from the sources themselves; the test corpora under tests/data
// are others' files and are left out.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>

#include "test_paths.h"

namespace feedline {
namespace {

constexpr int64_t kMaxLines = 800;

// Files over the limit, each held to the lines it has: none may grow, and each leaves the list once it is split.
const std::map<std::string, int64_t> kOversized{
    {"tests/cli/cli_test.cpp", 1322},
};

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
  std::set<std::string> seen;
  for (const char* folder : {"src", "include", "tests", "bench", "fuzz", "python"}) {
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
      const auto oversized = kOversized.find(file);
      if (oversized == kOversized.end()) {
        EXPECT_LE(lines, kMaxLines) << file << " has " << lines << " lines, over " << kMaxLines
                                    << ": split it by job";
      } else {
        seen.insert(file);
        EXPECT_LE(lines, oversized->second) << file << " has " << lines << " lines, more than the "
                                            << oversized->second << " it is held to: split it by job";
        EXPECT_GT(lines, kMaxLines) << file << " has " << lines << " lines: drop it from kOversized";
      }
    }
  }
  for (const auto& [file, lines] : kOversized) {
    EXPECT_EQ(seen.count(file), 1u) << file << " is gone: drop it from kOversized";
  }
  EXPECT_GT(checked, 100u);
}

}  // namespace
}  // namespace feedline
