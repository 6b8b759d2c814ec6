// The Parquet decoders' own checks on hostile input: Thrift's limits and unknown fields, RLE and bit unpacking,
// dictionary gathers that refuse an index past the end, and codecs that check sizes. Everything must decode or
// throw feedline::Error: never crash, read out of bounds or allocate without bound.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "feedline/io/error.h"
#include "io/parquet/codec.h"
#include "io/parquet/dictionary.h"
#include "io/parquet/metadata.h"
#include "io/parquet/rle.h"
#include "io/parquet/thrift_compact.h"
#include "io/parquet_hostile_support.h"

namespace feedline::parquet {
namespace {

using feedline::testing::one_column_metadata;
namespace fmt = format;

TEST(ParquetThrift, SkipsUnknownFieldsOfEveryType) {
  thrift::CompactWriter w;
  w.begin_struct();
  w.field_i32(1, 1);  // version
  // Unknown fields of every wire type, before the known ones continue.
  w.field_header(20, thrift::kDouble);
  w.buffer().append(8, '\x11');
  w.field_bool(21, true);
  w.field_i8(22, 5);
  w.field_header(23, thrift::kI16);
  w.write_i32(300);
  w.field_binary(24, "unknown");
  w.field_header(25, thrift::kUuid);
  w.buffer().append(16, '\x22');
  w.field_list_begin(26, thrift::kStruct, 2);
  for (int i = 0; i < 2; ++i) {
    w.begin_struct();
    w.field_list_begin(1, thrift::kBinary, 1);
    w.write_binary("x");
    w.end_struct();
  }
  w.field_header(27, thrift::kMap);
  w.buffer().push_back(2);  // varint size 2
  w.buffer().push_back(static_cast<char>((thrift::kBinary << 4) | thrift::kStruct));
  for (int i = 0; i < 2; ++i) {
    w.write_binary("k");
    w.begin_struct();
    w.field_i64(3, 99);
    w.end_struct();
  }
  w.field_list_begin(28, thrift::kBoolTrue, 3);
  w.buffer().append("\1\2\1");
  w.field_header(29, thrift::kSet);
  w.list_header(thrift::kI64, 2);
  w.write_i64(-1);
  w.write_i64(1);
  w.field_struct_begin(30);
  w.field_struct_begin(1);
  w.end_struct();
  w.end_struct();
  w.end_struct();
  // Now the real fields, with a long-form header for id 2 after id 30.
  fmt::FileMetaData md = one_column_metadata(3);
  thrift::CompactWriter full;
  fmt::write_file_metadata(full, md);
  // Splice: our unknown fields + the real struct's fields (drop the real struct's leading version field).
  std::string bytes = w.buffer();
  bytes.pop_back();  // drop STOP
  // The real encoding starts with field 1 (version) as a short header; re-encode it in long form after id 30.
  std::string real = full.buffer();
  ASSERT_EQ(static_cast<uint8_t>(real[0]), 0x15);  // delta 1, i32
  real.erase(0, 2);  // field 1 header + value 1 (zigzag 2)
  // Field 2 (schema, a list) in long form: type byte then zigzag id.
  ASSERT_EQ(static_cast<uint8_t>(real[0]), 0x19);
  real[0] = thrift::kList;
  real.insert(1, 1, '\x04');  // zigzag(2)
  bytes += real;
  thrift::CompactReader in(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), 0);
  const fmt::FileMetaData back = fmt::read_file_metadata(in);
  EXPECT_EQ(back.version, 1);
  EXPECT_EQ(back.num_rows, 3);
  ASSERT_EQ(back.schema.size(), 2u);
  EXPECT_EQ(back.schema[1].name, "x");
  EXPECT_EQ(in.position(), bytes.size());
}

TEST(ParquetThrift, LimitsHoldOnHostileInput) {
  auto parse = [](const std::string& bytes) {
    thrift::CompactReader in(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), 100);
    return fmt::read_file_metadata(in);
  };
  // Nesting: structs inside structs, far deeper than any real file.
  std::string deep;
  for (int i = 0; i < 10000; ++i) deep.push_back(static_cast<char>((1 << 4) | thrift::kStruct));
  try {
    parse(deep);
    ADD_FAILURE() << "deep nesting accepted";
  } catch (const InvalidFile& e) {
    EXPECT_NE(std::string(e.what()).find("nesting"), std::string::npos) << e.what();
  }
  // A list that claims a billion elements in a few bytes.
  std::string list = {static_cast<char>((2 << 4) | thrift::kList), static_cast<char>(0xf0 | thrift::kStruct),
                      '\x80', '\x80', '\x80', '\x80', '\x04'};
  EXPECT_THROW(parse(list), InvalidFile);
  // A list of two elements without an element type (0): what they are cannot be known. (An empty list without
  // one is fine: fastparquet writes them so.)
  try {
    parse({static_cast<char>((5 << 4) | thrift::kList), static_cast<char>(2 << 4)});
    ADD_FAILURE() << "a list of typeless elements accepted";
  } catch (const InvalidFile& e) {
    EXPECT_NE(std::string(e.what()).find("unknown list element type 0"), std::string::npos) << e.what();
  }
  // A string that claims 4 GiB.
  std::string str = {static_cast<char>((6 << 4) | thrift::kBinary), '\xff', '\xff', '\xff', '\xff', '\x0f'};
  EXPECT_THROW(parse(str), InvalidFile);
  // An over-long varint.
  std::string varint = {static_cast<char>((3 << 4) | thrift::kI64)};
  varint.append(12, '\xff');
  EXPECT_THROW(parse(varint), InvalidFile);
  // Unknown wire type, missing required fields, empty input.
  EXPECT_THROW(parse(std::string(1, static_cast<char>((1 << 4) | 14))), InvalidFile);
  EXPECT_THROW(parse(std::string(1, '\0')), InvalidFile);
  EXPECT_THROW(parse(""), InvalidFile);
  try {
    parse("\x15");
  } catch (const InvalidFile& e) {
    EXPECT_NE(std::string(e.what()).find("offset 101"), std::string::npos) << e.what();
  }
}

