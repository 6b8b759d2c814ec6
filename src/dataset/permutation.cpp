#include "dataset/permutation.h"

#include <random>
#include <string>
#include <utility>

#include "feedline/dataset/encoded.h"
#include "feedline/io/error.h"

namespace feedline::detail {

// Fisher-Yates over [first, first + n) with our own unbiased bounded draw, so a seed gives the same order everywhere.
void shuffle_range(int64_t* first, int64_t n, std::mt19937_64& gen) {
  for (int64_t i = n - 1; i > 0; --i) std::swap(first[i], first[draw_below(gen, static_cast<uint64_t>(i) + 1)]);
}

void fast_shuffle(int64_t* first, int64_t n, uint64_t seed, int64_t stream) {
  SampleRng rng(seed, stream, 0);
  for (int64_t i = n - 1; i > 0; --i) {
    const auto range = static_cast<uint64_t>(i) + 1;
    auto m = static_cast<unsigned __int128>(rng()) * range;
    auto low = static_cast<uint64_t>(m);
    if (low < range) {
      const uint64_t threshold = (0 - range) % range;  // 2^64 mod range: the draws below it are rejected
      while (low < threshold) {
        m = static_cast<unsigned __int128>(rng()) * range;
        low = static_cast<uint64_t>(m);
      }
    }
    std::swap(first[i], first[static_cast<int64_t>(m >> 64)]);
  }
}

std::vector<int64_t> epoch_permutation(int64_t n, bool shuffle, uint64_t seed, int64_t epoch,
                                       const std::vector<int64_t>& blocks) {
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) idx[static_cast<size_t>(i)] = i;
  if (!shuffle || n < 2) return idx;
  std::mt19937_64 gen(mix64(seed ^ mix64(static_cast<uint64_t>(epoch))));
  if (blocks.empty()) {
    shuffle_range(idx.data(), n, gen);
    return idx;
  }
  std::vector<int64_t> starts{0};
  for (const int64_t b : blocks) {
    if (b < 0) throw InvalidArgument("Loader: a dataset's shuffle block has a negative size");
    starts.push_back(starts.back() + b);
  }
  if (starts.back() != n) {
    throw InvalidArgument("Loader: the dataset's shuffle blocks hold " + std::to_string(starts.back()) +
                          " samples, not its " + std::to_string(n));
  }
  std::vector<int64_t> order(blocks.size());
  for (size_t b = 0; b < order.size(); ++b) order[b] = static_cast<int64_t>(b);
  shuffle_range(order.data(), static_cast<int64_t>(order.size()), gen);
  size_t at = 0;
  for (const int64_t b : order) {
    const size_t begin = at;
    for (int64_t i = starts[static_cast<size_t>(b)]; i < starts[static_cast<size_t>(b) + 1]; ++i) idx[at++] = i;
    shuffle_range(idx.data() + begin, static_cast<int64_t>(at - begin), gen);
  }
  return idx;
}

}  // namespace feedline::detail
