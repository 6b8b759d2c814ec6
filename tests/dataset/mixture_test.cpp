// Mixtures: the plan's arithmetic (proportions, repeats, counts, an epoch size) and its errors; the order it deals
// (shares within binomial bounds, each source without replacement within a pass, blocks kept together); mixtures
// of datasets and of encoded sources, relabelled; and the loader over them: the same batches for any worker count,
// each source's samples counted, resumed mid-epoch and on another world size, ranks split by stride.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dataset/encoded_support.h"
#include "feedline/dataset/dataset.h"
#include "feedline/dataset/encoded.h"
#include "feedline/io/error.h"
#include "feedline/loader/loader.h"
#include "test_errors.h"

namespace feedline {
namespace {

using testing::expect_error;

// A sample's identity: source s's sample i holds s x kStride + i.
constexpr int64_t kStride = 1000;

using Sizes = std::vector<int64_t>;
using Parts = std::vector<MixturePart>;

MixturePart named(MixturePart part, const std::string& name) {
  part.name = name;
  return part;
}

std::vector<int64_t> range(int64_t from, int64_t to) {
  std::vector<int64_t> v;
  for (int64_t i = from; i < to; ++i) v.push_back(i);
  return v;
}

std::vector<int64_t> sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<int64_t> twice(const std::vector<int64_t>& v) {
  std::vector<int64_t> out;
  for (const int64_t x : v) out.insert(out.end(), {x, x});
  return out;
}

// Positions of `order` that each source gave, counted from the plan's offsets.
std::vector<int64_t> per_source(const MixturePlan& plan, const std::vector<int64_t>& order) {
  std::vector<int64_t> out(plan.sources(), 0);
  for (const int64_t index : order) ++out[plan.source_of(index)];
  return out;
}

// Each source's own indices in `order`, in order: worked out here from the offsets, apart from MixturePlan::split.
std::vector<std::vector<int64_t>> draws(const MixturePlan& plan, const std::vector<int64_t>& order) {
  std::vector<std::vector<int64_t>> out(plan.sources());
  for (const int64_t index : order) {
    size_t s = 0;
    while (index >= plan.offset(s) + plan.size(s)) ++s;
    out[s].push_back(index - plan.offset(s));
  }
  return out;
}

// The identity of the sample at mixture index `index`, for sources built as source s holding s x kStride + i.
int64_t id_of(const MixturePlan& plan, int64_t index) {
  const size_t s = plan.source_of(index);
  return static_cast<int64_t>(s) * kStride + index - plan.offset(s);
}

std::vector<int64_t> to_vector(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kInt64).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

// The identities a batch holds: the first value of each sample.
std::vector<int64_t> ids(const Example& batch) {
  return to_vector(batch.data.reshape({batch.data.size(0), -1}).select(1, 0));
}

// Source `source` of n samples: images [n, 1, 1, 1] holding source x kStride + i, labels i % classes.
std::shared_ptr<const Dataset> id_dataset(int64_t source, int64_t n, int64_t classes = 5) {
  const torch::Tensor images = (torch::arange(n, torch::kFloat32) + static_cast<float>(source * kStride));
  return std::make_shared<TensorDataset>(images.reshape({n, 1, 1, 1}), torch::arange(n, torch::kInt64) % classes);
}

struct Drained {
  std::vector<Example> batches;
  EpochStats stats;
};

Drained drain(Epoch epoch) {
  Drained out;
  while (auto batch = epoch.next()) out.batches.push_back(std::move(*batch));
  out.stats = epoch.stats();
  return out;
}

void expect_same(const std::vector<Example>& a, const std::vector<Example>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_TRUE(torch::equal(a[k].data, b[k].data)) << what << ", batch " << k;
    EXPECT_TRUE(torch::equal(a[k].target, b[k].target)) << what << ", batch " << k;
  }
}

// ------------------------------------------------------------------------------------------ the plan's arithmetic

TEST(MixturePlan, ProportionsSplitTheEpochByLargestRemainders) {
  const MixturePlan plan({100, 50}, {MixturePart::proportion(0.7), MixturePart::proportion(0.3)});
  EXPECT_EQ(plan.sources(), 2u);
  EXPECT_EQ(plan.total_size(), 150);
  EXPECT_EQ(plan.offset(0), 0);
  EXPECT_EQ(plan.offset(1), 100);
  EXPECT_EQ(plan.epoch_length(), 150);
  EXPECT_EQ(plan.counts(), (Sizes{105, 45}));
  // 105.7 and 45.3: the sample left over goes to the larger remainder.
  const MixturePlan odd({100, 51}, {MixturePart::proportion(0.7), MixturePart::proportion(0.3)});
  EXPECT_EQ(odd.epoch_length(), 151);
  EXPECT_EQ(odd.counts(), (Sizes{106, 45}));
  // 3.4, 3.3 and 3.3 of 10: rounding each would give 9 samples, largest remainders give 10.
  const MixturePlan three(
      {10, 10, 10}, {MixturePart::proportion(0.34), MixturePart::proportion(0.33), MixturePart::proportion(0.33)}, 10);
  EXPECT_EQ(three.epoch_length(), 10);
  EXPECT_EQ(three.counts(), (Sizes{4, 3, 3}));
  // Proportions are relative: 7 and 3 say what 0.7 and 0.3 do.
  const MixturePlan relative({100, 51}, {MixturePart::proportion(7), MixturePart::proportion(3)});
  EXPECT_EQ(relative.counts(), odd.counts());
  // An epoch size other than the sources' samples.
  const MixturePlan sized({100, 50}, {MixturePart::proportion(0.7), MixturePart::proportion(0.3)}, 1000);
  EXPECT_EQ(sized.epoch_length(), 1000);
  EXPECT_EQ(sized.counts(), (Sizes{700, 300}));
  EXPECT_EQ(sized.total_size(), 150);
}

TEST(MixturePlan, RepeatsAndCountsGiveTheirSamplesAnEpoch) {
  const MixturePlan plan({100, 50, 10, 20}, {MixturePart::repeat(0.5), MixturePart::repeat(2),
                                             MixturePart::repeat(0.37), MixturePart::count(7)});
  // round(0.37 x 10) is 4, where a floor would give 3.
  EXPECT_EQ(plan.counts(), (Sizes{50, 100, 4, 7}));
  EXPECT_EQ(plan.epoch_length(), 161);
  EXPECT_EQ(plan.total_size(), 180);
  EXPECT_EQ(plan.offset(3), 160);
  // A count may exceed its source's size: it is its samples an epoch, exactly.
  const MixturePlan counted({100, 10}, {MixturePart::repeat(1), MixturePart::count(25)});
  EXPECT_EQ(counted.counts(), (Sizes{100, 25}));
  EXPECT_EQ(counted.epoch_length(), 125);
  // An epoch size rescales them all.
  const MixturePlan doubled({100, 10}, {MixturePart::repeat(1), MixturePart::count(25)}, 250);
  EXPECT_EQ(doubled.counts(), (Sizes{200, 50}));
  EXPECT_EQ(doubled.epoch_length(), 250);
  const MixturePlan shrunk({100, 10}, {MixturePart::repeat(1), MixturePart::count(25)}, 100);
  EXPECT_EQ(shrunk.counts(), (Sizes{80, 20}));
}

TEST(MixturePlan, SourceOfAndSplitFollowTheOffsets) {
  const MixturePlan plan({3, 4, 2}, {MixturePart::repeat(1), MixturePart::repeat(1), MixturePart::repeat(1)});
  EXPECT_EQ(plan.source_of(0), 0u);
  EXPECT_EQ(plan.source_of(2), 0u);
  EXPECT_EQ(plan.source_of(3), 1u);
  EXPECT_EQ(plan.source_of(6), 1u);
  EXPECT_EQ(plan.source_of(7), 2u);
  EXPECT_EQ(plan.source_of(8), 2u);
  const std::vector<int64_t> order{8, 0, 3, 6, 2, 7, 3};
  EXPECT_EQ(plan.split(order), (std::vector<std::vector<int64_t>>{{0, 2}, {0, 3, 0}, {1, 0}}));
  // Unnamed parts are told apart by their number.
  EXPECT_NE(plan.name(0), plan.name(1));
  EXPECT_EQ(plan.name(0).rfind("source ", 0), 0u) << plan.name(0);
  const MixturePlan with_name({3}, {named(MixturePart::repeat(1), "a.parquet")});
  EXPECT_NE(with_name.name(0).find("a.parquet"), std::string::npos) << with_name.name(0);
}

TEST(MixturePlan, RefusesBadPartsNamingTheSource) {
  const auto refused = [](const Sizes& sizes, const Parts& parts, const std::vector<std::string>& needles,
                          int64_t epoch_size = 0, const std::vector<std::vector<int64_t>>& blocks = {}) {
    expect_error<InvalidArgument>([&] { MixturePlan(sizes, parts, epoch_size, blocks); }, needles);
  };
  const MixturePart good = named(MixturePart::proportion(1), "good.parquet");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  refused({10, 0}, {good, named(MixturePart::proportion(1), "empty.parquet")}, {"empty.parquet"});
  refused({10, 5}, {good, named(MixturePart::proportion(0), "zero.parquet")}, {"zero.parquet"});
  refused({10, 5}, {good, named(MixturePart::proportion(-0.5), "negative.parquet")}, {"negative.parquet"});
  refused({10, 5}, {good, named(MixturePart::proportion(nan), "nan.parquet")}, {"nan.parquet"});
  refused({10, 5}, {good, named(MixturePart::proportion(inf), "inf.parquet")}, {"inf.parquet"});
  refused({10, 5}, {named(MixturePart::repeat(1), "a"), named(MixturePart::repeat(0), "zero.tar")}, {"zero.tar"});
  refused({10, 5}, {named(MixturePart::repeat(1), "a"), named(MixturePart::repeat(nan), "nan.tar")}, {"nan.tar"});
  refused({10, 5}, {named(MixturePart::repeat(1), "a"), named(MixturePart::count(0), "none.tar")}, {"none.tar"});
  refused({10, 5}, {named(MixturePart::repeat(1), "a"), named(MixturePart::count(-3), "minus.tar")}, {"minus.tar"});
  refused({10, 5}, {good, named(MixturePart::repeat(1), "repeat.tar")}, {"repeat.tar"});
  refused({10, 5}, {good, named(MixturePart::count(4), "count.tar")}, {"count.tar"});
  MixturePart mapped = named(MixturePart::proportion(1), "mapped.parquet");
  mapped.label_map = {0, -1, 2};
  refused({10, 5}, {good, mapped}, {"mapped.parquet"});
  refused({10, 5}, {good, named(MixturePart::proportion(1), "b")}, {"-5"}, -5);
  refused({10, 5}, {good, named(MixturePart::proportion(1), "blocks.parquet")}, {"blocks.parquet"}, 0, {{}, {2, 2}});
  // Every source rounds to no samples: an epoch of none. And sources without parts, or none at all.
  EXPECT_THROW(MixturePlan({10, 10}, {MixturePart::repeat(0.01), MixturePart::repeat(0.01)}), InvalidArgument);
  EXPECT_THROW(MixturePlan({10, 10}, {MixturePart::repeat(1)}), InvalidArgument);
  EXPECT_THROW(MixturePlan({}, {}), InvalidArgument);
  EXPECT_NO_THROW(MixturePlan({10, 5}, {good, MixturePart::proportion(1)}, 0, {{5, 5}, {}}));
}

// ------------------------------------------------------------------------------------------ the order it deals

// The largest distance between `p` and the share of source 0 in any `window` consecutive positions of `order`.
double worst_window(const MixturePlan& plan, const std::vector<int64_t>& order, int64_t window, double p) {
  std::vector<int64_t> from0(order.size() + 1, 0);
  for (size_t i = 0; i < order.size(); ++i) from0[i + 1] = from0[i] + (plan.source_of(order[i]) == 0 ? 1 : 0);
  double worst = 0;
  for (size_t start = 0; start + static_cast<size_t>(window) <= order.size(); ++start) {
    const double share = static_cast<double>(from0[start + static_cast<size_t>(window)] - from0[start]) / window;
    worst = std::max(worst, std::abs(share - p));
  }
  return worst;
}

TEST(MixturePlan, EveryStretchOfAnEpochHoldsTheSharesWithinBinomialBounds) {
  const MixturePlan plan({6000, 5000}, {MixturePart::proportion(0.8), MixturePart::proportion(0.2)}, 10000);
  ASSERT_EQ(plan.counts(), (Sizes{8000, 2000}));
  const int64_t window = 500;
  const double p = 0.8, sd = std::sqrt(p * (1 - p) / window);
  for (const uint64_t seed : {1, 2, 3}) {
    for (const int64_t epoch : {0, 1}) {
      const std::vector<int64_t> order = plan.epoch_order(true, seed, epoch);
      ASSERT_EQ(order.size(), 10000u);
      EXPECT_EQ(per_source(plan, order), plan.counts()) << "seed " << seed << ", epoch " << epoch;
      EXPECT_LE(worst_window(plan, order, window, p), 5 * sd) << "seed " << seed << ", epoch " << epoch;
      // Shuffled: not the sources taking turns.
      EXPECT_NE(order, plan.epoch_order(false, seed, epoch));
    }
  }
  // Unshuffled, the sources take turns by their shares: every window within a sample or two of its share.
  const std::vector<int64_t> even = plan.epoch_order(false, 0, 0);
  EXPECT_EQ(per_source(plan, even), plan.counts());
  EXPECT_LE(worst_window(plan, even, window, p) * window, 2.0);
  EXPECT_LE(worst_window(plan, even, 10, p) * 10, 2.0);
}

TEST(MixturePlan, RepeatOneGivesEverySampleOnceAnEpochAndRepeatTwoTwice) {
  const MixturePlan plan({30, 40, 25}, {MixturePart::repeat(1), MixturePart::repeat(0.5), MixturePart::repeat(2)});
  ASSERT_EQ(plan.counts(), (Sizes{30, 20, 50}));
  for (const bool shuffle : {true, false}) {
    std::vector<int64_t> halves;  // the repeat-0.5 source's samples over epochs 0 and 1
    for (int64_t epoch = 0; epoch < 3; ++epoch) {
      const std::vector<int64_t> order = plan.epoch_order(shuffle, 7, epoch);
      ASSERT_EQ(static_cast<int64_t>(order.size()), plan.epoch_length());
      const auto d = draws(plan, order);
      EXPECT_EQ(plan.split(order), d) << "epoch " << epoch;
      EXPECT_EQ(sorted(d[0]), range(0, 30)) << "shuffle " << shuffle << ", epoch " << epoch;
      const std::vector<int64_t> half = sorted(d[1]);
      EXPECT_EQ(half.size(), 20u);
      EXPECT_EQ(std::adjacent_find(half.begin(), half.end()), half.end()) << "a sample twice in epoch " << epoch;
      if (epoch < 2) halves.insert(halves.end(), half.begin(), half.end());
      EXPECT_EQ(sorted(d[2]), twice(range(0, 25))) << "shuffle " << shuffle << ", epoch " << epoch;
    }
    EXPECT_EQ(sorted(halves), range(0, 40)) << "shuffle " << shuffle;
  }
}

TEST(MixturePlan, ASourceDealsWithoutReplacementWithinAPass) {
  const int64_t n = 20;
  const MixturePlan plan({n, 16}, {MixturePart::count(3 * n / 2), MixturePart::repeat(1)});
  const std::vector<int64_t> e0 = draws(plan, plan.epoch_order(true, 4, 0))[0];
  const std::vector<int64_t> e1 = draws(plan, plan.epoch_order(true, 4, 1))[0];
  ASSERT_EQ(e0.size(), 30u);
  ASSERT_EQ(e1.size(), 30u);
  // Pass 0 is epoch 0's first 20 draws; pass 1 the rest of epoch 0 and the start of epoch 1; pass 2 the rest.
  const std::vector<int64_t> pass0(e0.begin(), e0.begin() + n);
  std::vector<int64_t> pass1(e0.begin() + n, e0.end());
  pass1.insert(pass1.end(), e1.begin(), e1.begin() + n / 2);
  const std::vector<int64_t> pass2(e1.begin() + n / 2, e1.end());
  EXPECT_EQ(sorted(pass0), range(0, n));
  EXPECT_EQ(sorted(pass1), range(0, n));
  EXPECT_EQ(sorted(pass2), range(0, n));
  // Each pass is a permutation of its own.
  EXPECT_NE(pass0, range(0, n));
  EXPECT_NE(pass0, pass1);
  EXPECT_NE(pass1, pass2);
  // The order is a function of (seed, epoch): the same for another plan of the same parts, another for another.
  const MixturePlan again({n, 16}, {MixturePart::count(3 * n / 2), MixturePart::repeat(1)});
  EXPECT_EQ(plan.epoch_order(true, 4, 1), again.epoch_order(true, 4, 1));
  EXPECT_NE(plan.epoch_order(true, 4, 0), plan.epoch_order(true, 4, 1));
  EXPECT_NE(plan.epoch_order(true, 4, 0), plan.epoch_order(true, 5, 0));
}

TEST(MixturePlan, UnshuffledEachSourceDealsInItsOwnOrder) {
  const MixturePlan plan({20, 16}, {MixturePart::count(30), MixturePart::repeat(1)});
  std::vector<int64_t> e0 = range(0, 20), e1 = range(10, 20);
  const std::vector<int64_t> head = range(0, 10), whole = range(0, 20);
  e0.insert(e0.end(), head.begin(), head.end());
  e1.insert(e1.end(), whole.begin(), whole.end());
  EXPECT_EQ(draws(plan, plan.epoch_order(false, 4, 0)), (std::vector<std::vector<int64_t>>{e0, range(0, 16)}));
  EXPECT_EQ(draws(plan, plan.epoch_order(false, 4, 1)), (std::vector<std::vector<int64_t>>{e1, range(0, 16)}));
  EXPECT_EQ(plan.epoch_order(false, 4, 0), plan.epoch_order(false, 99, 0)) << "no seed without shuffle";
  // Evenly interleaved: every prefix holds source 0's share to within a sample or two.
  const std::vector<int64_t> order = plan.epoch_order(false, 4, 0);
  int64_t from0 = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    from0 += plan.source_of(order[k]) == 0 ? 1 : 0;
    EXPECT_LE(std::abs(static_cast<double>(from0) - 30.0 / 46.0 * static_cast<double>(k + 1)), 2.0) << k;
  }
}

