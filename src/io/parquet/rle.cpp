#include "io/parquet/rle.h"

#include <cstring>
#include <utility>

#include "io/cpu.h"

#if defined(FEEDLINE_X86_AVX2)
#include <immintrin.h>
#endif

namespace feedline::parquet {
namespace {

inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// The W bytes at `in` (W <= 8) as a little-endian integer, read in at most two loads that stay within them. (A
// memcpy of W bytes into a zeroed word goes through the stack for W = 3, 5, 6, 7, and the word's load then waits
// for the narrower stores before it: a stall a group.)
template <int W>
inline uint64_t load_le(const uint8_t* in) {
  if constexpr (W == 8) {
    return load64(in);
  } else if constexpr (W > 4) {
    uint32_t lo, hi;  // overlapping: the bytes they share agree
    std::memcpy(&lo, in, 4);
    std::memcpy(&hi, in + W - 4, 4);
    return lo | (uint64_t{hi} << (8 * (W - 4)));
  } else if constexpr (W == 4) {
    uint32_t v;
    std::memcpy(&v, in, 4);
    return v;
  } else if constexpr (W == 3) {
    uint16_t lo;
    std::memcpy(&lo, in, 2);
    return lo | (uint64_t{in[2]} << 16);
  } else if constexpr (W == 2) {
    uint16_t v;
    std::memcpy(&v, in, 2);
    return v;
  } else {
    return in[0];
  }
}

// Eight values of W bits from W bytes. `in` must allow reading 8 bytes past in + W - 1 when W > 8.
template <int W>
inline void unpack8(const uint8_t* in, uint32_t* out) {
  constexpr uint64_t kMask = (uint64_t{1} << W) - 1;
  if constexpr (W <= 8) {
    // All 8 values fit in one 64-bit word.
    const uint64_t word = load_le<W>(in);
    for (int i = 0; i < 8; ++i) out[i] = static_cast<uint32_t>((word >> (i * W)) & kMask);
  } else {
    for (int i = 0; i < 8; ++i) {
      const int bit = i * W;
      out[i] = static_cast<uint32_t>((load64(in + bit / 8) >> (bit % 8)) & kMask);
    }
  }
}

template <int W>
void unpack_groups(const uint8_t* in, size_t groups, uint32_t* out) {
  if constexpr (W == 0) {
    std::memset(out, 0, groups * 8 * sizeof(uint32_t));
  } else if constexpr (W <= 8) {
    for (size_t g = 0; g < groups; ++g) unpack8<W>(in + g * W, out + g * 8);
  } else {
    // Wide values read 8 bytes at a time: groups that end within 8 bytes of the input's end go through a
    // padded copy.
    size_t g = 0;
    const size_t total = groups * W;
    for (; g < groups && g * W + W + 8 <= total; ++g) unpack8<W>(in + g * W, out + g * 8);
    for (; g < groups; ++g) {
      uint8_t padded[W + 8] = {};
      std::memcpy(padded, in + g * W, W);
      unpack8<W>(padded, out + g * 8);
    }
  }
}

using UnpackFn = void (*)(const uint8_t*, size_t, uint32_t*);

struct UnpackTable {
  UnpackFn fns[33];
};

template <int... Ws>
constexpr UnpackTable make_table(std::integer_sequence<int, Ws...>) {
  return UnpackTable{{&unpack_groups<Ws>...}};
}

constexpr UnpackTable kUnpackTable = make_table(std::make_integer_sequence<int, 33>{});

#if defined(FEEDLINE_X86_AVX2)
// With AVX2, a group of eight values of up to 25 bits is unpacked in a few instructions rather than eight shifts
// and masks: its first four values lie in the group's first 16 bytes and its last four in the 16 from byte
// `upper`, each within four bytes of its own. Those 16 bytes go to the two halves of a register; a byte shuffle
// gives each value's four bytes a 32-bit lane, and a shift a lane and a mask finish it.
template <int W>
struct GroupLayout {
  static constexpr int upper = 4 * W / 8;  // the byte that the second half's 16 start at
  alignas(32) uint8_t shuffle[32] = {};
  alignas(32) uint32_t shift[8] = {};
  constexpr GroupLayout() {
    for (int i = 0; i < 8; ++i) {
      const int bit = i * W - (i < 4 ? 0 : 8 * upper);  // within its half's 16 bytes
      for (int k = 0; k < 4; ++k) {
        const int byte = bit / 8 + k;
        shuffle[4 * i + k] = static_cast<uint8_t>(byte < 16 ? byte : 0x80);  // (0x80: a zero byte)
      }
      shift[i] = static_cast<uint32_t>(bit % 8);
    }
  }
};

template <int W>
__attribute__((target("avx2"))) void unpack_run_avx2(const uint8_t* in, size_t groups, uint32_t* out) {
  static_assert(W >= 1 && W <= 25, "a value and its bit offset must fit 32 bits");
  static constexpr GroupLayout<W> kLayout;
  const __m256i shuffle = _mm256_load_si256(reinterpret_cast<const __m256i*>(kLayout.shuffle));
  const __m256i shift = _mm256_load_si256(reinterpret_cast<const __m256i*>(kLayout.shift));
  const __m256i mask = _mm256_set1_epi32(static_cast<int>((uint32_t{1} << W) - 1));
  for (size_t g = 0; g < groups; ++g, in += W, out += 8) {
    const __m128i low = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
    const __m128i high = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + GroupLayout<W>::upper));
    __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(low), high, 1);
    v = _mm256_and_si256(_mm256_srlv_epi32(_mm256_shuffle_epi8(v, shuffle), shift), mask);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), v);
  }
}

