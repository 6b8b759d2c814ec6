// The loader's sampler: the same batches for any worker count, ranks that share an epoch as DistributedSampler
// does, state dicts that resume at the same batch (on another world size too) or are refused naming what differs,
// and the order told to the dataset ahead of its reads.
#include "feedline/loader/loader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "dataset/read_ahead.h"
#include "feedline/io/error.h"
#include "loader/loader_support.h"

namespace feedline {
namespace {

using feedline::testing::drain;
using feedline::testing::flatten;
using feedline::testing::IndexDataset;
using feedline::testing::iota;

// ------------------------------------------------------------------------------------------ the sampler

TEST(Loader, SameSeedSameBatchesForAnyWorkerCount) {
  auto ds = std::make_shared<IndexDataset>(123, false, 200);
  std::vector<std::vector<int64_t>> reference;
  for (int64_t workers : {0, 1, 2, 4}) {
    for (bool persistent : {false, true}) {
      Loader loader(ds, LoaderOptions(16).shuffle(true).seed(11).num_workers(workers).persistent_workers(persistent));
      std::vector<std::vector<int64_t>> epochs{drain(loader), drain(loader), drain(loader)};
      for (const auto& e : epochs) {
        auto sorted = e;
        std::sort(sorted.begin(), sorted.end());
        EXPECT_EQ(sorted, iota(123)) << "every index exactly once; " << workers << " workers";
      }
      if (reference.empty()) {
        reference = epochs;
        continue;
      }
      EXPECT_EQ(epochs, reference) << workers << " workers, persistent " << persistent;
    }
  }
  // Epochs differ from each other and from the identity.
  EXPECT_NE(reference[0], reference[1]);
  EXPECT_NE(reference[1], reference[2]);
  EXPECT_NE(reference[0], iota(123));
  // The batches follow the sampler; another seed gives another order.
  Loader loader(ds, LoaderOptions(16).shuffle(true).seed(11));
  EXPECT_EQ(loader.epoch_indices(0), reference[0]);
  EXPECT_EQ(loader.epoch_indices(2), reference[2]);
  Loader other_seed(ds, LoaderOptions(16).shuffle(true).seed(12));
  EXPECT_NE(other_seed.epoch_indices(0), reference[0]);
}

TEST(Loader, SamplerIsOurOwnAndStable) {
  // Pinned values: they must not move with LibTorch's version, the standard library or global RNG state.
  at::manual_seed(1234);
  auto ds = std::make_shared<IndexDataset>(10);
  Loader loader(ds, LoaderOptions(4).shuffle(true).seed(42));
  const auto first = loader.epoch_indices(0);
  at::manual_seed(99);
  (void)torch::rand({8});
  EXPECT_EQ(loader.epoch_indices(0), first);
  EXPECT_EQ(Loader(ds, LoaderOptions(4).shuffle(true).seed(42)).epoch_indices(0), first);
  // mt19937_64 and our bounded draw are fully specified, so these hold on every platform and release.
  EXPECT_EQ(first, (std::vector<int64_t>{9, 6, 2, 0, 1, 4, 3, 8, 5, 7}));
  EXPECT_EQ(loader.epoch_indices(1), (std::vector<int64_t>{5, 4, 1, 3, 0, 2, 7, 8, 6, 9}));
}

TEST(Loader, WithoutShuffleIndicesAreInOrderAndDropLastCounts) {
  auto ds = std::make_shared<IndexDataset>(10);
  for (int64_t workers : {0, 2}) {
    Loader keep(ds, LoaderOptions(4).num_workers(workers));
    EXPECT_EQ(keep.batches_per_epoch(), 3);
    EXPECT_EQ(drain(keep), iota(10));
    Loader drop(ds, LoaderOptions(4).drop_last(true).num_workers(workers));
    EXPECT_EQ(drop.batches_per_epoch(), 2);
    auto epoch = drop.epoch();
    std::vector<int64_t> sizes;
    for (auto& b : epoch) sizes.push_back(b.data.size(0));
    EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4}));
    EXPECT_EQ(epoch.stats().batches, 2);
    EXPECT_EQ(epoch.stats().samples, 8);
    EXPECT_FALSE(epoch.next().has_value());  // stays finished
  }
  // A batch larger than the dataset: one short batch, or none with drop_last.
  Loader one(ds, LoaderOptions(64).num_workers(2));
  EXPECT_EQ(drain(one), iota(10));
  Loader none(ds, LoaderOptions(64).drop_last(true).num_workers(2));
  EXPECT_EQ(none.batches_per_epoch(), 0);
  EXPECT_TRUE(drain(none).empty());
  // An empty dataset: an empty epoch, not a hang.
  Loader empty(std::make_shared<IndexDataset>(0), LoaderOptions(4).num_workers(3).persistent_workers(true));
  EXPECT_EQ(empty.batches_per_epoch(), 0);
  EXPECT_TRUE(drain(empty).empty());
  EXPECT_TRUE(drain(empty).empty());
}

