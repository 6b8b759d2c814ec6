// The resize passes of resample.h in AVX2, for x86-64 CPUs that have it (resize_box chooses at run time): the
// same integer arithmetic as the scalar passes, eight 32-bit sums at once. The vertical pass sums along columns
// (eight or sixteen neighbouring columns a vector); the horizontal pass turns blocks of eight rows into columns
// of eight bytes (an 8 x 8 byte transpose), sums those as the vertical pass does, and turns the results back.
#if defined(__x86_64__)

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "dataset/resample.h"

#define FEEDLINE_AVX2 __attribute__((target("avx2")))

namespace feedline::image_ops::detail {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;

FEEDLINE_AVX2 inline __m256i widen8(const uint8_t* p) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

// Eight sums shifted, clamped to 0..255 (a signed saturation to 16 bits, then an unsigned one to 8, which is the
// clamp of the scalar code) and packed into the low 8 bytes.
FEEDLINE_AVX2 inline __m128i narrow8(__m256i sum) {
  sum = _mm256_srai_epi32(sum, kPrecisionBits);
  const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
  return _mm_packus_epi16(words, words);
}

// Transposes eight rows of eight bytes (the low halves of a[0..7]) into eight columns, two to a result: out[i]
// holds column 2i in its low half and column 2i + 1 in its high half.
FEEDLINE_AVX2 inline void transpose8x8(const __m128i a[8], __m128i out[4]) {
  const __m128i t0 = _mm_unpacklo_epi8(a[0], a[1]), t1 = _mm_unpacklo_epi8(a[2], a[3]);
  const __m128i t2 = _mm_unpacklo_epi8(a[4], a[5]), t3 = _mm_unpacklo_epi8(a[6], a[7]);
  const __m128i u0 = _mm_unpacklo_epi16(t0, t1), u1 = _mm_unpackhi_epi16(t0, t1);
  const __m128i u2 = _mm_unpacklo_epi16(t2, t3), u3 = _mm_unpackhi_epi16(t2, t3);
  out[0] = _mm_unpacklo_epi32(u0, u2);
  out[1] = _mm_unpackhi_epi32(u0, u2);
  out[2] = _mm_unpacklo_epi32(u1, u3);
  out[3] = _mm_unpackhi_epi32(u1, u3);
}

// Eight pixels of one channel starting at p, `step` (1 or 3) bytes apart, in the low 8 bytes; reads only the
// bytes 0..21 after p, within the pixels they belong to whichever channel p points at.
FEEDLINE_AVX2 inline __m128i load_pixels(const uint8_t* p, int step, const __m128i pick[2]) {
  if (step == 1) return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));      // bytes 0..15
  const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 6));  // bytes 6..21
  return _mm_or_si128(_mm_shuffle_epi8(lo, pick[0]), _mm_shuffle_epi8(hi, pick[1]));
}

}  // namespace

FEEDLINE_AVX2 void vertical_avx2(const uint8_t* in, size_t in_row, int width, const ResampleTaps& taps,
                                 uint8_t* out, size_t out_row) {
  const int out_height = static_cast<int>(taps.count.size());
  const __m256i half = _mm256_set1_epi32(1 << (kPrecisionBits - 1));
  for (int yy = 0; yy < out_height; ++yy) {
    const int32_t* k = &taps.weights[static_cast<size_t>(yy) * taps.taps];
    const uint8_t* top = in + static_cast<size_t>(taps.first[yy]) * in_row;
    const int count = taps.count[yy];
    uint8_t* to = out + yy * out_row;
    int x = 0;
    for (; x + 16 <= width; x += 16) {
      __m256i s0 = half, s1 = half;
      for (int y = 0; y < count; ++y) {
        const __m256i w = _mm256_set1_epi32(k[y]);
        const __m128i p = _mm_loadu_si128(reinterpret_cast<const __m128i*>(top + y * in_row + x));
        s0 = _mm256_add_epi32(s0, _mm256_mullo_epi32(_mm256_cvtepu8_epi32(p), w));
        s1 = _mm256_add_epi32(s1, _mm256_mullo_epi32(_mm256_cvtepu8_epi32(_mm_srli_si128(p, 8)), w));
      }
      s0 = _mm256_srai_epi32(s0, kPrecisionBits);
      s1 = _mm256_srai_epi32(s1, kPrecisionBits);
      const __m128i w0 = _mm_packs_epi32(_mm256_castsi256_si128(s0), _mm256_extracti128_si256(s0, 1));
      const __m128i w1 = _mm_packs_epi32(_mm256_castsi256_si128(s1), _mm256_extracti128_si256(s1, 1));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(to + x), _mm_packus_epi16(w0, w1));
    }
    for (; x + 8 <= width; x += 8) {
      __m256i s = half;
      for (int y = 0; y < count; ++y) {
        s = _mm256_add_epi32(s, _mm256_mullo_epi32(widen8(top + y * in_row + x), _mm256_set1_epi32(k[y])));
      }
      _mm_storel_epi64(reinterpret_cast<__m128i*>(to + x), narrow8(s));
    }
    for (; x < width; ++x) {
      int32_t s = 1 << (kPrecisionBits - 1);
      for (int y = 0; y < count; ++y) s += static_cast<int32_t>(top[y * in_row + x]) * k[y];
      s >>= kPrecisionBits;
      to[x] = static_cast<uint8_t>(s < 0 ? 0 : s > 255 ? 255 : s);
    }
  }
}

