#include "io/parquet/dictionary.h"

#include <type_traits>
#include <unordered_map>

#include "io/cpu.h"

#if defined(FEEDLINE_X86_AVX2)
#include <immintrin.h>
#endif

namespace feedline::parquet {

void throw_bad_index(uint32_t index, size_t dictionary_size) {
  throw InvalidFile("dictionary index " + std::to_string(index) + " out of range for a dictionary of " +
                    std::to_string(dictionary_size) + " values");
}

namespace {

// count values of W bytes, dict's entries at `indices`, to out: the bytes are moved, never read as the column's
// type.
template <size_t W>
void copy_values(const void* dict, const uint32_t* indices, int64_t count, void* out) {
  const auto* from = static_cast<const unsigned char*>(dict);
  auto* to = static_cast<unsigned char*>(out);
  for (int64_t i = 0; i < count; ++i) std::memcpy(to + i * W, from + size_t{indices[i]} * W, W);
}

template <size_t W>
void gather_portable(const void* dict, uint32_t dict_size, const uint32_t* indices, int64_t count, void* out) {
  check_indices(indices, count, dict_size);
  copy_values<W>(dict, indices, count, out);
}

using GatherFn = void (*)(const void*, uint32_t, const uint32_t*, int64_t, void*);

#if defined(FEEDLINE_X86_AVX2)
__attribute__((target("avx2"))) uint32_t max_index_avx2(const uint32_t* indices, int64_t count) {
  __m256i most = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    most = _mm256_max_epu32(most, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(indices + i)));
  }
  alignas(32) uint32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), most);
  uint32_t m = 0;
  for (const uint32_t lane : lanes) m = std::max(m, lane);
  for (; i < count; ++i) m = std::max(m, indices[i]);
  return m;
}

// One gather instruction fills a register: eight values of 4 bytes or four of 8; the rest are copied.
template <size_t W>
__attribute__((target("avx2"))) void gather_avx2(const void* dict, uint32_t dict_size, const uint32_t* indices,
                                                 int64_t count, void* out) {
  static_assert(W == 4 || W == 8, "vpgatherdd and vpgatherdq gather 4 and 8 bytes");
  const uint32_t most = max_index_avx2(indices, count);
  if (count > 0 && most >= dict_size) throw_bad_index(most, dict_size);
  auto* to = static_cast<unsigned char*>(out);
  constexpr int64_t kLanes = 32 / W;
  int64_t i = 0;
  for (; i + kLanes <= count; i += kLanes) {
    __m256i values;
    if constexpr (W == 4) {
      const __m256i at = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(indices + i));
      values = _mm256_i32gather_epi32(static_cast<const int*>(dict), at, 4);
    } else {
      const __m128i at = _mm_loadu_si128(reinterpret_cast<const __m128i*>(indices + i));
      values = _mm256_i32gather_epi64(static_cast<const long long*>(dict), at, 8);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + i * W), values);
  }
  copy_values<W>(dict, indices + i, count - i, to + i * W);
}
#endif

// The portable routines from the start (a constant initialisation), the AVX2 ones once this file's static
// initialiser has seen the CPU.
GatherFn gather4_fn = &gather_portable<4>;
GatherFn gather8_fn = &gather_portable<8>;

#if defined(FEEDLINE_X86_AVX2)
const bool kUsesAvx2 = [] {
  if (!cpu_has_avx2()) return false;
  gather4_fn = &gather_avx2<4>;
  gather8_fn = &gather_avx2<8>;
  return true;
}();
#endif

}  // namespace

void gather4(const void* dict, uint32_t dict_size, const uint32_t* indices, int64_t count, void* out) {
  gather4_fn(dict, dict_size, indices, count, out);
}

void gather8(const void* dict, uint32_t dict_size, const uint32_t* indices, int64_t count, void* out) {
  gather8_fn(dict, dict_size, indices, count, out);
}

void gather4_portable(const void* dict, uint32_t dict_size, const uint32_t* indices, int64_t count, void* out) {
  gather_portable<4>(dict, dict_size, indices, count, out);
}

void gather8_portable(const void* dict, uint32_t dict_size, const uint32_t* indices, int64_t count, void* out) {
  gather_portable<8>(dict, dict_size, indices, count, out);
}

