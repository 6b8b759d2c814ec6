// The sources of encoded images: a class-folder tree read in torchvision ImageFolder's order (classes, class
// numbers and samples as `torchvision.datasets.ImageFolder(root)` lists them, worked out by hand from its rules),
// WebDataset tar shards grouped into samples as webdataset's tariterators groups them, with every error naming shard
// and member; and the bytes both hand to the loader.
#include "feedline/dataset/image_sources.h"

#include <gtest/gtest.h>

#include <cstdlib>

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
#include "test_errors.h"
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

using testing::expect_error;

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
  // Labels without reading a file, class names by class number, any order as good as another.
  EXPECT_EQ(source.labels(), (std::vector<int64_t>{0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3}));
  EXPECT_EQ(source.class_names(), source.classes());
  EXPECT_TRUE(source.shuffle_blocks().empty());
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

TEST(ShardPattern, ExpandsRangesListsAndSeveralBracesAsBraceexpandDoes) {
  EXPECT_EQ(expand_shard_pattern("train-{000000..000002}.tar"),
            (std::vector<std::string>{"train-000000.tar", "train-000001.tar", "train-000002.tar"}));
  EXPECT_EQ(expand_shard_pattern("{a,b}-{1..2}.tar"),
            (std::vector<std::string>{"a-1.tar", "a-2.tar", "b-1.tar", "b-2.tar"}));
  EXPECT_EQ(expand_shard_pattern("s{8..10}"), (std::vector<std::string>{"s8", "s9", "s10"}));
  EXPECT_EQ(expand_shard_pattern("s{08..10}"), (std::vector<std::string>{"s08", "s09", "s10"}));
  EXPECT_EQ(expand_shard_pattern("s{3..1}"), (std::vector<std::string>{"s3", "s2", "s1"}));
  EXPECT_EQ(expand_shard_pattern("{a,b{1,2}}.tar"), (std::vector<std::string>{"a.tar", "b1.tar", "b2.tar"}));
  EXPECT_EQ(expand_shard_pattern("plain.tar"), (std::vector<std::string>{"plain.tar"}));
  expect_error<InvalidArgument>([] { expand_shard_pattern("x-{1..2.tar"); }, "shard pattern x-{1..2.tar: a '{'");
  expect_error<InvalidArgument>([] { expand_shard_pattern("x-1}.tar"); }, "shard pattern x-1}.tar: a '}'");
  expect_error<InvalidArgument>([] { expand_shard_pattern("x-{abc}.tar"); }, "{abc} is neither a list");
  expect_error<InvalidArgument>([] { expand_shard_pattern("x-{1..a}.tar"); }, "{1..a} is neither a list");
}

// A tar made by /usr/bin/tar from (member name, bytes) pairs, in that order; a name ending in '/' is a folder.
std::string make_tar(const std::string& dir, const std::string& name,
                     const std::vector<std::pair<std::string, std::string>>& members, const std::string& flags = "") {
  const std::string staging = dir + "/" + name + ".d";
  std::string list;
  for (const auto& [member, bytes] : members) {
    if (member.back() == '/') {
      fs::create_directories(fs::path(staging) / member);
    } else {
      put(staging, member, bytes);
    }
    list += " '" + member + "'";
  }
  const std::string path = dir + "/" + name;
  const std::string command = "tar --no-recursion -c" + flags + "f '" + path + "' -C '" + staging + "'" + list;
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return path;
}

// Bytes that show where they were read from: `n` bytes counting from `seed`.
std::string pattern_bytes(size_t n, int seed) {
  std::string out(n, '\0');
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<char>((seed + static_cast<int>(i) * 7) % 256);
  return out;
}

struct TwoShards {
  std::vector<std::string> paths;
  std::vector<std::string> images;  // each sample's bytes, in sample order
};

// Two shards in WebDataset's layout with what WebDataset passes over (metadata, folders, a name without a dot,
// other suffixes) between the samples; key k ends the first shard and begins the second.
TwoShards make_shards(const std::string& dir) {
  TwoShards t;
  t.images = {pattern_bytes(1500, 1), pattern_bytes(10, 2), pattern_bytes(513, 3),
              pattern_bytes(700, 4),  pattern_bytes(1, 5),  pattern_bytes(4000, 6), pattern_bytes(512, 7)};
  // A name past the 100 bytes of a tar header: the member's data follows an extra header.
  const std::string long_folder = "s0-" + std::string(110, 'x');
  t.paths.push_back(make_tar(dir, "data-0.tar",
                             {{"__meta__", "{}"},
                              {long_folder + "/a.jpg", t.images[0]},
                              {long_folder + "/a.cls", "3\n"},
                              {"b.PNG", t.images[1]},
                              {"b.cls", "1"},
                              {"b.json", "{\"x\": 1}"},
                              {"README", "no dot"},
                              {"folder.d/", ""},
                              {"c.txt", "a caption"},
                              {"c.webp", t.images[2]},
                              {"c.cls", " 0 "},
                              {"k.jpg", t.images[3]},
                              {"k.cls", "2"}}));
  t.paths.push_back(make_tar(dir, "data-1.tar",
                             {{"k.cls", "5"},
                              {"k.png", t.images[4]},
                              {"d.jpeg", t.images[5]},
                              {"d.cls", "2"},
                              {"e.cls", "4"},
                              {"e.JPG", t.images[6]}}));
  return t;
}

