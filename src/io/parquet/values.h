// Internal to the Parquet reader: a data page's levels and values, decoded by encoding (PLAIN, dictionary,
// DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT, RLE booleans), for the readers
// of each column shape (chunk_reader.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "feedline/io/error.h"
#include "feedline/io/table.h"
#include "io/parquet/delta.h"
#include "io/parquet/dictionary.h"
#include "io/parquet/dictionary_page.h"
#include "io/parquet/levels.h"
#include "io/parquet/metadata.h"
#include "io/parquet/page_data.h"
#include "io/parquet/plain.h"
#include "io/parquet/rle.h"
#include "io/parquet/schema.h"

namespace feedline::parquet::detail {

// Decodes one leaf's data pages, with its chunk's dictionary (which the chunk's DictionaryPage fills as the page walk
// meets the dictionary page). Keeps no state of its own between pages: several threads may decode pages with one.
class ValueDecoder {
 public:
  ValueDecoder(const Leaf& leaf, int64_t budget, const ChunkDictionary& dictionary)
      : leaf_(leaf), budget_(budget), dict_(dictionary) {}

  // A flat column's data page: its definition levels into validity[row..) (optional columns), its values into
  // `out` (FixedOut: values at out.values + row; ByteArrays*: appended; FixedBytesOut: a FIXED_LEN_BYTE_ARRAY's
  // bytes back to back from out.bytes), nulls spread among them. Returns the page's count of nulls.
  template <class T, class Out>
  int64_t read_data_page(const PageData& h, const uint8_t* body, size_t size, Out out, int64_t row,
                         uint8_t* validity) const;
  // Decodes `present` values of the page's encoding from p[0..remaining) into `out` (dst: where a fixed-width
  // column's values go).
  template <class T, class Out>
  void decode_values(int32_t encoding, const uint8_t* p, size_t remaining, int64_t present, Out out, T* dst) const;
  // A page's `present` byte arrays from p[0..remaining) appended to `out`: decode_values, or, where open_page
  // decompressed the page into out's own bytes (page.output_base), moved down in place.
  void decode_byte_arrays(const PageData& page, const uint8_t* p, size_t remaining, int64_t present,
                          ByteArrays* out) const {
    if (page.output_base < 0) {
      decode_values<ByteArrays>(page.encoding, p, remaining, present, out, nullptr);
      return;
    }
    const auto base = static_cast<size_t>(page.output_base);
    const size_t bytes = compact_plain_byte_arrays(p, remaining, present, out->bytes.data() + base, page.output_base,
                                                   &out->offsets, static_cast<size_t>(budget_));
    out->bytes.resize(base + bytes);
  }
  // The encodings whose FIXED_LEN_BYTE_ARRAY values decode to FixedBytesOut.
  static bool decodes_fixed_bytes(int32_t encoding) {
    return encoding == format::encoding::kPlain || encoding == format::encoding::kPlainDictionary ||
           encoding == format::encoding::kRleDictionary || encoding == format::encoding::kByteStreamSplit ||
           encoding == format::encoding::kDeltaByteArray;
  }

