// The sources of encoded images: a class-folder tree read in torchvision ImageFolder's order (classes, class
// numbers and samples as `torchvision.datasets.ImageFolder(root)` lists them, worked out by hand from its rules),
// and the bytes they hand to the loader.
#include "feedline/dataset/image_sources.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/loader/loader.h"
#include "test_paths.h"

namespace feedline {
namespace {

namespace fs = std::filesystem;

// Writes `bytes` to root/relative, making the folders on the way.
void put(const std::string& root, const std::string& relative, const std::string& bytes) {
  const fs::path path = fs::path(root) / relative;
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

// Runs `f` and checks that it throws an E whose message holds `needle`.
template <typename E>
void expect_error(const std::function<void()>& f, const std::string& needle) {
  std::string message = "(no error)";
  try {
    f();
  } catch (const E& e) {
    message = e.what();
  } catch (const std::exception& e) {
    message = std::string("another exception: ") + e.what();
  }
  EXPECT_NE(message.find(needle), std::string::npos) << "wanted \"" << needle << "\", got: " << message;
}

// A tree with every rule in it: classes sorted bytewise (a hidden one first, upper case before lower case),
// sub-folders sorted by path ('-' before '/'), extensions in any case, hidden image files kept, other files left
// out, a link to another class's folder followed.
std::string make_tree() {
  const std::string root = testing::scratch_dir("image_folder_tree");
  put(root, "cat/b.JPG", "cat-b");
  put(root, "cat/a.png", "cat-a");
  put(root, "cat/Z.jpeg", "cat-Z");
  put(root, "cat/.hidden.jpg", "cat-hidden");
  put(root, "cat/notes.txt", "not an image");
  put(root, "cat/jpg", "no extension");
  put(root, "cat/x.jpg.bak", "not an image either");
  put(root, "cat/sub/c.jpeg", "cat-sub-c");
  put(root, "cat/sub/inner/e.PNG", "cat-sub-inner-e");
  put(root, "cat/sub-x/d.webp", "cat-subx-d");
  put(root, "dog/x.Tif", "dog-x");
  put(root, "dog/y.pgm", "dog-y");
  put(root, "Bird/y.bmp", "bird-y");
  put(root, ".extra/p.ppm", "extra-p");
  put(root, "readme.jpg", "a file beside the classes");
  fs::create_directory_symlink("../dog", fs::path(root) / "cat" / "link");
  return root;
}

TEST(ImageFolderSource, ListsClassesAndSamplesInTorchvisionsOrder) {
  const std::string root = make_tree();
  const ImageFolderSource source(root);
  EXPECT_EQ(source.classes(), (std::vector<std::string>{".extra", "Bird", "cat", "dog"}));
  EXPECT_EQ(source.class_to_idx(),
            (std::map<std::string, int64_t>{{".extra", 0}, {"Bird", 1}, {"cat", 2}, {"dog", 3}}));
  const std::string r = root + "/";
  // cat's folders by path: "cat" < "cat/link" < "cat/sub" < "cat/sub-x" < "cat/sub/inner" ('-' sorts before '/').
  const std::vector<std::pair<std::string, int64_t>> expected{
      {r + ".extra/p.ppm", 0},     {r + "Bird/y.bmp", 1},       {r + "cat/.hidden.jpg", 2},
      {r + "cat/Z.jpeg", 2},       {r + "cat/a.png", 2},        {r + "cat/b.JPG", 2},
      {r + "cat/link/x.Tif", 2},   {r + "cat/link/y.pgm", 2},   {r + "cat/sub/c.jpeg", 2},
      {r + "cat/sub-x/d.webp", 2}, {r + "cat/sub/inner/e.PNG", 2}, {r + "dog/x.Tif", 3},
      {r + "dog/y.pgm", 3}};
  EXPECT_EQ(source.samples(), expected);
  ASSERT_EQ(source.size(), 13);
  for (int64_t i = 0; i < source.size(); ++i) {
    const EncodedSample sample = source.get(i);
    EXPECT_EQ(sample.name, source.samples()[static_cast<size_t>(i)].first);
    EXPECT_EQ(sample.label, source.samples()[static_cast<size_t>(i)].second);
    std::ifstream in(sample.name, std::ios::binary);
    EXPECT_EQ(sample.bytes, std::string(std::istreambuf_iterator<char>(in), {})) << sample.name;
  }
  EXPECT_EQ(source.get(4).bytes, "cat-a");
  EXPECT_THROW(source.get(13), InvalidArgument);
}

TEST(ImageFolderSource, JoinsPathsAsOsPathJoinDoes) {
  const std::string root = testing::scratch_dir("image_folder_slash");
  put(root, "a/1.jpg", "1");
  EXPECT_EQ(ImageFolderSource(root + "/").samples()[0].first, root + "/a/1.jpg");
  EXPECT_EQ(ImageFolderSource(root).samples()[0].first, root + "/a/1.jpg");
}

TEST(ImageFolderSource, DoesNotWalkALinkBackToAnAncestorInACircle) {
  const std::string root = testing::scratch_dir("image_folder_loop");
  put(root, "a/deep/1.jpg", "1");
  fs::create_directory_symlink("..", fs::path(root) / "a" / "deep" / "up");
  const ImageFolderSource source(root);
  ASSERT_EQ(source.size(), 1);
  EXPECT_EQ(source.samples()[0].first, root + "/a/deep/1.jpg");
}

TEST(ImageFolderSource, AClassWithoutAnImageIsAnErrorNamingTheFolderAndTheClasses) {
  const std::string root = testing::scratch_dir("image_folder_empty_class");
  put(root, "a/1.png", "1");
  fs::create_directories(fs::path(root) / "b");
  put(root, "c/notes.txt", "text");
  try {
    ImageFolderSource source(root);
    FAIL() << "a tree with empty classes was read";
  } catch (const IoError& e) {
    EXPECT_EQ(e.code(), ENOENT);
    EXPECT_NE(std::string(e.what()).find(root + ": found no valid file for the classes b, c"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(".tif, .tiff, .webp"), std::string::npos) << e.what();
  }
}

TEST(ImageFolderSource, NoClassFolderOrNoRootIsAnErrorNamingTheFolder) {
  const std::string root = testing::scratch_dir("image_folder_no_class");
  put(root, "1.jpg", "1");
  expect_error<IoError>([&] { ImageFolderSource s(root); }, root + ": couldn't find any class folder");
  const std::string missing = root + "/missing";
  expect_error<IoError>([&] { ImageFolderSource s(missing); }, missing + ": cannot list the image folder");
}

TEST(ImageFolderSource, AFileGoneSinceConstructionIsAnErrorNamingIt) {
  const std::string root = testing::scratch_dir("image_folder_gone");
  put(root, "a/1.jpg", "1");
  put(root, "a/2.jpg", "2");
  const ImageFolderSource source(root);
  fs::remove(fs::path(root) / "a" / "2.jpg");
  EXPECT_EQ(source.get(0).bytes, "1");
  expect_error<IoError>([&] { source.get(1); }, root + "/a/2.jpg: cannot open");
}

// Writes each sample's byte length into its slot, so that a batch shows which samples made it.
class LengthTransform : public SampleTransform {
 public:
  SampleLayout layout() const override { return {{1}, torch::kInt64}; }
  void apply(const EncodedSample& sample, SampleRng&, const torch::Tensor& out) const override {
    out.data_ptr<int64_t>()[0] = static_cast<int64_t>(sample.bytes.size());
  }
};

void expect_loader_follows_sampler(const std::shared_ptr<const SampleSource>& source, const std::string& what) {
  const auto dataset = std::make_shared<EncodedDataset>(source, std::make_shared<LengthTransform>());
  for (const int64_t workers : {0, 2}) {
    Loader loader(dataset, LoaderOptions(4).shuffle(true).seed(3).num_workers(workers));
    const std::vector<int64_t> order = loader.epoch_indices(0);
    Epoch epoch = loader.epoch();
    size_t at = 0;
    while (auto batch = epoch.next()) {
      for (int64_t i = 0; i < batch->target.size(0); ++i, ++at) {
        const EncodedSample expected = source->get(order[at]);
        EXPECT_EQ(batch->target[i].item<int64_t>(), expected.label) << what << ", " << workers << " workers";
        EXPECT_EQ(batch->data[i][0].item<int64_t>(), static_cast<int64_t>(expected.bytes.size()))
            << what << ", " << workers << " workers, " << expected.name;
      }
    }
    EXPECT_EQ(at, order.size()) << what;
  }
}

TEST(ImageFolderSource, FeedsTheLoaderInSamplerOrder) {
  expect_loader_follows_sampler(std::make_shared<ImageFolderSource>(make_tree()), "image folder");
}

}  // namespace
}  // namespace feedline