// ------------------------------------------------------------------------------------------ MixtureDataset

std::shared_ptr<const MixtureDataset> mixture(std::vector<std::shared_ptr<const Dataset>> sources, Parts parts,
                                              int64_t epoch_size = 0) {
  return std::make_shared<MixtureDataset>(std::move(sources), std::move(parts), epoch_size);
}

// 37 samples once an epoch and 43 of 23: an epoch of 80.
std::shared_ptr<const MixtureDataset> two_sources() {
  return mixture({id_dataset(0, 37), id_dataset(1, 23)}, {MixturePart::repeat(1), MixturePart::count(43)});
}

TEST(MixtureDataset, RelabelsEachSourceInGetAndGetBatch) {
  MixturePart mapped = MixturePart::repeat(1), shifted = MixturePart::repeat(1), both = MixturePart::repeat(1);
  mapped.label_map = {2, 0, 1};
  shifted.label_offset = 3;
  both.label_map = {1, 0};
  both.label_offset = 10;
  const MixturePart plain = MixturePart::repeat(1);
  const auto ds = mixture({id_dataset(0, 12, 3), id_dataset(1, 8, 4), id_dataset(2, 6, 2), id_dataset(3, 5, 5)},
                          {mapped, shifted, both, plain});
  ASSERT_EQ(ds->size(), 31);
  EXPECT_EQ(ds->mixture(), &ds->plan());
  const MixturePlan& plan = ds->plan();
  EXPECT_TRUE(plan.relabels(0));
  EXPECT_FALSE(plan.relabels(3));
  // What each source's own label becomes, and the label of the mixture's sample `index`.
  const std::vector<int64_t> classes{3, 4, 2, 5};
  const auto relabelled = [](size_t s, int64_t own) -> int64_t {
    switch (s) {
      case 0: return std::vector<int64_t>{2, 0, 1}[static_cast<size_t>(own)];
      case 1: return own + 3;
      case 2: return std::vector<int64_t>{1, 0}[static_cast<size_t>(own)] + 10;
      default: return own;
    }
  };
  const auto own_label = [&](int64_t index) {
    const size_t s = plan.source_of(index);
    return (index - plan.offset(s)) % classes[s];
  };
  const auto label = [&](int64_t index) { return relabelled(plan.source_of(index), own_label(index)); };
  std::vector<int64_t> indices;
  for (int64_t index = 0; index < ds->size(); ++index) {
    const Example e = ds->get(index);
    EXPECT_EQ(e.data.item<float>(), static_cast<float>(id_of(plan, index))) << index;
    EXPECT_EQ(e.target.item<int64_t>(), label(index)) << index;
    EXPECT_EQ(plan.label(plan.source_of(index), own_label(index)), label(index)) << index;
    indices.insert(indices.begin(), index);  // reversed, the sources mixed
  }
  indices.push_back(20);  // and a sample twice
  const Example batch = ds->get_batch(indices);
  EXPECT_EQ(batch.data.sizes(), (std::vector<int64_t>{32, 1, 1, 1}));
  const std::vector<int64_t> held = ids(batch), targets = to_vector(batch.target);
  ASSERT_EQ(held.size(), indices.size());
  ASSERT_EQ(targets.size(), indices.size());
  for (size_t k = 0; k < indices.size(); ++k) {
    EXPECT_EQ(held[k], id_of(plan, indices[k])) << k;
    EXPECT_EQ(targets[k], label(indices[k])) << k;
  }
  // A label the map does not hold.
  MixturePart short_map = named(MixturePart::repeat(1), "short.parquet");
  short_map.label_map = {0, 1};
  expect_error<InvalidArgument>(
      [&] { mixture({id_dataset(0, 6, 3), id_dataset(1, 4)}, {short_map, MixturePart::repeat(1)})->get(2); },
      "short.parquet");
  const MixturePlan short_plan({6}, {short_map});
  expect_error<InvalidArgument>([&] { short_plan.label(0, 2); }, "short.parquet");
  EXPECT_EQ(short_plan.label(0, 1), 1);
}

