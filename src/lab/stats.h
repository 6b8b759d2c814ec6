// The few statistics the benchmark lab reports with its timings: quantiles, and how far a median can be trusted.
#pragma once

#include <optional>
#include <vector>

namespace feedline::lab {

// The q-quantile of v, interpolating between the two nearest ranks (q = 0.5: the median); 0 for no values.
double quantile(std::vector<double> v, double q);

// A confidence interval for the median of the distribution that independent values came from, with no
// assumption on its shape: the order statistics (x(k), x(n+1-k)) of the sign test, for the largest k whose
// coverage, 1 - 2 P(Binomial(n, 1/2) < k), is still at least `level`. The coverage is exact, so it is usually
// a little above `level` (96.1% for 9 values at 95%). None when there are too few values for any interval to
// reach `level` (fewer than 6 at 95%): then even (x(1), x(n)) misses the median too often.
struct MedianInterval {
  double low = 0, high = 0;
  double coverage = 0;
};
std::optional<MedianInterval> median_interval(std::vector<double> v, double level = 0.95);

}  // namespace feedline::lab
