#include "feedline/dataset/stream_dataset.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/idx.h"
#include "feedline/loader/loader.h"
#include "feedline/io/parquet.h"
#include "test_paths.h"

namespace feedline {
namespace {

// 50 4x4 images with distinct pixels and labels, in row groups of 7 rows (the last holds 1).
std::string stream_file(const std::string& name) {
  ImageSplit s;
  s.count = 50;
  s.rows = s.cols = 4;
  for (int64_t i = 0; i < s.count * 16; ++i) s.images.push_back(static_cast<uint8_t>((i * 7) % 251));
  for (int64_t i = 0; i < s.count; ++i) s.labels.push_back(static_cast<uint8_t>(i % 10));
  const std::string path = testing::scratch_dir(name) + "/t.parquet";
  parquet::WriteOptions options;
  options.row_group_rows = 7;
  parquet::write_table(path, image_split_to_table(s), options);
  return path;
}

ParquetStreamOptions small_options(int64_t cached = 2) {
  ParquetStreamOptions o;
  o.layout.height = o.layout.width = 4;
  o.cached_row_groups = cached;
  return o;
}

TEST(ParquetStream, ServesWhatTheWholeTableDecodesTo) {
  const std::string path = stream_file("stream_values");
  ImageTableLayout layout = small_options().layout;
  const ImageTensors whole = decode_image_table(parquet::read_table(path), layout);
  ParquetStreamDataset stream(path, small_options());
  ASSERT_EQ(stream.size(), 50);
  EXPECT_EQ(stream.shuffle_blocks(), (std::vector<int64_t>{7, 7, 7, 7, 7, 7, 7, 1}));
  std::mt19937 gen(3);
  std::vector<int64_t> indices;
  for (int i = 0; i < 40; ++i) indices.push_back(static_cast<int64_t>(gen() % 50));
  const Example batch = stream.get_batch(indices);
  const auto idx = torch::tensor(indices, torch::kInt64);
  EXPECT_TRUE(torch::equal(batch.data, whole.images.index_select(0, idx)));
  EXPECT_TRUE(torch::equal(batch.target, whole.labels.index_select(0, idx)));
  const Example one = stream.get(49);
  EXPECT_TRUE(torch::equal(one.data, whole.images[49]));
  EXPECT_EQ(one.target.item<int64_t>(), whole.labels[49].item<int64_t>());
  EXPECT_THROW(stream.get(50), InvalidArgument);

  ParquetStreamOptions bytes = small_options();
  bytes.as_uint8 = true;
  bytes.limit = 10;
  ParquetStreamDataset raw(path, bytes);
  EXPECT_EQ(raw.size(), 10);
  EXPECT_EQ(raw.shuffle_blocks(), (std::vector<int64_t>{7, 3, 0, 0, 0, 0, 0, 0}));
  const ImageTensors whole_u8 = decode_image_table(parquet::read_table(path), layout, /*as_uint8=*/true);
  EXPECT_TRUE(torch::equal(raw.get_batch({9, 0, 8}).data, whole_u8.images.index_select(0, torch::tensor({9, 0, 8}))));
  EXPECT_THROW(raw.get(10), InvalidArgument);
}

// Which row group (of 7 rows) each index of an epoch's order falls in, run by run.
int64_t runs_of_row_groups(const std::vector<int64_t>& order) {
  int64_t runs = 0;
  for (size_t i = 0; i < order.size(); ++i) runs += i == 0 || order[i] / 7 != order[i - 1] / 7;
  return runs;
}

TEST(ParquetStream, AShuffledEpochReadsEachRowGroupOnce) {
  const std::string path = stream_file("stream_epoch");
  auto stream = std::make_shared<ParquetStreamDataset>(path, small_options(/*cached=*/2));
  const int64_t reads_before = stream->row_group_reads();
  Loader loader(stream, LoaderOptions(8).shuffle(true).seed(5));
  const std::vector<int64_t> order = loader.epoch_indices(0);
  EXPECT_EQ(runs_of_row_groups(order), 8) << "the order visits the row groups one at a time";
  EXPECT_EQ(std::set<int64_t>(order.begin(), order.end()).size(), 50u);
  EXPECT_NE(order, loader.epoch_indices(1));
  std::vector<int64_t> seen;
  auto epoch = loader.epoch();
  while (auto batch = epoch.next()) {
    for (int64_t i = 0; i < batch->target.size(0); ++i) seen.push_back(batch->target[i].item<int64_t>());
  }
  ASSERT_EQ(seen.size(), 50u);
  // Each row group read at most once in the epoch (the first one may have been read when the dataset was made and
  // evicted before its turn).
  EXPECT_LE(stream->row_group_reads() - reads_before, 8);

  // The same batches for any worker count, the cache shared by the workers.
  std::vector<torch::Tensor> batches[2];
  for (const int workers : {0, 3}) {
    auto fresh = std::make_shared<ParquetStreamDataset>(path, small_options(/*cached=*/1));
    Loader l(fresh, LoaderOptions(8).shuffle(true).seed(9).num_workers(workers));
    auto e = l.epoch();
    while (auto b = e.next()) batches[workers == 0 ? 0 : 1].push_back(b->data);
  }
  ASSERT_EQ(batches[0].size(), batches[1].size());
  for (size_t i = 0; i < batches[0].size(); ++i) EXPECT_TRUE(torch::equal(batches[0][i], batches[1][i])) << i;
}

TEST(ParquetStream, EachRankReadsOnlyTheRowGroupsOfItsShare) {
  const std::string path = stream_file("stream_ranks");
  for (const bool even : {true, false}) {
    for (const int64_t epoch : {0, 1, 2}) {
      std::vector<int64_t> seen;
      for (int64_t rank = 0; rank < 2; ++rank) {
        auto stream = std::make_shared<ParquetStreamDataset>(path, small_options(/*cached=*/1));
        Loader loader(stream, LoaderOptions(8).shuffle(true).seed(5).rank(rank).world_size(2).even_shards(even));
        loader.set_epoch(epoch);
        const int64_t reads_before = stream->row_group_reads();
        auto e = loader.epoch();
        int64_t samples = 0;
        while (auto batch = e.next()) {
          samples += batch->target.size(0);
          for (int64_t i = 0; i < batch->data.size(0); ++i) {
            // Which of the 50 distinct images this is: its first pixel is (index * 16 * 7) % 251 / 255.
            const auto first = static_cast<int64_t>(std::lround(batch->data[i].flatten()[0].item<double>() * 255));
            for (int64_t k = 0; k < 50; ++k) {
              if ((k * 16 * 7) % 251 == first) seen.push_back(k);
            }
          }
        }
        EXPECT_EQ(samples, 25);
        // 25 of the 50 rows: 4 or 5 of the 8 row groups, where a strided share would read all 8.
        EXPECT_LE(stream->row_group_reads() - reads_before, 5) << "rank " << rank << ", epoch " << epoch;
      }
      std::sort(seen.begin(), seen.end());
      std::vector<int64_t> all(50);
      for (int64_t k = 0; k < 50; ++k) all[static_cast<size_t>(k)] = k;
      EXPECT_EQ(seen, all) << "every row once between the two ranks, epoch " << epoch;
    }
  }
}

TEST(ParquetStream, ThreadsSharingOneCachedRowGroupGetTheirOwnRows) {
  const std::string path = stream_file("stream_threads");
  const ImageTensors whole = decode_image_table(parquet::read_table(path), small_options().layout);
  ParquetStreamDataset stream(path, small_options(/*cached=*/1));
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 200; ++k) {
        const int64_t i = (t * 13 + k * 7) % 50;
        wrong[t] += !torch::equal(stream.get(i).data, whole.images[i]);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong, (std::vector<int>{0, 0, 0, 0}));
}

// The footer is parsed once, when the dataset is made: every row group read after goes through the file opened
// then, so the dataset serves every row even once its path is gone.
TEST(ParquetStream, ReadsEveryRowGroupThroughTheFileItOpened) {
  const std::string path = stream_file("stream_opened");
  const ImageTensors whole = decode_image_table(parquet::read_table(path), small_options().layout);
  ParquetStreamDataset stream(path, small_options(/*cached=*/1));
  std::filesystem::remove(path);
  std::vector<int64_t> all(50);
  for (int64_t i = 0; i < 50; ++i) all[static_cast<size_t>(i)] = i;
  const Example batch = stream.get_batch(all);
  EXPECT_TRUE(torch::equal(batch.data, whole.images));
  EXPECT_TRUE(torch::equal(batch.target, whole.labels));
  EXPECT_GE(stream.row_group_reads(), 8);
}

// The 50 images of stream_file() as three files of 20, 20 and 10 rows in a folder (row groups of 7: 7, 7, 6 and
// 7, 7, 6 and 7, 3), with a file that readers of such folders leave out.
std::string stream_folder(const std::string& name) {
  const Table whole = parquet::read_table(stream_file(name + "_whole"));
  const std::string dir = testing::scratch_dir(name);
  parquet::WriteOptions options;
  options.row_group_rows = 7;
  std::filesystem::create_directories(dir + "/a");
  std::filesystem::create_directories(dir + "/more");
  parquet::write_table(dir + "/a/part-0.parquet", slice(whole, 0, 20), options);
  parquet::write_table(dir + "/more/part-1.parquet", slice(whole, 20, 40), options);
  parquet::write_table(dir + "/more/part-2.parquet", slice(whole, 40, 50), options);
  parquet::write_table(dir + "/_part-3.parquet", slice(whole, 0, 1), options);
  return dir;
}

// Which of the 50 distinct images each of a batch's is: image k's first pixel is (k * 16 * 7) % 251 / 255.
std::vector<int64_t> image_numbers(const torch::Tensor& images) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < images.size(0); ++i) {
    const auto first = static_cast<int64_t>(std::lround(images[i].flatten()[0].item<double>() * 255));
    for (int64_t k = 0; k < 50; ++k) {
      if ((k * 16 * 7) % 251 == first) out.push_back(k);
    }
  }
  return out;
}