TEST(MixtureDataset, RefusesToRelabelTargetsThatAreNotClasses) {
  const auto scores = [](int64_t n) {
    return std::make_shared<TensorDataset>(torch::zeros({n, 1, 1, 1}), torch::rand({n}), false);
  };
  // Float targets mix as they are...
  const auto kept = mixture({scores(5), scores(4)}, {MixturePart::repeat(1), MixturePart::repeat(1)});
  EXPECT_EQ(kept->get_batch({0, 6}).target.dtype(), torch::kFloat32);
  // ...but are no class to relabel.
  MixturePart shifted = named(MixturePart::repeat(1), "scores.parquet");
  shifted.label_offset = 1;
  expect_error<InvalidArgument>([&] { mixture({scores(5), scores(4)}, {MixturePart::repeat(1), shifted}); },
                                "scores.parquet");
}

TEST(MixtureDataset, RefusesSourcesThatDisagreeNamingThem) {
  const Parts parts{named(MixturePart::repeat(1), "a.bin"), named(MixturePart::repeat(1), "b.bin")};
  const auto labels = torch::zeros({4}, torch::kInt64);
  const auto refused = [&](std::shared_ptr<const Dataset> second, const std::vector<std::string>& needles) {
    expect_error<InvalidArgument>([&] { mixture({id_dataset(0, 4), second}, parts); }, needles);
  };
  refused(std::make_shared<TensorDataset>(torch::zeros({4, 1, 2, 3}), labels), {"b.bin", "[1, 1, 1]", "[1, 2, 3]"});
  refused(std::make_shared<TensorDataset>(torch::zeros({4, 1, 1, 1}, torch::kFloat64), labels),
          {"b.bin", "Float", "Double"});
  refused(std::make_shared<TensorDataset>(torch::zeros({4, 1, 1, 1}), torch::zeros({4, 2}, torch::kInt64), false),
          {"b.bin"});
  refused(std::make_shared<TensorDataset>(torch::zeros({4, 1, 1, 1}), torch::zeros({4}), false), {"b.bin"});
  refused(std::make_shared<DeviceDataset>(torch::zeros({4, 1, 1, 1}), labels, torch::kCPU), {"b.bin"});
  refused(testing::varying_dataset(4), {"b.bin", "MixtureSource"});
  EXPECT_THROW(mixture({}, {}), InvalidArgument);
  expect_error<InvalidArgument>([&] { mixture({id_dataset(0, 4), id_dataset(1, 0)}, parts); }, "b.bin");
}

