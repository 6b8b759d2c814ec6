#include "io/parquet/delta.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "feedline/io/error.h"
#include "io/parquet/plain.h"
#include "io/parquet/rle.h"

namespace feedline::parquet {
namespace {

// Reads one ULEB128 integer of at most 64 bits.
uint64_t read_uleb(const uint8_t* data, size_t size, size_t* pos) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= size) throw InvalidFile("DELTA_BINARY_PACKED: header truncated");
    const uint8_t b = data[(*pos)++];
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
  }
  throw InvalidFile("DELTA_BINARY_PACKED: varint longer than 64 bits");
}

int64_t read_zigzag(const uint8_t* data, size_t size, size_t* pos) {
  const uint64_t u = read_uleb(data, size, pos);
  return static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
}

// `width` bits at bit offset `bit` of data[0..size), least significant bit first.
uint64_t read_bits(const uint8_t* data, size_t size, uint64_t bit, int width) {
  uint64_t v = 0;
  int got = 0;
  size_t byte = static_cast<size_t>(bit >> 3);
  int shift = static_cast<int>(bit & 7);
  while (got < width) {
    if (byte >= size) throw InvalidFile("DELTA_BINARY_PACKED: miniblock runs past the page");
    v |= static_cast<uint64_t>(data[byte] >> shift) << got;
    got += 8 - shift;
    shift = 0;
    ++byte;
  }
  return width == 64 ? v : v & ((uint64_t{1} << width) - 1);
}

// BYTE_STREAM_SPLIT for FLOAT and DOUBLE: each value put together from its W streams in a register (which
// the compiler vectorises), instead of W passes writing one byte in W.
template <size_t W>
void join_streams(const uint8_t* data, size_t count, uint8_t* out) {
  using Word = std::conditional_t<W == 4, uint32_t, uint64_t>;
  for (size_t i = 0; i < count; ++i) {
    Word v = 0;
    for (size_t k = 0; k < W; ++k) v |= static_cast<Word>(data[k * count + i]) << (8 * k);
    std::memcpy(out + i * W, &v, W);  // little-endian, as Parquet stores values
  }
}

// Largest block the decoder accepts: the spec's writers use 128 values; anything near this is hostile.
constexpr uint64_t kMaxBlockValues = 1 << 16;

}  // namespace

template <class T>
size_t decode_delta_binary_packed(const uint8_t* data, size_t size, int64_t n, T* out) {
  size_t pos = 0;
  const uint64_t block = read_uleb(data, size, &pos);
  const uint64_t miniblocks = read_uleb(data, size, &pos);
  const uint64_t total = read_uleb(data, size, &pos);
  uint64_t value = static_cast<uint64_t>(read_zigzag(data, size, &pos));
  if (block == 0 || block % 128 != 0 || block > kMaxBlockValues || miniblocks == 0 || block % miniblocks != 0 ||
      (block / miniblocks) % 32 != 0) {
    throw InvalidFile("DELTA_BINARY_PACKED: block of " + std::to_string(block) + " values in " +
                      std::to_string(miniblocks) + " miniblocks");
  }
  if (total != static_cast<uint64_t>(n)) {
    throw InvalidFile("DELTA_BINARY_PACKED: holds " + std::to_string(total) + " values, page declares " +
                      std::to_string(n));
  }
  if (n == 0) return pos;
  const uint64_t per_miniblock = block / miniblocks;
  const int max_width = static_cast<int>(sizeof(T) * 8);
  out[0] = static_cast<T>(value);
  int64_t done = 1;
  std::vector<uint8_t> widths(static_cast<size_t>(miniblocks));
  std::vector<uint32_t> deltas(static_cast<size_t>(per_miniblock));
  while (done < n) {
    const uint64_t min_delta = static_cast<uint64_t>(read_zigzag(data, size, &pos));
    if (size - pos < miniblocks) throw InvalidFile("DELTA_BINARY_PACKED: bit widths truncated");
    for (size_t m = 0; m < widths.size(); ++m) widths[m] = data[pos + m];
    pos += static_cast<size_t>(miniblocks);
    for (size_t m = 0; m < widths.size() && done < n; ++m) {
      const int width = widths[m];
      if (width > max_width) {
        throw InvalidFile("DELTA_BINARY_PACKED: bit width " + std::to_string(width) + " for " +
                          std::to_string(max_width) + "-bit values");
      }
      // A miniblock always takes its full size, even when the values run out inside it.
      const uint64_t bytes = per_miniblock * static_cast<uint64_t>(width) / 8;
      const uint64_t available = size - pos;
      const int64_t take = static_cast<int64_t>(std::min<uint64_t>(per_miniblock, static_cast<uint64_t>(n - done)));
      if (width <= 32 && bytes <= available) {
        // The common case: a whole miniblock of deltas up to 32 bits, unpacked eight at a time.
        unpack_bits(data + pos, static_cast<size_t>(per_miniblock / 8), width, deltas.data());
        for (int64_t i = 0; i < take; ++i) {
          value += min_delta + deltas[static_cast<size_t>(i)];  // wraps, as the spec wants
          out[done++] = static_cast<T>(value);
        }
      } else {
        for (int64_t i = 0; i < take; ++i) {
          const uint64_t delta = width == 0 ? 0 : read_bits(data + pos, static_cast<size_t>(std::min(bytes, available)),
                                                            static_cast<uint64_t>(i) * static_cast<uint64_t>(width), width);
          value += min_delta + delta;
          out[done++] = static_cast<T>(value);
        }
      }
      // The last miniblock may be cut short by the page in files some writers made; take what is there.
      pos += static_cast<size_t>(std::min(bytes, available));
    }
  }
  return pos;
}