TEST(ParquetRle, RoundTripsEveryWidth) {
  std::mt19937_64 rng(9);
  for (int width = 0; width <= 32; ++width) {
    std::vector<uint32_t> values;
    const uint64_t mask = width == 32 ? 0xffffffffu : (uint64_t{1} << width) - 1;
    for (int run = 0; run < 60; ++run) {
      const size_t len = rng() % 40 + 1;
      const bool repeat = rng() % 2;
      const uint32_t v = static_cast<uint32_t>(rng() & mask);
      for (size_t i = 0; i < len; ++i) values.push_back(repeat ? v : static_cast<uint32_t>(rng() & mask));
    }
    std::string encoded;
    rle_encode(values.data(), values.size(), width, &encoded);
    encoded.append(8, '\0');  // the decoder must not need it, but unpacking may peek
    std::vector<uint32_t> decoded(values.size(), 0xdeadbeef);
    struct Collect {
      uint32_t* out;
      void run(uint32_t v, int64_t n) { out = std::fill_n(out, n, v); }
      void literal(const uint32_t* v, int64_t n) { out = std::copy(v, v + n, out); }
    } collect{decoded.data()};
    RleBitPackedDecoder dec(reinterpret_cast<const uint8_t*>(encoded.data()), encoded.size() - 8, width);
    dec.decode(static_cast<int64_t>(values.size()), collect);
    EXPECT_EQ(values, decoded) << "width " << width;
    // Asking for more values than encoded runs out of data cleanly (or yields padding of the final group).
    RleBitPackedDecoder short_dec(reinterpret_cast<const uint8_t*>(encoded.data()), encoded.size() - 8, width);
    std::vector<uint32_t> sink2(values.size() + 64);
    Collect c2{sink2.data()};
    try {
      short_dec.decode(static_cast<int64_t>(values.size() + 64), c2);
    } catch (const InvalidFile&) {
    }
  }
  EXPECT_THROW(RleBitPackedDecoder(nullptr, 0, 33), InvalidFile);
}