// ------------------------------------------------------------------------------------------ the loader

TEST(MixtureLoader, SameBatchesForAnyWorkerCountHoldingThePlansOrder) {
  const auto ds = two_sources();
  const MixturePlan& plan = ds->plan();
  ASSERT_EQ(plan.epoch_length(), 80);
  const std::vector<int64_t> order = plan.epoch_order(true, 3, 1);
  std::vector<Example> reference;
  for (const int64_t workers : {0, 1, 2, 4}) {
    for (const bool batch_fetch : {true, false}) {
      const std::string what = std::to_string(workers) + " workers, batch fetch " + std::to_string(batch_fetch);
      Loader loader(ds, LoaderOptions(7).shuffle(true).seed(3).num_workers(workers).batch_fetch(batch_fetch));
      EXPECT_EQ(loader.batches_per_epoch(), 12) << what;
      EXPECT_EQ(loader.epoch_indices(1), order) << what;
      loader.set_epoch(1);
      const Drained got = drain(loader.epoch());
      EXPECT_EQ(got.stats.source_samples, plan.counts()) << what;
      EXPECT_EQ(got.stats.samples, 80) << what;
      if (reference.empty()) {
        reference = got.batches;
        size_t at = 0;
        for (const Example& b : reference) {
          const std::vector<int64_t> held = ids(b), targets = to_vector(b.target);
          for (size_t i = 0; i < held.size(); ++i, ++at) {
            ASSERT_LT(at, order.size());
            EXPECT_EQ(held[i], id_of(plan, order[at])) << "position " << at;
            EXPECT_EQ(targets[i], (order[at] - plan.offset(plan.source_of(order[at]))) % 5) << "position " << at;
          }
        }
        EXPECT_EQ(at, order.size());
      } else {
        expect_same(got.batches, reference, what);
      }
    }
  }
  // Unshuffled, the loader takes the plan's unshuffled order.
  EXPECT_EQ(Loader(ds, LoaderOptions(7)).epoch_indices(2), plan.epoch_order(false, 0, 2));
}

