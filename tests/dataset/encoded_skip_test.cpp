// EncodedDataset with OnError::kSkip: a sample that cannot be read or made is left out of its batch, which holds
// the others in order, written compactly from its first row; the loader serves such shorter batches (none left at
// all too) with any number of workers, every good sample once per epoch, and the dataset counts what it left out.
// With OnError::kRaise the same samples fail their batch, naming the sample.
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "feedline/dataset/encoded.h"
#include "feedline/io/error.h"
#include "feedline/loader/loader.h"

namespace feedline {
namespace {

// Sample i: its index as decimal text, labelled 10 i and named "img-<i>.jpg". Those in `unreadable` throw from
// get() as a file gone would; those in `corrupt` hold bytes the transform refuses.
class FaultySource : public SampleSource {
 public:
  FaultySource(int64_t n, std::set<int64_t> unreadable, std::set<int64_t> corrupt)
      : n_(n), unreadable_(std::move(unreadable)), corrupt_(std::move(corrupt)) {}
  int64_t size() const override { return n_; }
  EncodedSample get(int64_t index) const override {
    if (unreadable_.count(index)) throw IoError("img-" + std::to_string(index) + ".jpg: cannot open", 2);
    EncodedSample s;
    s.bytes = corrupt_.count(index) ? "corrupt" : std::to_string(index);
    s.label = 10 * index;
    s.name = "img-" + std::to_string(index) + ".jpg";
    return s;
  }

 private:
  int64_t n_;
  std::set<int64_t> unreadable_, corrupt_;
};

// Writes the sample's number and its negation as int32; refuses anything else as an InvalidFile.
class NumberTransform : public SampleTransform {
 public:
  SampleLayout layout() const override { return {{2}, torch::kInt32}; }
  void apply(const EncodedSample& sample, SampleRng&, const torch::Tensor& out) const override {
    if (sample.bytes.empty() || sample.bytes.find_first_not_of("0123456789") != std::string::npos) {
      throw InvalidFile("not a number");
    }
    const int v = std::stoi(sample.bytes);
    out.data_ptr<int32_t>()[0] = v;
    out.data_ptr<int32_t>()[1] = -v;
  }
};

const std::set<int64_t> kUnreadable{3, 17}, kCorrupt{8, 9, 10, 11, 25};

std::shared_ptr<EncodedDataset> faulty_dataset(OnError on_error, int64_t n = 30) {
  return std::make_shared<EncodedDataset>(std::make_shared<FaultySource>(n, kUnreadable, kCorrupt),
                                          std::make_shared<NumberTransform>(), on_error);
}

bool bad(int64_t i) { return kUnreadable.count(i) || kCorrupt.count(i); }

std::string skipped_name(int64_t i) {
  return kUnreadable.count(i) ? "sample " + std::to_string(i) + ": img-" + std::to_string(i) + ".jpg: cannot open"
                              : "img-" + std::to_string(i) + ".jpg: not a number";
}

TEST(EncodedSkip, ParsesOnError) {
  EXPECT_EQ(parse_on_error("raise"), OnError::kRaise);
  EXPECT_EQ(parse_on_error("skip"), OnError::kSkip);
  try {
    parse_on_error("ignore");
    FAIL() << "\"ignore\" was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("\"ignore\""), std::string::npos) << e.what();
  }
}

