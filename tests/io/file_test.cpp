#include "feedline/io/file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "test_paths.h"

namespace feedline {
namespace {

namespace fs = std::filesystem;

void touch(const fs::path& p) { std::ofstream(p) << "x"; }

TEST(RemoveTree, RemovesNestedFoldersAndLinksButNotWhatTheyPointTo) {
  const fs::path dir = testing::scratch_dir("remove_tree");
  const fs::path outside = dir / "outside", tree = dir / "tree";
  fs::create_directories(outside);
  touch(outside / "kept");
  fs::create_directories(tree / "a" / "b" / "c");
  touch(tree / "top");
  touch(tree / "a" / "b" / "deep");
  fs::create_directory_symlink(outside, tree / "a" / "link_to_folder");
  fs::create_symlink(outside / "kept", tree / "link_to_file");
  fs::create_symlink(dir / "nowhere", tree / "dangling");

  EXPECT_TRUE(remove_tree(tree.string()));
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree)));
  EXPECT_TRUE(fs::exists(outside / "kept")) << "a link was followed";

  EXPECT_TRUE(remove_tree(tree.string())) << "a missing path counts as removed";
  touch(dir / "file");
  EXPECT_TRUE(remove_tree((dir / "file").string()));
  EXPECT_FALSE(fs::exists(dir / "file"));
}

TEST(RemoveTree, SaysWhenSomethingIsLeft) {
  const fs::path dir = testing::scratch_dir("remove_tree_left");
  // A file name too long for the system: lstat fails with ENAMETOOLONG, not ENOENT, so it is not "removed".
  EXPECT_FALSE(remove_tree((dir / std::string(300, 'x')).string()));
}

}  // namespace
}  // namespace feedline