template size_t decode_delta_binary_packed<int32_t>(const uint8_t*, size_t, int64_t, int32_t*);
template size_t decode_delta_binary_packed<int64_t>(const uint8_t*, size_t, int64_t, int64_t*);

namespace {

// DELTA_LENGTH_BYTE_ARRAY's layout, which DELTA_BYTE_ARRAY's suffixes share: n lengths as DELTA_BINARY_PACKED,
// then their bytes back to back. Fills `lengths` and `total` (the bytes' sum, all within the page) and returns
// where the bytes start.
size_t decode_lengths(const uint8_t* data, size_t size, int64_t n, const char* encoding, std::vector<int32_t>* lengths,
                      uint64_t* total) {
  lengths->resize(static_cast<size_t>(n));
  const size_t pos = decode_delta_binary_packed(data, size, n, lengths->data());
  *total = 0;
  for (const int32_t len : *lengths) {
    if (len < 0) throw InvalidFile(std::string(encoding) + ": negative length " + std::to_string(len));
    *total += static_cast<uint64_t>(len);
  }
  if (*total > size - pos) {
    throw InvalidFile(std::string(encoding) + ": " + std::to_string(*total) + " bytes of values, " +
                      std::to_string(size - pos) + " in the page");
  }
  return pos;
}

}  // namespace

size_t decode_delta_length_byte_arrays(const uint8_t* data, size_t size, int64_t n, ByteArrays* out,
                                       size_t max_total_bytes) {
  std::vector<int32_t> lengths;
  uint64_t total = 0;
  const size_t pos = decode_lengths(data, size, n, "DELTA_LENGTH_BYTE_ARRAY", &lengths, &total);
  if (out->bytes.size() + total > max_total_bytes) throw InvalidFile("byte arrays exceed the size limit");
  out->bytes.append(reinterpret_cast<const char*>(data + pos), static_cast<size_t>(total));
  reserve_offsets(out, lengths.size());
  int64_t end = out->offsets.back();
  for (const int32_t len : lengths) out->offsets.push_back(end += len);
  return pos + static_cast<size_t>(total);
}

namespace {

// A DELTA_BYTE_ARRAY page's n values, read and checked before anything is written: each one's prefix (shared with
// its predecessor) and suffix length, where the suffixes start in the page, and the values' total length.
struct DeltaByteArrays {
  std::vector<int32_t> prefixes, suffix_lengths;
  const uint8_t* suffixes = nullptr;
  uint64_t total = 0;
  size_t consumed = 0;  // of the page's bytes
};

// The lengths, each checked against its predecessor (and against fixed_length when positive) and their total
// against max_total_bytes, so that the bytes are sized once and each value is built in place from its
// predecessor's prefix and its own suffix.
DeltaByteArrays read_delta_byte_arrays(const uint8_t* data, size_t size, int64_t n, int32_t fixed_length,
                                       size_t max_total_bytes) {
  DeltaByteArrays page;
  page.prefixes.resize(static_cast<size_t>(n));
  size_t pos = decode_delta_binary_packed(data, size, n, page.prefixes.data());
  // The suffixes, read in place from the page.
  uint64_t suffix_total = 0;
  pos += decode_lengths(data + pos, size - pos, n, "DELTA_BYTE_ARRAY", &page.suffix_lengths, &suffix_total);
  page.suffixes = data + pos;
  page.consumed = pos + static_cast<size_t>(suffix_total);
  int64_t previous = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t prefix = page.prefixes[static_cast<size_t>(i)];
    if (prefix < 0 || prefix > previous) {
      throw InvalidFile("DELTA_BYTE_ARRAY: prefix of " + std::to_string(prefix) + " bytes after a value of " +
                        std::to_string(previous));
    }
    previous = int64_t{prefix} + page.suffix_lengths[static_cast<size_t>(i)];
    if (fixed_length > 0 && previous != fixed_length) {
      throw InvalidFile("DELTA_BYTE_ARRAY: value of " + std::to_string(previous) + " bytes in a column of " +
                        std::to_string(fixed_length));
    }
    page.total += static_cast<uint64_t>(previous);
    if (page.total > max_total_bytes) throw InvalidFile("byte arrays exceed the size limit");
  }
  return page;
}

