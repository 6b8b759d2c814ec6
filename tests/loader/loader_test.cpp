// The loader's hard cases, provoked on purpose: out-of-order completion, exceptions in workers and in the
// consumer, leaving an epoch early, the prefetch bound, threads left behind. Where a broken loader would hang,
// the test is written so that ctest's timeout catches it rather than a timed assertion.
#include "feedline/loader/loader.h"

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

#include "feedline/io/error.h"
#include "loader/blocking_queue.h"
#include "loader/sequencer.h"
#include "dataset/read_ahead.h"

namespace feedline {
namespace {

using std::chrono::milliseconds;

// A failure type of the dataset's own, to check that the consumer sees the type and not a copy or wrapper.
struct SampleError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Each sample's data is its own index, so a batch shows exactly which indices it holds.
class IndexDataset : public Dataset {
 public:
  explicit IndexDataset(int64_t n, bool batch_fetch = false, int jitter_us = 0)
      : n_(n), batch_fetch_(batch_fetch), jitter_us_(jitter_us) {}
  int64_t size() const override { return n_; }
  Example get(int64_t index) const override {
    ++gets;
    if (jitter_us_ > 0) {
      // Random per-sample delays make workers finish out of order.
      thread_local std::mt19937 gen(std::hash<std::thread::id>{}(std::this_thread::get_id()));
      std::this_thread::sleep_for(std::chrono::microseconds(gen() % jitter_us_));
    }
    if (index == throw_at.load()) throw SampleError("bad sample " + std::to_string(index));
    return {torch::full({1}, index, torch::kInt64), torch::tensor(index % 10, torch::kInt64)};
  }
  bool has_batch_fetch() const override { return batch_fetch_; }
  Example get_batch(const std::vector<int64_t>& indices) const override {
    const int64_t started = ++batch_calls;
    // How far the workers run ahead of the consumer: batches started minus batches the test has received.
    const int64_t ahead = started - consumed.load();
    int64_t seen = max_ahead.load();
    while (ahead > seen && !max_ahead.compare_exchange_weak(seen, ahead)) {
    }
    const int now = ++outstanding;
    int most = max_outstanding.load();
    while (now > most && !max_outstanding.compare_exchange_weak(most, now)) {
    }
    Example e = Dataset::get_batch(indices);
    --outstanding;
    return e;
  }

  mutable std::atomic<int64_t> gets{0}, batch_calls{0}, max_ahead{0};
  mutable std::atomic<int> outstanding{0}, max_outstanding{0};
  std::atomic<int64_t> consumed{0};  // advanced by the test as it receives batches
  std::atomic<int64_t> throw_at{-1};

