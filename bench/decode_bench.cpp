// Decoding throughput of each Parquet encoding feedline reads, in bytes of decoded values per second
// (Google Benchmark's bytes_per_second). Each benchmark encodes 1 Mi values once, checks that decoding gives
// them back, then times the decoder alone: no file, no codec, no page headers.
//   build/bench/feedline_decode_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "feedline/table.h"
#include "io/parquet/delta.h"
#include "io/parquet/dictionary.h"
#include "io/parquet/plain.h"
#include "io/parquet/rle.h"

namespace feedline::parquet {
namespace {

constexpr size_t kValues = 1 << 20;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "decode_bench: %s does not round-trip\n", what);
    std::abort();
  }
}

void put_uleb(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void put_zigzag(int64_t v, std::string* out) { put_uleb((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63), out); }

// DELTA_BINARY_PACKED as parquet-mr and Arrow write it: blocks of 128 values in 4 miniblocks of 32.
std::string encode_delta(const std::vector<int64_t>& values) {
  std::string out;
  put_uleb(128, &out);
  put_uleb(4, &out);
  put_uleb(values.size(), &out);
  put_zigzag(values.empty() ? 0 : values[0], &out);
  for (size_t at = 1; at < values.size(); at += 128) {
    const size_t n = std::min<size_t>(128, values.size() - at);
    std::vector<int64_t> deltas(128, 0);
    int64_t min_delta = INT64_MAX;
    for (size_t i = 0; i < n; ++i) {
      deltas[i] = values[at + i] - values[at + i - 1];
      min_delta = std::min(min_delta, deltas[i]);
    }
    put_zigzag(min_delta, &out);
    uint8_t widths[4] = {0, 0, 0, 0};
    for (size_t m = 0; m < 4; ++m) {
      uint64_t most = 0;
      for (size_t i = m * 32; i < std::min(n, m * 32 + 32); ++i) most |= static_cast<uint64_t>(deltas[i] - min_delta);
      while (most >> widths[m]) ++widths[m];
    }
    out.append(reinterpret_cast<const char*>(widths), 4);
    for (size_t m = 0; m < 4 && m * 32 < n; ++m) {
      std::string bits(static_cast<size_t>(widths[m]) * 4, '\0');  // 32 values * width bits
      for (size_t i = 0; i < 32; ++i) {
        const uint64_t v = m * 32 + i < n ? static_cast<uint64_t>(deltas[m * 32 + i] - min_delta) : 0;
        for (int b = 0; b < widths[m]; ++b) {
          if ((v >> b) & 1) {
            const size_t bit = i * widths[m] + static_cast<size_t>(b);
            bits[bit / 8] = static_cast<char>(bits[bit / 8] | (1 << (bit % 8)));
          }
        }
      }
      out += bits;
    }
  }
  return out;
}

// Sensor-like integers: a slow walk, as timestamps and ids tend to be.
std::vector<int32_t> walk(size_t n) {
  std::mt19937 gen(7);
  std::vector<int32_t> v(n);
  int32_t x = 1000;
  for (auto& e : v) e = x += static_cast<int32_t>(gen() % 64) - 20;
  return v;
}

std::vector<std::string> words(size_t n) {
  std::mt19937 gen(11);
  std::vector<std::string> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = "customer-" + std::to_string(100000 + i / 3) + std::string(gen() % 8, 'x');
  return v;
}

void BM_Plain_Int32(benchmark::State& state) {
  const auto values = walk(kValues);
  std::string encoded;
  encode_plain(values.data(), values.size(), &encoded);
  std::vector<int32_t> out(kValues);
  for (auto _ : state) {
    decode_plain(reinterpret_cast<const uint8_t*>(encoded.data()), encoded.size(), kValues, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  check(out == values, "PLAIN");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kValues * 4));
}
BENCHMARK(BM_Plain_Int32);

void BM_RleDictionary_Int32(benchmark::State& state) {
  const auto values = walk(kValues);
  std::vector<int32_t> dict(256);
  std::vector<uint32_t> indices(kValues);
  for (size_t i = 0; i < 256; ++i) dict[i] = static_cast<int32_t>(i * 37);
  std::mt19937 gen(3);
  std::vector<int32_t> expect(kValues);
  for (size_t i = 0; i < kValues; ++i) expect[i] = dict[indices[i] = gen() % 256];
  std::string encoded;
  rle_encode(indices.data(), indices.size(), 8, &encoded);
  std::vector<int32_t> out(kValues);
  for (auto _ : state) {
    RleBitPackedDecoder dec(reinterpret_cast<const uint8_t*>(encoded.data()), encoded.size(), 8);
    DictionaryGather<int32_t> sink{dict.data(), static_cast<uint32_t>(dict.size()), out.data()};
    dec.decode(static_cast<int64_t>(kValues), sink);
    benchmark::DoNotOptimize(out.data());
  }
  check(out == expect, "RLE_DICTIONARY");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kValues * 4));
}
BENCHMARK(BM_RleDictionary_Int32);