// Builds the page's values back to back in bytes[at, at + page.total), calling on_value(end) after each with
// where it ends. Values are written 16 bytes at a time (and their suffixes read so from the page, whose buffer
// ends with that much padding), which may reach kShortCopyBytes past the last value's end; with kExactEnd,
// never past room_end: there the last values are written to their length.
template <bool kExactEnd, class OnValue>
void build_delta_byte_arrays(const DeltaByteArrays& page, int64_t n, char* bytes, size_t at, size_t room_end,
                             OnValue on_value) {
  // (In locals: the stores below are of char, which may alias the vectors' own pointers.)
  const int32_t* prefixes = page.prefixes.data();
  const int32_t* suffix_lengths = page.suffix_lengths.data();
  const uint8_t* suffix = page.suffixes;
  size_t previous_at = at;
  // A value of up to 16 bytes is put together in a register from its predecessor's first 16 bytes, kept in
  // `head` (past the predecessor's end they are whatever followed; its prefix never reaches them), and its
  // suffix's 16 bytes shifted past the prefix, then stored at once. Read back from memory, the predecessor would
  // span the two stores that built it, and the load would wait for them (a stall a value).
  using Bytes16 = unsigned __int128;
  Bytes16 head = 0;
  for (int64_t i = 0; i < n; ++i) {
    const auto prefix = static_cast<size_t>(prefixes[i]);
    const auto suffix_length = static_cast<size_t>(suffix_lengths[i]);
    if (prefix + suffix_length <= kShortCopyBytes) {
      Bytes16 tail;
      std::memcpy(&tail, suffix, sizeof tail);
      const unsigned shift = 8 * static_cast<unsigned>(prefix);  // 0..128 bits
      const Bytes16 keep = shift >= 128 ? ~Bytes16{0} : (Bytes16{1} << shift) - 1;
      const Bytes16 moved = shift >= 128 ? Bytes16{0} : tail << shift;
      head = (head & keep) | (moved & ~keep);
      if (!kExactEnd || at + sizeof head <= room_end) {
        std::memcpy(bytes + at, &head, sizeof head);  // (one store)
      } else {
        std::memcpy(bytes + at, &head, prefix + suffix_length);
      }
    } else {
      // The predecessor ends where this value starts. (A short prefix comes from `head`, whose 16 bytes may
      // reach into the value being built.)
      if (prefix <= kShortCopyBytes) {
        std::memcpy(bytes + at, &head, sizeof head);
      } else {
        std::memcpy(bytes + at, bytes + previous_at, prefix);
      }
      if (!kExactEnd || at + prefix + kShortCopyBytes <= room_end) {
        copy_byte_array(bytes + at + prefix, reinterpret_cast<const char*>(suffix), suffix_length);
      } else {
        std::memcpy(bytes + at + prefix, suffix, suffix_length);
      }
      std::memcpy(&head, bytes + at, sizeof head);
    }
    suffix += suffix_length;
    previous_at = at;
    at += prefix + suffix_length;
    on_value(at);
  }
}

}  // namespace

size_t decode_delta_byte_arrays(const uint8_t* data, size_t size, int64_t n, ByteArrays* out, size_t max_total_bytes,
                                int32_t fixed_length) {
  const size_t at = out->bytes.size();
  const DeltaByteArrays page =
      read_delta_byte_arrays(data, size, n, fixed_length, max_total_bytes > at ? max_total_bytes - at : 0);
  // The bytes end with kShortCopyBytes more until the values are built.
  const size_t end = at + static_cast<size_t>(page.total);
  out->bytes.resize(end + kShortCopyBytes);
  reserve_offsets(out, static_cast<size_t>(n));
  build_delta_byte_arrays<false>(page, n, out->bytes.data(), at, end + kShortCopyBytes,
                                 [out](size_t value_end) { out->offsets.push_back(static_cast<int64_t>(value_end)); });
  out->bytes.resize(end);
  return page.consumed;
}

size_t decode_delta_byte_arrays_fixed(const uint8_t* data, size_t size, int64_t n, int32_t width, char* out) {
  const DeltaByteArrays page = read_delta_byte_arrays(data, size, n, width, SIZE_MAX);
  build_delta_byte_arrays<true>(page, n, out, 0, static_cast<size_t>(page.total), [](size_t) {});
  return page.consumed;
}