TEST(ParquetStream, StreamsManyFilesAsOneDatasetEveryRowOnceAnEpoch) {
  const std::string dir = stream_folder("stream_folder");
  const ImageTensors whole = decode_image_table(parquet::read_table(dir + "_whole/t.parquet"), small_options().layout);
  auto stream = std::make_shared<ParquetStreamDataset>(dir, small_options(/*cached=*/2));
  ASSERT_EQ(stream->size(), 50);
  EXPECT_EQ(stream->shuffle_blocks(), (std::vector<int64_t>{7, 7, 6, 7, 7, 6, 7, 3}));
  std::vector<int64_t> all(50);
  for (int64_t i = 0; i < 50; ++i) all[static_cast<size_t>(i)] = i;
  const Example batch = stream->get_batch(all);
  EXPECT_TRUE(torch::equal(batch.data, whole.images));
  EXPECT_TRUE(torch::equal(batch.target, whole.labels));

  // Loaded by the training thread, an epoch reads each row group at most once; by two workers, every row still
  // comes once (how often they read a row group again depends on how the threads meet a cache of two).
  for (const int workers : {0, 2}) {
    Loader loader(stream, LoaderOptions(8).shuffle(true).seed(5).num_workers(workers));
    for (const int64_t epoch : {0, 1}) {
      loader.set_epoch(epoch);
      const int64_t reads_before = stream->row_group_reads();
      std::vector<int64_t> seen;
      auto e = loader.epoch();
      while (auto b = e.next()) {
        for (const int64_t k : image_numbers(b->data)) seen.push_back(k);
      }
      std::sort(seen.begin(), seen.end());
      EXPECT_EQ(seen, all) << "epoch " << epoch << ", " << workers << " workers";
      // (Fewer than 8 where the epoch starts on a row group the cache still holds.)
      if (workers == 0) EXPECT_LE(stream->row_group_reads() - reads_before, 8) << "epoch " << epoch;
    }
  }

  // Two ranks: each a stretch of the row groups, across files, every row once between them.
  std::vector<int64_t> seen;
  for (int64_t rank = 0; rank < 2; ++rank) {
    auto shard = std::make_shared<ParquetStreamDataset>(dir, small_options(/*cached=*/1));
    Loader l(shard, LoaderOptions(8).shuffle(true).seed(5).rank(rank).world_size(2).even_shards(false));
    const int64_t reads_before = shard->row_group_reads();
    auto e = l.epoch();
    while (auto b = e.next()) {
      for (const int64_t k : image_numbers(b->data)) seen.push_back(k);
    }
    EXPECT_LT(shard->row_group_reads() - reads_before, 8) << "rank " << rank << " read every row group";
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, all);

  // One file open at a time: the others are opened again as their row groups are read, and serve the same rows.
  ParquetStreamOptions one_open = small_options(/*cached=*/1);
  one_open.max_open_files = 1;
  ParquetStreamDataset reopening(dir, one_open);
  const std::vector<int64_t> scattered = {45, 0, 25, 49, 3, 21, 44, 1, 39, 40, 19, 20};
  const Example again = reopening.get_batch(scattered);
  EXPECT_TRUE(torch::equal(again.data, whole.images.index_select(0, torch::tensor(scattered))));
  EXPECT_TRUE(torch::equal(again.target, whole.labels.index_select(0, torch::tensor(scattered))));
}