TEST(MixtureLoader, ResumesMidEpochBitForBit) {
  const auto ds = two_sources();
  const auto options = LoaderOptions(6).shuffle(true).seed(8).num_workers(2);
  Loader whole(ds, options);
  whole.set_epoch(2);
  const Drained all = drain(whole.epoch());
  ASSERT_EQ(all.batches.size(), 14u);
  Loader first(ds, options);
  first.set_epoch(2);
  LoaderState state;
  {
    Epoch epoch = first.epoch();
    for (int k = 0; k < 5; ++k) ASSERT_TRUE(epoch.next().has_value());
    state = first.state_dict();
  }
  EXPECT_EQ(state.epoch, 2);
  EXPECT_EQ(state.batch, 5);
  EXPECT_EQ(state.samples, 80);
  for (const int64_t workers : {0, 3}) {
    Loader second(ds, LoaderOptions(options).num_workers(workers));
    second.load_state_dict(state);
    const Drained rest = drain(second.epoch());
    expect_same(rest.batches, std::vector<Example>(all.batches.begin() + 5, all.batches.end()), "resumed");
    // The resumed epoch counts the batches it handed out.
    const std::vector<int64_t> order = ds->plan().epoch_order(true, 8, 2);
    EXPECT_EQ(rest.stats.source_samples, per_source(ds->plan(), std::vector<int64_t>(order.begin() + 30, order.end())));
  }
  // Another mixture of the same sources, another epoch length: refused.
  const auto other = mixture({id_dataset(0, 37), id_dataset(1, 23)}, {MixturePart::repeat(1), MixturePart::count(44)});
  Loader third(other, options);
  expect_error<InvalidArgument>([&] { third.load_state_dict(state); }, "80");
}

