// An installed feedline is a CMake package that a project of its own builds against, as the README says:
// `cmake --install` of this build into a scratch prefix; examples/consumer configured with find_package(feedline)
// and built, with the README's C++ snippets compiled in so that they stay true; and the example trained on a
// tiny MNIST-shaped dataset.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "cli/cli_support.h"
#include "test_paths.h"

namespace feedline {
namespace {

using testing::CliRun;
using testing::run_command;

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// The ```cpp blocks of the README's section "Using the library from C++", as one source file: every block's
// #include lines first, then each block's statements as the body of a function of its own.
std::string readme_snippets(int* blocks) {
  std::ifstream readme(testing::source_dir() + "/README.md");
  std::string line, includes, bodies;
  bool in_section = false, in_block = false;
  *blocks = 0;
  while (std::getline(readme, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Using the library from C++";
    if (!in_section) continue;
    if (!in_block && line == "```cpp") {
      in_block = true;
      bodies += "[[maybe_unused]] static void readme_snippet_" + std::to_string(++*blocks) + "() {\n";
    } else if (in_block && line == "```") {
      in_block = false;
      bodies += "}\n";
    } else if (in_block) {
      (line.rfind("#include", 0) == 0 ? includes : bodies) += line + "\n";
    }
  }
  return includes + "\n" + bodies;
}

TEST(Package, AProjectOfItsOwnBuildsAgainstTheInstalledLibrary) {
  const std::string dir = testing::scratch_dir("package");
  const std::string cmake = quoted(FEEDLINE_CMAKE_COMMAND);
  CliRun r = run_command(cmake + " --install " + quoted(FEEDLINE_BINARY_DIR) + " --prefix " + quoted(dir + "/prefix"));
  ASSERT_EQ(r.status, 0) << r.output;

  int blocks = 0;
  const std::string snippets = readme_snippets(&blocks);
  ASSERT_GE(blocks, 2) << "the README's section \"Using the library from C++\" has lost its examples";
  std::ofstream(dir + "/readme_snippets.cpp") << snippets;

  // The example is configured as a user would, but with this build's compiler, generator and LibTorch.
  r = run_command(cmake + " -S " + quoted(testing::source_dir() + "/examples/consumer") + " -B " +
                  quoted(dir + "/build") + " -G " + quoted(FEEDLINE_CMAKE_GENERATOR) +
                  " -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=" + quoted(FEEDLINE_CXX_COMPILER) +
                  " -DCMAKE_PREFIX_PATH=" + quoted(dir + "/prefix") + " -DTorch_DIR=" + quoted(FEEDLINE_TORCH_DIR) +
                  " -DEXAMPLE_EXTRA_SOURCES=" + quoted(dir + "/readme_snippets.cpp"));
  ASSERT_EQ(r.status, 0) << r.output;
  r = run_command(cmake + " --build " + quoted(dir + "/build"));
  ASSERT_EQ(r.status, 0) << snippets << "\n" << r.output;

  const std::string idx = testing::make_idx_dir("package_idx", 600, 200);
  r = testing::run_cli("prepare --dataset mnist --mnist-idx " + idx + " --data-dir " + dir + "/data");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string example = quoted(dir + "/build/feedline_example");
  const std::string data = dir + "/data/MNIST/";
  r = run_command(example + " " + data + "train.parquet " + data + "test.parquet 3 32");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("SimpleCNN: 206922 parameters; 600 train and 200 test samples"), std::string::npos)
      << r.output;
  for (const char* line : {"Average Train Time per Epoch: ", "Average Test Time per Epoch: ", "Total Train Time: ",
                           "Total Test Time: "}) {
    EXPECT_NE(r.output.find(line), std::string::npos) << line << "\n" << r.output;
  }
  const auto at = r.output.find("Test Accuracy: ");
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_GE(std::stod(r.output.substr(at + 15)), 80.0) << r.output;

  // Its errors name the file and the problem.
  r = run_command(example + " " + data + "missing.parquet " + data + "test.parquet");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find(data + "missing.parquet"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace feedline