TEST(ParquetStream, RefusesFilesThatDisagreeNamingBoth) {
  const std::string dir = stream_folder("stream_disagree");
  Table other = parquet::read_table(dir + "/a/part-0.parquet");
  other.columns.pop_back();
  parquet::write_table(dir + "/more/part-1.parquet", other);
  try {
    ParquetStreamDataset(dir, small_options());
    ADD_FAILURE() << "files of different columns were taken";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(dir + "/more/part-1.parquet: has no column"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("which " + dir + "/a/part-0.parquet has"), std::string::npos) << e.what();
  }
}

// A dataset whose shuffle blocks do not add up to its size.
class WrongBlocks : public Dataset {
 public:
  int64_t size() const override { return 10; }
  Example get(int64_t i) const override { return {torch::zeros({1}), torch::tensor(i)}; }
  std::vector<int64_t> shuffle_blocks() const override { return {4, 4}; }
};

TEST(ParquetStream, ALoaderRefusesBlocksThatDoNotCoverTheDataset) {
  Loader shuffled(std::make_shared<WrongBlocks>(), LoaderOptions(4).shuffle(true));
  try {
    shuffled.epoch_indices(0);
    ADD_FAILURE() << "blocks of 8 samples taken for a dataset of 10";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("shuffle blocks hold 8 samples, not its 10"), std::string::npos) << e.what();
  }
  // Without shuffle the blocks play no part.
  Loader in_order(std::make_shared<WrongBlocks>(), LoaderOptions(4));
  EXPECT_EQ(in_order.epoch_indices(0).size(), 10u);
}

TEST(ParquetStream, RefusesWhatItCannotStreamByName) {
  const std::string path = stream_file("stream_bad");
  ParquetStreamOptions zero = small_options(0);
  EXPECT_THROW(ParquetStreamDataset(path, zero), InvalidArgument);
  try {
    ParquetStreamDataset(path + ".csv", small_options());
    ADD_FAILURE() << "a CSV path was taken";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("not a .parquet file"), std::string::npos) << e.what();
  }
  ParquetStreamOptions wrong_shape = small_options();
  wrong_shape.layout.width = 5;  // 20 features, the file has 16
  try {
    ParquetStreamDataset(path, wrong_shape);
    ADD_FAILURE() << "a wrong feature count was taken";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("expected 20"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace feedline
