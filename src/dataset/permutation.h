// The sampler's permutation, shared by the loader (an epoch's order) and mixtures (each pass over a source): drawn
// from (seed, epoch) by our own generator, never torch's, so a seed gives the same order on every platform.
// Thread-safety: pure functions (a generator belongs to its caller).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace feedline::detail {

// Fisher-Yates over [first, first + n) with our own unbiased bounded draw (draw_below), the same everywhere.
void shuffle_range(int64_t* first, int64_t n, std::mt19937_64& gen);

// Fisher-Yates over [first, first + n) drawing from SplitMix64 (SampleRng's stream for `seed`, `stream`) with
// Lemire's multiply-and-shift bound, unbiased and without a division in the common case: several times faster than
// shuffle_range, for orders of its own (a mixture's); the loader's permutation keeps shuffle_range, so a seed keeps
// giving the orders it always gave.
void fast_shuffle(int64_t* first, int64_t n, uint64_t seed, int64_t stream);

// 0..n-1, shuffled unless `shuffle` is false. With blocks (Dataset::shuffle_blocks(): their sizes, in index order),
// the blocks' order is shuffled and then the samples inside each block, so the order reads each block once, in one
// stretch. Throws InvalidArgument for a negative block or blocks that do not sum to n.
std::vector<int64_t> epoch_permutation(int64_t n, bool shuffle, uint64_t seed, int64_t epoch,
                                       const std::vector<int64_t>& blocks);

}  // namespace feedline::detail