 private:
  int64_t n_;
  bool batch_fetch_;
  int jitter_us_;
};

std::vector<int64_t> flatten(const Example& batch) {
  std::vector<int64_t> out;
  const auto flat = batch.data.flatten();
  for (int64_t i = 0; i < flat.size(0); ++i) out.push_back(flat[i].item<int64_t>());
  return out;
}

std::vector<int64_t> drain(Loader& loader) {
  std::vector<int64_t> out;
  auto epoch = loader.epoch();
  for (auto& batch : epoch) {
    const auto v = flatten(batch);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

// Drains `epoch`, which must fail with a SampleError saying `message` (its type and words, not a copy or wrapper);
// returns the indices of the batches handed out before the failure.
std::vector<int64_t> drain_until_failure(Epoch& epoch, const char* message, int64_t workers) {
  std::vector<int64_t> good;
  try {
    for (auto& b : epoch) {
      const auto v = flatten(b);
      good.insert(good.end(), v.begin(), v.end());
    }
    ADD_FAILURE() << "no exception with " << workers << " workers";
  } catch (const SampleError& e) {
    EXPECT_STREQ(e.what(), message);
  }
  return good;
}

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

// ----------------------------------------------------------------------------------- the internal pieces

TEST(LoaderQueue, PushBlocksWhileFullAndPopFreesASlot) {
  detail::BoundedQueue<int> q(2);
  ASSERT_TRUE(q.push(1));
  ASSERT_TRUE(q.push(2));
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    EXPECT_TRUE(q.push(3));
    pushed = true;
  });
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_FALSE(pushed.load());  // still blocked: the queue is full
  EXPECT_EQ(q.pop(), 1);
  producer.join();  // a lost wake-up would hang here
  EXPECT_TRUE(pushed.load());
  EXPECT_EQ(q.pop(), 2);
  EXPECT_EQ(q.pop(), 3);
}

TEST(LoaderQueue, CloseWakesBothSidesAndDrainsWhatIsLeft) {
  detail::BoundedQueue<int> empty(1);
  std::thread consumer([&] { EXPECT_FALSE(empty.pop().has_value()); });
  detail::BoundedQueue<int> full(1);
  ASSERT_TRUE(full.push(7));
  std::thread producer([&] { EXPECT_FALSE(full.push(8)); });
  std::this_thread::sleep_for(milliseconds(10));
  empty.close();
  full.close();
  consumer.join();
  producer.join();
  EXPECT_EQ(full.pop(), 7);  // items pushed before close() still come out
  EXPECT_FALSE(full.pop().has_value());
  EXPECT_FALSE(full.push(9));
}

TEST(LoaderQueue, ClearSaysHowManyItDropped) {
  detail::BoundedQueue<int> q(4);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(q.push(i));
  EXPECT_EQ(q.clear(), 3u);
  EXPECT_EQ(q.clear(), 0u);
  ASSERT_TRUE(q.push(5));
  EXPECT_EQ(q.pop(), 5);
}

struct Numbered {
  int64_t sequence_number;
};

TEST(LoaderSequencer, HandsResultsBackInSequenceOrder) {
  detail::OrderedSequencer<Numbered> seq;
  std::vector<int64_t> arrivals{2, 0, 3, 1, 4};
  size_t pulled = 0;
  auto pull = [&]() -> std::optional<Numbered> {
    if (pulled == arrivals.size()) return std::nullopt;
    return Numbered{arrivals[pulled++]};
  };
  for (int64_t k = 0; k < 5; ++k) {
    auto r = seq.next(pull);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->sequence_number, k);
  }
  EXPECT_EQ(seq.buffered(), 0u);
  EXPECT_FALSE(seq.next(pull).has_value());  // the source ran dry
}

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

// ------------------------------------------------------------------------------------------- batch fetch

TEST(Loader, UsesBatchFetchWhenOfferedAndAllowed) {
  for (int64_t workers : {0, 2}) {
    auto fetch = std::make_shared<IndexDataset>(64, /*batch_fetch=*/true);
    Loader a(fetch, LoaderOptions(16).num_workers(workers));
    EXPECT_EQ(drain(a), iota(64));
    EXPECT_EQ(fetch->batch_calls.load(), 4);  // one gather per batch...
    EXPECT_EQ(fetch->gets.load(), 64);        // ...which here happens to call get() itself
    Loader b(fetch, LoaderOptions(16).batch_fetch(false).num_workers(workers));
    EXPECT_EQ(drain(b), iota(64));
    EXPECT_EQ(fetch->batch_calls.load(), 4);  // per-sample path: get_batch not called again
    EXPECT_EQ(fetch->gets.load(), 128);
    auto plain = std::make_shared<IndexDataset>(64, /*batch_fetch=*/false);
    Loader c(plain, LoaderOptions(16).num_workers(workers));
    EXPECT_EQ(drain(c), iota(64));
    EXPECT_EQ(plain->batch_calls.load(), 0);
    EXPECT_EQ(plain->gets.load(), 64);
  }
}

// ------------------------------------------------------------------------------ out-of-order completion

// Batch 0's fetch waits until batch 1 has been built, so with two workers batch 1 always finishes first.
// Deterministic, no sleeps: a loader that never ran two batches at once would hang here (ctest's timeout).
class GatedDataset : public Dataset {
 public:
  explicit GatedDataset(int64_t n, int64_t batch) : n_(n), batch_(batch) {}
  int64_t size() const override { return n_; }
  Example get(int64_t index) const override {
    return {torch::full({1}, index, torch::kInt64), torch::tensor(int64_t{0})};
  }
  bool has_batch_fetch() const override { return true; }
  Example get_batch(const std::vector<int64_t>& indices) const override {
    const int64_t k = indices.front() / batch_;
    std::unique_lock<std::mutex> lock(mutex_);
    if (k == 0) cv_.wait(lock, [this] { return batch1_done_; });
    lock.unlock();
    Example e = Dataset::get_batch(indices);
    lock.lock();
    completion.push_back(k);
    if (k == 1) batch1_done_ = true;
    cv_.notify_all();
    return e;
  }
  mutable std::vector<int64_t> completion;  // guarded by mutex_; read after the epoch

