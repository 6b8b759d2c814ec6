// Image sources read from URLs as from paths: WebDataset tar shards (by brace pattern, by glob, over http), a folder
// of class folders and Hugging Face image Parquet, each against the same files read locally, sample by sample and
// through the loader (0, 1 and 2 workers, shuffled, resumed mid-epoch); and the loader's read-ahead fetching a
// shard's samples in few requests.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <tuple>
#include <string>
#include <vector>

#include "dataset_remote_data.h"
#include "dataset_remote_support.h"
#include "feedline/dataset/image_dataset.h"
#include "feedline/dataset/image_sources.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"

namespace feedline {
namespace {

using testing::kPerShard;
using testing::kShards;
using testing::RemoteDatasetTest;
using testing::Shards;
using testing::shards;
using testing::Tree;
using testing::tree;

std::vector<ImageStep> random_steps() {
  image_steps::RandomResizedCrop crop;
  crop.height = crop.width = 4;
  return {crop, image_steps::RandomHorizontalFlip{}, image_steps::PILToTensor{}};
}

// The loader's batches of `local` and `remote` (transformed with randomness of their own) are the same for each
// worker count (0, 1 and 2 by default), shuffled, and resumed mid-epoch.
void expect_same_loader_batches(const std::shared_ptr<const SampleSource>& local,
                                const std::shared_ptr<const SampleSource>& remote, int64_t prefetch_blocks = 2,
                                const std::vector<int64_t>& worker_counts = {0, 1, 2}) {
  const auto local_data = make_image_dataset(local, random_steps());
  const auto remote_data = make_image_dataset(remote, random_steps());
  for (const int64_t workers : worker_counts) {
    SCOPED_TRACE("workers " + std::to_string(workers));
    const LoaderOptions options = LoaderOptions()
                                      .batch_size(5)
                                      .shuffle(true)
                                      .num_workers(workers)
                                      .seed(11 + static_cast<uint64_t>(workers))
                                      .prefetch_blocks(prefetch_blocks);
    testing::expect_same_run(testing::run_loader(local_data, options), testing::run_loader(remote_data, options));
  }
}

std::string after(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0 ? text.substr(prefix.size()) : "(not under it) " + text;
}

void expect_same_shards(const TarShardSource& local, const TarShardSource& remote) {
  ASSERT_EQ(remote.size(), local.size());
  EXPECT_EQ(remote.labels(), local.labels());
  EXPECT_EQ(remote.classes(), local.classes());
  EXPECT_EQ(remote.shuffle_blocks(), local.shuffle_blocks());
  for (int64_t i = 0; i < local.size(); ++i) {
    const auto& a = local.entries()[static_cast<size_t>(i)];
    const auto& b = remote.entries()[static_cast<size_t>(i)];
    EXPECT_EQ(std::tie(a.shard, a.offset, a.size, a.label, a.member),
              std::tie(b.shard, b.offset, b.size, b.label, b.member));
    EXPECT_EQ(remote.get(i).bytes, local.get(i).bytes) << i;
  }
}

TEST_F(RemoteDatasetTest, TarShardsByBracePatternGlobAndHttpReadAsLocalOnes) {
  const Shards& s = shards();
  const std::string brace = "train-{000000..000003}.tar";
  const TarShardSource local(expand_shard_pattern(s.local + "/" + brace));
  for (const std::string& spec : {s.url + brace, s.url + "train-*.tar", s.url + "train-00000[0-3].tar"}) {
    SCOPED_TRACE(spec);
    EXPECT_EQ(image_source_kind(spec), ImageSourceKind::kTarShards);
    const auto source = open_image_source(spec);
    const auto* remote = dynamic_cast<const TarShardSource*>(source.get());
    ASSERT_NE(remote, nullptr);
    ASSERT_EQ(remote->shards().size(), static_cast<size_t>(kShards));
    for (int k = 0; k < kShards; ++k) {
      EXPECT_EQ(after(remote->shards()[k], s.url), "train-00000" + std::to_string(k) + ".tar");
    }
    expect_same_shards(local, *remote);
  }
  // Over http(s): a brace pattern expands; a glob is refused (no listing).
  const std::string served = testing::serve_dir(s.local, "shards");
  const TarShardSource http(expand_shard_pattern(served + brace));
  expect_same_shards(local, http);
  const std::string glob_error = testing::error_text([&] { open_image_source(served + "train-*.tar"); });
  EXPECT_NE(glob_error.find("no listing"), std::string::npos) << glob_error;
  // A pattern that matches nothing, as a local one.
  const std::string nothing = s.url + "valid-*.tar";
  try {
    open_image_source(nothing);
    ADD_FAILURE() << "no error";
  } catch (const IoError& e) {
    EXPECT_EQ(e.code(), ENOENT);
    EXPECT_NE(std::string(e.what()).find(nothing), std::string::npos) << e.what();
  }
  // A shard that is not there names itself.
  const std::string missing = s.url + "train-000009.tar";
  const std::string why = testing::error_text([&] { TarShardSource t({missing}); });
  EXPECT_NE(why.find(missing), std::string::npos) << why;
}

TEST_F(RemoteDatasetTest, TarShardsMakeTheLocalLoaderBatches) {
  const Shards& s = shards();
  const auto local = open_image_source(s.local + "/train-*.tar");
  const auto remote = open_image_source(s.url + "train-*.tar");
  expect_same_loader_batches(local, remote);
  expect_same_loader_batches(local, remote, /*prefetch_blocks=*/0, {2});
}

TEST_F(RemoteDatasetTest, ImageFolderReadsAsTorchvisionReadsTheLocalOne) {
  const Tree& t = tree();
  const ImageFolderSource local(t.local);
  for (const std::string& root : {t.url, t.url.substr(0, t.url.size() - 1)}) {
    SCOPED_TRACE(root);
    EXPECT_EQ(image_source_kind(root), ImageSourceKind::kFolder);
    const auto source = open_image_source(root);
    const auto* remote = dynamic_cast<const ImageFolderSource*>(source.get());
    ASSERT_NE(remote, nullptr);
    EXPECT_EQ(remote->classes(), local.classes());
    EXPECT_EQ(remote->class_to_idx(), local.class_to_idx());
    ASSERT_EQ(remote->samples().size(), local.samples().size());
    const std::string local_root = t.local + "/", remote_root = root.back() == '/' ? root : root + "/";
    for (size_t i = 0; i < local.samples().size(); ++i) {
      EXPECT_EQ(after(remote->samples()[i].first, remote_root), after(local.samples()[i].first, local_root));
      EXPECT_EQ(remote->samples()[i].second, local.samples()[i].second);
      EXPECT_EQ(remote->get(static_cast<int64_t>(i)).bytes, local.get(static_cast<int64_t>(i)).bytes);
    }
  }
  EXPECT_EQ(local.classes(), (std::vector<std::string>{".hidden", "cat", "dog", "dog-x"}));
  expect_same_loader_batches(std::make_shared<ImageFolderSource>(t.local), open_image_source(t.url));

  // A folder with nothing under it, and one over http (no listing).
  try {
    ImageFolderSource missing(t.url + "no-such-class/");
    ADD_FAILURE() << "no error";
  } catch (const IoError& e) {
    EXPECT_EQ(e.code(), ENOENT);
  }
  const std::string served = testing::serve_dir(t.local, "tree");
  const std::string http_error = testing::error_text([&] { ImageFolderSource f(served); });
  EXPECT_NE(http_error.find("no listing"), std::string::npos) << http_error;
}

TEST_F(RemoteDatasetTest, HuggingFaceImageParquetReadsAsTheLocalFiles) {
  const std::string hf = testing::test_data_dir() + "/images/hf";
  const std::string url = testing::upload_dir(hf, "hf");
  for (const auto& [local_spec, remote_spec] :
       std::vector<std::pair<std::string, std::string>>{{hf + "/plain.parquet", url + "plain.parquet"},
                                                        {hf + "/train", url + "train"},
                                                        {hf + "/train/*.parquet", url + "train/*.parquet"}}) {
    SCOPED_TRACE(remote_spec);
    EXPECT_EQ(image_source_kind(remote_spec), ImageSourceKind::kParquet);
    const auto local = open_image_source(local_spec);
    const auto remote = open_image_source(remote_spec);
    ASSERT_NE(dynamic_cast<const ParquetImageSource*>(remote.get()), nullptr);
    ASSERT_EQ(remote->size(), local->size());
    EXPECT_EQ(remote->labels(), local->labels());
    EXPECT_EQ(remote->class_names(), local->class_names());
    EXPECT_EQ(remote->shuffle_blocks(), local->shuffle_blocks());
    for (int64_t i = 0; i < local->size(); ++i) EXPECT_EQ(remote->get(i).bytes, local->get(i).bytes) << i;
    expect_same_loader_batches(local, remote);
  }
}

TEST_F(RemoteDatasetTest, LoaderFetchesShardsAheadInFewRequests) {
  const Shards& s = shards();
  through_proxy();
  const auto source = std::make_shared<TarShardSource>(expand_shard_pattern(s.url + "train-{000000..000003}.tar"));
  const auto local = make_image_dataset(open_image_source(s.local + "/train-*.tar"), random_steps());
  const auto dataset = make_image_dataset(source, random_steps());
  const int64_t samples = source->size();
  // Without fetching ahead, first (before any range of these shards is held in memory): every sample is a request
  // of its own, and the batches are the same.
  {
    const LoaderOptions none = LoaderOptions().batch_size(4).shuffle(true).num_workers(2).seed(5).prefetch_blocks(0);
    testing::proxy_reset("s3");
    Loader loader(dataset, none);
    const std::vector<Example> got = testing::epoch_batches(loader);
    int64_t gets = 0;
    for (const auto& e : testing::proxy_log("s3")) gets += e["method"] == "GET" ? 1 : 0;
    EXPECT_GE(gets, samples);
    Loader reference(local, none);
    EXPECT_TRUE(testing::same_batches(testing::epoch_batches(reference), got));
  }
  for (const int64_t ahead : {int64_t{4}, int64_t{1}}) {
    SCOPED_TRACE("prefetch_blocks " + std::to_string(ahead));
    const LoaderOptions options =
        LoaderOptions().batch_size(4).shuffle(true).num_workers(2).seed(5).prefetch_blocks(ahead);
    testing::proxy_reset("s3");
    const remote::RemoteStats before = remote::stats();
    Loader loader(dataset, options);
    const std::vector<Example> got = testing::epoch_batches(loader);
    const nlohmann::json log = testing::proxy_log("s3");
    const int64_t requests = remote::stats().requests - before.requests;
    int64_t gets = 0;
    for (const auto& e : log) gets += e["method"] == "GET" ? 1 : 0;
    // A shard's samples come in one merged range (or a few): far fewer requests than samples.
    EXPECT_LE(gets, 2 * kShards) << log.dump();
    EXPECT_LT(requests, samples / 4);
    Loader reference(local, options);
    EXPECT_TRUE(testing::same_batches(testing::epoch_batches(reference), got));
  }
}

}  // namespace
}  // namespace feedline