// Rank sharding, as DistributedSampler shards: every rank's share of an epoch is every world_size-th index of the
// one global permutation, padded by wrapping (or cut, with drop_last) so that every rank makes as many batches.
TEST(Loader, RanksShareEachEpochAsDistributedSamplerDoes) {
  for (const int64_t n : {12, 103, 3}) {
    auto ds = std::make_shared<IndexDataset>(n);
    for (const int64_t world : {1, 2, 4}) {
      for (const bool drop_last : {false, true}) {
        for (const int64_t epoch : {0, 1}) {
          const auto options = [&](int64_t rank) {
            return LoaderOptions(5).shuffle(true).seed(7).drop_last(drop_last).rank(rank).world_size(world);
          };
          const std::vector<int64_t> global = Loader(ds, LoaderOptions(5).shuffle(true).seed(7)).epoch_indices(epoch);
          const int64_t share = drop_last ? n / world : (n + world - 1) / world;
          std::vector<int64_t> seen;
          int64_t batches = -1;
          for (int64_t rank = 0; rank < world; ++rank) {
            Loader loader(ds, options(rank).num_workers(rank % 2));
            const auto mine = loader.epoch_indices(epoch);
            ASSERT_EQ(static_cast<int64_t>(mine.size()), share) << n << " " << world << " " << drop_last;
            for (int64_t i = 0; i < share; ++i) {
              EXPECT_EQ(mine[static_cast<size_t>(i)], global[static_cast<size_t>((rank + i * world) % n)]);
            }
            // Every rank makes the same number of batches, and they hold its share in order.
            if (batches < 0) batches = loader.batches_per_epoch();
            EXPECT_EQ(loader.batches_per_epoch(), batches);
            loader.set_epoch(epoch);
            const auto drained = drain(loader);
            const int64_t kept = drop_last ? share / 5 * 5 : share;
            EXPECT_EQ(drained, std::vector<int64_t>(mine.begin(), mine.begin() + kept));
            seen.insert(seen.end(), mine.begin(), mine.end());
          }
          std::sort(seen.begin(), seen.end());
          const auto distinct = std::set<int64_t>(seen.begin(), seen.end());
          if (drop_last) {
            // Disjoint: no index twice, and only the tail of the permutation left out.
            EXPECT_EQ(distinct.size(), seen.size());
            EXPECT_EQ(static_cast<int64_t>(seen.size()), n / world * world);
          } else {
            // Every index at least once; only the padding (fewer than world of them) repeats.
            EXPECT_EQ(static_cast<int64_t>(distinct.size()), n);
            EXPECT_LT(static_cast<int64_t>(seen.size()) - n, world);
          }
          if (n % world == 0) EXPECT_EQ(seen, iota(n)) << "each index exactly once";
        }
      }
    }
  }
}

TEST(Loader, UnevenShardsHoldEachIndexExactlyOnce) {
  for (const int64_t n : {12, 103, 3, 1}) {
    auto ds = std::make_shared<IndexDataset>(n);
    for (const int64_t world : {1, 2, 4}) {
      std::vector<int64_t> seen;
      for (int64_t rank = 0; rank < world; ++rank) {
        Loader loader(ds, LoaderOptions(5).shuffle(true).seed(9).rank(rank).world_size(world).even_shards(false));
        const auto mine = drain(loader);
        EXPECT_EQ(static_cast<int64_t>(mine.size()), n > rank ? (n - rank + world - 1) / world : 0);
        EXPECT_EQ(loader.batches_per_epoch(), (static_cast<int64_t>(mine.size()) + 4) / 5);
        seen.insert(seen.end(), mine.begin(), mine.end());
      }
      std::sort(seen.begin(), seen.end());
      EXPECT_EQ(seen, iota(n)) << n << " samples, " << world << " ranks";
    }
  }
}