 private:
  int64_t n_, batch_;
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  mutable bool batch1_done_ = false;
};

TEST(Loader, OutOfOrderCompletionIsHandedBackInOrder) {
  for (bool persistent : {false, true}) {
    auto ds = std::make_shared<GatedDataset>(40, 4);
    Loader loader(ds, LoaderOptions(4).num_workers(2).persistent_workers(persistent));
    EXPECT_EQ(drain(loader), iota(40));
    ASSERT_GE(ds->completion.size(), 2u);
    const auto first = std::find(ds->completion.begin(), ds->completion.end(), 0);
    const auto second = std::find(ds->completion.begin(), ds->completion.end(), 1);
    EXPECT_LT(second, first) << "batch 1 finished before batch 0";
  }
}

TEST(Loader, RandomDelaysStillGiveSamplerOrder) {
  auto ds = std::make_shared<IndexDataset>(300, false, 1000);
  Loader loader(ds, LoaderOptions(5).shuffle(true).seed(5).num_workers(4).prefetch_factor(3));
  EXPECT_EQ(drain(loader), loader.epoch_indices(0));
  EXPECT_EQ(drain(loader), loader.epoch_indices(1));
}

// ------------------------------------------------------------------------------------------- exceptions

TEST(Loader, WorkerExceptionIsRethrownWithItsTypeAndMessage) {
  for (int64_t workers : {0, 3}) {
    for (bool persistent : {false, true}) {
      auto ds = std::make_shared<IndexDataset>(100);
      ds->throw_at = 37;
      Loader loader(ds, LoaderOptions(8).num_workers(workers).persistent_workers(persistent));
      auto epoch = loader.epoch();
      EXPECT_EQ(drain_until_failure(epoch, "bad sample 37", workers), iota(32))
          << "the four batches before the failing one arrived, in order";
      EXPECT_FALSE(epoch.next().has_value());  // poisoned: finished, no hang, no second throw
      EXPECT_FALSE(epoch.next().has_value());
    }
  }
}

TEST(Loader, AfterAWorkerExceptionTheNextEpochWorks) {
  for (int64_t workers : {0, 3}) {
    for (bool persistent : {false, true}) {
      auto ds = std::make_shared<IndexDataset>(100, false, 300);
      Loader loader(ds, LoaderOptions(8).num_workers(workers).persistent_workers(persistent));
      ds->throw_at = 9;
      EXPECT_THROW(drain(loader), SampleError);
      ds->throw_at = -1;
      EXPECT_EQ(drain(loader), iota(100)) << workers << " workers, persistent " << persistent;
    }
  }
}

// ------------------------------------------------------------------------------------------ leaving early

TEST(Loader, LeavingEarlyThenRunningAFullEpochWorks) {
  for (int64_t workers : {0, 1, 3}) {
    for (bool persistent : {false, true}) {
      auto ds = std::make_shared<IndexDataset>(200, false, 300);
      Loader loader(ds, LoaderOptions(10).num_workers(workers).persistent_workers(persistent).shuffle(true));
      {
        auto epoch = loader.epoch();
        ASSERT_TRUE(epoch.next().has_value());
      }  // destroyed after one batch: stops the prefetched work; a hang here fails by ctest's timeout
      {
        auto epoch = loader.epoch();
        for (auto& b : epoch) {
          (void)b;
          break;  // leaving a range-for early
        }
      }
      try {
        auto epoch = loader.epoch();
        for (auto& b : epoch) {
          (void)b;
          throw std::runtime_error("consumer failed");
        }
      } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "consumer failed");
      }
      EXPECT_EQ(drain(loader), loader.epoch_indices(3)) << workers << " workers, persistent " << persistent;
    }
  }
}

