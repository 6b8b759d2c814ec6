// Internal: dictionary encoding (Encodings.md, RLE_DICTIONARY / PLAIN_DICTIONARY). Reading: sinks for the
// RLE / bit-packed decoder that check each index against the dictionary and gather values straight into the
// output column. Writing: a builder that maps values to first-seen indices and gives up past a size limit.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/table.h"
#include "io/parquet/plain.h"

namespace feedline::parquet {

[[noreturn]] void throw_bad_index(uint32_t index, size_t dictionary_size);

// Throws unless every one of a batch of literal indices is inside the dictionary: their largest, found in one pass
// the compiler vectorises, before any is used.
inline void check_indices(const uint32_t* indices, int64_t count, size_t dictionary_size) {
  uint32_t max_index = 0;
  for (int64_t i = 0; i < count; ++i) max_index = std::max(max_index, indices[i]);
  if (max_index >= dictionary_size) throw_bad_index(max_index, dictionary_size);
}

// dict[indices[i]] into out[i] for a batch of indices, values of 4 (gather4) or 8 bytes (gather8): throws
// (throw_bad_index) unless every index is below dict_size, before any is used. Where the CPU has AVX2, eight
// indices are checked and four or eight values gathered an instruction.
void gather4(const void* dict, uint32_t dict_size, const uint32_t* indices, int64_t count, void* out);
void gather8(const void* dict, uint32_t dict_size, const uint32_t* indices, int64_t count, void* out);
// The same without vector instructions, on any CPU (for tests to hold the two against each other).
void gather4_portable(const void* dict, uint32_t dict_size, const uint32_t* indices, int64_t count, void* out);
void gather8_portable(const void* dict, uint32_t dict_size, const uint32_t* indices, int64_t count, void* out);

template <class T>
struct DictionaryGather {
  const T* dict;
  uint32_t dict_size;
  T* out;

  void run(uint32_t index, int64_t count) {
    if (index >= dict_size) throw_bad_index(index, dict_size);
    std::fill_n(out, count, dict[index]);
    out += count;
  }
  void literal(const uint32_t* indices, int64_t count) {
    if constexpr (sizeof(T) == 4) {
      gather4(dict, dict_size, indices, count, out);
    } else if constexpr (sizeof(T) == 8) {
      gather8(dict, dict_size, indices, count, out);
    } else {
      check_indices(indices, count, dict_size);
      for (int64_t i = 0; i < count; ++i) out[i] = dict[indices[i]];
    }
    out += count;
  }
};

// DictionaryGather for a page with nulls: value k goes straight to the k-th slot that `valid` marks present (1),
// and each null slot (0) before it gets T{}, where decoding the values back to back and then spreading them over
// the slots would write them twice. finish() sets the null slots after the last value.
template <class T>
struct SpreadDictionaryGather {
  const T* dict;
  uint32_t dict_size;
  T* out;                // slot 0
  const uint8_t* valid;  // one byte (0 or 1) a slot
  int64_t slots;         // holding at least as many 1s as values will come
  int64_t slot = 0;      // the next slot to fill

  void run(uint32_t index, int64_t count) {
    if (index >= dict_size) throw_bad_index(index, dict_size);
    const T value = dict[index];
    place(count, [value](int64_t) { return value; });
  }
  void literal(const uint32_t* indices, int64_t count) {
    check_indices(indices, count, dict_size);
    const T* const values = dict;
    place(count, [values, indices](int64_t k) { return values[indices[k]]; });
  }
  void finish() {
    for (; slot < slots; ++slot) out[slot] = T{};
  }

 private:
  // Eight slots at a time where all eight are present, one at a time elsewhere. (While values remain, a present
  // slot remains, so `at` stays below `slots`.) In locals: `out` may alias the members.
  template <class Value>
  void place(int64_t count, Value value) {
    constexpr uint64_t kEightPresent = 0x0101010101010101ull;
    T* const dst = out;
    const uint8_t* const present = valid;
    const int64_t end = slots;
    int64_t at = slot, k = 0;
    while (k < count) {
      uint64_t eight = 0;
      if (count - k >= 8 && end - at >= 8) std::memcpy(&eight, present + at, 8);
      if (eight == kEightPresent) {
        for (int j = 0; j < 8; ++j) dst[at + j] = value(k + j);
        at += 8;
        k += 8;
      } else if (present[at] != 0) {
        dst[at++] = value(k++);
      } else {
        dst[at++] = T{};
      }
    }
    slot = at;
  }
};

// FIXED_LEN_BYTE_ARRAY: every entry is `width` bytes, so the values go to a slice sized beforehand.
struct FixedBytesDictionaryGather {
  const char* dict;  // dict_size entries of width bytes, back to back, and kShortCopyBytes readable past them
  uint32_t dict_size;
  size_t width;
  char* out;