// unpack_bits (a vector routine where the CPU has AVX2) and unpack_bits_portable against a bit-by-bit reading,
// for every width and runs of 1 to 70 groups, each from a buffer of exactly the run's bytes, so that a read past
// them is a sanitizer's report.
TEST(ParquetRle, UnpacksEveryWidthBitByBit) {
  std::mt19937 rng(17);
  for (int width = 0; width <= 32; ++width) {
    for (size_t groups = 1; groups <= 70; ++groups) {
      const size_t bytes = groups * static_cast<size_t>(width);
      auto packed = std::make_unique<uint8_t[]>(bytes);
      for (size_t i = 0; i < bytes; ++i) packed[i] = static_cast<uint8_t>(rng());
      std::vector<uint32_t> expect(groups * 8, 0);
      for (size_t v = 0; v < groups * 8; ++v) {
        for (int b = 0; b < width; ++b) {
          const size_t bit = v * static_cast<size_t>(width) + static_cast<size_t>(b);
          expect[v] |= static_cast<uint32_t>((packed[bit / 8] >> (bit % 8)) & 1) << b;
        }
      }
      std::vector<uint32_t> fast(groups * 8, 0xdeadbeef), portable(groups * 8, 0xdeadbeef);
      unpack_bits(packed.get(), groups, width, fast.data());
      unpack_bits_portable(packed.get(), groups, width, portable.data());
      ASSERT_EQ(fast, expect) << "width " << width << ", " << groups << " groups";
      ASSERT_EQ(portable, expect) << "width " << width << ", " << groups << " groups";
    }
  }
}

// gather4 and gather8 (AVX2 where the CPU has it), and their portable versions, give dict[index] for batches of
// every length to 40, and refuse a batch with one index past the dictionary wherever it stands, before writing
// anything.
TEST(ParquetDictionary, GathersEveryBatchLengthAndRefusesAnIndexPastTheEnd) {
  using Gather = void (*)(const void*, uint32_t, const uint32_t*, int64_t, void*);
  for (const auto& [gather4, gather8] : {std::pair<Gather, Gather>{&parquet::gather4, &parquet::gather8},
                                         std::pair<Gather, Gather>{&gather4_portable, &gather8_portable}}) {
    std::mt19937 rng(23);
    std::vector<uint32_t> dict4(37);
    std::vector<uint64_t> dict8(37);
    for (size_t i = 0; i < dict4.size(); ++i) {
      dict4[i] = static_cast<uint32_t>(rng());
      dict8[i] = (uint64_t{rng()} << 32) | rng();
    }
    const auto size = static_cast<uint32_t>(dict4.size());
    for (int64_t count = 0; count <= 40; ++count) {
      std::vector<uint32_t> indices(static_cast<size_t>(count));
      for (auto& i : indices) i = static_cast<uint32_t>(rng() % size);
      std::vector<uint32_t> out4(indices.size() + 1, 0xdeadbeef);
      std::vector<uint64_t> out8(indices.size() + 1, 0xdeadbeef);
      gather4(dict4.data(), size, indices.data(), count, out4.data());
      gather8(dict8.data(), size, indices.data(), count, out8.data());
      for (size_t i = 0; i < indices.size(); ++i) {
        ASSERT_EQ(out4[i], dict4[indices[i]]) << count << " indices, at " << i;
        ASSERT_EQ(out8[i], dict8[indices[i]]) << count << " indices, at " << i;
      }
      EXPECT_EQ(out4.back(), 0xdeadbeefu) << "written past the batch of " << count;
      EXPECT_EQ(out8.back(), 0xdeadbeefu) << "written past the batch of " << count;
      for (size_t bad = 0; bad < indices.size(); ++bad) {
        std::vector<uint32_t> wrong = indices;
        wrong[bad] = bad % 2 == 0 ? size : 0xffffffffu;
        std::vector<uint32_t> untouched4(indices.size(), 7);
        std::vector<uint64_t> untouched8(indices.size(), 7);
        EXPECT_THROW(gather4(dict4.data(), size, wrong.data(), count, untouched4.data()), InvalidFile) << bad;
        EXPECT_THROW(gather8(dict8.data(), size, wrong.data(), count, untouched8.data()), InvalidFile) << bad;
        EXPECT_EQ(untouched4, std::vector<uint32_t>(indices.size(), 7)) << bad;
        EXPECT_EQ(untouched8, std::vector<uint64_t>(indices.size(), 7)) << bad;
      }
    }
  }
}