// A group reads up to byte `upper` + 15 of its own: the groups whose reads would pass the input's end go through
// the portable routine, and so does a short run (a DELTA_BINARY_PACKED miniblock's four groups), which would
// spend more on the call than it saves.
template <int W>
void unpack_groups_avx2(const uint8_t* in, size_t groups, uint32_t* out) {
  if (groups < 8) return unpack_groups<W>(in, groups, out);
  constexpr size_t kReach = GroupLayout<W>::upper + 16;
  const size_t total = groups * W;
  const size_t direct = total >= kReach ? (total - kReach) / W + 1 : 0;
  const size_t head = direct < groups ? direct : groups;
  unpack_run_avx2<W>(in, head, out);
  if (head < groups) unpack_groups<W>(in + head * W, groups - head, out + head * 8);
}

template <int... Ws>
constexpr UnpackTable make_avx2_table(std::integer_sequence<int, Ws...>) {
  return UnpackTable{{&unpack_groups<0>, &unpack_groups_avx2<Ws + 1>..., &unpack_groups<26>, &unpack_groups<27>,
                      &unpack_groups<28>, &unpack_groups<29>, &unpack_groups<30>, &unpack_groups<31>,
                      &unpack_groups<32>}};
}

constexpr UnpackTable kUnpackTableAvx2 = make_avx2_table(std::make_integer_sequence<int, 25>{});

// The portable table from the start (a constant initialisation, before any other file's static initialisers
// might unpack), the AVX2 one once this file's initialiser has seen the CPU.
const UnpackTable* unpack_table = &kUnpackTable;

const bool kUsesAvx2 = [] {
  if (!cpu_has_avx2()) return false;
  unpack_table = &kUnpackTableAvx2;
  return true;
}();
#else
const UnpackTable* const unpack_table = &kUnpackTable;
#endif

template <class T>
void encode_impl(const T* values, size_t n, int bit_width, std::string* out) {
  const int value_bytes = (bit_width + 7) / 8;
  auto varint = [out](uint64_t v) {
    while (v >= 0x80) {
      out->push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out->push_back(static_cast<char>(v));
  };
  auto run_length_at = [&](size_t i) {
    size_t j = i + 1;
    while (j < n && values[j] == values[i]) ++j;
    return j - i;
  };
  auto emit_rle = [&](uint32_t value, size_t count) {
    while (count > 0) {
      const size_t c = count < 0x7fffffffu ? count : 0x7fffffffu;
      varint(static_cast<uint64_t>(c) << 1);
      for (int b = 0; b < value_bytes; ++b) out->push_back(static_cast<char>((value >> (8 * b)) & 0xff));
      count -= c;
    }
  };
  size_t i = 0;
  while (i < n) {
    const size_t run = run_length_at(i);
    if (run >= 8) {
      emit_rle(static_cast<uint32_t>(values[i]), run);
      i += run;
      continue;
    }
    // Bit-pack groups of 8 until a run of 8 or more starts at a group boundary.
    const size_t start = i;
    size_t groups = 0;
    while (i < n) {
      i += 8;
      ++groups;
      if (i >= n || groups >= (size_t{1} << 30)) break;
      if (i + 1 < n && values[i] == values[i + 1] && run_length_at(i) >= 8) break;
    }
    varint((static_cast<uint64_t>(groups) << 1) | 1);
    const size_t bytes_at = out->size();
    out->resize(bytes_at + groups * static_cast<size_t>(bit_width));
    uint8_t* dst = reinterpret_cast<uint8_t*>(out->data()) + bytes_at;
    uint64_t acc = 0;
    int acc_bits = 0;
    for (size_t k = 0; k < groups * 8; ++k) {
      const size_t idx = start + k;
      const uint64_t v = idx < n ? static_cast<uint64_t>(values[idx]) : 0;
      acc |= v << acc_bits;
      acc_bits += bit_width;
      while (acc_bits >= 8) {
        *dst++ = static_cast<uint8_t>(acc & 0xff);
        acc >>= 8;
        acc_bits -= 8;
      }
    }
    if (i > n) i = n;
  }
}

}  // namespace

void unpack_bits(const uint8_t* in, size_t groups, int bit_width, uint32_t* out) {
  unpack_table->fns[bit_width](in, groups, out);
}

void unpack_bits_portable(const uint8_t* in, size_t groups, int bit_width, uint32_t* out) {
  kUnpackTable.fns[bit_width](in, groups, out);
}

void rle_encode(const uint32_t* values, size_t n, int bit_width, std::string* out) {
  encode_impl(values, n, bit_width, out);
}

void rle_encode(const uint8_t* values, size_t n, int bit_width, std::string* out) {
  encode_impl(values, n, bit_width, out);
}

}  // namespace feedline::parquet