namespace {

template <class T>
uint64_t bits_of(T v) {
  if constexpr (sizeof(T) == 1) {
    return static_cast<uint8_t>(v);
  } else if constexpr (sizeof(T) == 4) {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    return b;
  } else {
    uint64_t b;
    std::memcpy(&b, &v, 8);
    return b;
  }
}

inline uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

}  // namespace

template <class T>
bool build_dictionary(const T* values, size_t n, size_t max_entries, size_t max_bytes, std::vector<T>* dict,
                      std::vector<uint32_t>* indices) {
  dict->clear();
  indices->resize(n);
  const size_t limit = std::min(max_entries, max_bytes / sizeof(T));
  if constexpr (std::is_integral_v<T>) {
    // Small value ranges (pixels, labels, flags): a direct lookup table beats hashing.
    if (n > 0) {
      const auto [lo_it, hi_it] = std::minmax_element(values, values + n);
      const int64_t lo = static_cast<int64_t>(*lo_it), hi = static_cast<int64_t>(*hi_it);
      const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
      if (span < (uint64_t{1} << 16)) {
        std::vector<int32_t> slot(static_cast<size_t>(span + 1), -1);
        for (size_t i = 0; i < n; ++i) {
          int32_t& s = slot[static_cast<size_t>(static_cast<uint64_t>(static_cast<int64_t>(values[i])) - static_cast<uint64_t>(lo))];
          if (s < 0) {
            if (dict->size() >= limit) return false;
            s = static_cast<int32_t>(dict->size());
            dict->push_back(values[i]);
          }
          (*indices)[i] = static_cast<uint32_t>(s);
        }
        return true;
      }
    }
  }
  // Open addressing on the bit pattern; the table stays at most half full.
  size_t capacity = 1024;
  std::vector<uint32_t> table(capacity, UINT32_MAX);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t key = bits_of(values[i]);
    size_t h = mix(key) & (capacity - 1);
    while (true) {
      const uint32_t s = table[h];
      if (s == UINT32_MAX) {
        if (dict->size() >= limit) return false;
        table[h] = static_cast<uint32_t>(dict->size());
        (*indices)[i] = table[h];
        dict->push_back(values[i]);
        if (dict->size() * 2 > capacity) {
          capacity *= 2;
          table.assign(capacity, UINT32_MAX);
          for (size_t d = 0; d < dict->size(); ++d) {
            size_t h2 = mix(bits_of((*dict)[d])) & (capacity - 1);
            while (table[h2] != UINT32_MAX) h2 = (h2 + 1) & (capacity - 1);
            table[h2] = static_cast<uint32_t>(d);
          }
        }
        break;
      }
      if (bits_of((*dict)[s]) == key) {
        (*indices)[i] = s;
        break;
      }
      h = (h + 1) & (capacity - 1);
    }
  }
  return true;
}

bool build_dictionary(const ByteArrays& values, const int64_t* rows, size_t n, size_t max_entries,
                      size_t max_bytes, ByteArrays* dict, std::vector<uint32_t>* indices) {
  *dict = ByteArrays();
  indices->resize(n);
  std::unordered_map<std::string_view, uint32_t> seen;
  size_t plain_bytes = 0;
  for (size_t k = 0; k < n; ++k) {
    const std::string_view v = values.at(rows[k]);
    auto it = seen.find(v);
    if (it == seen.end()) {
      plain_bytes += 4 + v.size();
      if (static_cast<size_t>(dict->size()) >= max_entries || plain_bytes > max_bytes) return false;
      it = seen.emplace(v, static_cast<uint32_t>(dict->size())).first;
      dict->push_back(v);
    }
    (*indices)[k] = it->second;
  }
  return true;
}

template bool build_dictionary<uint8_t>(const uint8_t*, size_t, size_t, size_t, std::vector<uint8_t>*, std::vector<uint32_t>*);
template bool build_dictionary<int32_t>(const int32_t*, size_t, size_t, size_t, std::vector<int32_t>*, std::vector<uint32_t>*);
template bool build_dictionary<int64_t>(const int64_t*, size_t, size_t, size_t, std::vector<int64_t>*, std::vector<uint32_t>*);
template bool build_dictionary<float>(const float*, size_t, size_t, size_t, std::vector<float>*, std::vector<uint32_t>*);
template bool build_dictionary<double>(const double*, size_t, size_t, size_t, std::vector<double>*, std::vector<uint32_t>*);

}  // namespace feedline::parquet