TEST(Loader, AnEpochMayOutliveItsLoader) {
  auto ds = std::make_shared<IndexDataset>(60, false, 300);
  std::optional<Epoch> epoch;
  std::vector<int64_t> expected;
  {
    Loader loader(ds, LoaderOptions(6).shuffle(true).num_workers(2).persistent_workers(true));
    expected = loader.epoch_indices(0);
    epoch.emplace(loader.epoch());
  }
  std::vector<int64_t> got;
  for (auto& b : *epoch) {
    const auto v = flatten(b);
    got.insert(got.end(), v.begin(), v.end());
  }
  EXPECT_EQ(got, expected);
  epoch.reset();  // joins the pool the Loader left behind
}

TEST(Loader, OnlyOneLiveEpochAtATime) {
  auto ds = std::make_shared<IndexDataset>(20);
  Loader loader(ds, LoaderOptions(5).num_workers(1));
  {
    auto epoch = loader.epoch();
    EXPECT_THROW(loader.epoch(), InvalidArgument);
  }
  EXPECT_EQ(drain(loader), iota(20));  // the refused call did not spoil the next one
}

TEST(Loader, AMovedEpochCarriesOnAndTheMovedFromOneIsEmpty) {
  auto ds = std::make_shared<IndexDataset>(20);
  Loader loader(ds, LoaderOptions(5).num_workers(2));
  auto a = loader.epoch();
  ASSERT_TRUE(a.next().has_value());
  Epoch b(std::move(a));
  EXPECT_FALSE(a.next().has_value());  // NOLINT(bugprone-use-after-move): the documented moved-from state
  EXPECT_EQ(a.stats().batches, 0);
  int64_t rest = 0;
  while (b.next()) ++rest;
  EXPECT_EQ(rest, 3);
  EXPECT_EQ(b.stats().batches, 4);
}

size_t thread_count() {
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    (void)entry;
    ++n;
  }
  return n;
}

TEST(Loader, LeavesNoThreadBehind) {
  if (!std::filesystem::exists("/proc/self/task")) GTEST_SKIP() << "needs Linux's /proc";
  auto ds = std::make_shared<IndexDataset>(200, false, 300);
  const size_t before = thread_count();
  {
    Loader per_epoch(ds, LoaderOptions(10).num_workers(3));
    Loader persistent(ds, LoaderOptions(10).num_workers(4).persistent_workers(true));
    {
      auto e = persistent.epoch();
      ASSERT_TRUE(e.next().has_value());
      EXPECT_GE(thread_count(), before + 4);  // the count does see our workers
    }
    {
      auto e = per_epoch.epoch();
      ASSERT_TRUE(e.next().has_value());
    }
    ds->throw_at = 55;
    EXPECT_THROW(drain(per_epoch), SampleError);
    EXPECT_THROW(drain(persistent), SampleError);
    ds->throw_at = -1;
    EXPECT_EQ(drain(per_epoch).size(), 200u);
    EXPECT_EQ(drain(persistent).size(), 200u);
  }
  // join() returns as the thread exits; the kernel may list it a moment longer. Wait it out (generously).
  for (int i = 0; i < 1000 && thread_count() > before; ++i) std::this_thread::sleep_for(milliseconds(10));
  EXPECT_EQ(thread_count(), before);
}

// ------------------------------------------------------------------------------------------------ bound

