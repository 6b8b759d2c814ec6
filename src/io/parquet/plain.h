// Internal: the PLAIN encoding (Encodings.md, "PLAIN = 0"): fixed-width values little-endian back to back,
// booleans bit-packed LSB first, byte arrays as a 4-byte little-endian length then the bytes.
// Decoders take the page's remaining bytes, decode exactly n values, and return the bytes consumed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/table.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "feedline's Parquet code assumes a little-endian machine"
#endif

namespace feedline::parquet {

// Room for `more` offsets past out's, growing the vector geometrically: each page reserves for its values, and
// an exact reserve per page would copy the column's offsets once a page.
inline void reserve_offsets(ByteArrays* out, size_t more) {
  std::vector<int64_t>& v = out->offsets;
  if (v.size() + more > v.capacity()) v.reserve(std::max(v.size() + more, 2 * v.capacity()));
}

// After a page of a chunk's byte arrays: room for the rest of the chunk at once, projected from the bytes its
// level entries have taken so far (out->bytes past `bytes_at_start`, over `entries_done`), an eighth over, and
// populated for writing. Later pages then neither move what is there (growth by doubling copies it and faults in
// twice the memory) nor fault it in page by page. The projection is held to 16 times what the chunk holds already,
// so that a page of a few long values cannot make it large, and to `max_total_bytes`. Nothing is done when the
// room is there already.
void make_room_for_rest(ByteArrays* out, size_t bytes_at_start, int64_t entries_done, int64_t entries_left,
                        size_t max_total_bytes);

// The offsets of n more values of `width` bytes each (FIXED_LEN_BYTE_ARRAY), after out's last.
inline void append_fixed_offsets(ByteArrays* out, int64_t n, int64_t width) {
  // Inserted from an iterator that computes them: each is written once (a resize would zero them first), in a loop
  // without push_back's test for room.
  struct Offsets {
    using iterator_category = std::forward_iterator_tag;
    using value_type = int64_t;
    using difference_type = std::ptrdiff_t;
    using pointer = const int64_t*;
    using reference = int64_t;
    int64_t end, width, i;
    int64_t operator*() const { return end + (i + 1) * width; }
    Offsets& operator++() {
      ++i;
      return *this;
    }
    Offsets operator++(int) {
      Offsets old = *this;
      ++i;
      return old;
    }
    bool operator==(const Offsets& o) const { return i == o.i; }
    bool operator!=(const Offsets& o) const { return i != o.i; }
  };
  if (n <= 0) return;
  reserve_offsets(out, static_cast<size_t>(n));
  const int64_t end = out->offsets.back();
  out->offsets.insert(out->offsets.end(), Offsets{end, width, 0}, Offsets{end, width, n});
}

template <class T>
size_t decode_plain(const uint8_t* data, size_t size, int64_t n, T* out) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(T);
  if (bytes > size) {
    throw InvalidFile("PLAIN data holds " + std::to_string(size / sizeof(T)) + " values, page declares " +
                      std::to_string(n));
  }
  if (bytes > 0) std::memcpy(out, data, bytes);
  return bytes;
}

// Booleans: one output byte (0/1) per value.
size_t decode_plain_bool(const uint8_t* data, size_t size, int64_t n, uint8_t* out);

// A byte array of up to kShortCopyBytes is copied as that many bytes in one move rather than by a call sized to it,
// which short strings feel: where it is read from and where it goes must both have kShortCopyBytes bytes of room.
constexpr size_t kShortCopyBytes = 16;
inline void copy_byte_array(char* dst, const char* src, size_t len) {
  if (len <= kShortCopyBytes) {
    std::memcpy(dst, src, kShortCopyBytes);
  } else {
    std::memcpy(dst, src, len);
  }
}

// Appends n values to `out`; `max_total_bytes` caps out->bytes (a hostile file cannot make it grow unbounded).
// fixed_length > 0: FIXED_LEN_BYTE_ARRAY values of that many bytes each, with no length prefixes. `data + size`
// must be followed by kShortCopyBytes readable bytes (a page buffer's padding): see copy_byte_array.
size_t decode_plain_byte_arrays(const uint8_t* data, size_t size, int64_t n, ByteArrays* out,
                                size_t max_total_bytes, int32_t fixed_length = 0);

// PLAIN byte arrays decoded where they lie, for pages too large to copy: the n values at src[0..size) (each a
// 4-byte length, then its bytes) moved down, back to back, to dst (at or before src, in the same buffer), and the
// offsets of their ends, `base` plus the bytes before, appended to *offsets. Checks every length before moving a
// byte; `max_total_bytes` caps base plus their bytes. Returns the bytes the values take.
size_t compact_plain_byte_arrays(const uint8_t* src, size_t size, int64_t n, char* dst, int64_t base,
                                 std::vector<int64_t>* offsets, size_t max_total_bytes);

template <class T>
void encode_plain(const T* values, size_t n, std::string* out) {
  out->append(reinterpret_cast<const char*>(values), n * sizeof(T));
}
void encode_plain_bool(const uint8_t* values, size_t n, std::string* out);
// The values at rows[0..n) of `values`.
// fixed: FIXED_LEN_BYTE_ARRAY, the bytes without length prefixes.
void encode_plain_byte_arrays(const ByteArrays& values, const int64_t* rows, size_t n, std::string* out,
                              bool fixed = false);

}  // namespace feedline::parquet