// Global batch k of `epoch` as `world` ranks of batch global / world see it: the ranks' samples, sorted.
std::vector<std::vector<int64_t>> global_batches(const std::shared_ptr<const Dataset>& ds, int64_t world,
                                                 int64_t global, int64_t epoch, const LoaderState* state = nullptr) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t rank = 0; rank < world; ++rank) {
    Loader loader(ds, LoaderOptions(global / world).shuffle(true).seed(5).rank(rank).world_size(world).num_workers(1));
    if (state != nullptr) {
      loader.load_state_dict(*state);
    } else {
      loader.set_epoch(epoch);
    }
    const Drained got = drain(loader.epoch());
    for (size_t k = 0; k < got.batches.size(); ++k) {
      if (out.size() <= k) out.emplace_back();
      const std::vector<int64_t> held = ids(got.batches[k]);
      out[k].insert(out[k].end(), held.begin(), held.end());
    }
  }
  for (auto& b : out) std::sort(b.begin(), b.end());
  return out;
}

TEST(MixtureLoader, ResumesOnAnotherWorldSizeWithTheSameGlobalBatch) {
  const auto ds = two_sources();
  const std::vector<int64_t> order = ds->plan().epoch_order(true, 5, 1);
  // Global batch k holds positions [16k, 16k + 16) of the epoch's order, for any number of ranks.
  std::vector<std::vector<int64_t>> expected;
  for (size_t k = 0; k < 5; ++k) {
    expected.emplace_back();
    for (size_t at = 16 * k; at < 16 * (k + 1); ++at) expected.back().push_back(id_of(ds->plan(), order[at]));
    std::sort(expected.back().begin(), expected.back().end());
  }
  for (const int64_t world : {1, 2, 4}) EXPECT_EQ(global_batches(ds, world, 16, 1), expected) << world << " ranks";
  // Saved by 2 ranks of 8 after 2 batches of epoch 1, resumed on 4 ranks of 4 and on 1 of 16.
  Loader saved(ds, LoaderOptions(8).shuffle(true).seed(5).rank(1).world_size(2));
  saved.set_epoch(1);
  LoaderState state;
  {
    Epoch epoch = saved.epoch();
    ASSERT_TRUE(epoch.next().has_value());
    ASSERT_TRUE(epoch.next().has_value());
    state = saved.state_dict();
  }
  const std::vector<std::vector<int64_t>> rest(expected.begin() + 2, expected.end());
  EXPECT_EQ(global_batches(ds, 4, 16, 1, &state), rest);
  EXPECT_EQ(global_batches(ds, 1, 16, 1, &state), rest);
}

TEST(MixtureLoader, RanksTakeTheEpochsOrderByStride) {
  // Repeat 2: the order holds every index twice, so the ranks' shares are compared as multisets of positions.
  const auto ds = mixture({id_dataset(0, 20), id_dataset(1, 30)}, {MixturePart::repeat(2), MixturePart::repeat(1)});
  const MixturePlan& plan = ds->plan();
  ASSERT_EQ(plan.epoch_length(), 70);
  for (const int64_t world : {2, 5}) {
    const std::vector<int64_t> order = plan.epoch_order(true, 6, 3);
    std::map<int64_t, int64_t> seen, wanted;
    for (const int64_t index : order) ++wanted[index];
    std::vector<int64_t> counted(plan.sources(), 0);
    for (int64_t rank = 0; rank < world; ++rank) {
      Loader loader(ds, LoaderOptions(4).shuffle(true).seed(6).rank(rank).world_size(world));
      const std::vector<int64_t> mine = loader.epoch_indices(3);
      ASSERT_EQ(static_cast<int64_t>(mine.size()), 70 / world);
      for (size_t i = 0; i < mine.size(); ++i) {
        EXPECT_EQ(mine[i], order[static_cast<size_t>(rank) + i * static_cast<size_t>(world)]) << rank << " " << i;
        ++seen[mine[i]];
      }
      loader.set_epoch(3);
      const Drained got = drain(loader.epoch());
      ASSERT_EQ(got.stats.source_samples.size(), plan.sources());
      for (size_t s = 0; s < plan.sources(); ++s) counted[s] += got.stats.source_samples[s];
    }
    EXPECT_EQ(seen, wanted) << world << " ranks";
    EXPECT_EQ(counted, plan.counts()) << "summed over " << world << " ranks";
  }
}

