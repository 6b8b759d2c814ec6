#include "io/parquet/codec.h"

#include <brotli/decode.h>
#include <brotli/encode.h>
#include <libdeflate.h>
#include <lz4.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <cctype>
#include <cstring>
#include <memory>

#include "feedline/io/error.h"
#include "io/parquet/metadata.h"

namespace feedline::parquet {
namespace {

struct ZstdContexts {
  ZSTD_DCtx* d = ZSTD_createDCtx();
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ~ZstdContexts() {
    ZSTD_freeDCtx(d);
    ZSTD_freeCCtx(c);
  }
};

ZstdContexts& zstd_contexts() {
  static thread_local ZstdContexts contexts;
  return contexts;
}

struct Inflater {
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  ~Inflater() { libdeflate_free_decompressor(d); }
};

// The common case, one gzip member or zlib stream that fills the page exactly, by libdeflate (whole-buffer
// decompression, several times zlib's speed). False for anything else (several members, trailing bytes, corrupt
// data), which zlib's streaming path then reads or refuses with its reason.
bool inflate_whole(const uint8_t* src, size_t src_size, uint8_t* dst, size_t dst_size) {
  static thread_local Inflater inflater;
  if (inflater.d == nullptr || src_size < 2) return false;
  size_t in = 0, out = 0;
  const bool gzip = src[0] == 0x1f && src[1] == 0x8b;
  const libdeflate_result rc =
      gzip ? libdeflate_gzip_decompress_ex(inflater.d, src, src_size, dst, dst_size, &in, &out)
           : libdeflate_zlib_decompress_ex(inflater.d, src, src_size, dst, dst_size, &in, &out);
  if (rc != LIBDEFLATE_SUCCESS || out != dst_size) return false;
  while (in < src_size && src[in] == 0) ++in;  // trailing zero padding, as below
  return in == src_size;
}

[[noreturn]] void corrupt(const char* codec, const std::string& what) {
  throw InvalidFile(std::string(codec) + " data is corrupt: " + what);
}

void gunzip(const uint8_t* src, size_t src_size, uint8_t* dst, size_t dst_size) {
  if (inflate_whole(src, src_size, dst, dst_size)) return;
  // Page sizes are int32 in the header, so they fit zlib's uInt.
  z_stream zs{};
  // 15 + 32: accept gzip or zlib headers.
  if (inflateInit2(&zs, 15 + 32) != Z_OK) throw InvalidFile("GZIP: cannot initialise zlib");
  struct Guard {
    z_stream* zs;
    ~Guard() { inflateEnd(zs); }
  } guard{&zs};
  size_t in_pos = 0, out_pos = 0;
  uint8_t probe = 0;  // once the output is full, one spare byte shows whether the stream holds more
  while (true) {
    const bool full = out_pos == dst_size;
    zs.next_in = const_cast<Bytef*>(src + in_pos);
    zs.avail_in = static_cast<uInt>(src_size - in_pos);
    zs.next_out = full ? &probe : dst + out_pos;
    zs.avail_out = full ? 1 : static_cast<uInt>(dst_size - out_pos);
    const uInt in_before = zs.avail_in, out_before = zs.avail_out;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    in_pos += in_before - zs.avail_in;
    if (full && zs.avail_out == 0) {
      corrupt("GZIP", "decompresses to more than the declared " + std::to_string(dst_size) + " bytes");
    }
    if (!full) out_pos += out_before - zs.avail_out;
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members: go on while input remains (trailing zero padding is ignored).
      while (in_pos < src_size && src[in_pos] == 0) ++in_pos;
      if (in_pos >= src_size) break;
      if (inflateReset(&zs) != Z_OK) corrupt("GZIP", "cannot reset for the next member");
      continue;
    }
    if (rc == Z_OK && (in_before != zs.avail_in || out_before != zs.avail_out)) continue;
    if (rc == Z_OK || rc == Z_BUF_ERROR) {
      corrupt("GZIP", in_pos >= src_size ? "truncated stream" : "no progress");
    }
    corrupt("GZIP", zs.msg ? zs.msg : "inflate failed");
  }
  if (out_pos != dst_size) {
    corrupt("GZIP", "decompressed to " + std::to_string(out_pos) + " bytes, header declares " + std::to_string(dst_size));
  }
}

void gzip(int level, const uint8_t* src, size_t src_size, std::string* out) {
  z_stream zs{};
  // 15 + 16: write a gzip header, as Parquet's GZIP codec requires.
  if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw InvalidArgument("GZIP: bad compression level " + std::to_string(level));
  }
  out->resize(deflateBound(&zs, static_cast<uLong>(src_size)) + 32);
  zs.next_in = const_cast<Bytef*>(src);
  zs.avail_in = static_cast<uInt>(src_size);
  zs.next_out = reinterpret_cast<Bytef*>(out->data());
  zs.avail_out = static_cast<uInt>(out->size());
  const int rc = deflate(&zs, Z_FINISH);
  const size_t n = zs.total_out;
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) throw Error("GZIP: compression failed");
  out->resize(n);
}