// FIXED_LEN_BYTE_ARRAY dictionaries of every width the gather treats apart (4 and 8 through gather4 and
// gather8, 12, 16, and others) give each index's bytes for batches of every length up to 40, write nothing past
// the batch, and refuse one index past the end wherever it stands, with nothing written.
TEST(ParquetDictionary, FixedBytesGatherEveryWidthAndBatchLength) {
  std::mt19937 rng(29);
  for (const size_t width : {size_t{4}, size_t{8}, size_t{12}, size_t{16}, size_t{5}}) {
    SCOPED_TRACE(width);
    constexpr uint32_t kEntries = 37;
    std::string dict(kEntries * width + kShortCopyBytes, '\0');  // (with the room past it the gather may read)
    for (char& c : dict) c = static_cast<char>(rng());
    for (int64_t count = 0; count <= 40; ++count) {
      std::vector<uint32_t> indices(static_cast<size_t>(count));
      for (auto& i : indices) i = static_cast<uint32_t>(rng() % kEntries);
      std::string out(indices.size() * width + 1, '#');
      FixedBytesDictionaryGather sink{dict.data(), kEntries, width, out.data()};
      sink.literal(indices.data(), count);
      EXPECT_EQ(sink.out, out.data() + indices.size() * width) << count;
      for (size_t i = 0; i < indices.size(); ++i) {
        ASSERT_EQ(out.substr(i * width, width), dict.substr(indices[i] * width, width)) << count << ", at " << i;
      }
      EXPECT_EQ(out.back(), '#') << "written past the batch of " << count;
      for (size_t bad = 0; bad < indices.size(); ++bad) {
        std::vector<uint32_t> wrong = indices;
        wrong[bad] = kEntries;
        std::string untouched(indices.size() * width, '#');
        FixedBytesDictionaryGather refusing{dict.data(), kEntries, width, untouched.data()};
        EXPECT_THROW(refusing.literal(wrong.data(), count), InvalidFile) << bad;
        EXPECT_EQ(untouched, std::string(indices.size() * width, '#')) << bad;
      }
    }
  }
}

TEST(ParquetRle, DictionaryIndexOutOfRangeThrows) {
  const std::vector<uint32_t> indices = {0, 1, 2, 3, 4, 5, 6, 7, 9, 1};
  std::string encoded;
  rle_encode(indices.data(), indices.size(), 4, &encoded);
  const std::vector<int32_t> dict = {10, 11, 12, 13, 14, 15, 16, 17, 18};  // 9 entries: index 9 is out
  std::vector<int32_t> out(indices.size());
  RleBitPackedDecoder dec(reinterpret_cast<const uint8_t*>(encoded.data()), encoded.size(), 4);
  DictionaryGather<int32_t> sink{dict.data(), static_cast<uint32_t>(dict.size()), out.data()};
  try {
    dec.decode(static_cast<int64_t>(indices.size()), sink);
    ADD_FAILURE() << "index 9 accepted";
  } catch (const InvalidFile& e) {
    EXPECT_NE(std::string(e.what()).find("index 9"), std::string::npos) << e.what();
  }
  // An RLE run whose value exceeds the bit width.
  const std::string run = {'\x10', '\x05'};  // 8 x value 5 at width 2
  RleBitPackedDecoder dec2(reinterpret_cast<const uint8_t*>(run.data()), run.size(), 2);
  DictionaryGather<int32_t> sink2{dict.data(), static_cast<uint32_t>(dict.size()), out.data()};
  EXPECT_THROW(dec2.decode(8, sink2), InvalidFile);
}

