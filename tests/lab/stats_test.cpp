// The lab's statistics: quantiles, and the sign test's confidence interval for a median.
#include "lab/stats.h"

#include <gtest/gtest.h>

#include <vector>

namespace feedline::lab {
namespace {

TEST(Stats, QuantileInterpolatesBetweenRanks) {
  EXPECT_DOUBLE_EQ(quantile({3, 1, 2}, 0.5), 2);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 1.0), 4);
  EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0);
}

// The ranks and coverages of the textbook tables (e.g. Conover, Practical Nonparametric Statistics), for values
// given out of order.
TEST(Stats, MedianIntervalTakesTheSignTestsOrderStatistics) {
  const std::vector<double> nine = {0.05, 0.01, 0.08, 0.00, 0.03, 0.07, 0.02, 0.06, 0.04};
  const auto ci9 = median_interval(nine);
  ASSERT_TRUE(ci9.has_value());
  EXPECT_DOUBLE_EQ(ci9->low, 0.01);  // x(2)
  EXPECT_DOUBLE_EQ(ci9->high, 0.07);  // x(8)
  EXPECT_NEAR(ci9->coverage, 1 - 2 * 10.0 / 512, 1e-12);  // 1 - 2 P(X <= 1), X ~ Binomial(9, 1/2)

  std::vector<double> hundred;
  for (int i = 100; i >= 1; --i) hundred.push_back(i);
  const auto ci100 = median_interval(hundred);
  ASSERT_TRUE(ci100.has_value());
  EXPECT_DOUBLE_EQ(ci100->low, 40);
  EXPECT_DOUBLE_EQ(ci100->high, 61);
  EXPECT_NEAR(ci100->coverage, 0.9648, 1e-4);

  // Six values are the fewest with a 95% interval: the extremes, at 1 - 2/64.
  const auto ci6 = median_interval({6, 5, 4, 3, 2, 1});
  ASSERT_TRUE(ci6.has_value());
  EXPECT_DOUBLE_EQ(ci6->low, 1);
  EXPECT_DOUBLE_EQ(ci6->high, 6);
  EXPECT_NEAR(ci6->coverage, 1 - 2.0 / 64, 1e-12);
}

TEST(Stats, MedianIntervalNeedsEnoughValuesForItsLevel) {
  EXPECT_FALSE(median_interval({5, 4, 3, 2, 1}).has_value());  // the extremes cover only 1 - 2/32 = 93.75%
  EXPECT_FALSE(median_interval({}).has_value());
  const auto ci90 = median_interval({5, 4, 3, 2, 1}, 0.90);
  ASSERT_TRUE(ci90.has_value());
  EXPECT_DOUBLE_EQ(ci90->low, 1);
  EXPECT_DOUBLE_EQ(ci90->high, 5);
  // A lower level narrows the interval: 9 values at 80% take x(3) and x(7) (1 - 2 * 46/512 = 82%).
  const auto ci80 = median_interval({9, 8, 7, 6, 5, 4, 3, 2, 1}, 0.80);
  ASSERT_TRUE(ci80.has_value());
  EXPECT_DOUBLE_EQ(ci80->low, 3);
  EXPECT_DOUBLE_EQ(ci80->high, 7);
  EXPECT_NEAR(ci80->coverage, 1 - 2 * 46.0 / 512, 1e-12);
}

}  // namespace
}  // namespace feedline::lab
