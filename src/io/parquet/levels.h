// Internal to the Parquet reader: a data page's definition and repetition levels (v1 and v2), and nulls spread
// among its values (levels.cpp). Plain functions without state: safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "feedline/io/table.h"

namespace feedline::parquet::detail {

// Moves `present` packed values at out[0..present) to their slots, zeroing null slots, back to front in place.
template <class T>
void spread(T* out, const uint8_t* validity, int64_t n, int64_t present) {
  // Eight slots at a time where all eight hold values (validity bytes of 1), one at a time elsewhere; done once
  // every slot left holds its value.
  constexpr uint64_t kEightValues = 0x0101010101010101ull;
  int64_t k = present, i = n;
  while (k < i) {
    uint64_t eight = 0;
    if (i >= 8) std::memcpy(&eight, validity + i - 8, 8);
    if (eight == kEightValues) {
      i -= 8;
      k -= 8;
      // Through registers: a fixed-size memcpy is inlined, where a memmove of the overlapping slots is a call.
      T eight_values[8];
      std::memcpy(eight_values, out + k, sizeof eight_values);
      std::memcpy(out + i, eight_values, sizeof eight_values);
    } else {
      --i;
      if (validity[i]) {
        out[i] = out[--k];
      } else {
        out[i] = T{};
      }
    }
  }
}

void spread_byte_arrays(ByteArrays* out, size_t base, const uint8_t* validity, int64_t n, int64_t present);

// Fills out[0..n) with the levels (each at most max_level) at p, encoded as a v1 data page encodes them, and
// moves p past them. For max_level 1, returns how many levels are 1 (values present); above 1, nothing useful.
int64_t read_levels(int32_t encoding, const uint8_t*& p, const uint8_t* end, int64_t n, int max_level, uint8_t* out);

// v2 levels: RLE / bit-packed hybrid without a length prefix. Returns what read_levels returns.
int64_t read_levels_v2(const uint8_t* p, size_t size, int64_t n, int max_level, uint8_t* out);

int64_t count_present(const uint8_t* validity, int64_t n);

// A list column's validity vectors (the rows' and each inner level's) emptied where they hold no null, as Column
// keeps them.
void drop_validity_without_nulls(Column* col);

}  // namespace feedline::parquet::detail