TEST(ParquetCodec, DecompressChecksSizes) {
  const std::string text = std::string(5000, 'a') + "feedline" + std::string(3000, 'b');
  for (Codec c : {Codec::kUncompressed, Codec::kSnappy, Codec::kGzip, Codec::kZstd, Codec::kLz4Raw, Codec::kBrotli}) {
    SCOPED_TRACE(to_string(c));
    std::string packed;
    compress(c, c == Codec::kGzip ? 6 : 3, reinterpret_cast<const uint8_t*>(text.data()), text.size(), &packed);
    std::vector<uint8_t> out(text.size() + 10);
    const auto* src = reinterpret_cast<const uint8_t*>(packed.data());
    decompress(c, src, packed.size(), out.data(), text.size());
    EXPECT_EQ(0, std::memcmp(out.data(), text.data(), text.size()));
    EXPECT_THROW(decompress(c, src, packed.size(), out.data(), text.size() - 1), InvalidFile);
    EXPECT_THROW(decompress(c, src, packed.size(), out.data(), text.size() + 1), InvalidFile);
    if (c != Codec::kUncompressed) {
      EXPECT_THROW(decompress(c, src, packed.size() / 2, out.data(), text.size()), InvalidFile);
      std::string garbage = packed;
      for (size_t i = 0; i < garbage.size(); i += 3) garbage[i] = static_cast<char>(garbage[i] ^ 0x5a);
      try {
        decompress(c, reinterpret_cast<const uint8_t*>(garbage.data()), garbage.size(), out.data(), text.size());
      } catch (const InvalidFile&) {
      }
    }
  }
  // Concatenated gzip members decode as one stream.
  std::string a, b;
  compress(Codec::kGzip, 6, reinterpret_cast<const uint8_t*>("hello "), 6, &a);
  compress(Codec::kGzip, 6, reinterpret_cast<const uint8_t*>("world"), 5, &b);
  const std::string both = a + b;
  std::vector<uint8_t> out(11);
  decompress(Codec::kGzip, reinterpret_cast<const uint8_t*>(both.data()), both.size(), out.data(), 11);
  EXPECT_EQ(std::string(out.begin(), out.end()), "hello world");
  // One member and zero padding; a zlib stream (some writers' GZIP); not a member followed by anything else, nor
  // a member whose CRC-32 trailer is wrong.
  const auto gunzip = [&](const std::string& packed, size_t size) {
    std::vector<uint8_t> dst(size);
    decompress(Codec::kGzip, reinterpret_cast<const uint8_t*>(packed.data()), packed.size(), dst.data(), size);
    return std::string(dst.begin(), dst.end());
  };
  EXPECT_EQ(gunzip(a + std::string(3, '\0'), 6), "hello ");
  std::string zlib_stream(compressBound(static_cast<uLong>(text.size())), '\0');
  uLongf zlib_size = static_cast<uLongf>(zlib_stream.size());
  ASSERT_EQ(compress2(reinterpret_cast<Bytef*>(zlib_stream.data()), &zlib_size,
                      reinterpret_cast<const Bytef*>(text.data()), static_cast<uLong>(text.size()), 6),
            Z_OK);
  zlib_stream.resize(zlib_size);
  EXPECT_EQ(gunzip(zlib_stream, text.size()), text);
  EXPECT_THROW(gunzip(a + "x", 6), InvalidFile);
  std::string bad_crc = a;
  bad_crc[bad_crc.size() - 8] = static_cast<char>(bad_crc[bad_crc.size() - 8] ^ 1);  // the trailer: CRC-32, size
  EXPECT_THROW(gunzip(bad_crc, 6), InvalidFile);
  // Page checksums: CRC-32's check value, and zlib's figure for the text.
  EXPECT_EQ(crc32_of(reinterpret_cast<const uint8_t*>("123456789"), 9), 0xCBF43926u);
  EXPECT_EQ(crc32_of(reinterpret_cast<const uint8_t*>(text.data()), text.size()),
            crc32(0L, reinterpret_cast<const Bytef*>(text.data()), static_cast<uInt>(text.size())));
  EXPECT_THROW(codec_from_thrift(fmt::codec::kLzo), Unsupported);
  // The deprecated LZ4 codec: Hadoop's framing ([raw size, packed size] big-endian, then a block) or a bare
  // block; never written.
  std::string block;
  compress(Codec::kLz4Raw, 0, reinterpret_cast<const uint8_t*>(text.data()), text.size(), &block);
  auto be32 = [](size_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                       static_cast<char>(v)};
  };
  const std::string hadoop = be32(text.size()) + be32(block.size()) + block;
  std::vector<uint8_t> back(text.size());
  for (const std::string* framed : std::vector<const std::string*>{&hadoop, &block}) {
    std::fill(back.begin(), back.end(), 0);
    decompress(Codec::kLz4, reinterpret_cast<const uint8_t*>(framed->data()), framed->size(), back.data(), back.size());
    EXPECT_EQ(std::string(back.begin(), back.end()), text);
  }
  const std::string lying = be32(text.size() + 1) + be32(block.size()) + block;
  EXPECT_THROW(decompress(Codec::kLz4, reinterpret_cast<const uint8_t*>(lying.data()), lying.size(), back.data(),
                          back.size()),
               InvalidFile);
  std::string unused;
  EXPECT_THROW(compress(Codec::kLz4, 0, back.data(), back.size(), &unused), InvalidArgument);
}


}  // namespace
}  // namespace feedline::parquet