void BM_DeltaBinaryPacked_Int32(benchmark::State& state) {
  const auto values = walk(kValues);
  const std::string encoded = encode_delta(std::vector<int64_t>(values.begin(), values.end()));
  std::vector<int32_t> out(kValues);
  for (auto _ : state) {
    decode_delta_binary_packed(reinterpret_cast<const uint8_t*>(encoded.data()), encoded.size(),
                               static_cast<int64_t>(kValues), out.data());
    benchmark::DoNotOptimize(out.data());
  }
  check(out == values, "DELTA_BINARY_PACKED");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kValues * 4));
}
BENCHMARK(BM_DeltaBinaryPacked_Int32);

void BM_ByteStreamSplit_Float(benchmark::State& state) {
  std::mt19937 gen(5);
  std::normal_distribution<float> normal;
  std::vector<float> values(kValues);
  for (auto& v : values) v = normal(gen);
  std::string encoded(kValues * 4, '\0');
  const auto* bytes = reinterpret_cast<const uint8_t*>(values.data());
  for (size_t i = 0; i < kValues; ++i) {
    for (size_t k = 0; k < 4; ++k) encoded[k * kValues + i] = static_cast<char>(bytes[i * 4 + k]);
  }
  std::vector<float> out(kValues);
  for (auto _ : state) {
    decode_byte_stream_split(reinterpret_cast<const uint8_t*>(encoded.data()), encoded.size(),
                             static_cast<int64_t>(kValues), 4, reinterpret_cast<uint8_t*>(out.data()));
    benchmark::DoNotOptimize(out.data());
  }
  check(std::memcmp(out.data(), values.data(), kValues * 4) == 0, "BYTE_STREAM_SPLIT");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kValues * 4));
}
BENCHMARK(BM_ByteStreamSplit_Float);

int64_t total_bytes(const std::vector<std::string>& v) {
  int64_t n = 0;
  for (const auto& s : v) n += static_cast<int64_t>(s.size());
  return n;
}

void BM_Plain_ByteArray(benchmark::State& state) {
  const auto values = words(kValues);
  ByteArrays in;
  std::vector<int64_t> rows(kValues);
  for (size_t i = 0; i < kValues; ++i) {
    in.push_back(values[i]);
    rows[i] = static_cast<int64_t>(i);
  }
  std::string encoded;
  encode_plain_byte_arrays(in, rows.data(), rows.size(), &encoded);
  ByteArrays out;
  for (auto _ : state) {
    out = ByteArrays();
    decode_plain_byte_arrays(reinterpret_cast<const uint8_t*>(encoded.data()), encoded.size(),
                             static_cast<int64_t>(kValues), &out, SIZE_MAX);
    benchmark::DoNotOptimize(out.bytes.data());
  }
  check(out.bytes == in.bytes && out.offsets == in.offsets, "PLAIN byte arrays");
  state.SetBytesProcessed(state.iterations() * total_bytes(values));
}
BENCHMARK(BM_Plain_ByteArray);

void BM_DeltaLengthByteArray(benchmark::State& state) {
  const auto values = words(kValues);
  std::vector<int64_t> lengths(kValues);
  std::string encoded;
  for (size_t i = 0; i < kValues; ++i) lengths[i] = static_cast<int64_t>(values[i].size());
  encoded = encode_delta(lengths);
  for (const auto& v : values) encoded += v;
  ByteArrays out;
  for (auto _ : state) {
    out = ByteArrays();
    decode_delta_length_byte_arrays(reinterpret_cast<const uint8_t*>(encoded.data()), encoded.size(),
                                    static_cast<int64_t>(kValues), &out, SIZE_MAX);
    benchmark::DoNotOptimize(out.bytes.data());
  }
  check(out.size() == static_cast<int64_t>(kValues) && out.at(12345) == values[12345], "DELTA_LENGTH_BYTE_ARRAY");
  state.SetBytesProcessed(state.iterations() * total_bytes(values));
}
BENCHMARK(BM_DeltaLengthByteArray);

void BM_DeltaByteArray(benchmark::State& state) {
  const auto values = words(kValues);
  std::vector<int64_t> prefixes(kValues), lengths(kValues);
  std::string suffixes;
  for (size_t i = 0; i < kValues; ++i) {
    size_t p = 0;
    if (i > 0) {
      while (p < values[i].size() && p < values[i - 1].size() && values[i][p] == values[i - 1][p]) ++p;
    }
    prefixes[i] = static_cast<int64_t>(p);
    lengths[i] = static_cast<int64_t>(values[i].size() - p);
    suffixes += values[i].substr(p);
  }
  const std::string encoded = encode_delta(prefixes) + encode_delta(lengths) + suffixes;
  ByteArrays out;
  for (auto _ : state) {
    out = ByteArrays();
    decode_delta_byte_arrays(reinterpret_cast<const uint8_t*>(encoded.data()), encoded.size(),
                             static_cast<int64_t>(kValues), &out, SIZE_MAX, 0);
    benchmark::DoNotOptimize(out.bytes.data());
  }
  check(out.size() == static_cast<int64_t>(kValues) && out.at(kValues - 1) == values[kValues - 1], "DELTA_BYTE_ARRAY");
  state.SetBytesProcessed(state.iterations() * total_bytes(values));
}
BENCHMARK(BM_DeltaByteArray);

}  // namespace
}  // namespace feedline::parquet

BENCHMARK_MAIN();
