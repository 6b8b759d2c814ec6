// Hostile and corrupt files: truncations, bit flips (of our files and of the corpus'), and hand-made metadata with
// absurd sizes, out-of-range enums, deep nesting and unknown fields. List levels and pages decoded apart are in
// parquet_hostile_pages_test.cpp, the decoders' own checks (Thrift, RLE, dictionary indices, codecs) in
// parquet_hostile_decoders_test.cpp. Everything must read or throw feedline::Error: never crash, hang or allocate
// without bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "io/parquet/metadata.h"
#include "io/parquet/thrift_compact.h"
#include "io/parquet_hostile_support.h"
#include "io/parquet_test_support.h"
#include "test_paths.h"

namespace feedline::parquet {
namespace {

using feedline::testing::data_page_header;
using feedline::testing::expect_throw_with;
using feedline::testing::make_file;
using feedline::testing::one_column_metadata;
using feedline::testing::page;
using feedline::testing::random_table;
using feedline::testing::RandomTableSpec;
using feedline::testing::reads;
using feedline::testing::scratch_dir;
using feedline::testing::write_bytes;
namespace fmt = format;

std::string small_file(const WriteOptions& options) {
  RandomTableSpec spec;
  spec.rows = 40;
  spec.distinct = 5;
  const Table t = random_table(5, spec);
  const std::string path = scratch_dir("hostile-src") + "/small.parquet";
  write_table(path, t, options);
  return read_file(path);
}

TEST(ParquetHostile, EveryTruncationThrows) {
  WriteOptions w;
  w.row_group_rows = 25;
  const std::string file = small_file(w);
  const std::string path = scratch_dir("truncate") + "/t.parquet";
  for (size_t len = 0; len < file.size(); ++len) {
    EXPECT_FALSE(reads(path, file.substr(0, len))) << "length " << len;
  }
  // Data cut short under an intact footer: offsets now point at the wrong bytes or past the data.
  uint32_t footer_len;
  std::memcpy(&footer_len, file.data() + file.size() - 8, 4);
  const std::string footer = file.substr(file.size() - 8 - footer_len);
  const size_t data_end = file.size() - footer.size();
  for (size_t len = 4; len < data_end; len += 3) {
    EXPECT_FALSE(reads(path, file.substr(0, len) + footer)) << "data length " << len;
  }
}

TEST(ParquetHostile, RandomBitFlipsReadOrThrow) {
  std::mt19937_64 rng(1234);
  const std::string path = scratch_dir("flips") + "/f.parquet";
  for (bool checksums : {true, false}) {
    for (Codec codec : {Codec::kUncompressed, Codec::kZstd, Codec::kSnappy, Codec::kGzip}) {
      WriteOptions w;
      w.codec = codec;
      w.page_checksums = checksums;
      w.dictionary = codec != Codec::kSnappy;
      w.page_bytes = 100;
      const std::string file = small_file(w);
      uint32_t footer_len;
      std::memcpy(&footer_len, file.data() + file.size() - 8, 4);
      for (int i = 0; i < 80; ++i) {
        std::string bad = file;
        // Half the flips land in the footer, where the metadata lives.
        const size_t pos = i % 2 ? rng() % bad.size() : bad.size() - 8 - footer_len + rng() % footer_len;
        bad[pos] = static_cast<char>(bad[pos] ^ (1 << (rng() % 8)));
        reads(path, bad);  // either outcome is fine; a crash or hang is not
      }
      // Multi-byte garbage over the data pages.
      for (int i = 0; i < 20; ++i) {
        std::string bad = file;
        const size_t pos = 4 + rng() % (bad.size() - 12 - footer_len);
        for (size_t k = pos; k < std::min(pos + 8, bad.size() - 8 - footer_len); ++k) bad[k] = static_cast<char>(rng());
        const bool ok = reads(path, bad);
        if (checksums && codec == Codec::kUncompressed) EXPECT_FALSE(ok) << "corrupt page passed its checksum";
      }
    }
  }
}

// The corpus' files we read (other writers, other encodings and codecs), truncated and bit-flipped: every
// outcome is a table or a feedline::Error, never a crash, a hang or a sanitizer report.
TEST(ParquetHostile, CorpusFilesTruncatedAndFlipped) {
  std::mt19937_64 rng(99);
  const std::string dir = feedline::testing::parquet_testing_dir() + "/data/";
  const std::string path = scratch_dir("corpus-mutants") + "/m.parquet";
  int files = 0;
  for (const char* name : {"delta_binary_packed.parquet", "delta_byte_array.parquet", "delta_length_byte_array.parquet",
                           "delta_encoding_optional_column.parquet", "byte_stream_split.zstd.parquet",
                           "page_v2_empty_compressed.parquet", "fixed_length_byte_array.parquet",
                           "lz4_raw_compressed.parquet", "hadoop_lz4_compressed.parquet",
                           "non_hadoop_lz4_compressed.parquet", "concatenated_gzip_members.parquet",
                           "datapage_v1-snappy-compressed-checksum.parquet", "nation.dict-malformed.parquet",
                           "dict-page-offset-zero.parquet", "binary.parquet", "rle-dict-snappy-checksum.parquet",
                           // list columns: repetition levels in data pages v1 and v2
                           "list_columns.parquet", "datapage_v2.snappy.parquet", "null_list.parquet",
                           // lists of lists: three levels of LIST, and the legacy two-level form
                           "nested_lists.snappy.parquet", "old_list_structure.parquet"}) {
    SCOPED_TRACE(name);
    const std::string file = read_file(dir + name);
    ASSERT_TRUE(reads(path, file));
    ++files;
    // Truncations: 40 lengths spread over the file, and the last 16 bytes one by one.
    for (int i = 0; i < 40; ++i) EXPECT_FALSE(reads(path, file.substr(0, file.size() * i / 40))) << i;
    for (size_t cut = 1; cut <= 16; ++cut) EXPECT_FALSE(reads(path, file.substr(0, file.size() - cut))) << cut;
    uint32_t footer_len;
    std::memcpy(&footer_len, file.data() + file.size() - 8, 4);
    for (int i = 0; i < 60; ++i) {
      std::string bad = file;
      const size_t pos = i % 2 ? rng() % bad.size() : bad.size() - 8 - footer_len + rng() % footer_len;
      bad[pos] = static_cast<char>(bad[pos] ^ (1 << (rng() % 8)));
      reads(path, bad);  // either outcome is fine; a crash, a hang or a non-feedline exception is not
    }
  }
  EXPECT_EQ(files, 21);
}

TEST(ParquetHostile, HandMadeMetadata) {
  const std::string path = scratch_dir("handmade") + "/h.parquet";
  // A valid one-page file first, so the variations below fail for the reason they test.
  {
    std::string body = page(data_page_header(3, 12), std::string("\1\0\0\0\2\0\0\0\3\0\0\0", 12));
    fmt::FileMetaData md = one_column_metadata(3);
    md.row_groups[0].columns[0].meta_data->total_compressed_size = static_cast<int64_t>(body.size());
    write_bytes(path, make_file(md, body));
    EXPECT_EQ(read_table(path).columns.at(0).as<int32_t>(), (std::vector<int32_t>{1, 2, 3}));

    fmt::FileMetaData big = md;  // a trillion rows promised by a tiny file
    big.num_rows = big.row_groups[0].num_rows = 1'000'000'000'000;
    big.row_groups[0].columns[0].meta_data->num_values = big.num_rows;
    expect_throw_with<InvalidFile>(path, make_file(big, body), "memory limit");

    fmt::FileMetaData short_page = md;  // page claims more values than its bytes hold
    std::string body2 = page(data_page_header(3, 8), std::string(8, '\0'));
    short_page.row_groups[0].columns[0].meta_data->total_compressed_size = static_cast<int64_t>(body2.size());
    expect_throw_with<InvalidFile>(path, make_file(short_page, body2), "column 'x'");

    std::string body3 = page(data_page_header(3, 1 << 30), std::string(12, '\0'));  // sizes disagree
    md.row_groups[0].columns[0].meta_data->total_compressed_size = static_cast<int64_t>(body3.size());
    expect_throw_with<InvalidFile>(path, make_file(md, body3), "runs past the chunk");

    std::string body4 = page(data_page_header(3, 12, 77), std::string(12, '\0'));  // unknown encoding
    md.row_groups[0].columns[0].meta_data->total_compressed_size = static_cast<int64_t>(body4.size());
    expect_throw_with<Unsupported>(path, make_file(md, body4), "encoding");

    std::string body5 = page(data_page_header(3, 12, fmt::encoding::kRleDictionary), std::string(12, '\0'));
    md.row_groups[0].columns[0].meta_data->total_compressed_size = static_cast<int64_t>(body5.size());
    expect_throw_with<InvalidFile>(path, make_file(md, body5), "without a dictionary");
  }
  fmt::FileMetaData md = one_column_metadata(3);
  md.schema[1].type = 42;
  expect_throw_with<InvalidFile>(path, make_file(md), "unknown physical type 42");
  md = one_column_metadata(3);
  md.schema[1].repetition_type = 7;
  expect_throw_with<InvalidFile>(path, make_file(md), "repetition type 7");
  md = one_column_metadata(3);
  md.row_groups[0].columns[0].meta_data->codec = 99;
  expect_throw_with<Unsupported>(path, make_file(md), "codec");
  md = one_column_metadata(3);
  md.row_groups[0].columns[0].meta_data->codec = fmt::codec::kLzo;
  expect_throw_with<Unsupported>(path, make_file(md), "LZO");
  md = one_column_metadata(3);
  md.row_groups[0].columns[0].meta_data->data_page_offset = 1 << 20;
  expect_throw_with<InvalidFile>(path, make_file(md), "outside the file");
  md = one_column_metadata(3);
  md.num_rows = 4;
  expect_throw_with<InvalidFile>(path, make_file(md), "rows");
  md = one_column_metadata(3);
  md.schema[0].num_children = 2;
  expect_throw_with<InvalidFile>(path, make_file(md), "children");
  md = one_column_metadata(3);  // a LIST group whose one field is not repeated: no list the spec knows
  {
    fmt::SchemaElement group;
    group.name = "x";
    group.repetition_type = fmt::repetition::kOptional;
    group.converted_type = fmt::converted::kList;
    group.num_children = 1;
    md.schema[1].name = "y";
    md.schema.insert(md.schema.begin() + 1, group);
  }
  expect_throw_with<Unsupported>(path, make_file(md),
                                 "column 'x' (its leaf 'x.y'): LIST groups other than one repeated field");
  md.schema[1].converted_type = fmt::converted::kMap;  // nor a map
  expect_throw_with<Unsupported>(path, make_file(md), "column 'x' (its leaf 'x.y'): MAP groups other than one");
  // Lists of structs of lists ... 100 deep: refused as hostile before any recursion runs away (a list of structs
  // 20 deep is read: its leaf is one list of 20 levels, 'x.f.f...').
  for (const int depth : {20, 100}) {
    md = one_column_metadata(3);
    std::vector<fmt::SchemaElement> groups;
    for (int k = 0; k < depth; ++k) {
      fmt::SchemaElement list;
      list.name = k == 0 ? "x" : "f";
      list.repetition_type = fmt::repetition::kOptional;
      list.converted_type = fmt::converted::kList;
      list.num_children = 1;
      fmt::SchemaElement repeated;
      repeated.name = "list";
      repeated.repetition_type = fmt::repetition::kRepeated;
      repeated.num_children = 1;
      fmt::SchemaElement element;  // a struct of one field, the next list (or the leaf)
      element.name = "element";
      element.repetition_type = fmt::repetition::kOptional;
      element.num_children = 1;
      groups.insert(groups.end(), {list, repeated, element});
    }
    md.schema.insert(md.schema.begin() + 1, groups.begin(), groups.end());
    md.schema.back().name = "f";
    if (depth == 100) {
      expect_throw_with<InvalidFile>(path, make_file(md), "schema nested deeper than 64");
    } else {
      write_bytes(path, make_file(md));
      const FileInfo info = read_file_info(path);
      ASSERT_EQ(info.schema.size(), 1u);
      std::string name = "x";
      for (int k = 0; k < depth; ++k) name += ".f";
      EXPECT_EQ(info.schema[0].name, name);
      EXPECT_EQ(info.schema[0].list_depth(), depth);
      EXPECT_TRUE(info.schema[0].element_nullable);
    }
  }
  md = one_column_metadata(3);
  md.schema[1].converted_type = fmt::converted::kDecimal;  // without its precision
  expect_throw_with<InvalidFile>(path, make_file(md), "DECIMAL(0, 0)");
  md = one_column_metadata(3);
  md.schema[1].converted_type = 21;  // INTERVAL, which feedline does not interpret: the column is its INT32s
  write_bytes(path, make_file(md));
  {
    const FileInfo info = read_file_info(path);
    ASSERT_EQ(info.schema.size(), 1u);
    ASSERT_EQ(info.notes.size(), 1u);
    EXPECT_EQ(info.notes[0].second, "converted type INTERVAL (21): read as INT32");
  }
  md.schema[1].converted_type = fmt::converted::kList;  // a group's annotation on a primitive
  expect_throw_with<Unsupported>(path, make_file(md), "converted type LIST on a primitive column");
  md = one_column_metadata(3);
  md.schema[1].converted_type = fmt::converted::kTimestampMillis;  // on INT32
  expect_throw_with<InvalidFile>(path, make_file(md), "TIMESTAMP annotation on INT32");
  for (const auto& [length, message] : std::vector<std::pair<std::optional<int32_t>, std::string>>{
           {std::nullopt, "type_length missing"}, {0, "type_length 0"}, {-4, "type_length -4"},
           {1 << 30, "type_length 1073741824"}}) {
    md = one_column_metadata(3);
    md.schema[1].type = fmt::type::kFixedLenByteArray;
    md.schema[1].type_length = length;
    expect_throw_with<InvalidFile>(path, make_file(md), message);
  }
  {
    // FIXED_LEN_BYTE_ARRAY(5): a 12-byte page cannot hold the 3 values it declares.
    std::string body = page(data_page_header(3, 12), std::string(12, 'x'));
    md = one_column_metadata(3);
    md.schema[1].type = fmt::type::kFixedLenByteArray;
    md.schema[1].type_length = 5;
    md.row_groups[0].columns[0].meta_data->type = fmt::type::kFixedLenByteArray;
    md.row_groups[0].columns[0].meta_data->total_compressed_size = static_cast<int64_t>(body.size());
    expect_throw_with<InvalidFile>(path, make_file(md, body), "page declares 3");
    md.schema[1].type_length = 4;  // and with the right length it reads
    write_bytes(path, make_file(md, body));
    EXPECT_EQ(read_table(path).columns.at(0).byte_arrays().at(2), "xxxx");
  }
  {
    // FIXED_LEN_BYTE_ARRAY(5) through a dictionary: 3 entries need 15 bytes; indices 2, 0, 1 at bit width 2.
    auto dictionary_page = [](int32_t entries, const std::string& values) {
      fmt::PageHeader h;
      h.type = fmt::page_type::kDictionaryPage;
      h.uncompressed_page_size = h.compressed_page_size = static_cast<int32_t>(values.size());
      fmt::DictionaryPageHeader d;
      d.num_values = entries;
      d.encoding = fmt::encoding::kPlain;
      h.dictionary_page_header = d;
      return page(h, values);
    };
    const std::string indices("\x02\x03\x12\x00", 4);
    const std::string data = page(data_page_header(3, 4, fmt::encoding::kRleDictionary), indices);
    md = one_column_metadata(3);
    md.schema[1].type = fmt::type::kFixedLenByteArray;
    md.schema[1].type_length = 5;
    md.row_groups[0].columns[0].meta_data->type = fmt::type::kFixedLenByteArray;
    const std::string good = dictionary_page(3, "aaaaabbbbbccccc") + data;
    md.row_groups[0].columns[0].meta_data->total_compressed_size = static_cast<int64_t>(good.size());
    write_bytes(path, make_file(md, good));
    const Table t = read_table(path);
    EXPECT_EQ(t.columns.at(0).byte_arrays().at(0), "ccccc");
    EXPECT_EQ(t.columns.at(0).byte_arrays().at(2), "bbbbb");
    // The page is stored uncompressed, so the gather reads the dictionary where it lies in the chunk: an index
    // past its third entry is refused there too.
    const std::string past_end = dictionary_page(3, "aaaaabbbbbccccc") +
                                 page(data_page_header(3, 4, fmt::encoding::kRleDictionary),
                                      std::string("\x02\x03\x13\x00", 4));  // indices 3, 0, 1
    md.row_groups[0].columns[0].meta_data->total_compressed_size = static_cast<int64_t>(past_end.size());
    expect_throw_with<InvalidFile>(path, make_file(md, past_end), "dictionary index 3 out of range");
    const std::string short_dictionary = dictionary_page(3, "aaaaabbbbbcccc") + data;
    md.row_groups[0].columns[0].meta_data->total_compressed_size = static_cast<int64_t>(short_dictionary.size());
    expect_throw_with<InvalidFile>(path, make_file(md, short_dictionary), "page declares 3");
    const std::string huge_dictionary = dictionary_page(1 << 30, "aaaaabbbbbccccc") + data;
    md.row_groups[0].columns[0].meta_data->total_compressed_size = static_cast<int64_t>(huge_dictionary.size());
    expect_throw_with<InvalidFile>(path, make_file(md, huge_dictionary), "page declares 1073741824");
  }
  md = one_column_metadata(3);
  md.row_groups[0].columns.clear();
  expect_throw_with<InvalidFile>(path, make_file(md), "column chunks");

  // Footer length beyond the file; bad magic.
  std::string good = make_file(one_column_metadata(0));
  std::string huge_len = good;
  const uint32_t big = 0x7fffffff;
  std::memcpy(huge_len.data() + huge_len.size() - 8, &big, 4);
  expect_throw_with<InvalidFile>(path, huge_len, "footer length");
  expect_throw_with<InvalidFile>(path, "PAR1xxxxxxxxxxxxPAR0", "magic");
  expect_throw_with<Unsupported>(path, "PARExxxxxxxxxxxxPARE", "encrypted");
}

}  // namespace
}  // namespace feedline::parquet