size_t decode_byte_stream_split(const uint8_t* data, size_t size, int64_t n, size_t width, uint8_t* out) {
  const auto count = static_cast<size_t>(n);
  if (width == 0 || count > size / width) {
    throw InvalidFile("BYTE_STREAM_SPLIT data holds " + std::to_string(width ? size / width : 0) +
                      " values, page declares " + std::to_string(n));
  }
  if (width == 4) {
    join_streams<4>(data, count, out);
  } else if (width == 8) {
    join_streams<8>(data, count, out);
  } else {
    for (size_t k = 0; k < width; ++k) {
      const uint8_t* stream = data + k * count;
      for (size_t i = 0; i < count; ++i) out[i * width + k] = stream[i];
    }
  }
  return count * width;
}

namespace {

void put_uleb(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void put_zigzag(int64_t v, std::string* out) {
  put_uleb((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63), out);
}

}  // namespace

template <class T>
std::string encode_delta_binary_packed(const T* values, size_t n) {
  using U = std::make_unsigned_t<T>;
  constexpr size_t kBlock = 128, kMiniblocks = 4, kPerMiniblock = kBlock / kMiniblocks;
  std::string out;
  put_uleb(kBlock, &out);
  put_uleb(kMiniblocks, &out);
  put_uleb(n, &out);
  put_zigzag(n == 0 ? 0 : values[0], &out);
  for (size_t at = 1; at < n; at += kBlock) {
    const size_t count = std::min(kBlock, n - at);
    T deltas[kBlock];
    T min_delta = std::numeric_limits<T>::max();
    for (size_t i = 0; i < count; ++i) {
      deltas[i] = static_cast<T>(static_cast<U>(values[at + i]) - static_cast<U>(values[at + i - 1]));
      min_delta = std::min(min_delta, deltas[i]);
    }
    put_zigzag(min_delta, &out);
    U adjusted[kBlock] = {};
    uint8_t widths[kMiniblocks] = {};
    for (size_t i = 0; i < count; ++i) {
      adjusted[i] = static_cast<U>(static_cast<U>(deltas[i]) - static_cast<U>(min_delta));
      auto& width = widths[i / kPerMiniblock];
      while (width < sizeof(U) * 8 && (adjusted[i] >> width) != 0) ++width;
    }
    out.append(reinterpret_cast<const char*>(widths), kMiniblocks);
    for (size_t m = 0; m < kMiniblocks && m * kPerMiniblock < count; ++m) {
      // Padded to a full miniblock, as the spec asks, even when the values run out inside it.
      std::string bits(kPerMiniblock * widths[m] / 8, '\0');
      for (size_t i = 0; i < kPerMiniblock; ++i) {
        const uint64_t v = adjusted[m * kPerMiniblock + i];
        for (int b = 0; b < widths[m]; ++b) {
          const size_t bit = i * widths[m] + static_cast<size_t>(b);
          if ((v >> b) & 1) bits[bit / 8] = static_cast<char>(bits[bit / 8] | (1 << (bit % 8)));
        }
      }
      out += bits;
    }
  }
  return out;
}

template std::string encode_delta_binary_packed<int32_t>(const int32_t*, size_t);
template std::string encode_delta_binary_packed<int64_t>(const int64_t*, size_t);

std::string encode_delta_length_byte_arrays(const std::vector<std::string>& values) {
  std::vector<int32_t> lengths;
  std::string bytes;
  for (const auto& v : values) {
    lengths.push_back(static_cast<int32_t>(v.size()));
    bytes += v;
  }
  return encode_delta_binary_packed(lengths.data(), lengths.size()) + bytes;
}

std::string encode_delta_byte_arrays(const std::vector<std::string>& values) {
  std::vector<int32_t> prefixes;
  std::vector<std::string> suffixes;
  for (size_t i = 0; i < values.size(); ++i) {
    size_t p = 0;
    if (i > 0) {
      const std::string& before = values[i - 1];
      while (p < values[i].size() && p < before.size() && values[i][p] == before[p]) ++p;
    }
    prefixes.push_back(static_cast<int32_t>(p));
    suffixes.push_back(values[i].substr(p));
  }
  return encode_delta_binary_packed(prefixes.data(), prefixes.size()) + encode_delta_length_byte_arrays(suffixes);
}

std::string encode_byte_stream_split(const uint8_t* values, size_t n, size_t width) {
  std::string out(n * width, '\0');
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < width; ++k) out[k * n + i] = static_cast<char>(values[i * width + k]);
  }
  return out;
}

}  // namespace feedline::parquet