TEST(Loader, PrefetchIsBounded) {
  struct Case {
    int64_t workers, prefetch;
    bool persistent;
  };
  for (const Case c : {Case{2, 3, false}, Case{3, 1, true}, Case{1, 2, false}}) {
    const int64_t window = c.workers * c.prefetch;
    auto ds = std::make_shared<IndexDataset>(400, /*batch_fetch=*/true);
    Loader loader(ds, LoaderOptions(4).num_workers(c.workers).prefetch_factor(c.prefetch).persistent_workers(c.persistent));
    auto epoch = loader.epoch();
    ASSERT_TRUE(epoch.next().has_value());
    ds->consumed = 1;
    // A consumer that stops asking: the workers fill the window (waiting for that cannot fail, only hang)...
    while (ds->batch_calls.load() < 1 + window) std::this_thread::sleep_for(milliseconds(1));
    // ...and must then stop. Sleeping can only miss an overrun, never invent one.
    std::this_thread::sleep_for(milliseconds(30));
    EXPECT_EQ(ds->batch_calls.load(), 1 + window);
    // A slow consumer for the rest of the epoch.
    while (auto b = epoch.next()) {
      ++ds->consumed;
      if (ds->consumed.load() % 10 == 0) std::this_thread::sleep_for(milliseconds(2));
    }
    EXPECT_EQ(ds->consumed.load(), 100);
    // The test counts a batch as consumed just after next() returns it, while next() has already asked for
    // the following one: one batch of slack, within the bound the spec allows (window + num_workers).
    EXPECT_LE(ds->max_ahead.load(), window + 1);
    EXPECT_LE(ds->max_outstanding.load(), c.workers);  // never more batches at once than workers
  }
}

// -------------------------------------------------------------------------------------- options, pinning

TEST(Loader, RejectsInvalidOptions) {
  auto ds = std::make_shared<IndexDataset>(10);
  EXPECT_THROW(Loader(ds, LoaderOptions(0)), InvalidArgument);
  EXPECT_THROW(Loader(ds, LoaderOptions(-3)), InvalidArgument);
  EXPECT_THROW(Loader(ds, LoaderOptions(4).num_workers(-1)), InvalidArgument);
  EXPECT_THROW(Loader(ds, LoaderOptions(4).prefetch_factor(0)), InvalidArgument);
  EXPECT_THROW(Loader(nullptr, LoaderOptions(4)), InvalidArgument);
  EXPECT_NO_THROW(Loader(ds, LoaderOptions(4).num_workers(0).prefetch_factor(1)));
}

TEST(Loader, PinMemoryIsPinnedWithCudaAndANoOpWithout) {
  auto ds = std::make_shared<IndexDataset>(8);
  for (int64_t workers : {0, 2}) {
    Loader loader(ds, LoaderOptions(4).pin_memory(true).num_workers(workers));
    EXPECT_EQ(loader.pin_memory_active(), torch::cuda::is_available());
    auto epoch = loader.epoch();
    auto b = epoch.next();
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->data.is_pinned(), torch::cuda::is_available());
    EXPECT_EQ(b->target.is_pinned(), torch::cuda::is_available());
    EXPECT_EQ(flatten(*b), (std::vector<int64_t>{0, 1, 2, 3}));
  }
  Loader off(ds, LoaderOptions(4).pin_memory(false));
  EXPECT_FALSE(off.pin_memory_active());
}

// ------------------------------------------------------------------------------------------------ stats

TEST(Loader, StatsSplitWaitingFromStepping) {
  for (int64_t workers : {0, 2}) {
    auto ds = std::make_shared<IndexDataset>(40);
    Loader loader(ds, LoaderOptions(10).num_workers(workers));
    auto epoch = loader.epoch();
    for (auto& b : epoch) {
      (void)b;
      std::this_thread::sleep_for(milliseconds(5));  // the consumer's "step"
    }
    EXPECT_EQ(epoch.stats().batches, 4);
    EXPECT_EQ(epoch.stats().samples, 40);
    // sleep_for sleeps at least that long, so this lower bound cannot flake.
    EXPECT_GE(epoch.stats().step_seconds, 4 * 0.005);
    EXPECT_GT(epoch.stats().wait_seconds, 0.0);
  }
}

}  // namespace
}  // namespace feedline