uint32_t big_endian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// One LZ4 block that must fill dst exactly. False instead of throwing, so callers can try another framing.
bool lz4_block(const uint8_t* src, size_t src_size, uint8_t* dst, size_t dst_size) {
  if (src_size > static_cast<size_t>(INT32_MAX) || dst_size > static_cast<size_t>(INT32_MAX)) return false;
  const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(dst),
                                    static_cast<int>(src_size), static_cast<int>(dst_size));
  return n >= 0 && static_cast<size_t>(n) == dst_size;
}

// Hadoop's LZ4 framing (what parquet-mr wrote as LZ4): blocks of [uncompressed size, compressed size] as
// big-endian 32-bit integers, each followed by one LZ4 block, together filling dst exactly.
bool lz4_hadoop(const uint8_t* src, size_t src_size, uint8_t* dst, size_t dst_size) {
  size_t in = 0, out = 0;
  while (src_size - in >= 8) {
    const size_t raw = big_endian32(src + in), packed = big_endian32(src + in + 4);
    in += 8;
    if (packed > src_size - in || raw > dst_size - out) return false;
    if (!lz4_block(src + in, packed, dst + out, raw)) return false;
    in += packed;
    out += raw;
  }
  return in == src_size && out == dst_size;
}

}  // namespace

uint32_t crc32_of(const uint8_t* data, size_t size) { return libdeflate_crc32(0, data, size); }

const char* to_string(Codec codec) {
  switch (codec) {
    case Codec::kUncompressed: return "uncompressed";
    case Codec::kSnappy: return "snappy";
    case Codec::kGzip: return "gzip";
    case Codec::kZstd: return "zstd";
    case Codec::kLz4Raw: return "lz4_raw";
    case Codec::kLz4: return "lz4";
    case Codec::kBrotli: return "brotli";
  }
  return "?";
}

Codec parse_codec(const std::string& name) {
  std::string lower;
  for (char ch : name) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  if (lower == "uncompressed" || lower == "none") return Codec::kUncompressed;
  if (lower == "snappy") return Codec::kSnappy;
  if (lower == "gzip") return Codec::kGzip;
  if (lower == "zstd") return Codec::kZstd;
  if (lower == "lz4_raw") return Codec::kLz4Raw;
  if (lower == "brotli") return Codec::kBrotli;
  throw InvalidArgument("unknown Parquet codec '" + name +
                        "' (expected uncompressed, snappy, gzip, zstd, lz4_raw or brotli)");
}

Codec codec_from_thrift(int32_t value) {
  switch (value) {
    case format::codec::kUncompressed: return Codec::kUncompressed;
    case format::codec::kSnappy: return Codec::kSnappy;
    case format::codec::kGzip: return Codec::kGzip;
    case format::codec::kZstd: return Codec::kZstd;
    case format::codec::kLz4Raw: return Codec::kLz4Raw;
    case format::codec::kLz4: return Codec::kLz4;
    case format::codec::kBrotli: return Codec::kBrotli;
    default:
      throw Unsupported(std::string("codec ") + format::codec_name(value) + " (" + std::to_string(value) +
                        ") is not supported");
  }
}

int32_t codec_to_thrift(Codec codec) {
  switch (codec) {
    case Codec::kUncompressed: return format::codec::kUncompressed;
    case Codec::kSnappy: return format::codec::kSnappy;
    case Codec::kGzip: return format::codec::kGzip;
    case Codec::kZstd: return format::codec::kZstd;
    case Codec::kLz4Raw: return format::codec::kLz4Raw;
    case Codec::kLz4: break;  // deprecated: written as LZ4_RAW instead
    case Codec::kBrotli: return format::codec::kBrotli;
  }
  throw InvalidArgument("codec LZ4 (Parquet's deprecated one) is not written; use LZ4_RAW");
}