TEST(TarShardSource, GroupsMembersByKeyWithinEachShard) {
  const std::string dir = testing::scratch_dir("tar_shards");
  const TwoShards t = make_shards(dir);
  const TarShardSource source(expand_shard_pattern(dir + "/data-{0..1}.tar"));
  EXPECT_EQ(source.shards(), t.paths);
  ASSERT_EQ(source.size(), 7);
  const std::vector<int64_t> labels{3, 1, 0, 2, 5, 2, 4};
  const std::string long_member = "s0-" + std::string(110, 'x') + "/a.jpg";
  const std::vector<std::string> names{t.paths[0] + ":" + long_member, t.paths[0] + ":b.PNG", t.paths[0] + ":c.webp",
                                       t.paths[0] + ":k.jpg", t.paths[1] + ":k.png", t.paths[1] + ":d.jpeg",
                                       t.paths[1] + ":e.JPG"};
  for (int64_t i = 0; i < source.size(); ++i) {
    const EncodedSample sample = source.get(i);
    EXPECT_EQ(sample.label, labels[static_cast<size_t>(i)]) << i;
    EXPECT_EQ(sample.name, names[static_cast<size_t>(i)]) << i;
    EXPECT_EQ(sample.bytes, t.images[static_cast<size_t>(i)]) << sample.name;
  }
  EXPECT_EQ(source.classes(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_THROW(source.get(7), InvalidArgument);
  EXPECT_EQ(source.labels(), labels);
  EXPECT_TRUE(source.class_names().empty());
  EXPECT_EQ(source.shuffle_blocks(), (std::vector<int64_t>{4, 3}));  // samples per shard
  // A shard with no sample in it is no block.
  const std::string empty = make_tar(dir, "empty.tar", {{"README", "no sample"}});
  const TarShardSource three({t.paths[0], empty, t.paths[1]});
  EXPECT_EQ(three.shuffle_blocks(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(three.labels(), labels);
}

TEST(TarShardSource, FeedsTheLoaderInSamplerOrder) {
  const std::string dir = testing::scratch_dir("tar_shards_loader");
  expect_loader_follows_sampler(std::make_shared<TarShardSource>(make_shards(dir).paths), "tar shards");
}

TEST(TarShardSource, ABadSampleIsAnErrorNamingShardAndMember) {
  const std::string dir = testing::scratch_dir("tar_shards_bad");
  const auto source_of = [&](const std::string& name, const std::vector<std::pair<std::string, std::string>>& m) {
    const std::string path = make_tar(dir, name, m);
    return [path] { TarShardSource s({path}); };
  };
  expect_error<InvalidFile>(source_of("nolabel.tar", {{"a.cls", "1"}, {"a.jpg", "x"}, {"b.jpg", "y"}}),
                            dir + "/nolabel.tar: member b.jpg: sample b has no .cls label");
  expect_error<InvalidFile>(source_of("badlabel.tar", {{"a.jpg", "x"}, {"a.cls", "cat"}}),
                            dir + "/badlabel.tar: member a.cls: label \"cat\" is no class number");
  expect_error<InvalidFile>(source_of("signed.tar", {{"a.jpg", "x"}, {"a.cls", "-1"}}),
                            dir + "/signed.tar: member a.cls: label \"-1\" is no class number");
  expect_error<InvalidFile>(source_of("noimage.tar", {{"a.cls", "1"}, {"a.txt", "t"}}),
                            dir + "/noimage.tar: member a.cls: sample a has no image");
  expect_error<InvalidFile>(source_of("twice.tar", {{"a.jpg", "x"}, {"a.JPG", "y"}, {"a.cls", "1"}}),
                            dir + "/twice.tar: member a.JPG: a second .jpg member for key a");
  expect_error<InvalidFile>(source_of("twoimages.tar", {{"a.jpg", "x"}, {"a.png", "y"}, {"a.cls", "1"}}),
                            dir + "/twoimages.tar: member a.png: a second image for key a");
  expect_error<InvalidArgument>(source_of("nosample.tar", {{"README", "r"}, {"__meta__", "m"}}),
                                dir + "/nosample.tar: not a single sample");
}

TEST(TarShardSource, ATruncatedOrForeignShardIsAnErrorNamingIt) {
  const std::string dir = testing::scratch_dir("tar_shards_broken");
  const std::string whole = make_tar(dir, "whole.tar", {{"a.jpg", pattern_bytes(3000, 1)}, {"a.cls", "1"}});
  std::ifstream in(whole, std::ios::binary);
  const std::string bytes(std::istreambuf_iterator<char>(in), {});
  put(dir, "cut.tar", bytes.substr(0, 512 + 1000));
  expect_error<InvalidFile>([&] { TarShardSource s({dir + "/cut.tar"}); }, dir + "/cut.tar");
  expect_error<InvalidFile>([&] { TarShardSource s({dir + "/cut.tar"}); }, "a.jpg");
  put(dir, "text.tar", "this is no tar file, only some text that is long enough to look at");
  expect_error<InvalidFile>([&] { TarShardSource s({dir + "/text.tar"}); }, dir + "/text.tar: not a readable tar");
  const std::string gz = make_tar(dir, "whole.tar.gz", {{"a.jpg", "x"}, {"a.cls", "1"}}, "z");
  expect_error<Unsupported>([&] { TarShardSource s({gz}); }, gz + ": a gzip-compressed shard");
  expect_error<IoError>([&] { TarShardSource s({dir + "/missing.tar"}); }, dir + "/missing.tar");
  expect_error<InvalidArgument>([] { TarShardSource s(std::vector<std::string>{}); }, "no shards given");
}

}  // namespace
}  // namespace feedline
