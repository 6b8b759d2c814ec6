// The DELTA_* and BYTE_STREAM_SPLIT decoders against their encoders, on values chosen to reach every path:
// widths 0 to 64, counts on and off the block and miniblock boundaries, wrapping deltas, a last miniblock
// cut short, and hostile prefixes and lengths. (The corpus test reads the same encodings from real files.)
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "feedline/io/error.h"
#include "io/parquet/delta.h"
#include "io/parquet/plain.h"

namespace feedline::parquet {
namespace {

const uint8_t* bytes_of(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// Values of several shapes: constant (width 0), a slow walk, any value of the type (the widest deltas,
// which wrap), and extremes side by side.
template <class T>
std::vector<std::vector<T>> shapes(size_t n) {
  std::mt19937_64 gen(n * 31 + sizeof(T));
  std::vector<T> constant(n, static_cast<T>(-7)), walk(n), any(n), extremes(n);
  T x = 1000;
  for (size_t i = 0; i < n; ++i) {
    walk[i] = x = static_cast<T>(x + static_cast<T>(gen() % 64) - 20);
    any[i] = static_cast<T>(gen());
    extremes[i] = i % 2 ? std::numeric_limits<T>::max() : std::numeric_limits<T>::min();
  }
  return {constant, walk, any, extremes};
}

template <class T>
void expect_round_trip() {
  for (size_t n : {0, 1, 2, 32, 33, 128, 129, 130, 161, 1000, 4097}) {
    for (const auto& values : shapes<T>(n)) {
      SCOPED_TRACE("n " + std::to_string(n) + ", first " + (n ? std::to_string(values[0]) : "none"));
      const std::string encoded = encode_delta_binary_packed(values.data(), values.size());
      std::vector<T> out(n + 1, 99);
      EXPECT_EQ(decode_delta_binary_packed(bytes_of(encoded), encoded.size(), static_cast<int64_t>(n), out.data()),
                encoded.size());
      out.pop_back();
      EXPECT_EQ(out, values);
    }
  }
}

TEST(ParquetDelta, BinaryPackedRoundTripsInt32) { expect_round_trip<int32_t>(); }
TEST(ParquetDelta, BinaryPackedRoundTripsInt64) { expect_round_trip<int64_t>(); }

// Some writers end a page inside the last miniblock's padding; the values that are there still decode.
TEST(ParquetDelta, LastMiniblockCutShortStillDecodes) {
  for (int64_t spread : {int64_t{1} << 20, int64_t{1} << 40}) {  // deltas of about 21 and 41 bits
    std::mt19937_64 gen(3);
    std::vector<int64_t> values(41);  // the first value, then 40 deltas: one full miniblock and 8 in the next
    for (auto& v : values) v = static_cast<int64_t>(gen() % static_cast<uint64_t>(spread));
    // The second miniblock's 8 values need 8 * w bits = w bytes; it is padded to 32 * w bits = 4 * w bytes.
    const std::string full = encode_delta_binary_packed(values.data(), values.size());
    std::vector<int64_t> out(values.size());
    decode_delta_binary_packed(bytes_of(full), full.size(), static_cast<int64_t>(values.size()), out.data());
    ASSERT_EQ(out, values);
    // Trim the padding byte by byte until the decoder needs a byte that is gone.
    size_t shortest = full.size();
    for (size_t cut = 1; cut < full.size(); ++cut) {
      const std::string trimmed = full.substr(0, full.size() - cut);
      std::vector<int64_t> got(values.size());
      try {
        decode_delta_binary_packed(bytes_of(trimmed), trimmed.size(), static_cast<int64_t>(values.size()), got.data());
      } catch (const InvalidFile&) {
        break;
      }
      ASSERT_EQ(got, values) << "cut " << cut;
      shortest = trimmed.size();
    }
    // Three quarters of the last miniblock is padding (3 * w bytes), and all of it can go.
    const size_t w = static_cast<size_t>((spread == (int64_t{1} << 20) ? 21 : 41));
    EXPECT_LE(shortest, full.size() - 3 * w + 1);
  }
}

TEST(ParquetDelta, BinaryPackedRefusesWhatDoesNotAddUp) {
  const std::vector<int32_t> values{1, 5, 9, 13, 10};  // deltas 4, 4, 4, -3: every header field one byte
  const std::string good = encode_delta_binary_packed(values.data(), values.size());
  std::vector<int32_t> out(8);
  // A count other than the page's.
  EXPECT_THROW(decode_delta_binary_packed(bytes_of(good), good.size(), 4, out.data()), InvalidFile);
  // Truncated inside the header, and inside the bits of the 4 deltas (3 bits each: 2 bytes after 10 of header).
  ASSERT_EQ(good.size(), 10u + 12u);  // the miniblock is padded to 32 deltas
  for (size_t keep : {size_t{2}, size_t{11}}) {
    EXPECT_THROW(decode_delta_binary_packed(bytes_of(good), keep, 5, out.data()), InvalidFile) << keep;
  }
  // A block size that is not a multiple of 128, and a bit width wider than the values.
  std::string bad_block = good;
  bad_block[0] = 100;
  EXPECT_THROW(decode_delta_binary_packed(bytes_of(bad_block), bad_block.size(), 5, out.data()), InvalidFile);
  std::string wide = good;
  const size_t widths_at = 1 + 2 + 1 + 1 + 1;  // block (2 bytes), miniblocks, count, first value, min delta
  ASSERT_EQ(static_cast<uint8_t>(wide[1]), 0x01);  // 128 as a uleb: 0x80 0x01
  wide[widths_at] = 33;
  EXPECT_THROW(decode_delta_binary_packed(bytes_of(wide), wide.size(), 5, out.data()), InvalidFile);
}

std::vector<std::string> words(size_t n) {
  std::mt19937 gen(11);
  std::vector<std::string> v;
  for (size_t i = 0; i < n; ++i) v.push_back("item-" + std::to_string(1000 + i / 3) + std::string(gen() % 5, 'x'));
  if (n > 2) v[n / 2].clear();  // an empty value between others
  return v;
}

// Long values too: shared prefixes and suffixes past the 16 bytes that are copied in one move.
std::vector<std::string> long_words(size_t n) {
  std::vector<std::string> v = words(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = "https://example.org/a/path/" + v[i] + (i % 5 == 0 ? std::string(17 + i % 40, 'y') : std::string());
  }
  return v;
}

// `s` followed by the padding a page buffer ends with (the byte-array decoders may read that far past their data).
std::string padded(const std::string& s) { return s + std::string(kShortCopyBytes, '\0'); }

ByteArrays byte_arrays(const std::vector<std::string>& values) {
  ByteArrays a;
  for (const auto& v : values) a.push_back(v);
  return a;
}

TEST(ParquetDelta, ByteArraysRoundTrip) {
  for (const bool long_values : {false, true}) {
    for (size_t n : {0, 1, 7, 129, 3000}) {
      SCOPED_TRACE(std::to_string(n) + (long_values ? " long" : " short"));
      const auto values = long_values ? long_words(n) : words(n);
      const std::string lengths = encode_delta_length_byte_arrays(values);
      const std::string prefixed = encode_delta_byte_arrays(values);
      ByteArrays a, b;
      b.push_back("before");  // decoding appends
      const auto count = static_cast<int64_t>(n);
      EXPECT_EQ(decode_delta_length_byte_arrays(bytes_of(lengths), lengths.size(), count, &a, SIZE_MAX),
                lengths.size());
      EXPECT_EQ(decode_delta_byte_arrays(bytes_of(padded(prefixed)), prefixed.size(), count, &b, SIZE_MAX, 0),
                prefixed.size());
      ByteArrays expect_b = byte_arrays({"before"});
      for (const auto& v : values) expect_b.push_back(v);
      EXPECT_EQ(a.offsets, byte_arrays(values).offsets);
      EXPECT_EQ(a.bytes, byte_arrays(values).bytes);
      EXPECT_EQ(b.offsets, expect_b.offsets);
      EXPECT_EQ(b.bytes, expect_b.bytes);
    }
  }
}

TEST(ParquetDelta, ByteArraysRefuseHostilePrefixesAndSizes) {
  const std::vector<std::string> values{"apple", "applet", "apricot"};
  ByteArrays out;
  // A first value cannot share a prefix; a later one cannot share more than its predecessor has.
  for (const std::vector<int32_t>& prefixes : {std::vector<int32_t>{1, 0, 0}, std::vector<int32_t>{0, 6, 0},
                                              std::vector<int32_t>{0, -1, 0}}) {
    const std::string bad = encode_delta_binary_packed(prefixes.data(), prefixes.size()) +
                            encode_delta_length_byte_arrays({"apple", "t", "ricot"});
    EXPECT_THROW(decode_delta_byte_arrays(bytes_of(padded(bad)), bad.size(), 3, &out, SIZE_MAX, 0), InvalidFile);
  }
  const std::string good = encode_delta_byte_arrays(values);
  EXPECT_THROW(decode_delta_byte_arrays(bytes_of(padded(good)), good.size() - 1, 3, &out, SIZE_MAX, 0), InvalidFile);
  // The size limit, and a fixed length the values do not have.
  EXPECT_THROW(decode_delta_byte_arrays(bytes_of(padded(good)), good.size(), 3, &out, 10, 0), InvalidFile);
  EXPECT_THROW(decode_delta_byte_arrays(bytes_of(padded(good)), good.size(), 3, &out, SIZE_MAX, 5), InvalidFile);
  const std::vector<int32_t> negative{3, -4, 2};
  const std::string bad_lengths = encode_delta_binary_packed(negative.data(), negative.size()) + "abcdefgh";
  EXPECT_THROW(decode_delta_length_byte_arrays(bytes_of(bad_lengths), bad_lengths.size(), 3, &out, SIZE_MAX),
               InvalidFile);
  // Nothing half-appended by the refusals above.
  EXPECT_EQ(out.size(), 0);
  EXPECT_TRUE(out.bytes.empty());
}

TEST(ParquetDelta, ByteStreamSplitRoundTrips) {
  for (size_t width : {1, 2, 4, 8, 16}) {
    std::mt19937 gen(static_cast<unsigned>(width));
    std::vector<uint8_t> values(333 * width);
    for (auto& b : values) b = static_cast<uint8_t>(gen());
    const std::string encoded = encode_byte_stream_split(values.data(), 333, width);
    std::vector<uint8_t> out(values.size());
    EXPECT_EQ(decode_byte_stream_split(bytes_of(encoded), encoded.size(), 333, width, out.data()), encoded.size());
    EXPECT_EQ(out, values) << width;
    EXPECT_THROW(decode_byte_stream_split(bytes_of(encoded), encoded.size() - 1, 333, width, out.data()), InvalidFile);
  }
}

}  // namespace
}  // namespace feedline::parquet