TEST(MixtureLoader, BatchesPerEpochFollowTheEpochLengthNotTheSize) {
  const auto ds = mixture({id_dataset(0, 100), id_dataset(1, 50)}, {MixturePart::repeat(2), MixturePart::repeat(0.5)});
  ASSERT_EQ(ds->size(), 150);
  ASSERT_EQ(ds->plan().epoch_length(), 225);
  Loader loader(ds, LoaderOptions(10).shuffle(true));
  EXPECT_EQ(loader.batches_per_epoch(), 23);
  EXPECT_EQ(loader.state_dict().samples, 225);
  const Drained got = drain(loader.epoch());
  EXPECT_EQ(got.batches.size(), 23u);
  EXPECT_EQ(got.stats.samples, 225);
  EXPECT_EQ(got.stats.source_samples, (Sizes{200, 25}));
  Loader dropping(ds, LoaderOptions(10).shuffle(true).drop_last(true));
  EXPECT_EQ(dropping.batches_per_epoch(), 22);
  const Drained dropped = drain(dropping.epoch());
  EXPECT_EQ(dropped.batches.size(), 22u);
  ASSERT_EQ(dropped.stats.source_samples.size(), 2u);
  EXPECT_EQ(dropped.stats.source_samples[0] + dropped.stats.source_samples[1], 220);
  // 225 over 2 ranks, padded to 113 each.
  EXPECT_EQ(Loader(ds, LoaderOptions(10).world_size(2)).batches_per_epoch(), 12);
  // Any other dataset counts no sources.
  Loader plain(id_dataset(0, 10), LoaderOptions(4));
  EXPECT_TRUE(drain(plain.epoch()).stats.source_samples.empty());
}

// ------------------------------------------------------------------------------------------ MixtureSource

// Encoded sample i of source `id`: its bytes the decimal id x kStride + i, its label i % the classes named.
class IdSource : public SampleSource {
 public:
  IdSource(int64_t id, int64_t n, std::vector<std::string> names, std::vector<int64_t> blocks = {})
      : id_(id), n_(n), names_(std::move(names)), blocks_(std::move(blocks)) {}
  int64_t size() const override { return n_; }
  EncodedSample get(int64_t index) const override {
    if (index < 0 || index >= n_) throw InvalidArgument("IdSource: index " + std::to_string(index));
    return {std::to_string(id_ * kStride + index), index % static_cast<int64_t>(names_.size()),
            "source" + std::to_string(id_) + ":" + std::to_string(index)};
  }
  std::vector<int64_t> labels() const override {
    std::vector<int64_t> out;
    for (int64_t i = 0; i < n_; ++i) out.push_back(i % static_cast<int64_t>(names_.size()));
    return out;
  }
  std::vector<std::string> class_names() const override { return names_; }
  std::vector<int64_t> shuffle_blocks() const override { return blocks_; }

 private:
  int64_t id_, n_;
  std::vector<std::string> names_;
  std::vector<int64_t> blocks_;
};

// Writes the sample's number, then one uniform draw of its generator.
class IdTransform : public SampleTransform {
 public:
  SampleLayout layout() const override { return {{2}, torch::kFloat32}; }
  void apply(const EncodedSample& sample, SampleRng& rng, const torch::Tensor& out) const override {
    out.data_ptr<float>()[0] = static_cast<float>(std::stoll(sample.bytes));
    out.data_ptr<float>()[1] = static_cast<float>(rng.uniform());
  }
};

using Sources = std::vector<std::shared_ptr<const SampleSource>>;

TEST(MixtureSource, AMissingSourceIsRefusedAsByMixtureDataset) {
  const Parts parts{MixturePart::repeat(1), MixturePart::repeat(1)};
  expect_error<InvalidArgument>([&] { mixture({id_dataset(0, 4), nullptr}, parts); }, "source 2");
  const auto a = std::make_shared<IdSource>(0, 4, std::vector<std::string>{"x"});
  expect_error<InvalidArgument>([&] { MixtureSource(Sources{a, nullptr}, parts); }, "source 2");
}

TEST(MixtureSource, ClassesMustAgreeAndMakeTheirUnion) {
  const auto a = std::make_shared<IdSource>(0, 12, std::vector<std::string>{"cat", "dog", "fox"});
  const auto b = std::make_shared<IdSource>(1, 8, std::vector<std::string>{"cat", "wolf"});
  const MixturePart pa = named(MixturePart::repeat(1), "a.tar");
  MixturePart pb = named(MixturePart::repeat(1), "b.tar");
  expect_error<InvalidArgument>([&] { MixtureSource(Sources{a, b}, {pa, pb}); }, {"a.tar", "b.tar", "dog", "wolf"});
  // Shifted past a's classes.
  pb.label_offset = 3;
  const MixtureSource shifted(Sources{a, b}, {pa, pb});
  EXPECT_EQ(shifted.class_names(), (std::vector<std::string>{"cat", "dog", "fox", "cat", "wolf"}));
  // Mapped: b's cat is a's, its wolf a new class.
  pb.label_offset = 0;
  pb.label_map = {0, 3};
  const MixtureSource mapped(Sources{a, b}, {pa, pb});
  EXPECT_EQ(mapped.class_names(), (std::vector<std::string>{"cat", "dog", "fox", "wolf"}));
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < 12; ++i) labels.push_back(i % 3);
  for (int64_t i = 0; i < 8; ++i) labels.push_back(i % 2 == 0 ? 0 : 3);
  EXPECT_EQ(mapped.labels(), labels);
  ASSERT_EQ(mapped.size(), 20);
  for (int64_t index = 0; index < 20; ++index) {
    const EncodedSample s = mapped.get(index);
    EXPECT_EQ(s.label, labels[static_cast<size_t>(index)]) << index;
    EXPECT_EQ(s.bytes, std::to_string(id_of(mapped.plan(), index))) << index;
  }
  EXPECT_EQ(mapped.mixture(), &mapped.plan());
  EXPECT_THROW(MixtureSource(Sources{}, {}), InvalidArgument);
}