 private:
  // decode_values for the dictionary encodings: the page's indices gathered from the chunk's dictionary.
  template <class T, class Out>
  void decode_dictionary_indices(const uint8_t* p, size_t remaining, int64_t present, Out out, T* dst) const;
  // decode_values for BYTE_STREAM_SPLIT FIXED_LEN_BYTE_ARRAY values, appended to `out`.
  void append_byte_stream_split_fixed(const uint8_t* p, size_t remaining, int64_t present, ByteArrays* out) const;
  // `present` FIXED_LEN_BYTE_ARRAY values to dst, for the encodings that decodes_fixed_bytes accepts.
  void decode_fixed_bytes(int32_t encoding, const uint8_t* p, size_t remaining, int64_t present, char* dst) const;
  // A dictionary-encoded page's indices (their bit width, then RLE / bit-packed runs), checked as far as they can
  // be before decoding: the width is there and at most 32.
  RleBitPackedDecoder dictionary_indices(const uint8_t* p, size_t remaining) const {
    if (remaining < 1) throw InvalidFile("dictionary indices missing");
    const int bit_width = p[0];
    if (bit_width > 32) throw InvalidFile("dictionary index bit width " + std::to_string(bit_width));
    return RleBitPackedDecoder(p + 1, remaining - 1, bit_width);
  }
  // The chunk's dictionary of fixed-width values, as their type.
  template <class T>
  struct DictionaryView {
    const T* values;
    size_t count;
    const T* data() const { return values; }
    size_t size() const { return count; }
  };
  template <class T>
  DictionaryView<T> dictionary() const {
    static_assert(!std::is_same_v<T, ByteArrays>, "byte arrays keep their dictionary in dict_.bytes");
    return {reinterpret_cast<const T*>(dict_.fixed), dict_.count};
  }

