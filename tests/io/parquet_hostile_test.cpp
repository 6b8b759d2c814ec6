// Hostile and corrupt input: truncations, bit flips, hand-made metadata with absurd sizes, out-of-range enums,
// deep nesting and unknown fields, plus the decoders' own checks (RLE, dictionary indices, codecs).
// Everything must read or throw feedline::Error: never crash, hang or allocate without bound.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "io/parquet/codec.h"
#include "io/parquet/delta.h"
#include "io/parquet/dictionary.h"
#include "io/parquet/metadata.h"
#include "io/parquet/reader_internal.h"
#include "io/parquet/rle.h"
#include "io/parquet/thrift_compact.h"
#include "io/parquet_test_support.h"
#include "test_paths.h"

namespace feedline::parquet {
namespace {

using feedline::testing::random_table;
using feedline::testing::RandomTableSpec;
using feedline::testing::scratch_dir;
namespace fmt = format;

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Reads `bytes` as a file: returns true when it read, false when it threw feedline::Error; anything else fails.
bool reads(const std::string& path, const std::string& bytes) {
  write_bytes(path, bytes);
  try {
    read_table(path);
    return true;
  } catch (const Error&) {
    return false;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "non-feedline exception: " << e.what();
    return false;
  }
}

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

// A file of our own metadata around `body` (what sits between the magic and the footer).
std::string make_file(const fmt::FileMetaData& md, const std::string& body = "") {
  thrift::CompactWriter w;
  fmt::write_file_metadata(w, md);
  const std::string& footer = w.buffer();
  const uint32_t len = static_cast<uint32_t>(footer.size());
  return "PAR1" + body + footer + std::string(reinterpret_cast<const char*>(&len), 4) + "PAR1";
}

fmt::FileMetaData one_column_metadata(int64_t rows) {
  fmt::FileMetaData md;
  md.version = 1;
  md.num_rows = rows;
  fmt::SchemaElement root;
  root.name = "schema";
  root.num_children = 1;
  fmt::SchemaElement leaf;
  leaf.name = "x";
  leaf.type = fmt::type::kInt32;
  leaf.repetition_type = fmt::repetition::kRequired;
  md.schema = {root, leaf};
  fmt::RowGroup rg;
  rg.num_rows = rows;
  fmt::ColumnChunk cc;
  fmt::ColumnMetaData cm;
  cm.type = fmt::type::kInt32;
  cm.encodings = {fmt::encoding::kPlain};
  cm.path_in_schema = {"x"};
  cm.codec = fmt::codec::kUncompressed;
  cm.num_values = rows;
  cm.data_page_offset = 4;
  cc.meta_data = cm;
  rg.columns = {cc};
  md.row_groups = {rg};
  return md;
}

std::string page(const fmt::PageHeader& h, const std::string& body) {
  thrift::CompactWriter w;
  fmt::write_page_header(w, h);
  return w.buffer() + body;
}

fmt::PageHeader data_page_header(int32_t num_values, int32_t size, int32_t encoding = fmt::encoding::kPlain) {
  fmt::PageHeader h;
  h.type = fmt::page_type::kDataPage;
  h.uncompressed_page_size = size;
  h.compressed_page_size = size;
  fmt::DataPageHeader d;
  d.num_values = num_values;
  d.encoding = encoding;
  d.definition_level_encoding = fmt::encoding::kRle;
  d.repetition_level_encoding = fmt::encoding::kRle;
  h.data_page_header = d;
  return h;
}

template <class E>
void expect_throw_with(const std::string& path, const std::string& bytes, const std::string& needle) {
  write_bytes(path, bytes);
  try {
    read_table(path);
    ADD_FAILURE() << "read without complaint; expected " << needle;
  } catch (const E& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(needle), std::string::npos) << what;
    EXPECT_NE(what.find(path), std::string::npos) << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception: " << e.what();
  }
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

// One data page v1 of an INT32 leaf: its repetition and definition levels (RLE, length-prefixed) and PLAIN
// values; declared_size, when set, is the stored size its header gives instead of the true one.
struct Int32Page {
  std::vector<uint8_t> rep, def;
  std::vector<int32_t> values;
  int32_t declared_size = -1;
};

// A one-column file of `schema` (its root first) whose INT32 leaf at `path` has these data pages, uncompressed.
// page_offsets, if given, receives each page's offset in the file.
std::string int32_leaf_file(int64_t rows, std::vector<fmt::SchemaElement> schema, std::vector<std::string> path,
                            const std::vector<Int32Page>& pages, int max_rep, int max_def,
                            std::vector<int64_t>* page_offsets = nullptr) {
  auto levels = [](const std::vector<uint8_t>& v, int max_level) {
    std::string encoded;
    rle_encode(v.data(), v.size(), bit_width_for(static_cast<uint64_t>(max_level)), &encoded);
    const auto len = static_cast<uint32_t>(encoded.size());
    return std::string(reinterpret_cast<const char*>(&len), 4) + encoded;
  };
  std::string body;
  int64_t entries = 0;
  for (const Int32Page& p : pages) {
    if (page_offsets != nullptr) page_offsets->push_back(4 + static_cast<int64_t>(body.size()));
    const std::string data = (max_rep > 0 ? levels(p.rep, max_rep) : "") + levels(p.def, max_def) +
                             std::string(reinterpret_cast<const char*>(p.values.data()), p.values.size() * 4);
    const auto n = static_cast<int32_t>(p.def.size());
    const auto size = static_cast<int32_t>(data.size());
    fmt::PageHeader h = data_page_header(n, size);
    if (p.declared_size >= 0) h.compressed_page_size = h.uncompressed_page_size = p.declared_size;
    body += page(h, data);
    entries += n;
  }
  fmt::FileMetaData md;
  md.version = 1;
  md.num_rows = rows;
  md.schema = std::move(schema);
  fmt::ColumnMetaData cm;
  cm.type = fmt::type::kInt32;
  cm.encodings = {fmt::encoding::kPlain, fmt::encoding::kRle};
  cm.path_in_schema = std::move(path);
  cm.codec = fmt::codec::kUncompressed;
  cm.num_values = entries;
  cm.data_page_offset = 4;
  cm.total_compressed_size = static_cast<int64_t>(body.size());
  fmt::ColumnChunk cc;
  cc.meta_data = cm;
  fmt::RowGroup rg;
  rg.num_rows = rows;
  rg.columns = {cc};
  md.row_groups = {rg};
  return make_file(md, body);
}

// The same with one data page.
std::string int32_leaf_file(int64_t rows, std::vector<fmt::SchemaElement> schema, std::vector<std::string> path,
                            const std::vector<uint8_t>& rep, int max_rep, const std::vector<uint8_t>& def, int max_def,
                            const std::vector<int32_t>& values) {
  return int32_leaf_file(rows, std::move(schema), std::move(path), {Int32Page{rep, def, values}}, max_rep, max_def);
}

// A one-column file whose column is `optional group l (LIST) { repeated group list { <rep> int32 element } }`
// with one data page v1 of the given levels and PLAIN values.
// Appends `optional group <name> (LIST) { repeated group list { ...` to a schema: the two elements of one level.
void push_list_level(std::vector<fmt::SchemaElement>& schema, const char* name) {
  fmt::SchemaElement group, list;
  group.name = name;
  group.repetition_type = fmt::repetition::kOptional;
  group.num_children = 1;
  group.converted_type = fmt::converted::kList;
  list.name = "list";
  list.repetition_type = fmt::repetition::kRepeated;
  list.num_children = 1;
  schema.push_back(group);
  schema.push_back(list);
}

// The root and `levels` nested list levels (`l`, then `element`), above an INT32 `element` leaf.
std::vector<fmt::SchemaElement> int32_list_schema(int levels, bool element_optional) {
  fmt::SchemaElement root;
  root.name = "schema";
  root.num_children = 1;
  std::vector<fmt::SchemaElement> schema{root};
  for (int k = 0; k < levels; ++k) push_list_level(schema, k == 0 ? "l" : "element");
  fmt::SchemaElement element;
  element.name = "element";
  element.type = fmt::type::kInt32;
  element.repetition_type = element_optional ? fmt::repetition::kOptional : fmt::repetition::kRequired;
  schema.push_back(element);
  return schema;
}

std::string list_file(int64_t rows, const std::vector<uint8_t>& rep, const std::vector<uint8_t>& def,
                      const std::vector<int32_t>& values, bool element_optional) {
  return int32_leaf_file(rows, int32_list_schema(1, element_optional), {"l", "list", "element"}, rep, 1, def,
                         element_optional ? 3 : 2, values);
}

// The same column of list_file with these pages.
std::string list_file_of_pages(int64_t rows, const std::vector<Int32Page>& pages, std::vector<int64_t>* offsets) {
  return int32_leaf_file(rows, int32_list_schema(1, true), {"l", "list", "element"}, pages, 1, 3, offsets);
}

TEST(ParquetHostile, ListLevels) {
  const std::string path = scratch_dir("list-levels") + "/l.parquet";
  // [[5, null], [], null, [7]]: a valid file first.
  write_bytes(path, list_file(4, {0, 1, 0, 0, 0}, {3, 2, 1, 0, 3}, {5, 7}, true));
  const Table t = read_table(path);
  const Column& l = t.column("l");
  ASSERT_TRUE(l.schema.is_list);
  EXPECT_EQ(l.list_offsets, (std::vector<int64_t>{0, 2, 2, 2, 3}));
  EXPECT_EQ(l.as<int32_t>(), (std::vector<int32_t>{5, 0, 7}));
  EXPECT_EQ(l.element_validity, (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(l.validity, (std::vector<uint8_t>{1, 1, 0, 1}));

  expect_throw_with<InvalidFile>(path, list_file(2, {0, 1, 0}, {2, 3, 2}, {1, 2, 3}, false),
                                 "column 'l', row group 0, page at offset 4: definition level 3 above the column's maximum 2");
  expect_throw_with<InvalidFile>(path, list_file(2, {1, 0, 0}, {3, 3, 3}, {1, 2, 3}, true),
                                 "repetition level 1 starts the chunk");
  expect_throw_with<InvalidFile>(path, list_file(2, {0, 0, 1}, {3, 1, 3}, {1, 2}, true),
                                 "repetition level 1 on a null or empty list");
  expect_throw_with<InvalidFile>(path, list_file(3, {0, 1, 0}, {3, 3, 3}, {1, 2, 3}, true),
                                 "list levels start 2 rows, the row group holds 3");
  expect_throw_with<InvalidFile>(path, list_file(1, {0, 1, 0}, {3, 3, 3}, {1, 2, 3}, true),
                                 "list levels start more rows than the row group's 1");
  expect_throw_with<InvalidFile>(path, list_file(2, {0, 1, 0}, {3, 3, 3}, {1, 2}, true),
                                 "PLAIN data holds 2 values, page declares 3");
}

// A list chunk of many pages (over a megabyte, so that its pages may decode on several threads), cut anywhere,
// inside lists too: read on one thread and on four, the same column, and each fault, in a page amid others,
// gives the same error naming that page.
TEST(ParquetHostile, ListChunkOfManyPagesReadsAlikeOnAnyThreads) {
  const std::string path = scratch_dir("list-pages") + "/l.parquet";
  // Rows: 10% null lists, 10% empty, the rest 1..120 elements with 5% null elements (definition levels 0, 1,
  // 3 and 2: `optional group l (LIST) { repeated group list { optional int32 element } }`).
  std::mt19937_64 rng(11);
  Column expected;  // its offsets and validities; the values (a null element's slot holds 0) beside it
  std::vector<int32_t> expected_values;
  std::vector<uint8_t> rep, def;
  std::vector<int32_t> present;
  const int64_t rows = 6000;
  expected.list_offsets.push_back(0);
  for (int64_t r = 0; r < rows; ++r) {
    const uint64_t kind = rng() % 10;
    expected.validity.push_back(kind != 0);
    if (kind <= 1) {
      rep.push_back(0);
      def.push_back(kind == 0 ? 0 : 1);
    } else {
      const int64_t length = 1 + static_cast<int64_t>(rng() % 120);
      for (int64_t e = 0; e < length; ++e) {
        const bool null_element = rng() % 20 == 0;
        const auto v = static_cast<int32_t>(rng());
        rep.push_back(e == 0 ? 0 : 1);
        def.push_back(null_element ? 2 : 3);
        if (!null_element) present.push_back(v);
        expected.element_validity.push_back(!null_element);
        expected_values.push_back(null_element ? 0 : v);
      }
    }
    expected.list_offsets.push_back(static_cast<int64_t>(expected.element_validity.size()));
  }
  // Pages of 9,000 to 25,000 entries, cut wherever that falls; but page 7 starts a row with an element after a
  // null or empty list (for a fault below).
  std::vector<Int32Page> pages;
  for (size_t at = 0, value = 0; at < rep.size();) {
    size_t n = std::min(rep.size() - at, static_cast<size_t>(9000 + rng() % 16000));
    if (pages.size() == 6) {
      while (at + n < rep.size() && !(def[at + n - 1] <= 1 && rep[at + n] == 0 && def[at + n] >= 2)) ++n;
    }
    Int32Page p;
    p.rep.assign(rep.begin() + at, rep.begin() + at + n);
    p.def.assign(def.begin() + at, def.begin() + at + n);
    const auto values = static_cast<size_t>(std::count(p.def.begin(), p.def.end(), 3));
    p.values.assign(present.begin() + value, present.begin() + value + values);
    pages.push_back(std::move(p));
    at += n;
    value += values;
  }
  ASSERT_GE(pages.size(), 12u);
  size_t continued = 0;
  for (const Int32Page& p : pages) continued += p.rep[0] != 0;
  ASSERT_GE(continued, 3u) << "some pages should start inside a list";
  const auto file = [&](int64_t file_rows, const std::vector<Int32Page>& ps, std::vector<int64_t>* offsets = nullptr) {
    return list_file_of_pages(file_rows, ps, offsets);
  };

  std::vector<int64_t> offsets;
  write_bytes(path, file(rows, pages, &offsets));
  ASSERT_GT(std::ifstream(path, std::ios::binary | std::ios::ate).tellg(), 1 << 20);
  for (const int threads : {1, 4}) {
    SCOPED_TRACE(threads);
    ReadOptions options;
    options.num_threads = threads;
    const Table t = read_table(path, options);
    const Column& l = t.column("l");
    EXPECT_EQ(l.list_offsets, expected.list_offsets);
    EXPECT_EQ(l.validity, expected.validity);
    EXPECT_EQ(l.element_validity, expected.element_validity);
    EXPECT_EQ(l.as<int32_t>(), expected_values);
  }

  // Each fault in page 7 (or the last page, or page 9), read on one thread and on four: the same message.
  const auto expect_fault = [&](const std::vector<Int32Page>& ps, int64_t file_rows, size_t page,
                                const std::string& message) {
    std::vector<int64_t> at;
    const std::string bytes = file(file_rows, ps, &at);
    write_bytes(path, bytes);
    const std::string where = "page at offset " + std::to_string(at[page]) + ": " + message;
    for (const int threads : {1, 4}) {
      ReadOptions options;
      options.num_threads = threads;
      try {
        read_table(path, options);
        ADD_FAILURE() << "read without complaint on " << threads << " threads; expected " << where;
      } catch (const InvalidFile& e) {
        EXPECT_NE(std::string(e.what()).find(where), std::string::npos)
            << threads << " threads: " << e.what() << "; expected " << where;
      }
    }
  };
  ASSERT_LE(pages[6].def.back(), 1);
  ASSERT_GE(pages[7].def[0], 2);
  const auto null_list = std::find(pages[7].def.begin() + 1, pages[7].def.end(), 0) - pages[7].def.begin();
  ASSERT_LT(null_list, static_cast<int64_t>(pages[7].def.size()));
  std::vector<Int32Page> bad = pages;  // an element added to a null list, inside the page
  bad[7].rep[static_cast<size_t>(null_list)] = 1;
  expect_fault(bad, rows, 7, "repetition level 1 on a null or empty list");
  bad = pages;  // an element added to the list that ended the page before, a null or empty one
  bad[7].rep[0] = 1;
  expect_fault(bad, rows, 7, "repetition level 1 on a null or empty list");
  bad = pages;
  bad[7].values.pop_back();
  expect_fault(bad, rows, 7, "PLAIN data holds " + std::to_string(bad[7].values.size()) + " values, page declares " +
                                 std::to_string(pages[7].values.size()));
  expect_fault(pages, rows - 1, pages.size() - 1, "list levels start more rows than the row group's " +
                                                     std::to_string(rows - 1));
  bad = pages;  // a page whose stored size runs past the chunk: found after the pages before it
  bad[9].declared_size = 1 << 30;
  expect_fault(bad, rows, 9, "page of 1073741824 bytes runs past the chunk");
  bad[7].rep[0] = 1;  // ... unless one of them is at fault first
  expect_fault(bad, rows, 7, "repetition level 1 on a null or empty list");
}

// `path` read on `threads` threads, a chunk's pages decoded apart (forced, whatever its size) when more than one.
Table read_with_pages_apart(const std::string& path, int threads) {
  ReadOptions options;
  options.num_threads = threads;
  options.page_threads = threads;
  return read_table(path, options);
}

// A flat column's pages decoded apart (forced, on four threads): each fault, in a page amid others, gives the
// error a read on one thread gives, naming that page; a header's fault comes after the pages before it.
TEST(ParquetHostile, FlatPagesDecodedApartFailAsOnOneThread) {
  const std::string path = scratch_dir("flat-pages") + "/x.parquet";
  fmt::SchemaElement root, x;
  root.name = "schema";
  root.num_children = 1;
  x.name = "x";
  x.type = fmt::type::kInt32;
  x.repetition_type = fmt::repetition::kOptional;
  std::mt19937_64 rng(5);
  std::vector<Int32Page> pages(12);
  std::vector<int32_t> expected;
  std::vector<uint8_t> valid;
  for (Int32Page& p : pages) {
    for (int i = 0; i < 200; ++i) {
      const bool present = rng() % 5 != 0;
      const auto v = static_cast<int32_t>(rng());
      p.def.push_back(present);
      if (present) p.values.push_back(v);
      expected.push_back(present ? v : 0);
      valid.push_back(present);
    }
  }
  const auto file = [&](const std::vector<Int32Page>& ps, std::vector<int64_t>* offsets) {
    return int32_leaf_file(2400, {root, x}, {"x"}, ps, 0, 1, offsets);
  };
  const auto read = [&](int threads) { return read_with_pages_apart(path, threads); };
  write_bytes(path, file(pages, nullptr));
  for (const int threads : {1, 4}) {
    const Table t = read(threads);
    EXPECT_EQ(t.column("x").as<int32_t>(), expected) << threads;
    EXPECT_EQ(t.column("x").validity, valid) << threads;
  }
  const auto expect_fault = [&](const std::vector<Int32Page>& ps, size_t page, const std::string& message) {
    std::vector<int64_t> at;
    write_bytes(path, file(ps, &at));
    const std::string where = "page at offset " + std::to_string(at[page]) + ": " + message;
    for (const int threads : {1, 4}) {
      try {
        read(threads);
        ADD_FAILURE() << "read without complaint on " << threads << " threads; expected " << where;
      } catch (const InvalidFile& e) {
        EXPECT_NE(std::string(e.what()).find(where), std::string::npos)
            << threads << " threads: " << e.what() << "; expected " << where;
      }
    }
  };
  std::vector<Int32Page> bad = pages;
  bad[7].values.pop_back();
  const std::string short_values = "PLAIN data holds " + std::to_string(bad[7].values.size()) +
                                    " values, page declares " + std::to_string(pages[7].values.size());
  expect_fault(bad, 7, short_values);
  bad[9].values.pop_back();  // the first of two
  expect_fault(bad, 7, short_values);
  bad = pages;
  bad[9].declared_size = 1 << 30;
  expect_fault(bad, 9, "page of 1073741824 bytes runs past the chunk");
  bad[7].values.pop_back();
  expect_fault(bad, 7, short_values);
}

// An optional FIXED_LEN_BYTE_ARRAY(3) column of a dictionary page and five data pages with nulls, one of each
// encoding the type may have (PLAIN, RLE_DICTIONARY, BYTE_STREAM_SPLIT, PLAIN, DELTA_BYTE_ARRAY): read on one
// thread and with its pages decoded apart (forced, on three threads), it gives the values written. An index
// past the dictionary, and a page of an encoding the type cannot have, are refused either way, alike.
TEST(ParquetHostile, FixedLengthPagesDecodedApartReadAsOnOneThread) {
  const std::string path = scratch_dir("flba-apart") + "/f.parquet";
  const std::string dictionary = "aaabbbccc";
  std::mt19937_64 rng(9);
  std::vector<std::string> expected;
  std::vector<uint8_t> valid;
  const auto file = [&](uint32_t bad_index, int32_t last = fmt::encoding::kDeltaByteArray) {
    expected.clear();
    valid.clear();
    fmt::PageHeader dh;
    dh.type = fmt::page_type::kDictionaryPage;
    dh.uncompressed_page_size = dh.compressed_page_size = static_cast<int32_t>(dictionary.size());
    fmt::DictionaryPageHeader d;
    d.num_values = 3;
    d.encoding = fmt::encoding::kPlain;
    dh.dictionary_page_header = d;
    std::string body = page(dh, dictionary);
    const std::vector<int32_t> encodings{fmt::encoding::kPlain, fmt::encoding::kRleDictionary,
                                         fmt::encoding::kByteStreamSplit, fmt::encoding::kPlain, last};
    for (size_t e = 0; e < encodings.size(); ++e) {
      const int32_t encoding = encodings[e];
      std::vector<uint8_t> def;
      std::vector<uint32_t> indices;
      std::vector<std::string> values;
      for (int i = 0; i < 50; ++i) {
        // (the last page without nulls: its values end where the column's room does)
        const bool present = rng() % 4 != 0 || e + 1 == encodings.size();
        def.push_back(present);
        valid.push_back(present);
        std::string v;
        if (present && encoding == fmt::encoding::kRleDictionary) {
          indices.push_back(static_cast<uint32_t>(rng() % 3));
          v = dictionary.substr(indices.back() * 3, 3);
        } else if (present) {
          for (int b = 0; b < 3; ++b) v += static_cast<char>('d' + rng() % 20);
        }
        if (present) values.push_back(v);
        expected.push_back(v);
      }
      std::string levels;
      rle_encode(def.data(), def.size(), 1, &levels);
      const auto len = static_cast<uint32_t>(levels.size());
      std::string data = std::string(reinterpret_cast<const char*>(&len), 4) + levels;
      if (encoding == fmt::encoding::kRleDictionary) {
        if (bad_index != 0) indices[indices.size() / 2] = bad_index;
        data += '\x02';
        rle_encode(indices.data(), indices.size(), 2, &data);
      } else if (encoding == fmt::encoding::kByteStreamSplit) {
        for (int b = 0; b < 3; ++b) {
          for (const std::string& v : values) data += v[static_cast<size_t>(b)];
        }
      } else if (encoding == fmt::encoding::kDeltaByteArray) {
        data += encode_delta_byte_arrays(values);
      } else {
        for (const std::string& v : values) data += v;
      }
      body += page(data_page_header(50, static_cast<int32_t>(data.size()), encoding), data);
    }
    fmt::FileMetaData md = one_column_metadata(250);
    md.schema[1].type = fmt::type::kFixedLenByteArray;
    md.schema[1].type_length = 3;
    md.schema[1].repetition_type = fmt::repetition::kOptional;
    fmt::ColumnMetaData& cm = *md.row_groups[0].columns[0].meta_data;
    cm.type = fmt::type::kFixedLenByteArray;
    cm.encodings = {fmt::encoding::kPlain, fmt::encoding::kRleDictionary, fmt::encoding::kByteStreamSplit, last};
    cm.total_compressed_size = static_cast<int64_t>(body.size());
    return make_file(md, body);
  };
  const auto read = [&](int threads) { return read_with_pages_apart(path, threads); };
  write_bytes(path, file(0));
  for (const int threads : {1, 3}) {
    SCOPED_TRACE(threads);
    const Table t = read(threads);
    const Column& x = t.column("x");
    EXPECT_EQ(x.validity, valid);
    ASSERT_EQ(x.byte_arrays().size(), 250);
    for (int64_t i = 0; i < 250; ++i) EXPECT_EQ(x.byte_arrays().at(i), expected[static_cast<size_t>(i)]) << i;
  }
  const auto expect_refused = [&](const std::string& bytes, const std::string& message) {
    write_bytes(path, bytes);
    for (const int threads : {1, 3}) {
      try {
        read(threads);
        ADD_FAILURE() << "read without complaint on " << threads << " threads";
      } catch (const InvalidFile& e) {
        EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << threads << ": " << e.what();
      }
    }
  };
  expect_refused(file(3), "dictionary index 3 out of range");
  expect_refused(file(0, fmt::encoding::kDeltaLengthByteArray),
                 "DELTA_LENGTH_BYTE_ARRAY on a FIXED_LEN_BYTE_ARRAY column");
}

// A one-column file whose column is a nullable list of nullable lists of nullable INT32 (`optional group l
// (LIST) { repeated group list { optional group element (LIST) { repeated group list { optional int32 element
// } } } }`: repetition levels up to 2, definition levels up to 5) with one data page v1 of the given levels.
std::string nested_list_file(int64_t rows, const std::vector<uint8_t>& rep, const std::vector<uint8_t>& def,
                             const std::vector<int32_t>& values) {
  return int32_leaf_file(rows, int32_list_schema(2, /*element_optional=*/true),
                         {"l", "list", "element", "list", "element"}, rep, 2, def, 5, values);
}

TEST(ParquetHostile, NestedListLevels) {
  const std::string path = scratch_dir("nested-list-levels") + "/l.parquet";
  // [[1, null], [], null], null, [], [[2]]: a valid file first.
  write_bytes(path, nested_list_file(4, {0, 2, 1, 1, 0, 0, 0}, {5, 4, 3, 2, 0, 1, 5}, {1, 2}));
  const Table t = read_table(path);
  const Column& l = t.column("l");
  ASSERT_EQ(l.schema.list_depth(), 2);
  EXPECT_EQ(l.list_offsets, (std::vector<int64_t>{0, 3, 3, 3, 4}));
  EXPECT_EQ(l.validity, (std::vector<uint8_t>{1, 0, 1, 1}));
  ASSERT_EQ(l.inner_lists.size(), 1u);
  EXPECT_EQ(l.inner_lists[0].offsets, (std::vector<int64_t>{0, 2, 2, 2, 3}));
  EXPECT_EQ(l.inner_lists[0].validity, (std::vector<uint8_t>{1, 1, 0, 1}));
  EXPECT_EQ(l.as<int32_t>(), (std::vector<int32_t>{1, 0, 2}));
  EXPECT_EQ(l.element_validity, (std::vector<uint8_t>{1, 0, 1}));

  // Levels that contradict the schema or each other: InvalidFile naming the column, row group and page.
  expect_throw_with<InvalidFile>(path, nested_list_file(1, {0, 3}, {5, 5}, {1, 2}),
                                 "column 'l', row group 0, page at offset 4: repetition level 3 above the column's "
                                 "maximum 2");
  expect_throw_with<InvalidFile>(path, nested_list_file(1, {0, 2}, {5, 6}, {1, 2}),
                                 "definition level 6 above the column's maximum 5");
  expect_throw_with<InvalidFile>(path, nested_list_file(1, {2, 0}, {5, 5}, {1, 2}),
                                 "repetition level 2 starts the chunk");
  // An element added to an inner list that is empty, to a row that is null, to a row that is empty.
  expect_throw_with<InvalidFile>(path, nested_list_file(1, {0, 2}, {3, 5}, {1}),
                                 "repetition level 2 on a null, empty or absent list");
  expect_throw_with<InvalidFile>(path, nested_list_file(2, {0, 1, 0}, {0, 5, 5}, {1, 2}),
                                 "repetition level 1 on a null, empty or absent list");
  expect_throw_with<InvalidFile>(path, nested_list_file(2, {0, 2, 0}, {1, 5, 5}, {1, 2}),
                                 "repetition level 2 on a null, empty or absent list");
  // A repetition level that continues a list with nothing in it.
  expect_throw_with<InvalidFile>(path, nested_list_file(1, {0, 2}, {5, 3}, {1}),
                                 "repetition level 2 with definition level 3, which adds no element");
  expect_throw_with<InvalidFile>(path, nested_list_file(1, {0, 1}, {5, 1}, {1}),
                                 "repetition level 1 with definition level 1, which adds no element");
  // Counts that disagree: rows, values.
  expect_throw_with<InvalidFile>(path, nested_list_file(2, {0, 1}, {5, 5}, {1, 2}),
                                 "list levels start 1 rows, the row group holds 2");
  expect_throw_with<InvalidFile>(path, nested_list_file(1, {0, 0}, {5, 5}, {1, 2}),
                                 "list levels start more rows than the row group's 1");
  expect_throw_with<InvalidFile>(path, nested_list_file(1, {0, 2, 1}, {5, 5, 5}, {1, 2}),
                                 "PLAIN data holds 2 values, page declares 3");
}

// Three levels of lists (nullable at each level, nullable elements): definition levels 1, 3 and 5 are the empty
// lists of each level, 7 a value.
std::string three_level_list_file(int64_t rows, const std::vector<uint8_t>& rep, const std::vector<uint8_t>& def,
                                  const std::vector<int32_t>& values) {
  return int32_leaf_file(rows, int32_list_schema(3, /*element_optional=*/true),
                         {"l", "list", "element", "list", "element", "list", "element"}, rep, 3, def, 7, values);
}

TEST(ParquetHostile, ThreeLevelListLevels) {
  const std::string path = scratch_dir("three-level-list-levels") + "/l.parquet";
  // [[[1, null]], []], null: a valid file first.
  write_bytes(path, three_level_list_file(2, {0, 3, 1, 0}, {7, 6, 3, 0}, {1}));
  const Table t = read_table(path);
  const Column& l = t.column("l");
  ASSERT_EQ(l.schema.list_depth(), 3);
  EXPECT_EQ(l.list_offsets, (std::vector<int64_t>{0, 2, 2}));
  EXPECT_EQ(l.validity, (std::vector<uint8_t>{1, 0}));
  ASSERT_EQ(l.inner_lists.size(), 2u);
  EXPECT_EQ(l.inner_lists[0].offsets, (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(l.inner_lists[1].offsets, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(l.as<int32_t>(), (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(l.element_validity, (std::vector<uint8_t>{1, 0}));

  // (Levels above the maxima cannot be written here: 7 and 3 fill their bit widths.)
  expect_throw_with<InvalidFile>(path, three_level_list_file(1, {0, 3}, {5, 7}, {1}),
                                 "repetition level 3 on a null, empty or absent list");
  expect_throw_with<InvalidFile>(path, three_level_list_file(1, {0, 2}, {7, 3}, {1}),
                                 "repetition level 2 with definition level 3, which adds no element");
  expect_throw_with<InvalidFile>(path, three_level_list_file(1, {0, 0}, {7, 7}, {1, 2}),
                                 "list levels start more rows than the row group's 1");
}

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