TEST(MixtureSource, TheLoaderDealsThePlanWithTheSameBatchesForAnyWorkerCount) {
  const auto a = std::make_shared<IdSource>(0, 17, std::vector<std::string>{"a0", "a1", "a2"});
  const auto b = std::make_shared<IdSource>(1, 9, std::vector<std::string>{"b0", "b1"});
  MixturePart pb = MixturePart::repeat(2);
  pb.label_offset = 3;
  const auto source = std::make_shared<MixtureSource>(Sources{a, b}, Parts{MixturePart::repeat(1), pb});
  const auto ds = std::make_shared<EncodedDataset>(source, std::make_shared<IdTransform>());
  ASSERT_EQ(ds->mixture(), &source->plan());
  const MixturePlan& plan = source->plan();
  ASSERT_EQ(plan.epoch_length(), 35);
  const std::vector<int64_t> order = plan.epoch_order(true, 9, 2);
  std::vector<Example> reference;
  for (const int64_t workers : {0, 1, 2, 4}) {
    Loader loader(ds, LoaderOptions(4).shuffle(true).seed(9).num_workers(workers));
    EXPECT_EQ(loader.batches_per_epoch(), 9);
    EXPECT_EQ(loader.epoch_indices(2), order);
    loader.set_epoch(2);
    const Drained got = drain(loader.epoch());
    EXPECT_EQ(got.stats.source_samples, plan.counts()) << workers << " workers";
    if (!reference.empty()) {
      expect_same(got.batches, reference, std::to_string(workers) + " workers");
      continue;
    }
    reference = got.batches;
    size_t at = 0;
    for (const Example& batch : reference) {
      const std::vector<int64_t> held = ids(batch), targets = to_vector(batch.target);
      for (size_t i = 0; i < held.size(); ++i, ++at) {
        ASSERT_LT(at, order.size());
        const int64_t index = order[at];
        const int64_t own = index - plan.offset(plan.source_of(index));
        EXPECT_EQ(held[i], id_of(plan, index)) << "position " << at;
        EXPECT_EQ(targets[i], plan.source_of(index) == 0 ? own % 3 : own % 2 + 3) << "position " << at;
        // Its randomness: its index in the mixture's.
        EXPECT_EQ(batch.data[static_cast<int64_t>(i)][1].item<float>(),
                  static_cast<float>(SampleRng(9, 2, index).uniform()))
            << "position " << at;
      }
    }
    EXPECT_EQ(at, order.size());
  }
}

TEST(MixtureSource, ASourceReadInBlocksDealsEachBlockWhole) {
  const Sizes blocks{10, 10, 10, 10};
  const auto a = std::make_shared<IdSource>(0, 40, std::vector<std::string>{"x"}, blocks);
  const auto b = std::make_shared<IdSource>(1, 30, std::vector<std::string>{"x"});
  for (const double repeat : {1.0, 0.5}) {
    const MixtureSource source(Sources{a, b}, Parts{MixturePart::repeat(repeat), MixturePart::repeat(1)});
    EXPECT_TRUE(source.shuffle_blocks().empty());
    const MixturePlan& plan = source.plan();
    bool shuffled = false;
    for (const uint64_t seed : {1, 2}) {
      std::vector<int64_t> pass;  // source a's draws over epochs, a pass each 40
      for (int64_t epoch = 0; epoch < 4; ++epoch) {
        const std::vector<int64_t> mine = draws(plan, plan.epoch_order(true, seed, epoch))[0];
        ASSERT_EQ(static_cast<double>(mine.size()), 40 * repeat);
        pass.insert(pass.end(), mine.begin(), mine.end());
      }
      for (size_t from = 0; from < pass.size(); from += 40) {
        const std::vector<int64_t> one(pass.begin() + static_cast<std::ptrdiff_t>(from),
                                       pass.begin() + static_cast<std::ptrdiff_t>(from + 40));
        EXPECT_EQ(sorted(one), range(0, 40)) << "a pass is a permutation, seed " << seed;
        if (one != range(0, 40)) shuffled = true;
        // Ten draws in a row hold one block's ten samples.
        for (size_t k = 0; k < 40; k += 10) {
          const std::vector<int64_t> run(one.begin() + static_cast<std::ptrdiff_t>(k),
                                         one.begin() + static_cast<std::ptrdiff_t>(k + 10));
          const int64_t block = run[0] / 10;
          EXPECT_EQ(sorted(run), range(block * 10, block * 10 + 10))
              << "seed " << seed << ", repeat " << repeat << ", pass from " << from << ", draws " << k;
        }
      }
    }
    EXPECT_TRUE(shuffled) << "repeat " << repeat;
  }
}

}  // namespace
}  // namespace feedline