FEEDLINE_AVX2 void horizontal_avx2(const uint8_t* in, size_t in_row, int step, int rows, const ResampleTaps& taps,
                                   uint8_t* out, size_t out_row) {
  if (step != 1 && step != 3) return horizontal_scalar(in, in_row, step, rows, taps, out, out_row);
  const int out_width = static_cast<int>(taps.count.size());
  // The input width: every column some output reads.
  int in_width = 0;
  for (int xx = 0; xx < out_width; ++xx) in_width = std::max(in_width, taps.first[xx] + taps.count[xx]);
  // pshufb masks that gather bytes 0, 3, ..., 21: from bytes 0..15, then from bytes 6..21.
  __m128i pick[2];
  {
    alignas(16) uint8_t m0[16], m1[16];
    std::memset(m0, 0x80, 16);
    std::memset(m1, 0x80, 16);
    for (int j = 0; j < 8; ++j) {
      const int at = 3 * j;
      if (at < 16) m0[j] = static_cast<uint8_t>(at);
      else m1[j] = static_cast<uint8_t>(at - 6);
    }
    pick[0] = _mm_load_si128(reinterpret_cast<const __m128i*>(m0));
    pick[1] = _mm_load_si128(reinterpret_cast<const __m128i*>(m1));
  }
  // columns: the block's input as columns of 8 bytes (one per row); sums: its outputs the same way.
  thread_local std::vector<uint8_t> columns, sums;
  columns.resize(static_cast<size_t>(in_width) * 8 + 16);
  sums.resize(static_cast<size_t>(out_width) * 8 + 16);
  const __m256i half = _mm256_set1_epi32(1 << (kPrecisionBits - 1));
  for (int y0 = 0; y0 < rows; y0 += 8) {
    const int block = std::min(8, rows - y0);
    const uint8_t* row[8];
    for (int i = 0; i < 8; ++i) row[i] = in + static_cast<size_t>(y0 + std::min(i, block - 1)) * in_row;
    int x = 0;
    for (; x + 8 <= in_width; x += 8) {
      __m128i a[8], t[4];
      for (int i = 0; i < 8; ++i) a[i] = load_pixels(row[i] + static_cast<size_t>(x) * step, step, pick);
      transpose8x8(a, t);
      for (int i = 0; i < 4; ++i) _mm_storeu_si128(reinterpret_cast<__m128i*>(&columns[(x + 2 * i) * 8]), t[i]);
    }
    for (; x < in_width; ++x) {
      for (int i = 0; i < 8; ++i) columns[x * 8 + i] = row[i][static_cast<size_t>(x) * step];
    }
    // Two outputs at a time: their sums narrowed together into 16 bytes, the first output's 8 then the second's.
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    int xx = 0;
    for (; xx + 2 <= out_width; xx += 2) {
      __m256i s[2];
      for (int o = 0; o < 2; ++o) {
        const int32_t* k = &taps.weights[static_cast<size_t>(xx + o) * taps.taps];
        const uint8_t* c = &columns[static_cast<size_t>(taps.first[xx + o]) * 8];
        __m256i sum = half;
        for (int j = 0; j < taps.count[xx + o]; ++j) {
          sum = _mm256_add_epi32(sum, _mm256_mullo_epi32(widen8(c + j * 8), _mm256_set1_epi32(k[j])));
        }
        s[o] = _mm256_srai_epi32(sum, kPrecisionBits);
      }
      // Words: a0-3 b0-3 | a4-7 b4-7; bytes (each lane twice): a0-3 b0-3 a0-3 b0-3 | a4-7 b4-7 ...; the dwords
      // a0-3, a4-7, b0-3, b4-7 first.
      const __m256i words = _mm256_packs_epi32(s[0], s[1]);
      const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(words, words), order);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(&sums[xx * 8]), _mm256_castsi256_si128(bytes));
    }
    for (; xx < out_width; ++xx) {
      const int32_t* k = &taps.weights[static_cast<size_t>(xx) * taps.taps];
      const uint8_t* c = &columns[static_cast<size_t>(taps.first[xx]) * 8];
      __m256i s = half;
      for (int j = 0; j < taps.count[xx]; ++j) {
        s = _mm256_add_epi32(s, _mm256_mullo_epi32(widen8(c + j * 8), _mm256_set1_epi32(k[j])));
      }
      _mm_storel_epi64(reinterpret_cast<__m128i*>(&sums[xx * 8]), narrow8(s));
    }
    // Back to rows: eight outputs of the eight rows at a time, the last ones byte by byte.
    for (xx = 0; xx + 8 <= out_width; xx += 8) {
      __m128i a[8], t[4];
      for (int j = 0; j < 8; ++j) a[j] = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(&sums[(xx + j) * 8]));
      transpose8x8(a, t);
      for (int i = 0; i < block; ++i) {
        const __m128i r = (i & 1) ? _mm_unpackhi_epi64(t[i / 2], t[i / 2]) : t[i / 2];
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out + static_cast<size_t>(y0 + i) * out_row + xx), r);
      }
    }
    for (; xx < out_width; ++xx) {
      for (int i = 0; i < block; ++i) out[static_cast<size_t>(y0 + i) * out_row + xx] = sums[xx * 8 + i];
    }
  }
}

}  // namespace feedline::image_ops::detail

#endif  // defined(__x86_64__)
