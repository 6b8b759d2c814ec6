// Internal to the Parquet reader: the walk over a column chunk's page headers, and its dictionary pages. Member
// templates of ChunkReader (see chunk_reader.h), for the column readers that use them.
#pragma once

#include "io/parquet/chunk_reader.h"
#include "io/parquet/dictionary.h"
#include "io/parquet/plain.h"

namespace feedline::parquet::detail {

static_assert(kPadding >= kShortCopyBytes, "page buffers must end with what copy_byte_array may read past");

template <class T>
ChunkReader::PageRef ChunkReader::next_data_page(int64_t* pos, int64_t seen, int64_t total) {
  const uint8_t* base = home_.chunk.data();  // the byte at file offset start_
  for (;;) {
    page_offset_ = *pos;
    if (*pos >= end_) {
      throw InvalidFile("chunk ends after " + std::to_string(seen) + " of " + std::to_string(total) + " values");
    }
    thrift::CompactReader in(base + (*pos - start_), static_cast<size_t>(end_ - *pos), *pos);
    PageRef ref;
    ref.offset = *pos;
    ref.header = format::read_page_header(in);
    const format::PageHeader& h = ref.header;
    *pos += static_cast<int64_t>(in.position());
    if (h.compressed_page_size < 0 || h.compressed_page_size > end_ - *pos) {
      throw InvalidFile("page of " + std::to_string(h.compressed_page_size) + " bytes runs past the chunk");
    }
    ref.data = base + (*pos - start_);
    *pos += h.compressed_page_size;
    switch (h.type) {
      case format::page_type::kDictionaryPage: {
        if (!h.dictionary_page_header) throw InvalidFile("dictionary page without its header");
        if (have_dictionary_) throw InvalidFile("second dictionary page");
        if (seen > 0) throw InvalidFile("dictionary page after data pages");
        if (decompress_dictionary<T>(h, ref.data)) break;
        size_t size;
        std::vector<uint8_t> large;
        const uint8_t* body = page_body(&large, h, ref.data, &size);
        read_dictionary_page<T>(h, body, size);
        break;
      }
      case format::page_type::kDataPage: {
        if (!h.data_page_header) throw InvalidFile("data page without its header");
        const int32_t n = h.data_page_header->num_values;
        if (n < 0 || n > total - seen) {
          throw InvalidFile("data page of " + std::to_string(n) + " values where " + std::to_string(total - seen) +
                            " remain");
        }
        ref.num_values = n;
        return ref;
      }
      case format::page_type::kDataPageV2: {
        if (!h.data_page_header_v2) throw InvalidFile("data page v2 without its header");
        const format::DataPageHeaderV2& v2 = *h.data_page_header_v2;
        const int32_t n = v2.num_values;
        if (n < 0 || n > total - seen || v2.num_rows < 0 || v2.num_rows > n ||
            (leaf_.max_rep == 0 && v2.num_rows != n)) {
          throw InvalidFile("data page v2 of " + std::to_string(n) + " values and " + std::to_string(v2.num_rows) +
                            " rows where " + std::to_string(total - seen) + " values remain");
        }
        const int64_t rep = v2.repetition_levels_byte_length, def = v2.definition_levels_byte_length;
        // A flat column's page may still declare repetition-level bytes (some writers always write both
        // sections): they are skipped, as DuckDB and Arrow skip them (open_page reads past them).
        if (rep < 0 || def < 0 || rep + def > h.compressed_page_size || rep + def > h.uncompressed_page_size ||
            (leaf_.max_def == 0 && def != 0)) {
          throw InvalidFile("data page v2 levels of " + std::to_string(rep) + " + " + std::to_string(def) + " bytes");
        }
        ref.num_values = n;
        return ref;
      }
      case format::page_type::kIndexPage:
        break;  // nothing we need
      default:
        throw InvalidFile("unknown page type " + std::to_string(h.type));
    }
  }
}

template <class T, class OnData>
void ChunkReader::walk_pages(int64_t total, OnData on_data) {
  int64_t pos = start_;
  int64_t seen = 0;
  while (seen < total) {
    const PageRef ref = next_data_page<T>(&pos, seen, total);
    PageData page;
    size_t size;
    const uint8_t* body = open_page(ref, &page, &size);
    seen += on_data(page, body, size);
  }
}

template <class T>
bool ChunkReader::next_window(std::vector<PageRef>* into, size_t window, int64_t* pos, int64_t* seen, int64_t total) {
  into->clear();
  while (into->size() < window && *seen < total && !header_error_) {
    try {
      into->push_back(next_data_page<T>(pos, *seen, total));
    } catch (const Error&) {
      header_error_ = std::current_exception();
      header_error_offset_ = page_offset_;
      break;
    }
    *seen += into->back().num_values;
  }
  return !into->empty();
}

template <class T>
bool ChunkReader::decompress_dictionary(const format::PageHeader& h, const uint8_t* data) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    return false;  // (booleans are bit-packed)
  } else {
    const format::DictionaryPageHeader& d = *h.dictionary_page_header;
    const bool fixed_bytes = std::is_same_v<T, ByteArrays>;
    const uint64_t width = fixed_bytes ? static_cast<uint64_t>(std::max(leaf_.schema.type_length, 0)) : sizeof(T);
    if (codec_ == Codec::kUncompressed || width == 0 || d.num_values <= 0 ||
        (d.encoding != format::encoding::kPlain && d.encoding != format::encoding::kPlainDictionary) ||
        h.uncompressed_page_size < 0 || static_cast<uint64_t>(h.uncompressed_page_size) / width !=
        static_cast<uint64_t>(d.num_values) || static_cast<uint64_t>(h.uncompressed_page_size) % width != 0) {
      return false;
    }
    check_crc(h, data);
    uint8_t* dst = size_dictionary<T>(static_cast<size_t>(d.num_values));
    decompress(codec_, data, static_cast<size_t>(h.compressed_page_size), dst,
               static_cast<size_t>(h.uncompressed_page_size));
    have_dictionary_ = true;
    return true;
  }
}

template <class T>
uint8_t* ChunkReader::size_dictionary(size_t values) {
  const size_t width = std::is_same_v<T, ByteArrays> ? static_cast<size_t>(leaf_.schema.type_length) : sizeof(T);
  // (Callers check the count against the page's bytes first.) The buffer, from operator new or whole pages, is
  // aligned for any of the types; the room past the values is for FixedBytesDictionaryGather.
  size_scratch(home_.dict, values * width + kShortCopyBytes);
  dict_ = home_.dict.data();
  dict_values_ = values;
  return home_.dict.data();
}

template <class T>
void ChunkReader::read_dictionary_page(const format::PageHeader& h, const uint8_t* body, size_t size) {
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
      const size_t chunk_bytes = static_cast<size_t>(end_ - start_) + kPadding;
      static_assert(kPadding >= kShortCopyBytes);
      if (at >= chunk && at - chunk <= chunk_bytes && chunk_bytes - (at - chunk) >= bytes + kShortCopyBytes) {
        dict_ = body;
        dict_values_ = values;
      } else {
        uint8_t* dst = size_dictionary<T>(values);
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
    T* dict = reinterpret_cast<T*>(size_dictionary<T>(static_cast<size_t>(d.num_values)));
    if constexpr (std::is_same_v<T, uint8_t>) {
      decode_plain_bool(body, size, d.num_values, dict);
    } else {
      decode_plain(body, size, d.num_values, dict);
    }
  }
  have_dictionary_ = true;
}

}  // namespace feedline::parquet::detail