TEST(Loader, StateDictResumesAtTheSameBatchForAnyWorkerCount) {
  auto ds = std::make_shared<IndexDataset>(53);
  const auto options = LoaderOptions(4).shuffle(true).seed(11).rank(1).world_size(2);
  Loader reference(ds, options);
  reference.set_epoch(2);
  const auto whole = drain(reference);
  for (const int64_t taken : {0, 3, 7}) {
    for (const int64_t workers : {0, 3}) {
      Loader first(ds, LoaderOptions(options).num_workers(workers).prefetch_factor(4));
      first.set_epoch(2);
      LoaderState state;
      {
        auto epoch = first.epoch();
        for (int64_t k = 0; k < taken; ++k) ASSERT_TRUE(epoch.next().has_value());
        // Workers have made batches past this point; the state counts only those handed out.
        state = first.state_dict();
      }
      EXPECT_EQ(state.epoch, 2);
      EXPECT_EQ(state.batch, taken);
      for (const int64_t resumed_workers : {0, 2}) {
        Loader second(ds, LoaderOptions(options).num_workers(resumed_workers).rank(0));
        second.load_state_dict(state);
        EXPECT_EQ(second.state_dict().batch, taken);
        // Rank 0 of the same job: its share of the same epoch, from the same batch on.
        Loader rank0(ds, LoaderOptions(options).rank(0));
        rank0.set_epoch(2);
        const auto all0 = drain(rank0);
        const auto from0 = std::min<size_t>(all0.size(), static_cast<size_t>(taken * 4));
        EXPECT_EQ(drain(second), std::vector<int64_t>(all0.begin() + from0, all0.end()));
        // The next epoch starts at its beginning.
        EXPECT_EQ(second.state_dict().epoch, 3);
        EXPECT_EQ(second.state_dict().batch, 0);
      }
      Loader same_rank(ds, LoaderOptions(options).num_workers(2));
      same_rank.load_state_dict(state);
      const auto from = std::min<size_t>(whole.size(), static_cast<size_t>(taken * 4));
      EXPECT_EQ(drain(same_rank), std::vector<int64_t>(whole.begin() + from, whole.end()));
    }
  }
}

TEST(Loader, StateDictOfAnotherRunIsRefusedNamingWhatDiffers) {
  auto ds = std::make_shared<IndexDataset>(30);
  Loader loader(ds, LoaderOptions(4).shuffle(true).seed(1));
  const LoaderState good = loader.state_dict();
  const auto refused = [&](LoaderState s, const char* words) {
    try {
      loader.load_state_dict(s);
      ADD_FAILURE() << "taken: " << words;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  LoaderState s = good;
  s.seed = 2;
  refused(s, "seed 2");
  s = good;
  s.world_size = 2;
  refused(s, "global batch of 8 (2 ranks x 4)");
  s = good;
  s.batch_size = 8;
  refused(s, "batch size 8");
  s = good;
  s.samples = 31;
  refused(s, "dataset of size 31");
  s = good;
  s.batch = 9;
  refused(s, "batch 9");
  auto live = loader.epoch();
  refused(good, "while an epoch is live");
}

// The batches of epoch `epoch` of a job of `world` ranks with global batch `global`, each as the sorted union of
// the ranks' shares, from batch `from` on (a loader resumed there when `state` is given).
std::vector<std::vector<int64_t>> global_batches(const std::shared_ptr<const Dataset>& ds, int64_t world,
                                                 int64_t global, int64_t epoch, const LoaderState* state = nullptr) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t rank = 0; rank < world; ++rank) {
    Loader loader(ds, LoaderOptions(global / world).shuffle(true).seed(5).rank(rank).world_size(world));
    if (state != nullptr) {
      loader.load_state_dict(*state);
    } else {
      loader.set_epoch(epoch);
    }
    auto e = loader.epoch();
    size_t k = 0;
    for (auto& batch : e) {
      if (out.size() <= k) out.emplace_back();
      const auto v = flatten(batch);
      out[k].insert(out[k].end(), v.begin(), v.end());
      ++k;
    }
  }
  for (auto& b : out) std::sort(b.begin(), b.end());
  return out;
}