TEST(EncodedSkip, ABatchHoldsTheGoodSamplesInOrderFromItsFirstRow) {
  const auto dataset = faulty_dataset(OnError::kSkip);
  const Example batch = dataset->make_batch({8, 4, 3, 9, 0, 25, 7}, BatchContext{});
  ASSERT_EQ(batch.data.sizes(), (std::vector<int64_t>{3, 2}));
  EXPECT_TRUE(batch.data.is_contiguous());
  EXPECT_TRUE(torch::equal(batch.data, torch::tensor({4, -4, 0, 0, 7, -7}, torch::kInt32).view({3, 2})));
  EXPECT_TRUE(torch::equal(batch.target, torch::tensor({40, 0, 70}, torch::kInt64)));
  const SkippedSamples skipped = dataset->skipped();
  EXPECT_EQ(skipped.count, 4);
  EXPECT_EQ(skipped.first,
            (std::vector<std::string>{skipped_name(8), skipped_name(3), skipped_name(9), skipped_name(25)}));

  // Nothing left: a batch of no rows, of the layout's other sizes.
  const Example none = dataset->make_batch({10, 11}, BatchContext{});
  EXPECT_EQ(none.data.sizes(), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(none.target.sizes(), (std::vector<int64_t>{0}));
  EXPECT_EQ(dataset->skipped().count, 6);

  // Only the first kMaxNames are named; take_skipped() starts the count again.
  const SkippedSamples taken = dataset->take_skipped();
  EXPECT_EQ(taken.count, 6);
  EXPECT_EQ(taken.first.size(), SkippedSamples::kMaxNames);
  EXPECT_EQ(dataset->skipped().count, 0);
  EXPECT_TRUE(dataset->skipped().first.empty());

  // A single sample has no batch to be left out of: get() raises.
  EXPECT_THROW(dataset->get(8), InvalidFile);
  EXPECT_EQ(dataset->get(4).target.item<int64_t>(), 40);
  // An index outside the dataset is the caller's mistake, never skipped.
  EXPECT_THROW(dataset->make_batch({1, 30}, BatchContext{}), InvalidArgument);
}

TEST(EncodedSkip, TheLoaderGivesEveryGoodSampleOnceAnEpochWithAnyWorkers) {
  const int64_t n = 30;
  for (const int64_t workers : {0, 2}) {
    const auto dataset = faulty_dataset(OnError::kSkip, n);
    Loader loader(dataset, LoaderOptions(4).shuffle(true).seed(9).num_workers(workers).prefetch_factor(2));
    for (int64_t e = 0; e < 2; ++e) {
      const std::string what = std::to_string(workers) + " workers, epoch " + std::to_string(e);
      std::vector<int64_t> expected;
      for (const int64_t i : loader.epoch_indices(e)) {
        if (!bad(i)) expected.push_back(i);
      }
      std::vector<int64_t> seen;
      int64_t batches = 0;
      Epoch epoch = loader.epoch();
      while (auto batch = epoch.next()) {
        ++batches;
        ASSERT_EQ(batch->data.size(0), batch->target.size(0)) << what;
        for (int64_t r = 0; r < batch->data.size(0); ++r) {
          const int64_t i = batch->data[r][0].item<int32_t>();
          EXPECT_EQ(batch->data[r][1].item<int32_t>(), -i) << what;
          EXPECT_EQ(batch->target[r].item<int64_t>(), 10 * i) << what;
          seen.push_back(i);
        }
      }
      EXPECT_EQ(batches, loader.batches_per_epoch()) << what;  // a shortened batch is still a batch
      EXPECT_EQ(seen, expected) << what;
      EXPECT_EQ(epoch.stats().samples, static_cast<int64_t>(expected.size())) << what;
      const SkippedSamples skipped = dataset->take_skipped();
      EXPECT_EQ(skipped.count, static_cast<int64_t>(kUnreadable.size() + kCorrupt.size())) << what;
      ASSERT_EQ(skipped.first.size(), SkippedSamples::kMaxNames) << what;
      std::set<std::string> all;
      for (int64_t i = 0; i < n; ++i) {
        if (bad(i)) all.insert(skipped_name(i));
      }
      EXPECT_EQ(std::set<std::string>(skipped.first.begin(), skipped.first.end()).size(), skipped.first.size());
      for (const std::string& name : skipped.first) EXPECT_TRUE(all.count(name)) << what << ": " << name;
      if (workers == 0) {
        // One thread: they fail in the epoch's order.
        std::vector<std::string> in_order;
        for (const int64_t i : loader.epoch_indices(e)) {
          if (bad(i) && in_order.size() < SkippedSamples::kMaxNames) in_order.push_back(skipped_name(i));
        }
        EXPECT_EQ(skipped.first, in_order) << what;
      }
    }
  }
}

TEST(EncodedSkip, ABatchOfOnlyBadSamplesComesOutEmptyAndAResumeCountsIt) {
  // Unshuffled, batch 2 is samples 8..11, all corrupt; drop_last leaves out 28 and 29.
  const auto dataset = faulty_dataset(OnError::kSkip);
  for (const int64_t workers : {0, 2}) {
    Loader loader(dataset, LoaderOptions(4).num_workers(workers).drop_last(true));
    Epoch epoch = loader.epoch();
    std::vector<int64_t> rows;
    while (auto batch = epoch.next()) rows.push_back(batch->data.size(0));
    EXPECT_EQ(rows, (std::vector<int64_t>{3, 4, 0, 4, 3, 4, 3})) << workers << " workers";

    Loader first(dataset, LoaderOptions(4).num_workers(workers).drop_last(true));
    Epoch partial = first.epoch();
    for (int k = 0; k < 3; ++k) ASSERT_TRUE(partial.next().has_value());
    const LoaderState state = first.state_dict();
    EXPECT_EQ(state.batch, 3);
    Loader resumed(dataset, LoaderOptions(4).num_workers(workers).drop_last(true));
    resumed.load_state_dict(state);
    Epoch rest = resumed.epoch();
    const auto next = rest.next();
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(next->data[0][0].item<int32_t>(), 12) << workers << " workers";
  }
}

TEST(EncodedSkip, ShortenedBatchesStayPageLocked) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "pinned memory needs CUDA";
  Loader loader(faulty_dataset(OnError::kSkip), LoaderOptions(4).num_workers(2).pin_memory(true));
  ASSERT_TRUE(loader.pin_memory_active());
  Epoch epoch = loader.epoch();
  while (auto batch = epoch.next()) {
    if (batch->data.size(0) == 0) continue;  // nothing to page-lock
    EXPECT_TRUE(batch->data.is_pinned());
    EXPECT_TRUE(batch->target.is_pinned());
  }
}

TEST(EncodedSkip, RaiseFailsTheBatchNamingTheSample) {
  const auto dataset = faulty_dataset(OnError::kRaise);
  for (const int64_t workers : {0, 2}) {
    // Unshuffled, batch 0 holds the unreadable sample 3, and batch 2 the corrupt 8.
    Loader loader(dataset, LoaderOptions(4).num_workers(workers));
    try {
      loader.epoch().next();
      FAIL() << "a batch with an unreadable sample was handed out";
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find("img-3.jpg: cannot open"), std::string::npos) << e.what();
    }
    try {
      dataset->make_batch({7, 8}, BatchContext{});
      FAIL() << "a batch with a corrupt sample was made";
    } catch (const InvalidFile& e) {
      EXPECT_NE(std::string(e.what()).find("img-8.jpg: not a number"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(dataset->skipped().count, 0);
}

}  // namespace
}  // namespace feedline
