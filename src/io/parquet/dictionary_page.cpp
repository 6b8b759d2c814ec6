// A column chunk's dictionary page read into the thread's scratch: decompressed straight into the dictionary where
// that spares a copy, else decoded from the page's body; given back when its last page is done.
#include "io/parquet/dictionary_page.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "feedline/io/error.h"
#include "io/memory.h"
#include "io/parquet/codec.h"
#include "io/parquet/limits.h"
#include "io/parquet/plain.h"

namespace feedline::parquet::detail {

template <class T>
bool DictionaryPage::decompress(const format::PageHeader& h, const uint8_t* data, Codec codec) {
  return decompress_in_place<T>(h, data, codec) || decompress_fixed<T>(h, data, codec);
}

template <class T>
bool DictionaryPage::decompress_fixed(const format::PageHeader& h, const uint8_t* data, Codec codec) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    return false;  // (booleans are bit-packed)
  } else {
    const format::DictionaryPageHeader& d = *h.dictionary_page_header;
    const bool fixed_bytes = std::is_same_v<T, ByteArrays>;
    const uint64_t width = fixed_bytes ? static_cast<uint64_t>(std::max(leaf_.schema.type_length, 0)) : sizeof(T);
    if (codec == Codec::kUncompressed || width == 0 || d.num_values <= 0 ||
        (d.encoding != format::encoding::kPlain && d.encoding != format::encoding::kPlainDictionary) ||
        h.uncompressed_page_size < 0 || static_cast<uint64_t>(h.uncompressed_page_size) / width !=
        static_cast<uint64_t>(d.num_values) || static_cast<uint64_t>(h.uncompressed_page_size) % width != 0) {
      return false;
    }
    uint8_t* dst = size_fixed<T>(static_cast<size_t>(d.num_values));
    feedline::parquet::decompress(codec, data, static_cast<size_t>(h.compressed_page_size), dst,
                                  static_cast<size_t>(h.uncompressed_page_size));
    view_.present = true;
    return true;
  }
}

template <class T>
bool DictionaryPage::decompress_in_place(const format::PageHeader& h, const uint8_t* data, Codec codec) {
  if constexpr (!std::is_same_v<T, ByteArrays>) {
    return false;
  } else {
    const format::DictionaryPageHeader& d = *h.dictionary_page_header;
    if (leaf_.schema.type_length > 0 || codec == Codec::kUncompressed || h.uncompressed_page_size <= kMaxScratchBytes ||
        (d.encoding != format::encoding::kPlain && d.encoding != format::encoding::kPlainDictionary)) {
      return false;
    }
    const auto size = static_cast<size_t>(h.uncompressed_page_size);
    ByteArrays& dict = home_.dict_bytes;
    dict.offsets.assign(1, 0);
    dict.bytes.clear();
    dict.bytes.resize(size + kShortCopyBytes);  // (see ByteArrayDictionaryGather)
    uint8_t* at = reinterpret_cast<uint8_t*>(dict.bytes.data());
    feedline::parquet::decompress(codec, data, static_cast<size_t>(h.compressed_page_size), at, size);
    const size_t bytes = compact_plain_byte_arrays(at, size, d.num_values, dict.bytes.data(), 0, &dict.offsets, size);
    dict.bytes.resize(bytes + kShortCopyBytes);
    view_.present = true;
    return true;
  }
}

template <class T>
uint8_t* DictionaryPage::size_fixed(size_t values) {
  const size_t width = std::is_same_v<T, ByteArrays> ? static_cast<size_t>(leaf_.schema.type_length) : sizeof(T);
  // (Callers check the count against the page's bytes first.) The buffer, from operator new or whole pages, is
  // aligned for any of the types; the room past the values is for FixedBytesDictionaryGather.
  size_scratch(home_.dict, values * width + kShortCopyBytes);
  view_.fixed = home_.dict.data();
  view_.count = values;
  return home_.dict.data();
}

