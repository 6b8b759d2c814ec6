#include "io/parquet/rle.h"

#include <cstring>
#include <utility>

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

template <int... Ws>
constexpr auto make_table(std::integer_sequence<int, Ws...>) {
  struct Table {
    UnpackFn fns[sizeof...(Ws)];
  };
  return Table{{&unpack_groups<Ws>...}};
}

constexpr auto kUnpackTable = make_table(std::make_integer_sequence<int, 33>{});

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
  kUnpackTable.fns[bit_width](in, groups, out);
}

void rle_encode(const uint32_t* values, size_t n, int bit_width, std::string* out) {
  encode_impl(values, n, bit_width, out);
}

void rle_encode(const uint8_t* values, size_t n, int bit_width, std::string* out) {
  encode_impl(values, n, bit_width, out);
}

}  // namespace feedline::parquet