  const Leaf& leaf_;
  int64_t budget_;
  const ChunkDictionary& dict_;
};

template <class T, class Out>
int64_t ValueDecoder::read_data_page(const PageData& h, const uint8_t* body, size_t size, Out out, int64_t row,
                                     uint8_t* validity) const {
  const int64_t n = h.num_values;
  const uint8_t* p = body;
  const uint8_t* end = body + size;
  int64_t present = n;
  uint8_t* page_validity = nullptr;
  if (leaf_.max_def > 0) {
    // The levels themselves, then (inside optional structs, where they go above 1) whether each reaches the
    // maximum: below it the field or a struct above it is null.
    page_validity = validity + row;
    const int max_def = leaf_.max_def;
    present = h.v2 ? read_levels_v2(h.v2_def_levels, h.v2_def_size, n, max_def, page_validity)
                   : read_levels(h.definition_level_encoding, p, end, n, max_def, page_validity);
    if (max_def > 1) {
      uint8_t bad = 0;
      present = 0;
      for (int64_t i = 0; i < n; ++i) {
        bad |= static_cast<uint8_t>(page_validity[i] > max_def);
        page_validity[i] = page_validity[i] == max_def;
        present += page_validity[i];
      }
      if (bad) throw InvalidFile("definition level above the column's maximum " + std::to_string(max_def));
    }
  }
  if constexpr (std::is_same_v<Out, FixedBytesOut>) {
    // The values' bytes back to back, a null taking none: nothing to spread.
    decode_fixed_bytes(h.encoding, p, static_cast<size_t>(end - p), present, out.bytes);
    return n - present;
  } else {
    size_t bytes_base = 0;
    T* dst = nullptr;
    if constexpr (std::is_same_v<T, ByteArrays>) {
      bytes_base = out->offsets.size();
    } else {
      dst = out.values + row;
      // Dictionary-encoded values among nulls are gathered straight to their slots.
      if (present < n && (h.encoding == format::encoding::kRleDictionary ||
                          h.encoding == format::encoding::kPlainDictionary)) {
        if (!dict_.present) throw InvalidFile("dictionary-encoded page without a dictionary page");
        const auto dict = dictionary<T>();
        SpreadDictionaryGather<T> sink{dict.data(), static_cast<uint32_t>(dict.size()), dst, page_validity, n};
        if (present > 0) {
          RleBitPackedDecoder dec = dictionary_indices(p, static_cast<size_t>(end - p));
          dec.decode(present, sink);
        }
        sink.finish();
        return n - present;
      }
    }
    if constexpr (std::is_same_v<T, ByteArrays>) {
      decode_byte_arrays(h, p, static_cast<size_t>(end - p), present, out);
    } else {
      decode_values<T, Out>(h.encoding, p, static_cast<size_t>(end - p), present, out, dst);
    }
    if (present < n) {
      if constexpr (std::is_same_v<T, ByteArrays>) {
        spread_byte_arrays(out, bytes_base, page_validity, n, present);
      } else {
        spread(dst, page_validity, n, present);
      }
    }
    return n - present;
  }
}

inline void ValueDecoder::decode_fixed_bytes(int32_t encoding, const uint8_t* p, size_t remaining, int64_t present,
                                             char* dst) const {
  const auto width = static_cast<size_t>(leaf_.schema.type_length);
  switch (encoding) {
    case format::encoding::kPlain:
      if (static_cast<uint64_t>(present) > remaining / width) {
        throw InvalidFile("PLAIN data holds " + std::to_string(remaining / width) + " values of " +
                          std::to_string(width) + " bytes, page declares " + std::to_string(present));
      }
      if (present > 0) std::memcpy(dst, p, static_cast<size_t>(present) * width);
      return;
    case format::encoding::kPlainDictionary:
    case format::encoding::kRleDictionary: {
      if (!dict_.present) throw InvalidFile("dictionary-encoded page without a dictionary page");
      if (present == 0) return;
      RleBitPackedDecoder dec = dictionary_indices(p, remaining);
      FixedBytesDictionaryGather sink{reinterpret_cast<const char*>(dict_.fixed), static_cast<uint32_t>(dict_.count),
                                      width, dst};
      dec.decode(present, sink);
      return;
    }
    case format::encoding::kByteStreamSplit:  // (which checks the page holds them before writing)
      decode_byte_stream_split(p, remaining, present, width, reinterpret_cast<uint8_t*>(dst));
      return;
    case format::encoding::kDeltaByteArray:
      decode_delta_byte_arrays_fixed(p, remaining, present, leaf_.schema.type_length, dst);
      return;
    default:
      throw InvalidFile(std::string("encoding ") + format::encoding_name(encoding) +
                        " decoded as FIXED_LEN_BYTE_ARRAY in place");  // (callers ask decodes_fixed_bytes first)
  }
}

inline void ValueDecoder::append_byte_stream_split_fixed(const uint8_t* p, size_t remaining, int64_t present,
                                                         ByteArrays* out) const {
  const auto width = static_cast<size_t>(leaf_.schema.type_length);
  if (present > 0 && static_cast<uint64_t>(present) > remaining / width) {
    throw InvalidFile("BYTE_STREAM_SPLIT data holds " + std::to_string(remaining / width) + " values, page declares " +
                      std::to_string(present));
  }
  const size_t at = out->bytes.size();
  if (at + static_cast<size_t>(present) * width > static_cast<size_t>(budget_)) {
    throw InvalidFile("byte arrays exceed the size limit");
  }
  out->bytes.resize(at + static_cast<size_t>(present) * width);
  decode_byte_stream_split(p, remaining, present, width, reinterpret_cast<uint8_t*>(out->bytes.data() + at));
  append_fixed_offsets(out, present, leaf_.schema.type_length);
}

template <class T, class Out>
void ValueDecoder::decode_dictionary_indices(const uint8_t* p, size_t remaining, int64_t present, Out out,
                                             T* dst) const {
  if (!dict_.present) throw InvalidFile("dictionary-encoded page without a dictionary page");
  if (present == 0) return;
  RleBitPackedDecoder dec = dictionary_indices(p, remaining);
  if constexpr (std::is_same_v<T, ByteArrays>) {
    const int32_t width = leaf_.schema.type_length;
    if (width > 0) {  // (the dictionary's entries were read as FIXED_LEN_BYTE_ARRAY: each is width bytes)
      const size_t at = out->bytes.size(), bytes = static_cast<size_t>(present) * static_cast<size_t>(width);
      if (at + bytes > static_cast<size_t>(budget_)) throw InvalidFile("byte arrays exceed the size limit");
      out->bytes.resize(at + bytes);
      FixedBytesDictionaryGather sink{reinterpret_cast<const char*>(dict_.fixed), static_cast<uint32_t>(dict_.count),
                                      static_cast<size_t>(width), out->bytes.data() + at};
      dec.decode(present, sink);
      append_fixed_offsets(out, present, width);
    } else {
      reserve_offsets(out, static_cast<size_t>(present));
      ByteArrayDictionaryGather sink{dict_.bytes, out, static_cast<size_t>(budget_)};
      dec.decode(present, sink);
    }
  } else {
    const auto dict = dictionary<T>();
    DictionaryGather<T> sink{dict.data(), static_cast<uint32_t>(dict.size()), dst};
    dec.decode(present, sink);
  }
}

template <class T, class Out>
void ValueDecoder::decode_values(int32_t encoding, const uint8_t* p, size_t remaining, int64_t present, Out out,
                                 T* dst) const {
  switch (encoding) {
    case format::encoding::kPlain:
      if constexpr (std::is_same_v<T, ByteArrays>) {
        decode_plain_byte_arrays(p, remaining, present, out, static_cast<size_t>(budget_), leaf_.schema.type_length);
      } else if constexpr (std::is_same_v<T, uint8_t>) {
        decode_plain_bool(p, remaining, present, dst);
      } else {
        decode_plain(p, remaining, present, dst);
      }
      break;
    case format::encoding::kPlainDictionary:
    case format::encoding::kRleDictionary:
      decode_dictionary_indices<T>(p, remaining, present, out, dst);
      break;
    case format::encoding::kDeltaBinaryPacked:
      if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
        decode_delta_binary_packed(p, remaining, present, dst);
        break;
      }
      throw InvalidFile("DELTA_BINARY_PACKED on a " + std::string(to_string(leaf_.schema.type)) + " column");
    case format::encoding::kDeltaLengthByteArray:
      if constexpr (std::is_same_v<T, ByteArrays>) {
        if (leaf_.schema.type == PhysicalType::kByteArray) {
          decode_delta_length_byte_arrays(p, remaining, present, out, static_cast<size_t>(budget_));
          break;
        }
      }
      throw InvalidFile("DELTA_LENGTH_BYTE_ARRAY on a " + std::string(to_string(leaf_.schema.type)) + " column");
    case format::encoding::kDeltaByteArray:
      if constexpr (std::is_same_v<T, ByteArrays>) {
        decode_delta_byte_arrays(p, remaining, present, out, static_cast<size_t>(budget_), leaf_.schema.type_length);
        break;
      }
      throw InvalidFile("DELTA_BYTE_ARRAY on a " + std::string(to_string(leaf_.schema.type)) + " column");
    case format::encoding::kByteStreamSplit:
      if constexpr (std::is_same_v<T, ByteArrays>) {
        if (leaf_.schema.type == PhysicalType::kFixedLenByteArray) {
          append_byte_stream_split_fixed(p, remaining, present, out);
          break;
        }
      } else if constexpr (!std::is_same_v<T, uint8_t>) {
        decode_byte_stream_split(p, remaining, present, sizeof(T), reinterpret_cast<uint8_t*>(dst));
        break;
      }
      throw InvalidFile("BYTE_STREAM_SPLIT on a " + std::string(to_string(leaf_.schema.type)) + " column");
    case format::encoding::kRle:
      if constexpr (std::is_same_v<T, uint8_t>) {
        // Booleans as RLE with a 4-byte length, bit width 1.
        if (remaining < 4) throw InvalidFile("RLE booleans truncated");
        uint32_t len;
        std::memcpy(&len, p, 4);
        if (len > remaining - 4) throw InvalidFile("RLE booleans run past the page");
        RleBitPackedDecoder dec(p + 4, len, 1);
        LevelSink sink{dst};
        dec.decode(present, sink);
        break;
      }
      // (parquet.js writes integers so, with a bit width the file does not hold.)
      throw InvalidFile("RLE-encoded " + std::string(to_string(leaf_.schema.type)) +
                        " values: the format defines RLE values for BOOLEAN only");
    default:
      throw Unsupported(std::string("encoding ") + format::encoding_name(encoding) + " (" +
                        std::to_string(encoding) + ")");
  }
}

}  // namespace feedline::parquet::detail
