// An installed feedline is a CMake package that a project of its own builds against, as docs/library.md says:
// `cmake --install` of this build into a scratch prefix; examples/consumer configured with find_package(feedline)
// and built, with the C++ snippets of docs/library.md, docs/images.md and the README compiled in so that they stay
// true; and the example trained on a tiny MNIST-shaped dataset.
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

// Every ```cpp block of docs/library.md, docs/images.md, docs/remote.md and README.md, as one source file: every
// block's #include lines first, then each block's statements as the body of a function of its own.
std::string doc_snippets(int* blocks) {
  std::string includes, bodies;
  *blocks = 0;
  for (const char* doc : {"/docs/library.md", "/docs/images.md", "/docs/remote.md", "/README.md"}) {
    std::ifstream in(testing::source_dir() + doc);
    std::string line;
    bool in_block = false;
    while (std::getline(in, line)) {
      if (!in_block && line == "```cpp") {
        in_block = true;
        bodies += "[[maybe_unused]] static void doc_snippet_" + std::to_string(++*blocks) + "() {\n";
      } else if (in_block && line == "```") {
        in_block = false;
        bodies += "}\n";
      } else if (in_block) {
        (line.rfind("#include", 0) == 0 ? includes : bodies) += line + "\n";
      }
    }
  }
  return includes + "\n" + bodies;
}

// Configures examples/consumer in `build` as a user would, but with this build's compiler, generator and
// LibTorch, and the package installed at `prefix`; then builds it.
CliRun configure_and_build(const std::string& prefix, const std::string& build, const std::string& options) {
  const std::string cmake = quoted(FEEDLINE_CMAKE_COMMAND);
  CliRun r = run_command(cmake + " -S " + quoted(testing::source_dir() + "/examples/consumer") + " -B " +
                         quoted(build) + " -G " + quoted(FEEDLINE_CMAKE_GENERATOR) +
                         " -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=" + quoted(FEEDLINE_CXX_COMPILER) +
                         " -DCMAKE_PREFIX_PATH=" + quoted(prefix) + " " + options);
  if (r.status != 0) return r;
  return run_command(cmake + " --build " + quoted(build));
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(Package, AProjectOfItsOwnBuildsAgainstTheInstalledLibrary) {
  const std::string dir = testing::scratch_dir("package");
  const std::string prefix = dir + "/prefix";
  CliRun r = run_command(quoted(FEEDLINE_CMAKE_COMMAND) + " --install " + quoted(FEEDLINE_BINARY_DIR) + " --prefix " +
                         quoted(prefix));
  ASSERT_EQ(r.status, 0) << r.output;
  // The package names what it links with by target, found again where it is used: no library of this machine by
  // its absolute path (LibTorch's libc10.so was one), which would break the package on any other machine.
  for (const char* name : {"feedlineTargets.cmake", "feedlineIoTargets.cmake"}) {
    std::ifstream targets(prefix + "/lib/cmake/feedline/" + name);
    ASSERT_TRUE(targets.good()) << name;
    std::string line;
    int link_lines = 0;
    while (std::getline(targets, line)) {
      if (!contains(line, "INTERFACE_LINK_LIBRARIES")) continue;
      ++link_lines;
      EXPECT_FALSE(contains(line, "\"/") || contains(line, ";/")) << name << ": " << line;
    }
    EXPECT_GE(link_lines, 1) << name;
  }

  int blocks = 0;
  const std::string snippets = doc_snippets(&blocks);
  ASSERT_GE(blocks, 4) << "docs/library.md has lost its examples";
  std::ofstream(dir + "/doc_snippets.cpp") << snippets;
  r = configure_and_build(prefix, dir + "/build",
                          "-DTorch_DIR=" + quoted(FEEDLINE_TORCH_DIR) +
                              " -DEXAMPLE_EXTRA_SOURCES=" + quoted(dir + "/doc_snippets.cpp"));
  ASSERT_EQ(r.status, 0) << snippets << "\n" << r.output;
  // The component feedline_io alone: a project that cannot find LibTorch still builds against it.
  r = configure_and_build(prefix, dir + "/build-io", "-DEXAMPLE_IO_ONLY=ON -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(std::ifstream(dir + "/build-io/feedline_example").good());

  const std::string idx = testing::make_idx_dir("package_idx", 600, 200);
  r = testing::run_cli("prepare --images --dataset mnist --mnist-idx " + idx + " --data-dir " + dir + "/data");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string data = dir + "/data/MNIST/";
  const std::string example = quoted(dir + "/build/feedline_example");
  r = run_command(example + " " + data + "train.parquet " + data + "test.parquet 3 32");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "SimpleCNN: 206922 parameters; 600 train and 200 test samples")) << r.output;
  for (const char* line : {"Average Train Time per Epoch: ", "Average Test Time per Epoch: ", "Total Train Time: ",
                           "Total Test Time: "}) {
    EXPECT_TRUE(contains(r.output, line)) << line << "\n" << r.output;
  }
  const auto at = r.output.find("Test Accuracy: ");
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_GE(std::stod(r.output.substr(at + 15)), 80.0) << r.output;
  // Its errors name the file and the problem.
  r = run_command(example + " " + data + "missing.parquet " + data + "test.parquet");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, data + "missing.parquet")) << r.output;

  // A model of the program's own on an image folder: trained in one go, and killed after a checkpoint, then
  // resumed by the same command line, to the same saved model byte for byte.
  const std::string images = dir + "/data/MNIST/images/png/";
  const std::string trainer = quoted(dir + "/build/feedline_train_images") + " " + images + "train " + images + "test ";
  r = run_command(trainer + dir + "/whole 2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Epoch 2: train loss ")) << r.output;
  r = run_command("KILL_AFTER_STEP=12 " + trainer + dir + "/killed 2");
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Checkpoint after 5 steps")) << r.output;
  EXPECT_FALSE(contains(r.output, "Epoch 1:")) << r.output;
  r = run_command(trainer + dir + "/killed 2");
  ASSERT_EQ(r.status, 0) << r.output;
  // Step 10's checkpoint, or step 5's when the process died while step 10's was still being written.
  EXPECT_TRUE(contains(r.output, "Resuming at epoch 1, step 10") || contains(r.output, "Resuming at epoch 1, step 5"))
      << r.output;
  EXPECT_EQ(testing::file_bytes(dir + "/killed/model.pt"), testing::file_bytes(dir + "/whole/model.pt"));

  // The labels of make_idx_dir are i % 10: a mean of 4.5 over 600 rows, in the Parquet file and in the CSV file.
  for (const std::string build : {"/build/", "/build-io/"}) {
    for (const std::string file : {"train.parquet", "train.csv"}) {
      r = run_command(quoted(dir + build + "feedline_columns") + " " + data + file + " label pixel1");
      ASSERT_EQ(r.status, 0) << r.output;
      EXPECT_TRUE(contains(r.output, file + ": 600 rows, 2 columns\nlabel: 0 nulls, mean 4.5\n")) << r.output;
    }
  }
  r = run_command(quoted(dir + "/build-io/feedline_columns") + " " + data + "test.csv label lable");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, data + "test.csv: no column 'lable'")) << r.output;
}

}  // namespace
}  // namespace feedline