  void run(uint32_t index, int64_t count) {
    if (index >= dict_size) throw_bad_index(index, dict_size);
    const char* v = dict + index * width;
    for (int64_t i = 0; i < count; ++i, out += width) std::memcpy(out, v, width);
  }
  void literal(const uint32_t* indices, int64_t count) {
    // Four and eight bytes are gathered as INT32 and INT64 dictionaries are (which checks the indices too).
    if (width == 4 || width == 8) {
      (width == 4 ? gather4 : gather8)(dict, dict_size, indices, count, out);
      out += static_cast<size_t>(count) * width;
      return;
    }
    check_indices(indices, count, dict_size);
    // The other common widths (INT96, UUID) copied by a fixed-size move each, not a call to memcpy.
    switch (width) {
      case 12: gather<12>(indices, count); break;
      case 16: gather<16>(indices, count); break;
      default:
        for (int64_t i = 0; i < count; ++i, out += width) std::memcpy(out, dict + indices[i] * width, width);
    }
  }
  // Twelve bytes (INT96, INTERVAL) move as kShortCopyBytes, one move rather than two, the next value writing over
  // the excess, which the dictionary's room past its last entry makes readable (DictionaryPage adds it); the
  // batch's last value moves its own width alone.
  template <size_t W>
  void gather(const uint32_t* indices, int64_t count) {
    if constexpr (W == 12) {
      for (int64_t i = 0; i + 1 < count; ++i, out += W) {
        std::memcpy(out, dict + size_t{indices[i]} * W, kShortCopyBytes);
      }
      if (count > 0) {
        std::memcpy(out, dict + size_t{indices[count - 1]} * W, W);
        out += W;
      }
    } else {
      for (int64_t i = 0; i < count; ++i, out += W) std::memcpy(out, dict + size_t{indices[i]} * W, W);
    }
  }
};

// BYTE_ARRAY: a run or a batch of literals is measured first, so its bytes and offsets are made room for once.
// Values are copied by copy_byte_array: the dictionary's bytes end with kShortCopyBytes more (DictionaryPage::read
// adds them), and so does the room made in the column while a batch is written.
struct ByteArrayDictionaryGather {
  const ByteArrays* dict;
  ByteArrays* out;
  size_t max_total_bytes;

  // Room for `count` more values of `total` bytes (and kShortCopyBytes more, until done()); returns where their
  // bytes go, and their offsets in *offsets.
  char* make_room(int64_t count, size_t total, int64_t** offsets) {
    const size_t base = out->bytes.size();
    if (base + total > max_total_bytes) throw InvalidFile("byte arrays exceed the size limit");
    out->bytes.resize(base + total + kShortCopyBytes);
    const size_t first = out->offsets.size();
    out->offsets.resize(first + static_cast<size_t>(count));
    *offsets = out->offsets.data() + first;
    return out->bytes.data() + base;
  }
  // The column's bytes down to the values written.
  void done(int64_t end) { out->bytes.resize(static_cast<size_t>(end)); }
  void run(uint32_t index, int64_t count) {
    if (index >= static_cast<uint64_t>(dict->size())) throw_bad_index(index, static_cast<size_t>(dict->size()));
    const std::string_view v = dict->at(index);
    if (!v.empty() && static_cast<uint64_t>(count) > max_total_bytes / v.size()) {
      throw InvalidFile("byte arrays exceed the size limit");
    }
    int64_t* offsets;
    int64_t end = static_cast<int64_t>(out->bytes.size());
    char* dst = make_room(count, v.size() * static_cast<size_t>(count), &offsets);
    for (int64_t i = 0; i < count; ++i, dst += v.size()) {
      copy_byte_array(dst, v.data(), v.size());
      offsets[i] = end += static_cast<int64_t>(v.size());
    }
    done(end);
  }
  void literal(const uint32_t* indices, int64_t count) {
    const int64_t* at = dict->offsets.data();
    check_indices(indices, count, static_cast<size_t>(dict->size()));
    size_t total = 0;
    for (int64_t i = 0; i < count; ++i) total += static_cast<size_t>(at[indices[i] + 1] - at[indices[i]]);
    int64_t* offsets;
    int64_t end = static_cast<int64_t>(out->bytes.size());
    char* dst = make_room(count, total, &offsets);
    const char* bytes = dict->bytes.data();
    for (int64_t i = 0; i < count; ++i) {
      const auto len = static_cast<size_t>(at[indices[i] + 1] - at[indices[i]]);
      copy_byte_array(dst, bytes + at[indices[i]], len);
      dst += len;
      offsets[i] = end += static_cast<int64_t>(len);
    }
    done(end);
  }
};

// Definition levels (max level 1) straight into validity bytes, counting the present values.
struct LevelSink {
  uint8_t* out;
  int64_t present = 0;

  void run(uint32_t level, int64_t count) {
    std::memset(out, static_cast<int>(level), static_cast<size_t>(count));
    out += count;
    if (level != 0) present += count;
  }
  void literal(const uint32_t* levels, int64_t count) {
    int64_t ones = 0;
    for (int64_t i = 0; i < count; ++i) {
      out[i] = static_cast<uint8_t>(levels[i]);
      ones += levels[i];
    }
    out += count;
    present += ones;
  }
};

// Writer side: indices for values[0..n) into a dictionary of first-seen values. Returns false (and leaves the
// outputs unspecified) once the dictionary would hold more than max_entries values or max_bytes PLAIN bytes.
// T is one of uint8_t, int32_t, int64_t, float, double; floats compare by bit pattern.
template <class T>
bool build_dictionary(const T* values, size_t n, size_t max_entries, size_t max_bytes, std::vector<T>* dict,
                      std::vector<uint32_t>* indices);
bool build_dictionary(const ByteArrays& values, const int64_t* rows, size_t n, size_t max_entries,
                      size_t max_bytes, ByteArrays* dict, std::vector<uint32_t>* indices);

}  // namespace feedline::parquet
