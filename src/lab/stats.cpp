#include "lab/stats.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace feedline::lab {

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(at);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (at - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

std::optional<MedianInterval> median_interval(std::vector<double> v, double level) {
  const size_t n = v.size();
  if (n == 0) return std::nullopt;
  std::sort(v.begin(), v.end());
  // below = P(Binomial(n, 1/2) < k) for k = 1, 2, ...: the chance that fewer than k values fall below the median,
  // so that x(k) lies above it (and, alike, x(n+1-k) below it). Computed in logs: n may be large.
  const double log_half_n = static_cast<double>(n) * std::log(0.5);
  double below = 0;
  std::optional<MedianInterval> best;
  for (size_t k = 1; 2 * k <= n + 1; ++k) {
    const double log_choose = std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(k)) -
                              std::lgamma(static_cast<double>(n - k) + 2);
    below += std::exp(log_choose + log_half_n);  // + P(exactly k - 1 below)
    const double coverage = 1 - 2 * below;
    if (coverage < level) break;
    best = MedianInterval{v[k - 1], v[n - k], coverage};
  }
  return best;
}

}  // namespace feedline::lab