namespace feedline {
namespace {

// A device-resident dataset (on the CPU here, so its batches come from the host order) is gathered by the
// consumer: the same batches as the host tensor dataset for the same seed, whatever num_workers says, and nothing
// is pinned.
// ------------------------------------------------------------------------------------------------ transforms

// A random augmentation as a user would write it: flips each sample along its last dimension with probability
// one half, drawn from a generator of its own seeded with the batch's seed.
Example random_flip(Example batch, const BatchInfo& info) {
  auto gen = at::detail::createCPUGenerator(info.seed);
  const auto flip = torch::rand({batch.data.size(0)}, gen) < 0.5;
  std::vector<int64_t> shape(static_cast<size_t>(batch.data.dim()), 1);
  shape[0] = -1;
  batch.data = torch::where(flip.view(shape).to(batch.data.device()), batch.data.flip({-1}), batch.data);
  return batch;
}

// Sample i is the pair (2i, 2i + 1); flipped, (2i + 1, 2i).
std::shared_ptr<TensorDataset> pairs_dataset(int64_t n) {
  return std::make_shared<TensorDataset>(torch::arange(2 * n, torch::kInt64).view({n, 2}),
                                         torch::arange(n, torch::kInt64).remainder(10));
}

TEST(LoaderTransform, RunsOnceABatchAndKnowsWhereTheBatchStands) {
  for (int64_t workers : {0, 3}) {
    auto ds = std::make_shared<IndexDataset>(100, false, 200);
    std::mutex mutex;
    std::vector<std::pair<int64_t, int64_t>> seen;
    std::set<uint64_t> seeds;
    const auto options = LoaderOptions(8).shuffle(true).seed(5).num_workers(workers).transform(
        [&](Example batch, const BatchInfo& info) {
          {
            std::lock_guard<std::mutex> lock(mutex);
            seen.emplace_back(info.epoch, info.batch);
            seeds.insert(info.seed);
          }
          batch.target = torch::full({batch.data.size(0)}, info.epoch * 1000 + info.batch, torch::kInt64);
          return batch;
        });
    Loader loader(ds, options);
    for (int64_t e = 0; e < 2; ++e) {
      auto epoch = loader.epoch();
      std::vector<int64_t> indices;
      int64_t k = 0;
      for (auto& batch : epoch) {
        EXPECT_TRUE(torch::equal(batch.target, torch::full({batch.data.size(0)}, e * 1000 + k, torch::kInt64)))
            << workers << " workers, epoch " << e << ", batch " << k;
        const auto v = flatten(batch);
        indices.insert(indices.end(), v.begin(), v.end());
        ++k;
      }
      EXPECT_EQ(k, 13);
      EXPECT_EQ(indices, loader.epoch_indices(e)) << "the data as the dataset made it, in sampler order";
    }
    std::sort(seen.begin(), seen.end());
    std::vector<std::pair<int64_t, int64_t>> expected;
    for (int64_t e = 0; e < 2; ++e) {
      for (int64_t k = 0; k < 13; ++k) expected.emplace_back(e, k);
    }
    EXPECT_EQ(seen, expected) << "each batch transformed exactly once; " << workers << " workers";
    EXPECT_EQ(seeds.size(), expected.size()) << "a seed of its own for every batch of every epoch";
  }
}

TEST(LoaderTransform, RandomTransformsAreTheSameForAnyWorkerCount) {
  const int64_t n = 123;
  auto ds = pairs_dataset(n);
  auto run = [&](uint64_t seed, int64_t workers, bool persistent) {
    Loader loader(ds, LoaderOptions(16).shuffle(true).seed(seed).num_workers(workers).persistent_workers(persistent)
                          .transform(random_flip));
    std::vector<torch::Tensor> epochs;
    for (int e = 0; e < 3; ++e) {
      std::vector<torch::Tensor> batches;
      for (auto& batch : loader.epoch()) batches.push_back(batch.data);
      epochs.push_back(torch::cat(batches));
    }
    return epochs;
  };
  const auto reference = run(11, 0, false);
  for (int64_t workers : {1, 2, 4}) {
    for (bool persistent : {false, true}) {
      const auto epochs = run(11, workers, persistent);
      for (size_t e = 0; e < epochs.size(); ++e) {
        EXPECT_TRUE(torch::equal(epochs[e], reference[e])) << workers << " workers, persistent " << persistent
                                                           << ", epoch " << e;
      }
    }
  }
  // Every sample is there once, in sampler order, whole or flipped; about half are flipped, and which ones
  // changes from epoch to epoch and with the seed.
  Loader sampler(ds, LoaderOptions(16).shuffle(true).seed(11));
  std::vector<torch::Tensor> flips;
  for (size_t e = 0; e < reference.size(); ++e) {
    const auto order = torch::tensor(sampler.epoch_indices(static_cast<int64_t>(e)), torch::kInt64);
    const auto low = std::get<0>(reference[e].min(1));
    EXPECT_TRUE(torch::equal(low, 2 * order)) << "epoch " << e;
    EXPECT_TRUE(torch::equal(std::get<0>(reference[e].max(1)), 2 * order + 1));
    // Flipped samples, by sample index (so that epochs compare sample for sample).
    flips.push_back(torch::zeros({n}, torch::kBool).index_put_({order}, reference[e].select(1, 0) > low));
    const int64_t flipped = flips.back().sum().item<int64_t>();
    EXPECT_GT(flipped, n / 4) << "epoch " << e;
    EXPECT_LT(flipped, 3 * n / 4) << "epoch " << e;
  }
  EXPECT_FALSE(torch::equal(flips[0], flips[1]));
  EXPECT_FALSE(torch::equal(flips[1], flips[2]));
  Loader no_flip(ds, LoaderOptions(16).shuffle(true).seed(11));
  std::vector<torch::Tensor> plain;
  for (auto& batch : no_flip.epoch()) plain.push_back(batch.data);
  EXPECT_FALSE(torch::equal(torch::cat(plain), reference[0]));
  const auto other_seed = run(12, 2, false);
  EXPECT_FALSE(torch::equal(other_seed[0], reference[0]));
}

TEST(LoaderTransform, AnExceptionReachesTheConsumerAndTheNextEpochWorks) {
  for (int64_t workers : {0, 3}) {
    auto ds = std::make_shared<IndexDataset>(100, false, 200);
    Loader loader(ds, LoaderOptions(8).num_workers(workers).transform([](Example batch, const BatchInfo& info) {
      if (info.epoch == 0 && info.batch == 3) throw SampleError("bad batch 3");
      return batch;
    }));
    {
      auto epoch = loader.epoch();
      EXPECT_EQ(drain_until_failure(epoch, "bad batch 3", workers), iota(24))
          << "the three batches before the failing one arrived, in order";
      EXPECT_FALSE(epoch.next().has_value());
    }
    EXPECT_EQ(drain(loader), iota(100)) << workers << " workers";
  }
}

TEST(DeviceResident, SameBatchesAsTheHostDatasetAndNoWorkers) {
  const int64_t n = 103;
  auto images = torch::arange(n * 4, torch::kInt64).view({n, 1, 2, 2}).to(torch::kUInt8);
  auto labels = torch::arange(n, torch::kInt64).remainder(10);
  auto host = std::make_shared<TensorDataset>(images, labels);
  auto resident = std::make_shared<DeviceDataset>(images, labels, torch::kCPU);
  ASSERT_TRUE(resident->resident_device().has_value());
  EXPECT_FALSE(host->resident_device().has_value());
  for (const int64_t workers : {0, 3}) {
    const auto options = LoaderOptions(16).shuffle(true).seed(9).num_workers(workers).pin_memory(true);
    Loader a(host, options), b(resident, options);
    EXPECT_FALSE(b.pin_memory_active());
    for (int e = 0; e < 2; ++e) {
      auto ea = a.epoch();
      auto eb = b.epoch();
      int64_t batches = 0;
      while (true) {
        auto x = ea.next();
        auto y = eb.next();
        ASSERT_EQ(x.has_value(), y.has_value());
        if (!x) break;
        ++batches;
        EXPECT_TRUE(torch::equal(x->data, y->data)) << "epoch " << e << " batch " << batches;
        EXPECT_TRUE(torch::equal(x->target, y->target));
        EXPECT_FALSE(y->data.is_pinned());
      }
      EXPECT_EQ(batches, 7);
    }
  }
  // The vector path, the gather of an index tensor (what the loader uses on a GPU) and single gets agree.
  const auto batch = resident->get_batch({5, 0, 102});
  EXPECT_TRUE(torch::equal(batch.data[2], images[102]));
  const auto gathered = resident->gather(torch::tensor({5, 0, 102}, torch::kInt64));
  EXPECT_TRUE(torch::equal(gathered.data, batch.data));
  EXPECT_TRUE(torch::equal(gathered.target, batch.target));
  EXPECT_THROW(resident->gather(torch::tensor({103}, torch::kInt64)), InvalidArgument);
  EXPECT_EQ(resident->get(7).target.item<int64_t>(), 7);
  EXPECT_THROW(resident->get_batch({103}), InvalidArgument);
  EXPECT_THROW(host->gather(torch::zeros({1}, torch::kInt64)), InvalidArgument);
}


// On a device-resident dataset the transform runs in the consumer on the gathered batch, with the same seeds: on
// the CPU through the host order, on a GPU (when there is one) on the slice of the uploaded order.
TEST(DeviceResident, TransformedAsTheHostDatasetsBatchesAre) {
  const int64_t n = 103;
  auto images = torch::arange(n * 4, torch::kInt64).view({n, 1, 2, 2}).to(torch::kUInt8);
  auto labels = torch::arange(n, torch::kInt64).remainder(10);
  auto host = std::make_shared<TensorDataset>(images, labels);
  std::vector<torch::Device> devices{torch::kCPU};
  if (torch::cuda::is_available()) devices.emplace_back(torch::kCUDA);
  for (const torch::Device& device : devices) {
    auto resident = std::make_shared<DeviceDataset>(images, labels, device);
    const auto options = LoaderOptions(16).shuffle(true).seed(9).transform(random_flip);
    Loader a(host, LoaderOptions(options).num_workers(3)), b(resident, options);
    Loader plain(host, LoaderOptions(16).shuffle(true).seed(9));
    int64_t batches = 0, differ = 0;
    for (int e = 0; e < 2; ++e) {
      auto ea = a.epoch();
      auto eb = b.epoch();
      auto ep = plain.epoch();
      while (true) {
        auto x = ea.next();
        auto y = eb.next();
        auto p = ep.next();
        ASSERT_EQ(x.has_value(), y.has_value());
        ASSERT_EQ(x.has_value(), p.has_value());
        if (!x) break;
        ++batches;
        EXPECT_EQ(y->data.device().type(), device.type());
        EXPECT_TRUE(torch::equal(x->data, y->data.cpu())) << device << ", epoch " << e << " batch " << batches;
        EXPECT_TRUE(torch::equal(x->target, y->target.cpu()));
        differ += torch::equal(x->data, p->data) ? 0 : 1;
      }
    }
    EXPECT_EQ(batches, 14);
    EXPECT_GT(differ, 0) << "the transform flipped something";
  }
}
// batch_fetch(false) forces per-sample gets on host datasets; a device-resident one is gathered in one call
// whatever it says (on a GPU there is no per-sample path at all).
TEST(DeviceResident, GatheredInOneCallWhateverBatchFetchSays) {
  struct Counting : DeviceDataset {
    using DeviceDataset::DeviceDataset;
    mutable int gets = 0, batches = 0;
    Example get(int64_t index) const override {
      ++gets;
      return DeviceDataset::get(index);
    }
    Example get_batch(const std::vector<int64_t>& indices) const override {
      ++batches;
      return DeviceDataset::get_batch(indices);
    }
  };
  const int64_t n = 103;
  auto ds = std::make_shared<Counting>(torch::zeros({n, 1, 2, 2}, torch::kUInt8), torch::zeros({n}, torch::kInt64),
                                       torch::kCPU);
  Loader loader(ds, LoaderOptions(16).shuffle(true).batch_fetch(false));
  int64_t samples = 0;
  for (auto& batch : loader.epoch()) samples += batch.target.size(0);
  EXPECT_EQ(samples, n);
  EXPECT_EQ(ds->batches, 7);
  EXPECT_EQ(ds->gets, 0);
}

}  // namespace
}  // namespace feedline
