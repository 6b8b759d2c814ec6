// For tests of two trainings that must agree up to the order of float additions (two ranks against one process, a
// resumed run against an uninterrupted one, one composition of the step against another). How far such runs drift
// apart depends on the machine's float kernels (BLAS picks its summation order by CPU), so no constant fitted on one
// machine bounds it. The tests measure a yardstick on the machine they run on instead: the same training again with
// each batch's samples in another order, which changes nothing but the order in which a batch's terms are added (the
// loss's mean, the gradients' sums over the batch) — all that splitting a batch over ranks changes. One reordering's
// drift is itself a draw of chance, so the yardstick is the largest of three (reversed, halves swapped, even samples
// before odd ones), and the drift under test must stay within a small multiple of it.
#pragma once

#include <torch/types.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

#include "feedline/loader/loader.h"

namespace feedline::testing {

// How many times the yardstick's drift a comparison may drift.
constexpr double kDriftFactor = 4;

// Batch transforms that put a batch's samples in another order: reversed, halves swapped, even before odd.
inline std::vector<BatchTransform> reorderings() {
  std::vector<BatchTransform> out;
  out.push_back([](Example batch, const BatchInfo&) { return Example{batch.data.flip({0}), batch.target.flip({0})}; });
  out.push_back([](Example batch, const BatchInfo&) {
    const int64_t n = batch.data.size(0);
    return Example{batch.data.roll(n / 2, 0), batch.target.roll(n / 2, 0)};
  });
  out.push_back([](Example batch, const BatchInfo&) {
    const int64_t n = batch.data.size(0);
    const auto index = torch::cat({torch::arange(0, n, 2), torch::arange(1, n, 2)}).to(batch.data.device());
    return Example{batch.data.index_select(0, index), batch.target.index_select(0, index)};
  });
  return out;
}

// The norm of the difference of two lists of weights over all of them, relative to the norm of the first list.
inline double relative_distance(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const auto x = a[i].detach().cpu().to(torch::kFloat64);
    const auto y = b[i].detach().cpu().to(torch::kFloat64);
    diff += (x - y).pow(2).sum().item<double>();
    norm += x.pow(2).sum().item<double>();
  }
  return norm == 0 ? std::sqrt(diff) : std::sqrt(diff / norm);
}

// What a difference of two losses (or other float figures) near `value` may be, given how far the yardstick's differ:
// kDriftFactor times that, and never less than a few roundings of a float of that size.
inline double allowed_gap(double yardstick_gap, double value) {
  return kDriftFactor * std::max(std::abs(yardstick_gap), 8 * static_cast<double>(FLT_EPSILON) * std::abs(value));
}

}  // namespace feedline::testing
