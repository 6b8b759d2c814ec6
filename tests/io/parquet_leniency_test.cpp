// Valid files that bend the spec the way some writers do, read as DuckDB and Arrow read them; and the page
// checksums the writer makes, as zlib computes them.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include "feedline/io/parquet.h"
#include "feedline/io/table.h"
#include "io/parquet/metadata.h"
#include "io/parquet/thrift_compact.h"
#include "parquet_test_support.h"
#include "test_paths.h"

namespace feedline {
namespace {

namespace format = parquet::format;

// Rewrites the one-column, one-page, uncompressed file `src` (data page v1) as `dst`, whose page is a data page v2
// that declares `rep_bytes` bytes of repetition levels ahead of its definition levels, though the column is flat:
// what a writer that always writes both level sections makes.
void write_v2_with_flat_repetition_levels(const std::string& src, const std::string& dst, const std::string& rep_bytes,
                                          bool nullable) {
  const std::string file = testing::file_bytes(src);
  ASSERT_GE(file.size(), 12u);
  uint32_t footer_len;
  std::memcpy(&footer_len, file.data() + file.size() - 8, 4);
  const size_t footer_at = file.size() - 8 - footer_len;
  const auto* bytes = reinterpret_cast<const uint8_t*>(file.data());
  parquet::thrift::CompactReader footer(bytes + footer_at, footer_len, static_cast<int64_t>(footer_at));
  format::FileMetaData md = format::read_file_metadata(footer);
  ASSERT_EQ(md.row_groups.size(), 1u);
  ASSERT_EQ(md.row_groups[0].columns.size(), 1u);
  format::ColumnMetaData& meta = *md.row_groups[0].columns[0].meta_data;
  ASSERT_FALSE(meta.dictionary_page_offset.has_value());
  const auto page_at = static_cast<size_t>(meta.data_page_offset);
  parquet::thrift::CompactReader header_in(bytes + page_at, footer_at - page_at, static_cast<int64_t>(page_at));
  const format::PageHeader v1 = format::read_page_header(header_in);
  ASSERT_EQ(v1.type, format::page_type::kDataPage);
  ASSERT_EQ(static_cast<int64_t>(page_at + header_in.position() + v1.compressed_page_size),
            meta.data_page_offset + meta.total_compressed_size);
  std::string body = file.substr(page_at + header_in.position(), static_cast<size_t>(v1.compressed_page_size));
  // A v1 page of an optional column opens with its definition levels' length (4 bytes); v2 keeps them bare.
  std::string def;
  if (nullable) {
    uint32_t def_len;
    std::memcpy(&def_len, body.data(), 4);
    def = body.substr(4, def_len);
    body = body.substr(4 + def_len);
  }
  format::PageHeader v2;
  v2.type = format::page_type::kDataPageV2;
  format::DataPageHeaderV2 h;
  h.num_values = v1.data_page_header->num_values;
  h.num_rows = h.num_values;
  h.num_nulls = 0;
  h.encoding = v1.data_page_header->encoding;
  h.definition_levels_byte_length = static_cast<int32_t>(def.size());
  h.repetition_levels_byte_length = static_cast<int32_t>(rep_bytes.size());
  h.is_compressed = false;
  v2.data_page_header_v2 = h;
  const std::string page_body = rep_bytes + def + body;
  v2.compressed_page_size = v2.uncompressed_page_size = static_cast<int32_t>(page_body.size());
  parquet::thrift::CompactWriter header_out;
  format::write_page_header(header_out, v2);
  const std::string page = header_out.buffer() + page_body;
  meta.total_compressed_size = meta.total_uncompressed_size = static_cast<int64_t>(page.size());
  meta.encodings = {h.encoding};
  md.row_groups[0].total_byte_size = static_cast<int64_t>(page.size());
  if (md.row_groups[0].total_compressed_size) md.row_groups[0].total_compressed_size = page.size();
  parquet::thrift::CompactWriter footer_out;
  format::write_file_metadata(footer_out, md);
  const auto len = static_cast<uint32_t>(footer_out.buffer().size());
  std::ofstream(dst, std::ios::binary) << file.substr(0, page_at) << page << footer_out.buffer()
                                       << std::string(reinterpret_cast<const char*>(&len), 4) << "PAR1";
}

TEST(ParquetLeniency, AFlatColumnsV2PageThatDeclaresRepetitionLevelsReadsWithoutThem) {
  for (const bool nullable : {false, true}) {
    SCOPED_TRACE(nullable ? "optional column" : "required column");
    ColumnSchema schema{"id"};
    schema.nullable = nullable;
    Table t;
    t.columns = {make_column(schema)};
    for (int64_t i = 0; i < 100; ++i) t.columns[0].as<int64_t>().push_back(i * 7 - 50);
    if (nullable) t.columns[0].validity.assign(100, 1);
    t.num_rows = 100;
    const std::string dir = testing::scratch_dir("parquet-leniency");
    const std::string v1 = dir + "/v1.parquet", v2 = dir + "/v2.parquet", plain = dir + "/v2_plain.parquet";
    parquet::WriteOptions o;
    o.codec = parquet::Codec::kUncompressed;
    o.dictionary = false;
    o.page_checksums = false;
    o.statistics = false;
    parquet::write_table(v1, t, o);
    // Two bytes of levels (an RLE run of 100 zeros at bit width 0 is all a flat column could hold), and none.
    write_v2_with_flat_repetition_levels(v1, v2, std::string("\xc8\x01", 2), nullable);
    write_v2_with_flat_repetition_levels(v1, plain, "", nullable);
    for (const std::string& path : {plain, v2}) {
      SCOPED_TRACE(path);
      const Table back = parquet::read_table(path);
      ASSERT_EQ(back.num_rows, 100);
      ASSERT_EQ(back.columns.size(), 1u);
      EXPECT_EQ(back.columns[0].as<int64_t>(), t.columns[0].as<int64_t>());
    }
  }
}

TEST(ParquetLeniency, PageChecksumsAreZlibsCrc32) {
  Table t = testing::id_name_table(0, 5000);
  const std::string path = testing::scratch_dir("parquet-leniency") + "/crc.parquet";
  parquet::WriteOptions o;
  o.codec = parquet::Codec::kSnappy;
  o.page_bytes = 4096;
  parquet::write_table(path, t, o);
  const std::string file = testing::file_bytes(path);
  uint32_t footer_len;
  std::memcpy(&footer_len, file.data() + file.size() - 8, 4);
  const size_t footer_at = file.size() - 8 - footer_len;
  const auto* bytes = reinterpret_cast<const uint8_t*>(file.data());
  parquet::thrift::CompactReader footer(bytes + footer_at, footer_len, static_cast<int64_t>(footer_at));
  const format::FileMetaData md = format::read_file_metadata(footer);
  int pages = 0;
  for (const auto& chunk : md.row_groups.at(0).columns) {
    const format::ColumnMetaData& meta = *chunk.meta_data;
    size_t at = static_cast<size_t>(meta.dictionary_page_offset.value_or(meta.data_page_offset));
    const size_t end = static_cast<size_t>(meta.data_page_offset + meta.total_compressed_size);
    while (at < end) {
      parquet::thrift::CompactReader in(bytes + at, end - at, static_cast<int64_t>(at));
      const format::PageHeader h = format::read_page_header(in);
      at += in.position();
      ASSERT_TRUE(h.crc.has_value());
      const uLong want = crc32(crc32(0L, Z_NULL, 0), bytes + at, static_cast<uInt>(h.compressed_page_size));
      EXPECT_EQ(static_cast<uint32_t>(*h.crc), static_cast<uint32_t>(want)) << "page at " << at;
      at += static_cast<size_t>(h.compressed_page_size);
      ++pages;
    }
  }
  EXPECT_GE(pages, 10);
}

}  // namespace
}  // namespace feedline