class BlockIndexDataset : public IndexDataset {
 public:
  using IndexDataset::IndexDataset;
  std::vector<int64_t> shuffle_blocks() const override { return {10, 10, 10, 10}; }
};

// A dataset that records what the loader tells it it will read.
class ReadAheadIndexDataset : public IndexDataset {
 public:
  using IndexDataset::IndexDataset;
  std::vector<int64_t> shuffle_blocks() const override { return {10, 10, 10, 10}; }
  void will_read(const std::vector<int64_t>& order, const ReadAhead& ahead) const override {
    std::lock_guard<std::mutex> lock(mu);
    orders.push_back(order);
    aheads.push_back(ahead);
  }
  mutable std::mutex mu;
  mutable std::vector<std::vector<int64_t>> orders;
  mutable std::vector<ReadAhead> aheads;
};

TEST(Loader, TellsTheDatasetTheOrderItWillReadFromWhereTheEpochStarts) {
  auto ds = std::make_shared<ReadAheadIndexDataset>(40);
  Loader loader(ds, LoaderOptions(4).shuffle(true).seed(3).rank(1).world_size(2).num_workers(2).prefetch_blocks(3));
  const auto read = drain(loader);
  ASSERT_EQ(ds->orders.size(), 1u);
  EXPECT_EQ(ds->orders[0], read) << "the order told is the order read";
  EXPECT_EQ(ds->aheads[0].blocks, 3);
  EXPECT_EQ(ds->aheads[0].samples, 3 * 4);
  // Resumed after two batches: the rest of the epoch, from the third batch on.
  LoaderState state;
  {
    auto e = loader.epoch();
    ASSERT_TRUE(e.next().has_value());
    ASSERT_TRUE(e.next().has_value());
    state = loader.state_dict();
  }
  Loader resumed(ds, LoaderOptions(4).shuffle(true).seed(3).rank(1).world_size(2).prefetch_blocks(3));
  resumed.load_state_dict(state);
  const auto rest = drain(resumed);
  EXPECT_EQ(ds->orders.back(), rest);
  EXPECT_EQ(rest.size(), 20u - 8u);
  // prefetch_blocks 0: nothing is told; a negative count is refused.
  const size_t told = ds->orders.size();
  Loader none(ds, LoaderOptions(4).prefetch_blocks(0));
  drain(none);
  EXPECT_EQ(ds->orders.size(), told);
  EXPECT_THROW(Loader(ds, LoaderOptions(4).prefetch_blocks(-1)), InvalidArgument);
}

TEST(ReadAhead, FetchesBlocksInTheOrderTheyComeAheadOfThoseRead) {
  std::vector<int64_t> fetched;
  std::map<int64_t, std::vector<int64_t>> told;
  std::mutex mu;
  detail::ReadAheadFetcher fetcher([](int64_t index) { return index / 10; },
                                   [&](int64_t block, const std::vector<int64_t>& samples) {
                                     std::lock_guard<std::mutex> lock(mu);
                                     fetched.push_back(block);
                                     told[block] = samples;
                                   });
  // Blocks in the order their first sample comes: 3, 0, 2, 1; each told its samples in the order, once each.
  const std::vector<int64_t> order = {31, 35, 2, 30, 5, 21, 1, 11, 20, 12, 30};
  fetcher.start(order, 2);
  EXPECT_EQ(fetched, (std::vector<int64_t>{3, 0, 2})) << "the block being read and 2 more";
  EXPECT_EQ(told[3], (std::vector<int64_t>{31, 35, 30}));
  EXPECT_EQ(told[0], (std::vector<int64_t>{2, 5, 1}));
  for (const int64_t i : {31, 35, 30}) fetcher.read(i);
  EXPECT_EQ(fetched, (std::vector<int64_t>{3, 0, 2})) << "reads still in the first block";
  fetcher.read(2);
  EXPECT_EQ(fetched, (std::vector<int64_t>{3, 0, 2, 1})) << "a read reached the second block: one more";
  for (const int64_t i : {5, 21, 1, 11, 20, 12, 30}) fetcher.read(i);
  EXPECT_EQ(fetched.size(), 4u) << "each block once";
  // Ahead 0: nothing is fetched.
  fetched.clear();
  fetcher.start(order, 0);
  for (const int64_t i : order) fetcher.read(i);
  EXPECT_TRUE(fetched.empty());
  // From many threads at once, every block is fetched once.
  fetched.clear();
  std::vector<int64_t> big;
  for (int64_t i = 0; i < 1000; ++i) big.push_back((i * 37) % 1000);
  fetcher.start(big, 3);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = static_cast<size_t>(t); i < big.size(); i += 4) fetcher.read(big[i]);
    });
  }
  for (auto& th : threads) th.join();
  std::sort(fetched.begin(), fetched.end());
  std::vector<int64_t> all(100);
  for (int64_t b = 0; b < 100; ++b) all[static_cast<size_t>(b)] = b;
  EXPECT_EQ(fetched, all);
}

