// SampleRng: the random generator of one sample's transform, seeded from (seed, epoch, sample index) alone. A
// counter-based scheme (SplitMix64 over the three), so that a sample's draws do not depend on which worker makes
// it, in which batch, or after which other samples: the same seed gives the same augmented epoch for any worker
// count, and a resumed epoch makes exactly the samples the uninterrupted one would have.
// Thread-safety: a SampleRng is a small value owned by the thread that made it; mix64() is a pure function.
#pragma once

#include <cstdint>

namespace feedline {

// SplitMix64's step: the finaliser of x plus the golden-ratio increment. A bijection that spreads neighbouring
// inputs (seeds, epochs, indices) over unrelated outputs.
inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Uniform in [0, bound) from 64 random bits of `gen` at a time, without bias (it draws again above the largest
// multiple of bound); 0 for a bound of 0. Our own draw, never std::uniform_int_distribution, which differs between
// standard libraries: a seed gives the same values everywhere.
template <typename Generator>
uint64_t draw_below(Generator& gen, uint64_t bound) {
  if (bound == 0) return 0;
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t r;
  do {
    r = gen();
  } while (r >= limit);
  return r % bound;
}

class SampleRng {
 public:
  using result_type = uint64_t;

  // The stream of sample `index` in epoch `epoch` of a loader seeded `seed`.
  SampleRng(uint64_t seed, int64_t epoch, int64_t index)
      : state_(mix64(mix64(mix64(seed) + static_cast<uint64_t>(epoch)) + static_cast<uint64_t>(index))) {}

  // The next 64 random bits (a UniformRandomBitGenerator, for code that wants one; the standard distributions
  // differ between libraries, so draws meant to reproduce everywhere use uniform() and below()).
  uint64_t operator()() {
    const uint64_t out = mix64(state_);
    state_ += 0x9E3779B97F4A7C15ULL;
    return out;
  }
  static constexpr uint64_t min() { return 0; }
  static constexpr uint64_t max() { return UINT64_MAX; }

  // Uniform in [0, 1), 53 random bits.
  double uniform() { return static_cast<double>((*this)() >> 11) * 0x1.0p-53; }

  // Uniform in [0, bound); see draw_below().
  uint64_t below(uint64_t bound) { return draw_below(*this, bound); }

 private:
  uint64_t state_;
};

}  // namespace feedline