template <class T>
void DictionaryPage::read(const format::PageHeader& h, const uint8_t* body, size_t size, size_t chunk_bytes) {
  const format::DictionaryPageHeader& d = *h.dictionary_page_header;
  if (d.encoding != format::encoding::kPlain && d.encoding != format::encoding::kPlainDictionary) {
    throw Unsupported(std::string("dictionary page encoding ") + format::encoding_name(d.encoding));
  }
  if (d.num_values < 0) throw InvalidFile("negative dictionary size");
  if constexpr (std::is_same_v<T, ByteArrays>) {
    if (leaf_.schema.type_length > 0) {
      // FIXED_LEN_BYTE_ARRAY: the values back to back as PLAIN stores them, which is all the gather needs.
      const auto width = static_cast<uint64_t>(leaf_.schema.type_length);
      if (static_cast<uint64_t>(d.num_values) > size / width) {
        throw InvalidFile("PLAIN data holds " + std::to_string(size / width) + " values of " + std::to_string(width) +
                          " bytes, page declares " + std::to_string(d.num_values));
      }
      const auto values = static_cast<size_t>(d.num_values);
      const size_t bytes = values * static_cast<size_t>(width);
      // A page stored uncompressed lies in the chunk's bytes, which end with kPadding (at least kShortCopyBytes)
      // to spare: the gather reads it there.
      const auto chunk = reinterpret_cast<uintptr_t>(home_.chunk.data()), at = reinterpret_cast<uintptr_t>(body);
      const size_t held = chunk_bytes + kPadding;
      static_assert(kPadding >= kShortCopyBytes);
      if (at >= chunk && at - chunk <= held && held - (at - chunk) >= bytes + kShortCopyBytes) {
        view_.fixed = body;
        view_.count = values;
      } else {
        uint8_t* dst = size_fixed<T>(values);
        if (bytes > 0) std::memcpy(dst, body, bytes);
      }
    } else {
      ByteArrays& dict = home_.dict_bytes;
      dict.offsets.assign(1, 0);  // (room kept from the thread's chunk before)
      dict.bytes.clear();
      decode_plain_byte_arrays(body, size, d.num_values, &dict, size, leaf_.schema.type_length);
      dict.bytes.append(kShortCopyBytes, '\0');  // (see ByteArrayDictionaryGather)
    }
  } else {
    // Each value takes at least sizeof(T) bytes (a bit for booleans), so the page bounds the count.
    const uint64_t max_values = std::is_same_v<T, uint8_t> ? uint64_t{size} * 8 : size / sizeof(T);
    if (static_cast<uint64_t>(d.num_values) > max_values) {
      throw InvalidFile("dictionary of " + std::to_string(d.num_values) + " values in " + std::to_string(size) +
                        " bytes");
    }
    T* dict = reinterpret_cast<T*>(size_fixed<T>(static_cast<size_t>(d.num_values)));
    if constexpr (std::is_same_v<T, uint8_t>) {
      decode_plain_bool(body, size, d.num_values, dict);
    } else {
      decode_plain(body, size, d.num_values, dict);
    }
  }
  view_.present = true;
}

void DictionaryPage::release_after(int64_t last_page) {
  last_page_ = last_page;
  if (last_page < 0) release();  // no page uses it
}

void DictionaryPage::release() {
  release_memory(home_.dict_bytes);
  view_.present = false;
  last_page_ = -1;
}

// The types a chunk's values decode as (typed_reader.h).
#define FEEDLINE_DICTIONARY_PAGE_FOR(T)                                                                 \
  template bool DictionaryPage::decompress<T>(const format::PageHeader&, const uint8_t*, Codec);       \
  template void DictionaryPage::read<T>(const format::PageHeader&, const uint8_t*, size_t, size_t);
FEEDLINE_DICTIONARY_PAGE_FOR(uint8_t)
FEEDLINE_DICTIONARY_PAGE_FOR(int32_t)
FEEDLINE_DICTIONARY_PAGE_FOR(int64_t)
FEEDLINE_DICTIONARY_PAGE_FOR(float)
FEEDLINE_DICTIONARY_PAGE_FOR(double)
FEEDLINE_DICTIONARY_PAGE_FOR(ByteArrays)
#undef FEEDLINE_DICTIONARY_PAGE_FOR

}  // namespace feedline::parquet::detail