TEST(Loader, ResumesOnAnotherWorldSizeWithTheSameGlobalBatch) {
  auto ds = std::make_shared<IndexDataset>(48);
  const auto whole = global_batches(ds, 1, 8, 3);
  ASSERT_EQ(whole.size(), 6u);
  for (const int64_t world : {2, 4, 8}) EXPECT_EQ(global_batches(ds, world, 8, 3), whole) << world << " ranks";
  // Saved by a job of 2 ranks after 2 batches of epoch 3, resumed on 4 ranks and on 1.
  Loader saved(ds, LoaderOptions(4).shuffle(true).seed(5).rank(1).world_size(2));
  saved.set_epoch(3);
  LoaderState state;
  {
    auto e = saved.epoch();
    ASSERT_TRUE(e.next().has_value());
    ASSERT_TRUE(e.next().has_value());
    state = saved.state_dict();
  }
  const std::vector<std::vector<int64_t>> rest(whole.begin() + 2, whole.end());
  EXPECT_EQ(global_batches(ds, 4, 8, 3, &state), rest);
  EXPECT_EQ(global_batches(ds, 1, 8, 3, &state), rest);
  // Another global batch is refused, and so is another world size for a dataset read in blocks.
  Loader other(ds, LoaderOptions(2).shuffle(true).seed(5).world_size(3));
  try {
    other.load_state_dict(state);
    ADD_FAILURE() << "another global batch was taken";
  } catch (const InvalidArgument& e) {
    const std::string words = "global batch of 8 (2 ranks x 4), and this loader's is 6 (3 x 2)";
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
  auto blocks = std::make_shared<BlockIndexDataset>(40);
  Loader block_saved(blocks, LoaderOptions(4).shuffle(true).seed(5).world_size(2));
  Loader block_resumed(blocks, LoaderOptions(8).shuffle(true).seed(5));
  try {
    block_resumed.load_state_dict(block_saved.state_dict());
    ADD_FAILURE() << "a dataset read in blocks resumed on another world size";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("resume it on 2 ranks"), std::string::npos) << e.what();
  }
  Loader block_same(blocks, LoaderOptions(4).shuffle(true).seed(5).rank(1).world_size(2));
  EXPECT_NO_THROW(block_same.load_state_dict(block_saved.state_dict()));
}

TEST(Loader, SetEpochChoosesThePermutation) {
  auto ds = std::make_shared<IndexDataset>(40);
  const auto options = LoaderOptions(8).shuffle(true).seed(3).rank(1).world_size(2);
  Loader a(ds, options);
  const auto first = drain(a);
  const auto second = drain(a);
  EXPECT_NE(first, second);  // a fresh permutation each epoch
  Loader b(ds, options);
  b.set_epoch(1);
  EXPECT_EQ(drain(b), second);
  b.set_epoch(0);
  EXPECT_EQ(drain(b), first);
  EXPECT_THROW(b.set_epoch(-1), InvalidArgument);
  for (const auto& [rank, world] : {std::pair<int64_t, int64_t>{2, 2}, {-1, 2}, {0, 0}}) {
    EXPECT_THROW(Loader(ds, LoaderOptions(8).rank(rank).world_size(world)), InvalidArgument) << rank << " " << world;
  }
}

}  // namespace
}  // namespace feedline
