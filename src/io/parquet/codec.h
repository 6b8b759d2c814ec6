// Internal: page compression, one switch over every codec feedline handles (UNCOMPRESSED, SNAPPY, GZIP, ZSTD,
// LZ4_RAW, BROTLI; and the deprecated LZ4 for reading).
// Decompression is told the exact size the page header declares and fails unless the data yields exactly that.
// Thread-safe: per-thread compression contexts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "feedline/io/parquet.h"

namespace feedline::parquet {

// Maps parquet.thrift's CompressionCodec value to ours; throws Unsupported naming any other codec.
Codec codec_from_thrift(int32_t value);
int32_t codec_to_thrift(Codec codec);

// Decompresses `src` into `dst`, which holds exactly `dst_size` bytes. Throws InvalidFile (without the file
// name, which the caller adds) when the data is corrupt or does not decompress to exactly dst_size bytes.
void decompress(Codec codec, const uint8_t* src, size_t src_size, uint8_t* dst, size_t dst_size);

// The CRC-32 (zlib's polynomial, as PageHeader.crc uses) of `size` bytes: libdeflate's, which folds with
// carry-less multiplication (PCLMUL) where the CPU has it.
uint32_t crc32_of(const uint8_t* data, size_t size);

// Replaces `out` with the compressed form of `src`.
void compress(Codec codec, int level, const uint8_t* src, size_t src_size, std::string* out);

}  // namespace feedline::parquet
