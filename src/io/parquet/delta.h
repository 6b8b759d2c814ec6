// Internal: the DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY and BYTE_STREAM_SPLIT
// encodings (Encodings.md). Like the PLAIN decoders, each takes the page's remaining bytes, decodes exactly n
// values, returns the bytes consumed, and throws InvalidFile for anything that does not add up; sizes come
// from the page and are checked before anything is allocated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "feedline/io/table.h"

namespace feedline::parquet {

// Integers (int32_t or int64_t; arithmetic wraps as the spec says). Returns the bytes consumed, which for
// the last page of a column may be fewer than the page holds.
template <class T>
size_t decode_delta_binary_packed(const uint8_t* data, size_t size, int64_t n, T* out);

// Lengths as DELTA_BINARY_PACKED, then the bytes back to back. Appends n values to `out`.
size_t decode_delta_length_byte_arrays(const uint8_t* data, size_t size, int64_t n, ByteArrays* out,
                                       size_t max_total_bytes);

// Prefix lengths (shared with the previous value) as DELTA_BINARY_PACKED, then the suffixes as
// DELTA_LENGTH_BYTE_ARRAY. Appends n values to `out`; fixed_length > 0 checks every value has that length.
// `data + size` must be followed by kShortCopyBytes readable bytes (a page buffer's padding): see copy_byte_array.
size_t decode_delta_byte_arrays(const uint8_t* data, size_t size, int64_t n, ByteArrays* out, size_t max_total_bytes,
                                int32_t fixed_length);
// The same for n FIXED_LEN_BYTE_ARRAY(width) values, written back to back to out[0, n * width) and not a byte past.
size_t decode_delta_byte_arrays_fixed(const uint8_t* data, size_t size, int64_t n, int32_t width, char* out);

// Byte k of every value in stream k: n values of `width` bytes from exactly n * width bytes.
size_t decode_byte_stream_split(const uint8_t* data, size_t size, int64_t n, size_t width, uint8_t* out);

// The encoders, as parquet-mr and Arrow write these encodings: integers in blocks of 128 values, 4 miniblocks
// of 32, deltas wrapping in T's width. The writer does not use them (yet); the tests and the decoding
// benchmark check the decoders against them.
template <class T>
std::string encode_delta_binary_packed(const T* values, size_t n);
std::string encode_delta_length_byte_arrays(const std::vector<std::string>& values);
std::string encode_delta_byte_arrays(const std::vector<std::string>& values);
std::string encode_byte_stream_split(const uint8_t* values, size_t n, size_t width);

}  // namespace feedline::parquet
