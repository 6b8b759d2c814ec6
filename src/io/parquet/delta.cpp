#include "io/parquet/delta.h"

#include <algorithm>
#include <string>

#include "feedline/error.h"

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
      for (uint64_t i = 0; i < per_miniblock && done < n; ++i) {
        const uint64_t delta = width == 0 ? 0 : read_bits(data + pos, static_cast<size_t>(std::min(bytes, available)),
                                                          i * static_cast<uint64_t>(width), width);
        value += min_delta + delta;  // wraps, as the spec wants
        out[done++] = static_cast<T>(value);
      }
      // The last miniblock may be cut short by the page in files some writers made; take what is there.
      pos += static_cast<size_t>(std::min(bytes, available));
    }
  }
  return pos;
}

template size_t decode_delta_binary_packed<int32_t>(const uint8_t*, size_t, int64_t, int32_t*);
template size_t decode_delta_binary_packed<int64_t>(const uint8_t*, size_t, int64_t, int64_t*);

size_t decode_delta_length_byte_arrays(const uint8_t* data, size_t size, int64_t n, ByteArrays* out,
                                       size_t max_total_bytes) {
  std::vector<int32_t> lengths(static_cast<size_t>(n));
  size_t pos = decode_delta_binary_packed(data, size, n, lengths.data());
  uint64_t total = 0;
  for (const int32_t len : lengths) {
    if (len < 0) throw InvalidFile("DELTA_LENGTH_BYTE_ARRAY: negative length " + std::to_string(len));
    total += static_cast<uint64_t>(len);
  }
  if (total > size - pos) {
    throw InvalidFile("DELTA_LENGTH_BYTE_ARRAY: " + std::to_string(total) + " bytes of values, " +
                      std::to_string(size - pos) + " in the page");
  }
  if (out->bytes.size() + total > max_total_bytes) throw InvalidFile("byte arrays exceed the size limit");
  out->bytes.append(reinterpret_cast<const char*>(data + pos), static_cast<size_t>(total));
  out->offsets.reserve(out->offsets.size() + lengths.size());
  int64_t end = out->offsets.back();
  for (const int32_t len : lengths) out->offsets.push_back(end += len);
  return pos + static_cast<size_t>(total);
}

size_t decode_delta_byte_arrays(const uint8_t* data, size_t size, int64_t n, ByteArrays* out, size_t max_total_bytes,
                                int32_t fixed_length) {
  std::vector<int32_t> prefixes(static_cast<size_t>(n));
  size_t pos = decode_delta_binary_packed(data, size, n, prefixes.data());
  ByteArrays suffixes;
  pos += decode_delta_length_byte_arrays(data + pos, size - pos, n, &suffixes, max_total_bytes);
  out->offsets.reserve(out->offsets.size() + static_cast<size_t>(n));
  std::string previous;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t prefix = prefixes[static_cast<size_t>(i)];
    if (prefix < 0 || static_cast<size_t>(prefix) > previous.size()) {
      throw InvalidFile("DELTA_BYTE_ARRAY: prefix of " + std::to_string(prefix) + " bytes after a value of " +
                        std::to_string(previous.size()));
    }
    previous.resize(static_cast<size_t>(prefix));
    previous.append(suffixes.at(i));
    if (fixed_length > 0 && previous.size() != static_cast<size_t>(fixed_length)) {
      throw InvalidFile("DELTA_BYTE_ARRAY: value of " + std::to_string(previous.size()) + " bytes in a column of " +
                        std::to_string(fixed_length));
    }
    if (out->bytes.size() + previous.size() > max_total_bytes) throw InvalidFile("byte arrays exceed the size limit");
    out->push_back(previous);
  }
  return pos;
}

size_t decode_byte_stream_split(const uint8_t* data, size_t size, int64_t n, size_t width, uint8_t* out) {
  const auto count = static_cast<size_t>(n);
  if (width == 0 || count > size / width) {
    throw InvalidFile("BYTE_STREAM_SPLIT data holds " + std::to_string(width ? size / width : 0) +
                      " values, page declares " + std::to_string(n));
  }
  for (size_t k = 0; k < width; ++k) {
    const uint8_t* stream = data + k * count;
    for (size_t i = 0; i < count; ++i) out[i * width + k] = stream[i];
  }
  return count * width;
}

}  // namespace feedline::parquet
