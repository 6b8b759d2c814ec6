// Internal: Parquet's RLE / bit-packed hybrid encoding (Encodings.md, "RLE = 3"), used for definition levels
// and dictionary indices. The decoder hands whole runs to a sink chosen at compile time (no per-value virtual
// calls); bit-packed runs are unpacked eight values at a time with a specialised routine per bit width.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "feedline/io/error.h"

namespace feedline::parquet {

// Unpacks `groups` groups of 8 values of `bit_width` bits (0..32) each, LSB first, from `in` (which holds at
// least groups * bit_width bytes) into out[0 .. 8*groups).
// Where the CPU has AVX2 (x86-64), widths 1 to 25 take a vector routine.
void unpack_bits(const uint8_t* in, size_t groups, int bit_width, uint32_t* out);
// The same without vector instructions, on any CPU (for tests to hold the two against each other).
void unpack_bits_portable(const uint8_t* in, size_t groups, int bit_width, uint32_t* out);

// Bits needed for values up to max_value.
inline int bit_width_for(uint64_t max_value) {
  int w = 0;
  while (w < 64 && (max_value >> w) != 0) ++w;
  return w;
}

class RleBitPackedDecoder {
 public:
  RleBitPackedDecoder(const uint8_t* data, size_t size, int bit_width)
      : data_(data), end_(data + size), bit_width_(bit_width), value_bytes_((bit_width + 7) / 8) {
    if (bit_width < 0 || bit_width > 32) throw InvalidFile("bit width " + std::to_string(bit_width) + " above 32");
  }

  // Produces exactly n values, handing them to `sink` as sink.run(value, count) for repeated values and
  // sink.literal(const uint32_t* values, count) for bit-packed ones. Throws InvalidFile if the data ends first.
  template <class Sink>
  void decode(int64_t n, Sink& sink) {
    constexpr int kBatchGroups = 64;  // 512 values per literal batch
    // A cache line's alignment: unpack_bits' 32-byte stores then split none (a store split across two cache lines
    // is slower, and every batch would take such stores).
    alignas(64) uint32_t buffer[kBatchGroups * 8];
    while (n > 0) {
      const uint64_t header = read_varint();
      if ((header & 1) == 0) {
        const uint64_t count = header >> 1;
        if (count == 0) throw InvalidFile("RLE run of length 0");
        if (static_cast<size_t>(end_ - data_) < static_cast<size_t>(value_bytes_)) throw InvalidFile("RLE run value truncated");
        uint32_t value = 0;
        for (int i = 0; i < value_bytes_; ++i) value |= static_cast<uint32_t>(data_[i]) << (8 * i);
        data_ += value_bytes_;
        if (bit_width_ < 32 && (value >> bit_width_) != 0) {
          throw InvalidFile("RLE run value " + std::to_string(value) + " wider than " + std::to_string(bit_width_) + " bits");
        }
        const int64_t take = count < static_cast<uint64_t>(n) ? static_cast<int64_t>(count) : n;
        sink.run(value, take);
        n -= take;
      } else {
        uint64_t groups = header >> 1;
        if (groups == 0) throw InvalidFile("bit-packed run of length 0");
        // A final run may stop short of its declared length as long as it holds the values still needed.
        const uint64_t needed_groups = (static_cast<uint64_t>(n) + 7) / 8;
        if (groups > needed_groups) groups = needed_groups;
        const size_t avail = static_cast<size_t>(end_ - data_);
        if (bit_width_ > 0 && groups > avail / static_cast<size_t>(bit_width_)) {
          throw InvalidFile("bit-packed run truncated");
        }
        while (groups > 0) {
          const size_t g = groups < kBatchGroups ? static_cast<size_t>(groups) : kBatchGroups;
          unpack_bits(data_, g, bit_width_, buffer);
          data_ += g * static_cast<size_t>(bit_width_);
          groups -= g;
          const int64_t take = static_cast<int64_t>(g * 8) < n ? static_cast<int64_t>(g * 8) : n;
          sink.literal(buffer, take);
          n -= take;
        }
        // A declared run longer than needed: the rest is padding past the page's values, ignored.
      }
    }
  }

  const uint8_t* position() const { return data_; }

 private:
  uint64_t read_varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (data_ >= end_) throw InvalidFile("RLE data ends inside a run header");
      const uint8_t b = *data_++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        if ((v >> 1) > 0x7fffffffu) throw InvalidFile("RLE run longer than 2^31-1");
        return v;
      }
    }
    throw InvalidFile("RLE run header varint too long");
  }

  const uint8_t* data_;
  const uint8_t* end_;
  int bit_width_;
  int value_bytes_;
};

// Appends the RLE / bit-packed hybrid encoding of values[0..n) (each < 2^bit_width) to `out`, without a length
// prefix. Runs of 8 or more equal values become RLE runs, the rest bit-packed groups of 8.
void rle_encode(const uint32_t* values, size_t n, int bit_width, std::string* out);
void rle_encode(const uint8_t* values, size_t n, int bit_width, std::string* out);

}  // namespace feedline::parquet
