#include "io/parquet/plain.h"

#include "io/memory.h"

namespace feedline::parquet {

void make_room_for_rest(ByteArrays* out, size_t bytes_at_start, int64_t entries_done, int64_t entries_left,
                        size_t max_total_bytes) {
  if (entries_done <= 0 || entries_left <= 0 || out->bytes.size() >= max_total_bytes) return;
  const size_t have = out->bytes.size() - bytes_at_start;
  const double per_entry = static_cast<double>(have) / static_cast<double>(entries_done);
  const double projected = per_entry * static_cast<double>(entries_left) * 1.125;
  const double bound =
      std::min(16.0 * static_cast<double>(have), static_cast<double>(max_total_bytes - out->bytes.size()));
  const auto more = static_cast<size_t>(std::min(projected, bound));
  if (out->bytes.size() + more > out->bytes.capacity()) reserve_populated(out->bytes, out->bytes.size() + more);
  // An offset an entry at most (a null one included), held to 16 times the chunk's so far likewise.
  const auto offsets = static_cast<size_t>(std::min(entries_left, 16 * entries_done));
  if (out->offsets.size() + offsets > out->offsets.capacity()) {
    reserve_populated(out->offsets, out->offsets.size() + offsets);
  }
}

size_t decode_plain_bool(const uint8_t* data, size_t size, int64_t n, uint8_t* out) {
  const size_t bytes = (static_cast<size_t>(n) + 7) / 8;
  if (bytes > size) {
    throw InvalidFile("PLAIN data holds " + std::to_string(size * 8) + " booleans, page declares " + std::to_string(n));
  }
  const size_t whole = static_cast<size_t>(n) / 8;
  for (size_t b = 0; b < whole; ++b) {
    const uint8_t byte = data[b];
    for (int i = 0; i < 8; ++i) out[b * 8 + i] = (byte >> i) & 1;
  }
  for (size_t i = whole * 8; i < static_cast<size_t>(n); ++i) out[i] = (data[i / 8] >> (i % 8)) & 1;
  return bytes;
}

size_t decode_plain_byte_arrays(const uint8_t* data, size_t size, int64_t n, ByteArrays* out,
                                size_t max_total_bytes, int32_t fixed_length) {
  if (fixed_length > 0) {
    const auto len = static_cast<uint64_t>(fixed_length);
    if (n < 0 || static_cast<uint64_t>(n) > size / len) {
      throw InvalidFile("PLAIN data holds " + std::to_string(size / len) + " values of " + std::to_string(len) +
                        " bytes, page declares " + std::to_string(n));
    }
    const size_t bytes = static_cast<size_t>(n) * len;
    if (out->bytes.size() + bytes > max_total_bytes) throw InvalidFile("byte arrays exceed the size limit");
    out->bytes.append(reinterpret_cast<const char*>(data), bytes);
    append_fixed_offsets(out, n, fixed_length);
    return bytes;
  }
  // Each value takes its 4-byte length at least: a count beyond that is refused before anything is reserved for it
  // (a dictionary page's count is not bounded by anything else).
  if (n < 0 || static_cast<uint64_t>(n) > size / 4) {
    throw InvalidFile("PLAIN data holds at most " + std::to_string(size / 4) + " byte arrays, page declares " +
                      std::to_string(n));
  }
  // Two passes: the lengths, checked and made offsets, then the bytes copied into room made once (appending
  // value by value costs a call and a capacity check each, which short strings feel).
  const size_t first = out->offsets.size();
  const size_t base = out->bytes.size();
  grow_populated(out->offsets, first + static_cast<size_t>(n));
  int64_t* offsets = out->offsets.data() + first;
  size_t pos = 0, total = 0;
  const auto fail = [&](std::string message) {
    out->offsets.resize(first);  // out as it was
    return InvalidFile(std::move(message));
  };
  for (int64_t i = 0; i < n; ++i) {
    if (size - pos < 4) {
      throw fail("PLAIN byte array " + std::to_string(i) + " of " + std::to_string(n) + " is truncated");
    }
    uint32_t len;
    std::memcpy(&len, data + pos, 4);
    pos += 4;
    if (len > size - pos) {
      throw fail("PLAIN byte array " + std::to_string(i) + " of " + std::to_string(len) + " bytes runs past the page");
    }
    if (base + total + len > max_total_bytes) throw fail("byte arrays exceed the size limit");
    total += len;
    offsets[i] = static_cast<int64_t>(base + total);
    pos += len;
  }
  // (the room made ends with kShortCopyBytes more until the copy is done: see copy_byte_array)
  grow_populated(out->bytes, base + total + kShortCopyBytes);
  char* dst = out->bytes.data() + base;
  const uint8_t* src = data;
  for (int64_t i = 0; i < n; ++i) {
    const auto len = static_cast<size_t>(offsets[i] - (i == 0 ? static_cast<int64_t>(base) : offsets[i - 1]));
    copy_byte_array(dst, reinterpret_cast<const char*>(src) + 4, len);
    dst += len;
    src += 4 + len;
  }
  out->bytes.resize(base + total);
  return pos;
}

size_t compact_plain_byte_arrays(const uint8_t* src, size_t size, int64_t n, char* dst, int64_t base,
                                 std::vector<int64_t>* offsets, size_t max_total_bytes) {
  if (n < 0 || static_cast<uint64_t>(n) > size / 4) {
    throw InvalidFile("PLAIN data holds at most " + std::to_string(size / 4) + " byte arrays, page declares " +
                      std::to_string(n));
  }
  const size_t first = offsets->size();
  offsets->resize(first + static_cast<size_t>(n));
  int64_t* ends = offsets->data() + first;
  size_t pos = 0, total = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t len;
    if (size - pos < 4) {
      offsets->resize(first);
      throw InvalidFile("PLAIN byte array " + std::to_string(i) + " of " + std::to_string(n) + " is truncated");
    }
    std::memcpy(&len, src + pos, 4);
    pos += 4;
    if (len > size - pos || static_cast<size_t>(base) + total + len > max_total_bytes) {
      offsets->resize(first);
      throw InvalidFile(len > size - pos ? "PLAIN byte array " + std::to_string(i) + " of " + std::to_string(len) +
                                               " bytes runs past the page"
                                         : std::string("byte arrays exceed the size limit"));
    }
    total += len;
    ends[i] = base + static_cast<int64_t>(total);
    pos += len;
  }
  // Front to back: each value's bytes go to or before where they lie, past the values already moved.
  const uint8_t* from = src;
  char* to = dst;
  for (int64_t i = 0; i < n; ++i) {
    const auto len = static_cast<size_t>(ends[i] - (i == 0 ? base : ends[i - 1]));
    std::memmove(to, from + 4, len);
    to += len;
    from += 4 + len;
  }
  return total;
}

void encode_plain_bool(const uint8_t* values, size_t n, std::string* out) {
  const size_t at = out->size();
  out->resize(at + (n + 7) / 8, '\0');
  char* dst = out->data() + at;
  for (size_t i = 0; i < n; ++i) {
    if (values[i]) dst[i / 8] = static_cast<char>(dst[i / 8] | (1 << (i % 8)));
  }
}

void encode_plain_byte_arrays(const ByteArrays& values, const int64_t* rows, size_t n, std::string* out,
                              bool fixed) {
  for (size_t k = 0; k < n; ++k) {
    const std::string_view v = values.at(rows[k]);
    if (fixed) {
      out->append(v.data(), v.size());
      continue;
    }
    const uint32_t len = static_cast<uint32_t>(v.size());
    out->append(reinterpret_cast<const char*>(&len), 4);
    out->append(v.data(), v.size());
  }
}

}  // namespace feedline::parquet