void decompress(Codec codec, const uint8_t* src, size_t src_size, uint8_t* dst, size_t dst_size) {
  switch (codec) {
    case Codec::kUncompressed:
      if (src_size != dst_size) {
        throw InvalidFile("uncompressed page of " + std::to_string(src_size) + " bytes, header declares " +
                          std::to_string(dst_size));
      }
      if (dst_size > 0) std::memcpy(dst, src, dst_size);
      return;
    case Codec::kSnappy: {
      size_t n = 0;
      if (!snappy::GetUncompressedLength(reinterpret_cast<const char*>(src), src_size, &n)) {
        corrupt("SNAPPY", "bad length header");
      }
      if (n != dst_size) {
        corrupt("SNAPPY", "holds " + std::to_string(n) + " bytes, header declares " + std::to_string(dst_size));
      }
      if (!snappy::RawUncompress(reinterpret_cast<const char*>(src), src_size, reinterpret_cast<char*>(dst))) {
        corrupt("SNAPPY", "decompression failed");
      }
      return;
    }
    case Codec::kGzip:
      gunzip(src, src_size, dst, dst_size);
      return;
    case Codec::kZstd: {
      const size_t n = ZSTD_decompressDCtx(zstd_contexts().d, dst, dst_size, src, src_size);
      if (ZSTD_isError(n)) corrupt("ZSTD", ZSTD_getErrorName(n));
      if (n != dst_size) {
        corrupt("ZSTD", "decompressed to " + std::to_string(n) + " bytes, header declares " + std::to_string(dst_size));
      }
      return;
    }
    case Codec::kLz4Raw:
      if (!lz4_block(src, src_size, dst, dst_size)) {
        corrupt("LZ4_RAW", "not one LZ4 block of the declared " + std::to_string(dst_size) + " bytes");
      }
      return;
    case Codec::kLz4:
      // Writers disagreed on the framing of the deprecated LZ4 codec: Hadoop's first, then a bare block.
      if (!lz4_hadoop(src, src_size, dst, dst_size) && !lz4_block(src, src_size, dst, dst_size)) {
        corrupt("LZ4", "neither Hadoop-framed nor one LZ4 block of the declared " + std::to_string(dst_size) + " bytes");
      }
      return;
    case Codec::kBrotli: {
      size_t n = dst_size;
      if (BrotliDecoderDecompress(src_size, src, &n, dst) != BROTLI_DECODER_RESULT_SUCCESS) {
        corrupt("BROTLI", "decompression failed or exceeds the declared " + std::to_string(dst_size) + " bytes");
      }
      if (n != dst_size) {
        corrupt("BROTLI", "decompressed to " + std::to_string(n) + " bytes, header declares " + std::to_string(dst_size));
      }
      return;
    }
  }
  throw InvalidFile("bad codec");
}

void compress(Codec codec, int level, const uint8_t* src, size_t src_size, std::string* out) {
  switch (codec) {
    case Codec::kUncompressed:
      out->assign(reinterpret_cast<const char*>(src), src_size);
      return;
    case Codec::kSnappy: {
      out->resize(snappy::MaxCompressedLength(src_size));
      size_t n = 0;
      snappy::RawCompress(reinterpret_cast<const char*>(src), src_size, out->data(), &n);
      out->resize(n);
      return;
    }
    case Codec::kGzip:
      gzip(level, src, src_size, out);
      return;
    case Codec::kZstd: {
      out->resize(ZSTD_compressBound(src_size));
      const size_t n = ZSTD_compressCCtx(zstd_contexts().c, out->data(), out->size(), src, src_size, level);
      if (ZSTD_isError(n)) throw Error(std::string("ZSTD: compression failed: ") + ZSTD_getErrorName(n));
      out->resize(n);
      return;
    }
    case Codec::kLz4Raw: {
      if (src_size > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) throw InvalidArgument("LZ4_RAW: page too large");
      out->resize(static_cast<size_t>(LZ4_compressBound(static_cast<int>(src_size))));
      const int n = LZ4_compress_default(reinterpret_cast<const char*>(src), out->data(), static_cast<int>(src_size),
                                         static_cast<int>(out->size()));
      if (n <= 0) throw Error("LZ4_RAW: compression failed");
      out->resize(static_cast<size_t>(n));
      return;
    }
    case Codec::kLz4: break;
    case Codec::kBrotli: {
      size_t n = BrotliEncoderMaxCompressedSize(src_size);
      out->resize(n == 0 ? src_size + 1024 : n);
      n = out->size();
      const int quality = level < 0 || level > 11 ? BROTLI_DEFAULT_QUALITY : level;
      if (!BrotliEncoderCompress(quality, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, src_size, src, &n,
                                 reinterpret_cast<uint8_t*>(out->data()))) {
        throw Error("BROTLI: compression failed");
      }
      out->resize(n);
      return;
    }
  }
  throw InvalidArgument("codec LZ4 (Parquet's deprecated one) is not written; use LZ4_RAW");
}

}  // namespace feedline::parquet
